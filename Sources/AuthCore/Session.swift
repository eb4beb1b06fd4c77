import FoundationEssentials

/// A signed-in Supabase session as authd holds it.
///
/// `expiresAt` is computed on *our* clock from `expires_in` at receipt, never from the server's
/// `expires_at`, so a skewed local clock cannot make a fresh session look expired.
/// The description is redacted: printing or logging a session never shows a token.
public struct Session: Sendable, Equatable, Codable {
    /// The JWT handed to clients as a bearer token.
    public var accessToken: String
    /// The opaque rotating refresh token. Never leaves the daemon except to GoTrue and the keyring.
    public var refreshToken: String
    /// When the access token expires, on the local wall clock.
    public var expiresAt: Date
    /// When the session was received, on the local wall clock.
    public var receivedAt: Date
    /// The signed-in user.
    public var user: UserSummary

    /// Creates a session from its parts.
    public init(accessToken: String, refreshToken: String, expiresAt: Date, receivedAt: Date, user: UserSummary) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.receivedAt = receivedAt
        self.user = user
    }

    /// The longest access-token lifetime authd takes from a server: one year. GoTrue's own
    /// limit is far lower; a larger `expires_in` is a broken or hostile answer, and taking it
    /// as it is would put dates beyond what the wire's integers can carry.
    public static let maximumLifetime: TimeInterval = 31_536_000

    /// Creates a session from a grant GoTrue returned, received at `now`. The lifetime is taken
    /// between 0 and `maximumLifetime` (the HTTP adapter refuses answers outside it before this).
    public init(grant: SessionGrant, receivedAt now: Date) {
        let lifetime = min(max(TimeInterval(grant.expiresIn), 0), Self.maximumLifetime)
        self.init(accessToken: grant.accessToken, refreshToken: grant.refreshToken,
                  expiresAt: now.addingTimeInterval(lifetime), receivedAt: now, user: grant.user)
    }

    /// This session as it may be served, read back from the store at `now`: dates that are not
    /// finite, a lifetime outside 0…`maximumLifetime`, or a receipt more than that away from `now`
    /// (a session stored by an older version, or a damaged item) make it expired at `now`, so it
    /// is refreshed at once instead of carrying an impossible expiry into timers and the wire.
    public func plausible(at now: Date) -> Session {
        let received = receivedAt.timeIntervalSince1970, expires = expiresAt.timeIntervalSince1970
        let fine = received.isFinite && expires.isFinite
            && (0...Self.maximumLifetime).contains(expires - received)
            && abs(received - now.timeIntervalSince1970) <= Self.maximumLifetime
        if fine { return self }
        var expired = self
        expired.receivedAt = now
        expired.expiresAt = now
        return expired
    }

    /// The access token's lifetime as granted.
    public var lifetime: TimeInterval { expiresAt.timeIntervalSince(receivedAt) }

    /// Seconds of validity left at `now` (negative once expired).
    public func remaining(at now: Date) -> TimeInterval { expiresAt.timeIntervalSince(now) }

    /// Moves the local wall-clock dates by `offset` seconds, keeping the lifetime: what a backward
    /// jump of the wall clock calls for, since the token's real validity did not change.
    public mutating func shift(by offset: TimeInterval) {
        expiresAt.addTimeInterval(offset)
        receivedAt.addTimeInterval(offset)
    }
}

extension Session: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A redacted description: the user and expiry, never a token.
    public var description: String {
        "Session(user: \(user.id), expiresAt: \(expiresAt), tokens: <redacted>)"
    }
    /// Same as `description`: debug output must not leak tokens either.
    public var debugDescription: String { description }
    /// A mirror without the tokens, so `dump()` and test failure output stay redacted.
    public var customMirror: Mirror {
        Mirror(self, children: ["user": user, "expiresAt": expiresAt, "receivedAt": receivedAt])
    }
}

/// What authd keeps about the user: enough for status lines, nothing sensitive.
public struct UserSummary: Sendable, Equatable, Codable {
    /// The user's UUID (`sub`).
    public var id: String
    /// The user's email, if any.
    public var email: String?
    /// The user's phone, if any.
    public var phone: String?
    /// The user's verified second factors, as the server last listed them: what makes `aal2`
    /// the session's next level.
    public var verifiedFactors: [FactorSummary]
    /// Whether the user signed in anonymously and has not yet been given an email address or
    /// phone number (GoTrue's `is_anonymous`).
    public var isAnonymous: Bool

    /// Creates a user summary.
    public init(id: String, email: String? = nil, phone: String? = nil, verifiedFactors: [FactorSummary] = [], isAnonymous: Bool = false) {
        self.id = id
        self.email = email
        self.phone = phone
        self.verifiedFactors = verifiedFactors
        self.isAnonymous = isAnonymous
    }

    private enum CodingKeys: String, CodingKey { case id, email, phone, verifiedFactors, isAnonymous }

    /// Decodes a summary; one stored before factors (or anonymous users) were kept has none (and
    /// was not anonymous: authd could not sign one in then).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        email = try container.decodeIfPresent(String.self, forKey: .email)
        phone = try container.decodeIfPresent(String.self, forKey: .phone)
        verifiedFactors = try container.decodeIfPresent([FactorSummary].self, forKey: .verifiedFactors) ?? []
        isAnonymous = try container.decodeIfPresent(Bool.self, forKey: .isAnonymous) ?? false
    }
}

/// A session as GoTrue returned it, before it is placed on the local clock.
public struct SessionGrant: Sendable, Equatable {
    /// The access token (JWT).
    public var accessToken: String
    /// The refresh token.
    public var refreshToken: String
    /// Lifetime of the access token in seconds.
    public var expiresIn: Int
    /// The user the session belongs to.
    public var user: UserSummary

    /// Creates a grant.
    public init(accessToken: String, refreshToken: String, expiresIn: Int, user: UserSummary) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.user = user
    }
}

extension SessionGrant: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A redacted description.
    public var description: String { "SessionGrant(user: \(user.id), expiresIn: \(expiresIn), tokens: <redacted>)" }
    /// A redacted debug description.
    public var debugDescription: String { description }
    /// A mirror without the tokens.
    public var customMirror: Mirror { Mirror(self, children: ["user": user, "expiresIn": expiresIn]) }
}
