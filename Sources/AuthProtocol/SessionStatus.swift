import FoundationEssentials

/// The state of one profile's session as clients see it. Holds no token.
public struct SessionStatus: Codable, Sendable, Equatable {
    /// The profile name.
    public var profile: String
    /// The state (`SessionState`).
    public var state: SessionState
    /// The signed-in user.
    public var user: User?
    /// The access token's expiry as Unix seconds.
    public var expiresAt: Int64?
    /// Why the session ended, when it ended while the daemon ran.
    public var signOutReason: String?
    /// Set while refreshing fails transiently.
    public var degraded: Degraded?
    /// `ok` or `unavailable`.
    public var keyring: String
    /// Why the keyring is unavailable.
    public var keyringDetail: String?
    /// The Supabase project URL.
    public var server: String
    /// The session's authenticator assurance level, from its token's `aal` claim (`aal1`, `aal2`);
    /// absent when signed out or when the token does not say.
    public var aal: String?
    /// The level the session can reach: `aal2` once the user has a verified second factor, else `aal`.
    public var nextAal: String?
    /// How the session was authenticated, from the token's `amr` claim, most recent first
    /// (`password`, `otp`, `totp`, `phone`, `oauth`, …).
    public var amr: [String]?

    /// Creates a status.
    public init(profile: String, state: SessionState, user: User? = nil, expiresAt: Int64? = nil, signOutReason: String? = nil,
                degraded: Degraded? = nil, keyring: String = "ok", keyringDetail: String? = nil, server: String,
                aal: String? = nil, nextAal: String? = nil, amr: [String]? = nil) {
        self.profile = profile
        self.state = state
        self.user = user
        self.expiresAt = expiresAt
        self.signOutReason = signOutReason
        self.degraded = degraded
        self.keyring = keyring
        self.keyringDetail = keyringDetail
        self.server = server
        self.aal = aal
        self.nextAal = nextAal
        self.amr = amr
    }

    /// The signed-in user as shown in status.
    public struct User: Codable, Sendable, Equatable {
        /// The user's UUID.
        public var id: String
        /// The email.
        public var email: String?
        /// The phone.
        public var phone: String?
        /// True for a user who signed in anonymously and has no email or phone yet; absent
        /// otherwise.
        public var isAnonymous: Bool?
        /// How to name the user to a person: the email, else the phone (with the `+` GoTrue
        /// does not keep: `15551234567` reads as a local number), else the id (said to be
        /// anonymous when it is).
        public var displayName: String {
            if let email { return email }
            if let phone { return !phone.isEmpty && phone.allSatisfy({ $0.isASCII && $0.isNumber }) ? "+" + phone : phone }
            return isAnonymous == true ? "anonymous user \(id)" : id
        }
        /// Creates a user.
        public init(id: String, email: String?, phone: String?, isAnonymous: Bool? = nil) {
            self.id = id
            self.email = email
            self.phone = phone
            self.isAnonymous = isAnonymous
        }
        enum CodingKeys: String, CodingKey { case id, email, phone, isAnonymous = "is_anonymous" }
    }

    /// Transient refresh trouble.
    public struct Degraded: Codable, Sendable, Equatable {
        /// `offline`, `server_error` or `rate_limited`.
        public var reason: String
        /// A one-line explanation.
        public var detail: String
        /// When the next attempt is due, Unix seconds.
        public var retryAt: Int64
        /// Creates a degraded description.
        public init(reason: String, detail: String, retryAt: Int64) {
            self.reason = reason
            self.detail = detail
            self.retryAt = retryAt
        }
        enum CodingKeys: String, CodingKey { case reason, detail, retryAt = "retry_at" }
    }

    enum CodingKeys: String, CodingKey {
        case profile, state, user, expiresAt = "expires_at", signOutReason = "sign_out_reason", degraded, keyring
        case keyringDetail = "keyring_detail", server, aal, nextAal = "next_aal", amr
    }

    /// Whether a second factor would raise the session: it is `aal1` and the user has one.
    public var needsSecondFactor: Bool {
        guard let aal, let nextAal else { return false }
        return aal != nextAal
    }

    /// Whether a session is held.
    public var isSignedIn: Bool { state.isSignedIn }
}

/// The `event` notification's parameters.
public struct AuthEventMessage: Codable, Sendable, Equatable {
    /// The notification method name for events.
    public static let method = "event"

    /// The event (`AuthEventName`). Clients must ignore names they do not know.
    public var event: AuthEventName
    /// The profile it concerns.
    public var profile: String
    /// The status after the change.
    public var status: SessionStatus
    /// For `SIGNED_OUT`, why; for `REFRESH_FAILING`, the degraded reason.
    public var reason: String?
    /// For `INITIAL_SESSION`, whether the stored token had already expired.
    public var expired: Bool?
    /// For `INTERACTIVE_SIGN_IN_ENDED`, the sign-in page it concerns.
    public var flowID: String?
    /// For `INTERACTIVE_SIGN_IN_ENDED` that failed, why, in plain words.
    public var message: String?

    /// Creates an event message.
    public init(event: AuthEventName, profile: String, status: SessionStatus, reason: String? = nil, expired: Bool? = nil,
                flowID: String? = nil, message: String? = nil) {
        self.event = event
        self.profile = profile
        self.status = status
        self.reason = reason
        self.expired = expired
        self.flowID = flowID
        self.message = message
    }

    enum CodingKeys: String, CodingKey { case event, profile, status, reason, expired, flowID = "flow_id", message }
}
