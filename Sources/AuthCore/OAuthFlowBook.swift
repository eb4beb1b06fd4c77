import Foundation

/// One browser sign-in waiting for its redirect.
public struct OAuthFlow: Sendable, Equatable {
    /// Names the flow on the socket (not a secret: it grants nothing without the browser's code).
    public var id: String
    /// The provider (`google`, `github`, …).
    public var provider: String
    /// The `redirect_to` given to `/authorize`: a loopback URL or an app's custom scheme.
    public var redirectTo: String
    /// The PKCE code verifier. Never leaves the daemon except to GoTrue's `/token`.
    public var codeVerifier: String
    /// When the flow was started.
    public var startedAt: Date

    /// Creates a flow.
    public init(id: String, provider: String, redirectTo: String, codeVerifier: String, startedAt: Date) {
        self.id = id
        self.provider = provider
        self.redirectTo = redirectTo
        self.codeVerifier = codeVerifier
        self.startedAt = startedAt
    }
}

/// Why a browser sign-in could not be completed.
public enum OAuthFlowFailure: Error, Sendable, Equatable {
    /// No flow is waiting for this redirect (never started, already used, or expired).
    case noPendingFlow(String)
    /// The flow waited longer than `OAuthFlowBook.lifetime`.
    case expired
    /// The provider or GoTrue sent the browser back with an error.
    case provider(error: String, code: String?, description: String?)
    /// The redirect carried neither a code nor an error.
    case malformedCallback(String)
}

/// The pending PKCE flows of one profile, and the rules that match a redirect to one of them.
///
/// A redirect to a loopback listener names its flow (the listener knows which one it serves).
/// A redirect to a custom scheme arrives through `authctl open-url` with nothing but the URL: it
/// is matched by its redirect address, newest flow first. Each flow is used at most once.
public struct OAuthFlowBook: Sendable {
    /// How long a flow waits: GoTrue keeps flow state for at least 300 s.
    public static let lifetime: TimeInterval = 300
    /// Flows kept at once; the oldest is dropped beyond this.
    public static let capacity = 16

    private var flows: [OAuthFlow] = []

    /// Creates an empty book.
    public init() {}

    /// The flows still waiting at `now`.
    public func pending(now: Date) -> [OAuthFlow] { flows.filter { !Self.isExpired($0, now: now) } }

    /// Records a new flow, dropping expired ones and the oldest beyond `capacity`.
    public mutating func start(_ flow: OAuthFlow, now: Date) {
        flows.removeAll { Self.isExpired($0, now: now) }
        flows.append(flow)
        if flows.count > Self.capacity { flows.removeFirst(flows.count - Self.capacity) }
    }

    /// Forgets a flow (cancelled, or its waiting client went away).
    public mutating func cancel(_ id: String) { flows.removeAll { $0.id == id } }

    /// Removes and returns the flow the redirect `callback` belongs to: the one named `id`, or
    /// else the newest whose redirect address the callback has. Nil when none waits for it.
    public mutating func take(callback: URL, flowID id: String?) -> OAuthFlow? {
        let address = Self.addressWithoutQuery(callback)
        guard let index = flows.lastIndex(where: { flow in
            id.map { $0 == flow.id } ?? (Self.addressWithoutQuery(URL(string: flow.redirectTo)) == address)
        }) else { return nil }
        return flows.remove(at: index)
    }

    /// What the redirect says about `flow`: its authorization code, or why the sign-in failed.
    public static func outcome(of callback: URL, for flow: OAuthFlow, now: Date) -> Result<String, OAuthFlowFailure> {
        if isExpired(flow, now: now) { return .failure(.expired) }
        let parameters = parameters(of: callback)
        if let error = parameters["error"] ?? parameters["error_code"] {
            return .failure(.provider(error: error, code: parameters["error_code"], description: parameters["error_description"]))
        }
        guard let code = parameters["code"], !code.isEmpty else {
            return .failure(.malformedCallback("the redirect carries neither a code nor an error"))
        }
        return .success(code)
    }

    /// The address a redirect was sent to, as `noPendingFlow` reports it.
    public static func address(of callback: URL) -> String { addressWithoutQuery(callback) }

    private static func isExpired(_ flow: OAuthFlow, now: Date) -> Bool {
        now.timeIntervalSince(flow.startedAt) > lifetime
    }

    /// Scheme, host, port and path: what identifies where a redirect was sent.
    private static func addressWithoutQuery(_ url: URL?) -> String {
        guard let url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "" }
        components.query = nil
        components.fragment = nil
        var text = components.string ?? ""
        while text.hasSuffix("/") { text.removeLast() }
        return text.lowercased()
    }

    /// Query and fragment parameters (GoTrue puts errors in the query for PKCE, but some providers'
    /// errors come back in the fragment).
    private static func parameters(of url: URL) -> [String: String] {
        var result: [String: String] = [:]
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var fragment = URLComponents()
        fragment.percentEncodedQuery = components?.percentEncodedFragment
        for item in (fragment.queryItems ?? []) + (components?.queryItems ?? []) {
            result[item.name] = item.value ?? ""
        }
        return result
    }
}
