import AuthCore
import FoundationEssentials
import NIOCore

/// `GoTrueAPI` over HTTP/1.1 (`HTTPExchange`), on SwiftNIO's shared event loops.
///
/// Every request carries `apikey` and `X-Supabase-Api-Version: 2024-01-01`, so errors come back
/// as `{"code":"<error_code>","message":…}`; the older `{"error_code":…,"msg":…}` and the OAuth
/// style `{"error":…,"error_description":…}` are understood too. TLS checks the server against
/// the system's CA store or `SSL_CERT_FILE` (`TLSTrust`), and a refused certificate is explained
/// (`CertificateRefusal`); a proxy comes from the environment as curl reads it (`ProxySettings`),
/// except for loopback servers, which are always reached directly.
/// Redirects are not followed: no GoTrue endpoint authd calls redirects, and a request that
/// carries a password or a refresh token goes to the configured server or nowhere.
public struct GoTrueClient: GoTrueAPI, CustomStringConvertible, CustomDebugStringConvertible {
    /// The auth base URL, e.g. `https://<ref>.supabase.co/auth/v1`.
    public let authURL: URL
    /// Sent as `apikey` with every request.
    let anonKey: String
    /// Sent as `X-Client-Info`.
    let clientInfo: String
    /// How long a request may take, connection included.
    let timeout: TimeAmount
    /// How the server is reached.
    let proxy: ProxySettings
    /// The variable `proxy` comes from, for messages.
    let proxyVariable: String?
    /// The certificates an https server is checked against.
    let trust: TLSTrust
    /// Why `trust` cannot be used, for https servers; checked once, when the client is made.
    let trustProblem: String?

    /// What logs show of the client: the server and the proxy, never the anon key or a proxy
    /// password. ServiceLifecycle names each service by interpolating it, and a struct without a
    /// description is printed field by field.
    public var description: String { "GoTrueClient(\(authURL), \(proxy))" }

    /// The same as `description`.
    public var debugDescription: String { description }

    /// The largest answer read: GoTrue's are a few KiB; a server that sends more is misbehaving.
    static let maxAnswerBytes = 1 << 20

    /// Creates a client for the project at `projectURL` (the Supabase URL, without `/auth/v1`).
    /// `clientInfo` is sent as `X-Client-Info`, as the official clients do; each request,
    /// connection included, must finish within `timeout` seconds.
    public init(projectURL: URL, anonKey: String, clientInfo: String = "authd", timeout: TimeInterval = 15,
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.authURL = projectURL.appendingPathComponent("auth").appendingPathComponent("v1")
        self.anonKey = anonKey
        self.clientInfo = clientInfo
        self.timeout = .milliseconds(Int64(timeout * 1000))
        self.proxy = ProxySettings.forURL(projectURL, environment: environment)
        self.proxyVariable = ProxySettings.variable(forURL: projectURL, environment: environment)
        self.trust = TLSTrust(environment: environment)
        self.trustProblem = projectURL.scheme?.lowercased() == "https" ? trust.problem() : nil
    }

    /// The lifetimes of access tokens authd accepts, in seconds: GoTrue's `JWT_EXP` is an hour by
    /// default and a project can choose up to a week; a year leaves room for any real setting
    /// while keeping every date and duration computed from it small enough never to overflow.
    /// The lifetime is stored with the session, so an unchecked one would break every later start.
    public static let acceptedLifetimes = 1...Int(Session.maximumLifetime)
}
