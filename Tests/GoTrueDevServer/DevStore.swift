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
    /// A phone change waiting for its code (digits only, as `phone`).
    var newPhone: String?
    /// Sign-in providers linked to the user (`email`, `phone`, `google`, …).
    var providers: [String] = ["email"]
    /// MFA factors, oldest first. Kept on the user (GoTrue's `User.Factors`) so that `userJSON`
    /// can show them without going back to the store.
    var factors: [DevFactor] = []
    /// GoTrue's `is_anonymous`: set by an anonymous sign-in, cleared when an email or phone
    /// change is confirmed. Shown in the user JSON and the access token's claims.
    var isAnonymous = false
    /// Whether the user was created by an anonymous sign-in. GoTrue gives such a user no identity
    /// at sign-up, so nothing copies identity data into its `user_metadata`: it keeps only what
    /// the client sent (plus `email_verified` once an email is confirmed), even after conversion.
    var signedUpAnonymously = false
    /// Whether `app_metadata` carries `provider` and `providers`. GoTrue writes them at sign-up
    /// and on every `POST /verify`, but an anonymous sign-up writes none (its `app_metadata` is
    /// `{}`), and neither does a conversion `PUT /user` confirms at once.
    var appMetadataListsProviders = true
    /// Identities with details of their own (GoTrue's `identities` rows of OAuth and SSO sign-ins
    /// and of manual links), oldest first. The `email` and `phone` identities that `providers`
    /// lists without a record here are derived from the user (`DevIdentities.swift`).
    var identityRecords: [DevIdentity] = []
    /// GoTrue's `is_sso_user` (never shown in the user JSON): set on users an SSO sign-in created.
    /// They may share an email with another user, so lookups by email or phone skip them.
    var isSSOUser = false
}

/// A one-time code waiting to be verified.
struct DevOneTimeCode: Sendable {
    var code: String
    /// `email` (sign-in or sign-up confirmation), `sms`, `recovery` or `email_change`.
    var purpose: String
    var userID: String
    var sentAt: Date
    /// The outbox type it was sent as (`signup`, `magiclink`, `recovery`, …): which of GoTrue's
    /// token columns it stands for when a token hash is verified.
    var type = ""
    /// GoTrue's stored token (`DevEmailLinks.swift`): the hash an email link carries, `pkce_` first
    /// in the PKCE flow; empty for codes sent before links existed here.
    var tokenHash = ""
}

/// A message the server "sent", readable through `/admin/dev/outbox`.
struct DevMessage: Sendable {
    var to: String
    var channel: String
    var type: String
    var code: String
    var sentAt: Date
    /// The `GET /verify` URL an email with a link carries (`DevEmailLinks.swift`); nil otherwise.
    var link: String?
    /// The email's `{{ .TokenHash }}`; nil when it has no link.
    var tokenHash: String?
}

/// A PKCE flow between `/authorize` and the `pkce` grant.
struct DevFlowState: Sendable {
    var authCode: String
    var provider: String
    var codeChallenge: String
    var email: String
    var createdAt: Date
    /// The user the flow already signed in or linked before the browser came back (GoTrue's
    /// `flow_state.user_id`, set by a link's callback or an SSO assertion); nil when the
    /// exchange finds or creates the user by `email`.
    var userID: String? = nil
    /// The first `amr` method of the session the exchange gives (GoTrue's
    /// `authentication_method`): `oauth`, or `sso/saml` after an SSO sign-in.
    var authenticationMethod = "oauth"
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
    /// GoTrue's `sessions.aal` column: `aal1`, or `aal2` once a factor was verified on it.
    var aal = "aal1"
    /// GoTrue's `mfa_amr_claims` of the session, one per method (`password`, `otp`, `recovery`,
    /// `oauth`, `totp`, `mfa/phone`), in the order first added; `timestamp` is when it was last used.
    var amr: [DevAMREntry]
    /// The factor whose verification made the session `aal2` (GoTrue's `sessions.factor_id`):
    /// unenrolling that factor downgrades the session.
    var factorID: String?
    /// GoTrue's `sessions.refreshed_at`: when a refresh grant last answered for the session, a
    /// rotation or an accepted reuse alike; nil before the first.
    var refreshedAt: Date?

