import FoundationEssentials

/// One public key of a JWKS (RFC 7517), as GoTrue publishes its asymmetric signing keys: an EC
/// P-256 key (`x`, `y`) or an RSA key (`n`, `e`), all base64url.
public struct JSONWebKey: Sendable, Equatable, Decodable {
    /// `EC` or `RSA` (`oct`, a shared secret, is never published).
    public var kty: String
    /// The key id that tokens name in their header.
    public var kid: String?
    /// The algorithm the key is for (`ES256`, `RS256`), when given.
    public var alg: String?
    /// The curve of an EC key (`P-256`).
    public var crv: String?
    /// An EC key's coordinates.
    public var x: String?
    /// An EC key's coordinates.
    public var y: String?
    /// An RSA key's modulus.
    public var n: String?
    /// An RSA key's exponent.
    public var e: String?
    /// What the key is for (`sig`), when given.
    public var use: String?

    /// Creates a key.
    public init(kty: String, kid: String?, alg: String? = nil, crv: String? = nil, x: String? = nil, y: String? = nil,
                n: String? = nil, e: String? = nil, use: String? = nil) {
        self.kty = kty
        self.kid = kid
        self.alg = alg
        self.crv = crv
        self.x = x
        self.y = y
        self.n = n
        self.e = e
        self.use = use
    }
}

/// A JWKS document: `{"keys": [...]}`. Keys of a kind authd cannot read are kept (and never match).
public struct JSONWebKeySet: Sendable, Equatable, Decodable {
    /// The keys.
    public var keys: [JSONWebKey]

    /// Creates a set.
    public init(keys: [JSONWebKey]) { self.keys = keys }

    /// The key with id `kid`, if published.
    public func key(id kid: String) -> JSONWebKey? { keys.first { $0.kid == kid } }
}

/// A JWKS as the server answered it, with its `Cache-Control` header.
public struct PublishedKeySet: Sendable, Equatable {
    /// The keys.
    public var keySet: JSONWebKeySet
    /// The `Cache-Control` header, when there was one.
    public var cacheControl: String?

    /// Creates a published set.
    public init(keySet: JSONWebKeySet, cacheControl: String?) {
        self.keySet = keySet
        self.cacheControl = cacheControl
    }
}
