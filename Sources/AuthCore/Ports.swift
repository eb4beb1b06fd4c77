import FoundationEssentials

/// Where sessions are kept between daemon runs (the keyring). One entry per profile.
public protocol SessionStore: Sendable {
    /// The stored session of `profile`, or nil when there is none.
    func load(profile: String) async throws(StoreFailure) -> Session?
    /// Stores `session` for `profile`, replacing any earlier one.
    func save(_ session: Session, profile: String) async throws(StoreFailure)
    /// Removes the stored session of `profile`; succeeds when there was none.
    func delete(profile: String) async throws(StoreFailure)
}

/// Why the session store could not be used.
public enum StoreFailure: Error, Sendable, Equatable {
    /// No Secret Service is reachable (no session bus, no keyring daemon, no default collection).
    case unavailable(String)
    /// The keyring collection is locked and authd will not pop an unlock prompt by itself.
    case locked
    /// The stored entry could not be read back as a session.
    case corrupt(String)
    /// The keyring did not answer in time.
    case timedOut
}

extension StoreFailure: LocalizedError {
    /// A one-line explanation that says what to do.
    public var errorDescription: String? {
        switch self {
        case .unavailable(let detail):
            return "the keyring (Secret Service) is not available: \(detail). Start gnome-keyring or another Secret Service provider"
        case .locked: return "the keyring is locked: unlock it (for example by logging in to the desktop) and try again"
        case .corrupt(let detail): return "the stored session could not be read: \(detail)"
        case .timedOut: return "the keyring did not answer in time"
        }
    }
}

/// The Supabase Auth (GoTrue) calls a session owner makes. Implemented over HTTP in `GoTrue`.
public protocol GoTrueAPI: Sendable {
    /// A session for `credential`: `POST /token` (password, id_token, pkce) or `POST /verify`.
    /// `captchaToken` goes with a password sign-in: of the grants authd makes, the only one a
    /// project's CAPTCHA protects (`id_token` and `pkce` are exempt, `/verify` is not guarded).
    func signIn(_ credential: SignInCredential, captchaToken: String?) async throws(ServerFailure) -> SessionGrant
    /// `POST /signup`, with the CAPTCHA token when the project asks for one.
    func signUp(_ request: SignUpRequest, captchaToken: String?) async throws(ServerFailure) -> SignUpOutcome
    /// `POST /otp` or `POST /recover`: the server sends a one-time code. With the CAPTCHA token
    /// when the project asks for one; with `link`, the emailed link leads back there with a PKCE
    /// code.
    func sendCode(_ request: CodeRequest, captchaToken: String?, link: EmailLink?) async throws(ServerFailure)
    /// `POST /resend`: the server sends a confirmation again.
    func resend(_ request: ResendRequest, captchaToken: String?, link: EmailLink?) async throws(ServerFailure)
    /// `GET /user/identities/authorize` with the access token as Bearer: the URL a browser opens
    /// to link `provider`'s identity to the user, coming back to `redirectTo` with a PKCE code.
    func identityLinkURL(accessToken: String, provider: String, redirectTo: String, codeChallenge: String,
                         scopes: String?) async throws(ServerFailure) -> URL
    /// `DELETE /user/identities/{id}` with the access token as Bearer.
    func unlinkIdentity(accessToken: String, identityID: String) async throws(ServerFailure)
    /// `POST /sso`: the URL a browser opens to sign in through the project's SAML provider,
    /// coming back to `redirectTo` with a PKCE code.
    func singleSignOnURL(_ target: SingleSignOnTarget, redirectTo: String, codeChallenge: String) async throws(ServerFailure) -> URL
    /// `GET /user` with the access token as Bearer.
    func user(accessToken: String) async throws(ServerFailure) -> UserRecord
    /// `PUT /user` with the access token as Bearer.
    func updateUser(accessToken: String, _ changes: UserChanges) async throws(ServerFailure) -> UserRecord
    /// `GET /reauthenticate` with the access token as Bearer: the server sends the user a code
    /// (by email, else SMS) that a password change then carries as its `nonce`.
    func reauthenticate(accessToken: String) async throws(ServerFailure)
    /// `POST /factors` with the access token as Bearer: enrolls a second factor, unverified
    /// until a challenge of it is verified.
    func enrollFactor(accessToken: String, _ request: FactorEnrollmentRequest) async throws(ServerFailure) -> FactorEnrollment
    /// `POST /factors/{id}/challenge`: a challenge to verify a code against (for a phone
    /// factor, the server sends the code now; `channel` is `sms` or `whatsapp`).
    func challengeFactor(accessToken: String, factorID: String, channel: String?) async throws(ServerFailure) -> FactorChallenge
    /// `POST /factors/{id}/verify`: the code of a challenge. Answers the session raised to `aal2`,
    /// with a new refresh token that replaces the session's current one for good.
    func verifyFactor(accessToken: String, factorID: String, challengeID: String, code: String) async throws(ServerFailure) -> SessionGrant
    /// `DELETE /factors/{id}`: removes a factor (a verified one only from an `aal2` session).
    func unenrollFactor(accessToken: String, factorID: String) async throws(ServerFailure)
    /// `POST /token?grant_type=refresh_token`.
    func refresh(refreshToken: String) async throws(ServerFailure) -> SessionGrant
    /// `POST /logout?scope=…` with the access token as Bearer.
    func signOut(accessToken: String, scope: SignOutScope) async throws(ServerFailure)
    /// The `GET /authorize` URL a browser opens for a PKCE sign-in with `provider`.
    func authorizeURL(provider: String, redirectTo: String, codeChallenge: String, scopes: String?) -> URL
    /// `GET /.well-known/jwks.json`: the project's published public signing keys.
    func keySet() async throws(ServerFailure) -> PublishedKeySet
    /// `GET /health`: whether the server answers, and its clock from the `Date` header (nil when absent).
    func health() async throws(ServerFailure) -> Date?
    /// `GET /settings`: the sign-in methods the project enables, for a sign-in page.
    func settings() async throws(ServerFailure) -> ProjectSettings
}

