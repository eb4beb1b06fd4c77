import Foundation

/// A user of the development server.
struct DevUser: Sendable {
    var id: String
    /// Empty for a phone-only user, as GoTrue shows it.
    var email: String
    var phone: String = ""
    var passwordDigest: String
    /// `user_metadata` as JSON, so the store stays `Sendable`.
    var userMetadataJSON: Data
    var createdAt: Date
    var updatedAt: Date
    var lastSignInAt: Date?
    var emailConfirmedAt: Date?
    var phoneConfirmedAt: Date?
    /// An email change waiting for its code.
    var newEmail: String?
    /// Sign-in providers linked to the user (`email`, `phone`, `google`, …).
    var providers: [String] = ["email"]
}

/// A one-time code waiting to be verified.
struct DevOneTimeCode: Sendable {
    var code: String
    /// `email` (sign-in or sign-up confirmation), `sms`, `recovery` or `email_change`.
    var purpose: String
    var userID: String
    var sentAt: Date
}

/// A message the server "sent", readable through `/admin/dev/outbox`.
struct DevMessage: Sendable {
    var to: String
    var channel: String
    var type: String
    var code: String
    var sentAt: Date
}

/// A PKCE flow between `/authorize` and the `pkce` grant.
struct DevFlowState: Sendable {
    var authCode: String
    var provider: String
    var codeChallenge: String
    var email: String
    var createdAt: Date
}

/// What the simulated OAuth provider does on the next `/authorize`.
struct DevProviderBehaviour: Sendable {
    /// The identity it signs in.
    var email: String?
    /// An error to redirect back with (once).
    var error: (error: String, code: String?, description: String?)?
}

/// A session row.
struct DevSession: Sendable {
    var id: String
    var userID: String
    var createdAt: Date
    /// How it was signed in (`password`, `otp`, `recovery`, `id_token`, `oauth`), for the `amr` claim.
    var method: String
}

/// A refresh token row. `parent` is the token it was rotated from.
struct DevRefreshToken: Sendable {
    var token: String
    var sessionID: String
    var parent: String?
    var revokedAt: Date?
}

/// All server state, in memory.
struct DevStore: Sendable {
    var users: [String: DevUser] = [:]              // by id
    var sessions: [String: DevSession] = [:]        // by id
    var refreshTokens: [String: DevRefreshToken] = [:]
    /// The one unrevoked token of each session.
    var activeToken: [String: String] = [:]          // session id -> token
    /// Counters the tests read through `/admin/dev/stats`.
    var refreshGrants = 0
    /// Requests answered, by method and path (`POST /token`), admin endpoints aside.
    var requestCounts: [String: Int] = [:]
    /// An injected failure for refresh (or password) grants, set through `/admin/dev/faults`.
    var refreshFault: DevFault?
    /// Codes by address (lower-cased) and purpose, as `"<address> <purpose>"`.
    var codes: [String: DevOneTimeCode] = [:]
    var outbox: [DevMessage] = []
    var flowStates: [String: DevFlowState] = [:]
    var provider = DevProviderBehaviour()
    /// `MAILER_AUTOCONFIRM`, changeable at run time.
    var mailerAutoconfirm = true
    /// GoTrue's `UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION` (secure password change): a password
    /// change from a session older than `reauthenticationWindow` needs the code
    /// `GET /reauthenticate` sent, as `nonce`. Set through `POST /admin/dev/settings`.
    var requireReauthentication = false
    /// How recent a session's sign-in spares the code: 24 hours in GoTrue; a test sets 0.
    var reauthenticationWindow: TimeInterval = 86_400
    /// The CAPTCHA token the project accepts; nil when it has no CAPTCHA (`DevServerOptions.captchaToken`).
    var captchaToken: String?

    func user(phone: String) -> DevUser? {
        users.values.first { !$0.phone.isEmpty && $0.phone == Self.normalizedPhone(phone) }
    }

    /// GoTrue stores phone numbers as digits only.
    static func normalizedPhone(_ phone: String) -> String { phone.filter(\.isNumber) }

    func user(email: String) -> DevUser? {
        users.values.first { !$0.email.isEmpty && $0.email.caseInsensitiveCompare(email) == .orderedSame }
    }

    /// Removes a session and every refresh token it ever had.
    mutating func deleteSession(_ id: String) {
        sessions[id] = nil
        activeToken[id] = nil
        refreshTokens = refreshTokens.filter { $0.value.sessionID != id }
    }
}

extension DevUser {
    /// `user_metadata` decoded.
    var userMetadata: [String: Any] {
        (try? JSONSerialization.jsonObject(with: userMetadataJSON)) as? [String: Any] ?? [:]
    }
}
