@_exported import AuthProtocol
import BlockingCalls
import FoundationEssentials
import FoundationGaps
import Synchronization

/// A desktop app's link to authd: bearer tokens and auth-state events for one profile.
///
/// ```swift
/// let client = try await AuthdClient.connect()
/// let token = try await client.token(minValidity: 60)
/// for try await event in client.events() { … }
/// ```
///
/// The refresh token never reaches the app: authd refreshes, the app only asks. Calls wait on a
/// thread of the client's own, never on Swift's cooperative pool. When authd restarts, the next
/// call connects again by itself, and `events()` reconnects and subscribes again. With socket
/// activation the socket stays in place, so a call made while authd starts simply waits for it.
public final class AuthdClient: Sendable {
    /// The profile this client asks about; nil means authd's default profile.
    public let profile: String?
    let greeter: DaemonGreeter
    let lane: BlockingLane
    let link: DaemonLink
    private let lastHello: HelloRecord

    private init(profile: String?, greeter: DaemonGreeter, lane: BlockingLane, link: DaemonLink, hello: HelloRecord) {
        self.profile = profile
        self.greeter = greeter
        self.lane = lane
        self.link = link
        self.lastHello = hello
    }

    /// Connects to authd and checks that it knows `profile`.
    ///
    /// - Parameters:
    ///   - profile: the profile to use; nil for authd's default profile.
    ///   - socketPath: the socket; by default `$AUTHD_SOCKET`, else `$XDG_RUNTIME_DIR/authd/authd.sock`.
    ///   - clientName: a display name for authd's logs; the process name by default. authd
    ///     identifies clients by what the kernel says about them, never by this name.
    ///   - onWarning: receives one line each time a connection finds authd speaking another
    ///     major protocol version; the default writes each such line once per process to
    ///     standard error.
    /// - Throws: `.daemonUnavailable` when authd is not running, `.unknownProfile` when it has
    ///   no such profile, `.accessDenied` when it refuses this process, `.foreignDaemon` when a
    ///   process of another user serves the socket (checked before anything is sent).
    public static func connect(profile: String? = nil, socketPath: String? = nil, clientName: String? = nil,
                               onWarning: @escaping @Sendable (String) -> Void = AuthdClient.printWarning) async throws(AuthdError) -> AuthdClient {
        let path: String
        do { path = try socketPath ?? SocketPath.resolve() } catch { throw .daemonUnavailable(error.readableDescription) }
        let greeter = DaemonGreeter(socketPath: path, clientName: clientName ?? ProcessInfo.processInfo.processName, warn: onWarning)
        let hello = HelloRecord()
        let link = DaemonLink(greeter: greeter) { answer in hello.answer.withLock { $0 = answer } }
        let lane = BlockingLane(name: "authd-client")
        try await lane.run { () throws(AuthdError) in _ = try link.ensureOpen() }
        let client = AuthdClient(profile: profile, greeter: greeter, lane: lane, link: link, hello: hello)
        if let profile {
            let known = client.daemon.profiles
            guard known.contains(profile) else {
                throw .unknownProfile("authd has no profile named '\(profile)' (it has: \(known.joined(separator: ", "))); add it with 'authctl profile add \(profile) --url URL --anon-key KEY'")
            }
        }
        return client
    }

    /// The socket in use.
    public var socketPath: String { greeter.socketPath }

    /// What authd said in its last `hello`: protocol and software version, capabilities, profiles.
    public var daemon: Methods.Hello.Result { lastHello.answer.withLock { $0 } }

    /// An access token valid for at least `minValidity` seconds; authd refreshes first when the
    /// current one would expire sooner.
    ///
    /// - Throws: `.notSignedIn` (run `authctl login`), `.offline` (the token expired and the server
    ///   cannot be reached; the session is kept), `.daemonUnavailable`, `.keyringUnavailable`,
    ///   `.accessDenied`, or `.rejected` with reason `min_validity_too_long`.
    public func token(minValidity: Int = 0) async throws(AuthdError) -> AccessToken {
        try await token(minValidity: minValidity, assurance: nil)
    }

    /// A token valid for at least `minValidity` seconds from a session at assurance level
    /// `assurance` or above (`"aal2"`: verified with a second factor); `.mfaRequired` when the
    /// session is below it, never a lower token.
    public func token(minValidity: Int = 0, assurance: String?) async throws(AuthdError) -> AccessToken {
        let link = self.link
        let parameters = Methods.Token.Parameters(profile: profile, minValidity: minValidity, aal: assurance)
        // A refresh can take as long as GoTrue's own timeout, and under a profile that asks, an app
        // not decided yet waits for the user (two minutes by default): give both room.
        let result = try await lane.run { () throws(AuthdError) in try link.call(Methods.Token.self, parameters, timeout: 300) }
        return AccessToken(result)
    }

    /// The profile's state: signed in or out, the user, the token's expiry. Holds no token.
    public func status() async throws(AuthdError) -> SessionStatus {
        let link = self.link
        let parameters = ProfileParameters(profile: profile)
        return try await lane.run { () throws(AuthdError) in try link.call(Methods.Status.self, parameters, timeout: 300) }
    }

    /// The profile's auth-state events, starting with `.initialSession`, until the task that
    /// iterates is cancelled.
    ///
    /// The stream has a connection of its own. When authd goes away it reconnects (from 50 ms,
    /// doubling to 2 s between tries), subscribes again and delivers a fresh `.initialSession`
    /// marked `afterReconnect`. It ends with an error only for what waiting will not mend: an
    /// unknown profile, access denied, or authd unreachable before the first subscription.
    public func events() -> AuthdEventStream {
        AuthdEventStream(greeter: greeter, profile: profile)
    }

    /// Closes the request connection now; a later call opens a new one. Event streams are
    /// unaffected (they end with their task).
    public func close() async {
        let link = self.link
        await lane.run { link.close() }
    }

    /// The default warning handler: one line on standard error, once per process for each
    /// warning (every connection, reconnect and event stream greets authd and would repeat it).
    public static let printWarning: @Sendable (String) -> Void = { message in
        printOnce(message) { StandardStreams.writeError("authd client: warning: \($0)\n") }
    }

    /// Hands `message` to `write` the first time this process sees it.
    static func printOnce(_ message: String, _ write: (String) -> Void) {
        guard printedWarnings.withLock({ $0.insert(message).inserted }) else { return }
        write(message)
    }

    /// The warnings `printWarning` has printed.
    private static let printedWarnings = Mutex<Set<String>>([])
}

/// The latest `hello` answer, written on the lane and read from anywhere.
private final class HelloRecord: Sendable {
    let answer = Mutex(Methods.Hello.Result(protocolVersion: "", daemonVersion: "", capabilities: [], profiles: [], defaultProfile: ""))
}