extension GoTrueAPI {
    /// `signIn(_:captchaToken:)` without a CAPTCHA token.
    public func signIn(_ credential: SignInCredential) async throws(ServerFailure) -> SessionGrant {
        try await signIn(credential, captchaToken: nil)
    }

    /// `signUp(_:captchaToken:)` without a CAPTCHA token.
    public func signUp(_ request: SignUpRequest) async throws(ServerFailure) -> SignUpOutcome {
        try await signUp(request, captchaToken: nil)
    }

    /// `sendCode(_:captchaToken:link:)` without a CAPTCHA token or a link.
    public func sendCode(_ request: CodeRequest) async throws(ServerFailure) {
        try await sendCode(request, captchaToken: nil, link: nil)
    }

    /// `sendCode(_:captchaToken:link:)` without a link.
    public func sendCode(_ request: CodeRequest, captchaToken: String?) async throws(ServerFailure) {
        try await sendCode(request, captchaToken: captchaToken, link: nil)
    }
}

/// Which sessions a sign-out ends on the server.
public enum SignOutScope: String, Sendable, Equatable, Codable, CaseIterable {
    /// Only this session.
    case local
    /// Every session of the user.
    case global
    /// Every session of the user except this one (this one stays signed in).
    case others
}

/// Something outside the session that can end a transient failure early.
public enum WakeSignal: Sendable, Equatable, CustomStringConvertible {
    /// The machine woke from suspend (logind's `PrepareForSleep(false)`).
    case resumed
    /// The network configuration changed: a link came up, an address or a route was added.
    case networkChanged

    /// `resumed` or `network_changed`, for logs.
    public var description: String { self == .resumed ? "resumed" : "network_changed" }
}

/// A source of `WakeSignal`s (logind, rtnetlink), behind a port so the daemon can be tested
/// with a fake one.
public protocol WakeSignalSource: Sendable {
    /// Calls `deliver` for every signal until the task is cancelled. Returns early, having
    /// logged why, when the source is not available on this machine.
    func run(_ deliver: @escaping @Sendable (WakeSignal) -> Void) async
}

/// Asks the user whether an app may have a profile's tokens (a desktop notification).
public protocol ApprovalPrompt: Sendable {
    /// Shows the question and returns the user's answer, or nil when there is none (dismissed,
    /// no notification service). Cancellation withdraws the question.
    func ask(app: String, executable: String, profile: String) async -> AppDecision?
}

/// Tells the user, outside any app, that the server ended a session and offers to sign in
/// again (a desktop notification with a "Sign in" action).
public protocol SignOutNotice: Sendable {
    /// Shows that the session of `profile` ended for `reason`, saying how to sign in again as
    /// `plan` names it, with a "Sign in" action when `offersSignIn`, and waits: true when the
    /// user chose it, false once the notice is closed or cannot be shown. Cancelling the task
    /// withdraws the notice (the profile signed in again).
    func sessionEnded(profile: String, reason: SignOutReason, plan: SignInAgainPlan, offersSignIn: Bool) async -> Bool
}

/// Starts the sign-in the user chose on a "sign in again" notice (a browser sign-in, or
/// `authctl login` in a terminal).
public protocol SignInStarter: Sendable {
    /// Whether `plan`'s sign-in can be started here (in a terminal when `inTerminal`): a notice
    /// offers no action that would do nothing.
    func canStart(_ plan: SignInAgainPlan, inTerminal: Bool) -> Bool
    /// Starts signing `profile` in as `plan` says (in a terminal when `inTerminal`) and returns
    /// once that sign-in has ended (successfully or not: the session's events tell).
    func startSignIn(profile: String, plan: SignInAgainPlan, inTerminal: Bool) async
}

/// Opens an address in the user's browser: how the daemon shows its sign-in page.
public protocol BrowserOpener: Sendable {
    /// Whether there is a browser to start at all (a desktop session's display, or `$BROWSER`):
    /// a notice offers no sign-in that would open nothing.
    var canOpen: Bool { get }
    /// Starts the user's browser on `url` without waiting for it to close; false when no
    /// browser could be started (no display, nothing installed).
    func open(_ url: String) async -> Bool
}

/// The service manager's notification channel (`sd_notify` under systemd), behind a port so the
/// supervisor can be tested without one.
public protocol ServiceNotifier: Sendable {
    /// Sends newline-separated `KEY=value` assignments (`READY=1`, `STATUS=…`, `WATCHDOG=1`, `STOPPING=1`).
    func notify(_ assignments: String)
    /// How often the service manager expects `WATCHDOG=1`, or nil when it does not watch.
    var watchdogInterval: Duration? { get }
    /// Whether anyone listens; when not, the supervisor does not wake up to compute status lines.
    var isListening: Bool { get }
}
