import FoundationEssentials

/// The claims of a Supabase JWT that authd reads, decoded once for every reader: an access
/// token's (`aal` and `amr` for the assurance, the address and providers for the "sign in again"
/// plan, `iat` and `exp` for the claims report) and a project key's `role`. Read without checking
/// any signature: each reader says why that is enough for its use.
///
/// Each claim decodes on its own: one of another type (a number where a string belongs) reads
/// as absent and is named in `malformed`, so that a reader that must not act on such a token
/// can tell, while the others still read theirs.
public struct TokenClaims: Sendable, Equatable, Decodable {
    /// `role`: `anon`, `authenticated`, `service_role`, …
    public var role: String?
    /// `aal`: the assurance level's name.
    public var aal: String?
    /// `amr`: how the session was authenticated, most recent first.
    public var amr: [AuthenticationMethod]?
    /// `email`.
    public var email: String?
    /// `phone`.
    public var phone: String?
    /// `is_anonymous`.
    public var isAnonymous: Bool?
    /// `app_metadata`, of which the providers are read.
    public var appMetadata: AppMetadata?
    /// `iat`, in seconds since 1970.
    public var issuedAt: Double?
    /// `exp`, in seconds since 1970.
    public var expiresAt: Double?
    /// The claims above that the token carries with a value of another type (by their JSON names).
    public var malformed: Set<String> = []

    /// An `amr` entry. GoTrue writes objects (`{"method":…,"timestamp":…}`, SSO ones with the
    /// `provider`), older servers plain strings.
    public struct AuthenticationMethod: Sendable, Equatable, Decodable {
        /// `password`, `otp`, `totp`, `oauth`, `sso/saml`, …
        public var method: String?
        /// For `sso/saml`, the SSO provider's id; nil when absent or not a string.
        public var provider: String?

        /// Decodes a string or an object whose `method`, if any, is a string.
        public init(from decoder: any Decoder) throws {
            if let text = try? decoder.singleValueContainer().decode(String.self) {
                method = text
                return
            }
            let container = try decoder.container(keyedBy: Keys.self)
            method = try container.decodeIfPresent(String.self, forKey: .method)
            provider = try? container.decodeIfPresent(String.self, forKey: .provider)
        }

        private enum Keys: String, CodingKey { case method, provider }
    }

    /// The part of `app_metadata` authd reads.
    public struct AppMetadata: Sendable, Equatable, Decodable {
        /// The provider of the account's first identity.
        public var provider: String?
        /// The providers of every identity linked.
        public var providers: [String]?
    }

    /// The claims of `token`; nil when it is not a compact JWT.
    public init?(accessToken token: String) {
        guard let jwt = CompactJWT(token) else { return nil }
        self.init(payload: jwt.claims)
    }

    /// The claims in a JWT's decoded payload; nil when it is not a JSON object.
    public init?(payload: Data) {
        guard let claims = try? JSONDecoder().decode(TokenClaims.self, from: payload) else { return nil }
        self = claims
    }

    /// Whether none of `claims` (JSON names) is malformed.
    public func wellFormed(_ claims: Set<String>) -> Bool {
        malformed.isDisjoint(with: claims)
    }

    private enum Keys: String, CodingKey {
        case role, aal, amr, email, phone, isAnonymous = "is_anonymous", appMetadata = "app_metadata", issuedAt = "iat", expiresAt = "exp"
    }

    /// Decodes each claim on its own (see the type's description); throws only when the payload
    /// is not a JSON object.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        var malformed: Set<String> = []
        func claim<Value: Decodable>(_ key: Keys) -> Value? {
            do { return try container.decodeIfPresent(Value.self, forKey: key) } catch {
                malformed.insert(key.stringValue)
                return nil
            }
        }
        role = claim(.role)
        aal = claim(.aal)
        amr = claim(.amr)
        email = claim(.email)
        phone = claim(.phone)
        isAnonymous = claim(.isAnonymous)
        appMetadata = claim(.appMetadata)
        issuedAt = claim(.issuedAt)
        expiresAt = claim(.expiresAt)
        self.malformed = malformed
    }
}
