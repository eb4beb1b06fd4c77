import Foundation

/// How the development server behaves.
public struct DevServerOptions: Sendable {
    /// Secret for HS256 access tokens.
    public var jwtSecret: String
    /// Access-token lifetime in seconds (`expires_in`).
    public var accessTokenLifetime: Int
    /// GoTrue's `REUSE_INTERVAL` (default 0): how near the session's last refresh, either side, a
    /// revoked refresh token older than the current one's parent is still answered.
    public var reuseInterval: TimeInterval
    /// When set, every request must carry this `apikey` header, like the Supabase gateway demands.
    public var anonKey: String?
    /// The public base URL, used as the token issuer (`<base>/auth/v1`).
    public var externalURL: String
    /// Seconds to hold back the answer to a refresh grant *after* the token was rotated: widens the
    /// window in which a client can die having lost the only copy of its new refresh token.
    public var refreshResponseDelay: TimeInterval = 0
    /// Whether sign-ups by email are confirmed at once (GoTrue's `MAILER_AUTOCONFIRM`). When false,
    /// sign-up answers a bare user and a confirmation code goes to the outbox. Changeable at run
    /// time through `POST /admin/dev/settings`.
    public var mailerAutoconfirm = true
    /// Whether anonymous sign-ins are enabled (GoTrue's `EXTERNAL_ANONYMOUS_USERS_ENABLED`, off in
    /// GoTrue's default project). On here, so that the embedded server lets one try them out;
    /// changeable at run time through `POST /admin/dev/settings` (`"anonymous_users"`).
    public var anonymousUsers = true
    /// How access tokens are signed: `HS256` with `jwtSecret` (GoTrue's legacy secret), or
    /// `ES256` / `RS256` with a generated key published at `/.well-known/jwks.json`.
    public var signingAlgorithm = "HS256"
    /// When set, the project protects what GoTrue's CAPTCHA protects (sign-up, `/otp`,
    /// `/recover`, the password grant): `gotrue_meta_security.captcha_token` must be this value,
    /// the one token this server's stand-in CAPTCHA provider accepts. Changeable at run time
    /// through `POST /admin/dev/settings` (`"captcha_token"`; an empty string turns it off).
    public var captchaToken: String?
    /// How long one-time codes stay valid, in seconds (GoTrue's `MAILER_OTP_EXP`, default 3600).
    public var otpLifetime: TimeInterval = 3600
    /// The client IDs accepted as the `aud` of ID tokens (a provider's "Client IDs" setting).
    public var idTokenClientIDs: [String] = ["authd-dev-client"]
    /// Redirect URLs other than loopback that `/authorize` accepts (prefixes; the project's
    /// "Redirect URLs" allow list). Others fall back to the site URL, as GoTrue does.
    public var redirectAllowList: [String] = ["authd://", "myapp://"]
    /// Every message sent is also appended here as one JSON line, when set.
    public var outboxFile: String?
    /// Every access token and refresh token issued and every password received is appended
    /// here, one per line, when set: the list of secrets the end-to-end suite's scan looks for.
    public var secretsFile: String?

    /// Creates options with GoTrue's defaults where it has them.
    public init(jwtSecret: String = "authd-dev-server-jwt-secret-at-least-32-characters", accessTokenLifetime: Int = 3600,
                reuseInterval: TimeInterval = 0, anonKey: String? = nil, externalURL: String = "http://127.0.0.1:9999") {
        self.jwtSecret = jwtSecret
        self.accessTokenLifetime = accessTokenLifetime
        self.reuseInterval = reuseInterval
        self.anonKey = anonKey
        self.externalURL = externalURL
    }
}
