import FoundationEssentials

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
    /// Who started it (the client's app name): each client may keep only a few flows waiting.
    public var owner: String
    /// Whether `redirectTo` carries `authd_flow=<id>` (loopback redirects do), so that only a
    /// redirect carrying it can complete or end this flow.
    public var isBound: Bool
    /// What the browser was sent to do, which decides what may come back.
    public var kind: OAuthFlowKind = .signIn
    /// For an emailed link: the address it was sent to. A link that signs in another account
    /// is refused (see `RedirectRules.disposition(of:for:channel:now:)`).
    public var emailAddress: String?

    /// Creates a flow.
    public init(id: String, provider: String, redirectTo: String, codeVerifier: String, startedAt: Date,
                owner: String = "", isBound: Bool = false) {
        self.id = id
        self.provider = provider
        self.redirectTo = redirectTo
        self.codeVerifier = codeVerifier
        self.startedAt = startedAt
        self.owner = owner
        self.isBound = isBound
    }

    /// The query parameter a bound flow's redirect carries.
    public static let bindingParameter = "authd_flow"

    /// `redirect` with this flow's binding added to its query: what `redirect_to` becomes for a
    /// loopback redirect. GoTrue keeps a `redirect_to`'s query when it adds `code` or `error`.
    public static func bound(_ redirect: String, to id: String) -> String {
        guard var components = URLComponents(string: redirect) else { return redirect }
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: bindingParameter, value: id)]
        return components.string ?? redirect
    }
}

/// What a browser flow is for.
public enum OAuthFlowKind: Sendable, Equatable {
    /// A sign-in at a provider or through enterprise SSO.
    case signIn
    /// Linking a provider's identity to the signed-in user.
    case linkIdentity
    /// An emailed link (magic link, confirmation): besides a PKCE `code`, a `token_hash` may
    /// come back, from a project whose email template links to the app that way.
    case emailLink
    /// An emailed password recovery link: as `emailLink`, announced as `PASSWORD_RECOVERY`.
    case recoveryLink
}

/// Why a browser sign-in could not be completed.
public enum OAuthFlowFailure: Error, Sendable, Equatable {
    /// No flow is waiting for this redirect (never started, already used, or expired).
    case noPendingFlow(String)
    /// The redirect does not carry the flow's binding: it was not sent back for this sign-in
    /// (another user's, or junk). The flow keeps waiting for its own.
    case notThisFlow
    /// A newer browser sign-in to the same app address replaced this one.
    case replaced
    /// Too many browser sign-ins are waiting (the client's own limit, or the profile's).
    case tooManyFlows(Int)
    /// An emailed link signed in an account other than the one it was sent to (a link someone
    /// else made, handed over by a web page): refused, and its session ended at the server.
    case anotherAccount
    /// The flow waited longer than `OAuthFlowBook.lifetime`.
    case expired
    /// The provider or GoTrue sent the browser back with an error, in a redirect bound to the flow.
    case provider(error: String, code: String?, description: String?)
    /// The redirect carried neither a code nor an error.
    case malformedCallback(String)
    /// A redirect handed over on a command line carried this parameter, a credential that works
    /// for whoever sends it first (an email template's `token_hash`, or session tokens): every user
    /// could read it there, so nothing of the redirect was used. A flow waiting for that address
    /// goes on waiting.
    case exposedCredential(parameter: String)
    /// An error redirect that nothing ties to the flow (a custom scheme's redirect cannot carry
    /// the flow's binding, and any web page can open one): it ends nothing and its words are not
    /// shown. The flow goes on waiting.
    case unboundError
}