    /// GoTrue's `Session.LastRefreshedAt`: the last refresh, or the sign-in before any. The reuse
    /// window of a token two or more steps behind counts from here (either side of it).
    var lastRefreshedAt: Date { refreshedAt ?? createdAt }
}

/// One authentication method of a session and when it was last used.
struct DevAMREntry: Sendable {
    var method: String
    var timestamp: Date
}

/// A refresh token row. `parent` is the token it was rotated from.
struct DevRefreshToken: Sendable {
    var token: String
    var sessionID: String
    var parent: String?
    /// When it was issued.
    var issuedAt: Date
    /// When it was revoked (rotated away, or left behind by an MFA verification). Whether a
    /// revoked token is still answered depends on the session, not on this date
    /// (`DevSession.lastRefreshedAt`).
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
    /// PKCE flow states of email links, oldest first (`DevEmailLinks.swift`): a click hands out
    /// the code of the user's newest one for the link's type.
    var emailFlowStates: [DevEmailFlowState] = []
    /// GoTrue's `SMTP_MAX_FREQUENCY` in seconds (60 by default): how soon `/resend` and
    /// `/reauthenticate` may email the same kind of code again. Set through
    /// `POST /admin/dev/settings` (`smtp_max_frequency`), so that a test need not wait a minute.
    var smtpMaxFrequency: TimeInterval = 60
    /// GoTrue's `SMS_MAX_FREQUENCY` in seconds (60 by default), for `/resend` of `sms` and
    /// `phone_change` codes. Set through `POST /admin/dev/settings` (`sms_max_frequency`).
    var smsMaxFrequency: TimeInterval = 60
    var provider = DevProviderBehaviour()
    /// Manual identity linking and enterprise SSO (`DevIdentities.swift`, `DevSSO.swift`).
    var linking = DevLinkingState()
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
    /// MFA challenges by id; a factor's challenges go with it.
    var challenges: [String: DevChallenge] = [:]
    /// GoTrue's `EXTERNAL_ANONYMOUS_USERS_ENABLED`: whether `POST /signup` without an email or
    /// phone signs in a new anonymous user. Set through `POST /admin/dev/settings`.
    var anonymousUsers = true
    /// GoTrue's `SESSIONS_ALLOW_LOW_AAL`, in seconds: how long a session below the user's highest
    /// possible assurance level (`aal1` for a user with a verified factor) may be used. Nil (the
    /// default) lets such sessions live on. Set through `POST /admin/dev/settings`.
    var allowLowAAL: TimeInterval?

    func user(phone: String) -> DevUser? {
        // GoTrue's lookups by address leave SSO users out (`is_sso_user = false`).
        users.values.first { !$0.isSSOUser && !$0.phone.isEmpty && $0.phone == Self.normalizedPhone(phone) }
    }

    /// GoTrue stores phone numbers as digits only.
    static func normalizedPhone(_ phone: String) -> String { phone.filter(\.isNumber) }

    func user(email: String) -> DevUser? {
        users.values.first { !$0.isSSOUser && !$0.email.isEmpty && $0.email.caseInsensitiveCompare(email) == .orderedSame }
    }

    /// The factor `factorID` of the user `userID`; nil when that user has no such factor.
    func factor(_ factorID: String, of userID: String) -> DevFactor? {
        users[userID]?.factors.first { $0.id == factorID }
    }

    /// Removes the factors of `userID` that `doomed` picks, and their challenges.
    mutating func deleteFactors(of userID: String, where doomed: (DevFactor) -> Bool) {
        guard let factors = users[userID]?.factors else { return }
        let gone = Set(factors.filter(doomed).map(\.id))
        guard !gone.isEmpty else { return }
        users[userID]?.factors.removeAll { gone.contains($0.id) }
        challenges = challenges.filter { !gone.contains($0.value.factorID) }
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
