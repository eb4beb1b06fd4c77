import FoundationEssentials

/// The user as GoTrue describes it (`GET /user`, `PUT /user`): the summary authd keeps with the
/// session, the factors and identities the user has, and the whole object, handed to clients as
/// the server wrote it.
public struct UserRecord: Sendable, Equatable {
    /// The summary kept with the session.
    public var summary: UserSummary
    /// The server's user object, as JSON, as it came.
    public var json: Data
    /// Every second factor the user has enrolled, verified or not, as listed.
    public var factors: [ListedFactor]
    /// The identities linked to the user (`email`, `github`, `sso:<id>`, …), as listed.
    public var identities: [LinkedIdentity]

    /// Creates a record.
    public init(summary: UserSummary, json: Data, factors: [ListedFactor] = [], identities: [LinkedIdentity] = []) {
        self.summary = summary
        self.json = json
        self.factors = factors
        self.identities = identities
    }
}

/// A second factor as the user object lists it.
public struct ListedFactor: Sendable, Equatable {
    /// Its id (a UUID).
    public var id: String
    /// Its `factor_type` (`totp`, `phone`, …), `unknown` when the server names none.
    public var type: String
    /// The name the user gave it; nil when none or empty.
    public var friendlyName: String?
    /// `verified` or `unverified`, `unknown` when the server says neither.
    public var status: String
    /// For a phone factor: the number; nil when none or empty.
    public var phone: String?
    /// When it was enrolled, as the server wrote it.
    public var createdAt: String?

    /// Creates a listed factor.
    public init(id: String, type: String, friendlyName: String? = nil, status: String, phone: String? = nil, createdAt: String? = nil) {
        self.id = id
        self.type = type
        self.friendlyName = friendlyName
        self.status = status
        self.phone = phone
        self.createdAt = createdAt
    }

    /// Whether a challenge of it has been verified: what lets a session reach `aal2`.
    public var isVerified: Bool { status == "verified" }
}

/// An identity linked to the user: a way to sign in to the same account.
public struct LinkedIdentity: Sendable, Equatable {
    /// Its `identity_id`: what unlinking it names.
    public var id: String
    /// `email`, `phone`, `github`, `google`, `sso:<id>`, …
    public var provider: String
    /// Its email, when it has one (its own, else its provider data's).
    public var email: String?
    /// When it was linked, as the server wrote it.
    public var createdAt: String?
    /// When it last signed in, as the server wrote it.
    public var lastSignInAt: String?

    /// Creates an identity.
    public init(id: String, provider: String, email: String? = nil, createdAt: String? = nil, lastSignInAt: String? = nil) {
        self.id = id
        self.provider = provider
        self.email = email
        self.createdAt = createdAt
        self.lastSignInAt = lastSignInAt
    }
}