/// The pending PKCE flows of one profile, and the rules that match a redirect to one of them.
///
/// A redirect to a loopback listener names its flow (the listener knows which one it serves) and
/// carries the flow's binding (`authd_flow=<id>` in its query), without which it neither
/// completes nor ends the flow: a callback from anyone else, or for another sign-in, changes
/// nothing. A redirect to a custom scheme arrives through `authctl open-url` with nothing but the
/// URL (an app's allow-listed scheme address cannot take a query of ours): it is matched by its
/// redirect address, and a newer flow to the same address replaces an older one, so two flows can
/// never take each other's redirect; since any web page can open such an address, only the
/// flow's own code completes it, and nothing else sent there ends it (`RedirectRules`). Each flow
/// is used at most once.
///
/// A client keeps at most `capacityPerOwner` flows waiting (its oldest is dropped for a new
/// one), and a profile at most `capacity`: a client starting flows in a loop cannot push out
/// the user's.
public struct OAuthFlowBook: Sendable {
    /// How long a flow waits: GoTrue keeps flow state for at least 300 s.
    public static let lifetime: TimeInterval = 300
    /// Flows kept at once for a profile; beyond it new flows are refused.
    public static let capacity = 64
    /// Flows one client keeps at once; its oldest is dropped beyond it.
    public static let capacityPerOwner = 4

    private var flows: [OAuthFlow] = []

    /// Creates an empty book.
    public init() {}

    /// The flows still waiting at `now`.
    public func pending(now: Date) -> [OAuthFlow] { flows.filter { !Self.isExpired($0, now: now) } }

    /// Records a new flow and returns the flows it displaced (whose waiters must be told): an
    /// unbound flow to the same address, and the owner's oldest beyond `capacityPerOwner`.
    /// Refused when the profile already has `capacity` flows waiting.
    public mutating func start(_ flow: OAuthFlow, now: Date) -> Result<[OAuthFlow], OAuthFlowFailure> {
        flows.removeAll { Self.isExpired($0, now: now) }
        var displaced: [OAuthFlow] = []
        if !flow.isBound {
            let address = Self.addressWithoutQuery(URL(string: flow.redirectTo))
            displaced += flows.filter { !$0.isBound && Self.addressWithoutQuery(URL(string: $0.redirectTo)) == address }
        }
        let owned = flows.filter { $0.owner == flow.owner && !displaced.contains($0) }
        displaced += owned.prefix(max(0, owned.count + 1 - Self.capacityPerOwner))
        guard flows.count - displaced.count < Self.capacity else { return .failure(.tooManyFlows(Self.capacity)) }
        flows.removeAll { displaced.contains($0) }
        flows.append(flow)
        return .success(displaced)
    }

    /// Forgets a flow (cancelled, or its waiting client went away).
    public mutating func cancel(_ id: String) { flows.removeAll { $0.id == id } }

    /// The flow the redirect `callback` belongs to, left in the book: the one named `id`, or else
    /// the newest whose redirect address the callback has. A bound flow matches only a redirect
    /// carrying its binding; otherwise the answer is `notThisFlow`. What the redirect may then do
    /// to the flow is `RedirectRules.disposition(of:for:channel:now:)`'s to say.
    public func match(callback: URL, flowID id: String?) -> Result<OAuthFlow, OAuthFlowFailure> {
        let address = Self.addressWithoutQuery(callback)
        guard let flow = flows.last(where: { flow in
            id.map { $0 == flow.id } ?? (Self.addressWithoutQuery(URL(string: flow.redirectTo)) == address)
        }) else { return .failure(.noPendingFlow(id ?? address)) }
        if flow.isBound, Self.parameters(of: callback)[OAuthFlow.bindingParameter] != flow.id {
            return .failure(.notThisFlow)
        }
        return .success(flow)
    }

    /// The address a redirect was sent to, as `noPendingFlow` reports it.
    public static func address(of callback: URL) -> String { addressWithoutQuery(callback) }

    /// Whether `flow` has waited longer than `lifetime` at `now`.
    static func isExpired(_ flow: OAuthFlow, now: Date) -> Bool {
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
    /// errors come back in the fragment, and the implicit flow's tokens always do).
    static func parameters(of url: URL) -> [String: String] {
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
