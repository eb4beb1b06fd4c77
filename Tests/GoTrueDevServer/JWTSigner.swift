import Crypto
import _CryptoExtras
import Foundation
import Synchronization

/// Access tokens signed as GoTrue signs them: HS256 with the project's JWT secret, or, for a
/// project with asymmetric signing keys, ES256 or RS256 with the newest of its keys, whose
/// public halves `keySet()` publishes (GoTrue's `/.well-known/jwks.json`; never the secret).
final class JWTSigner: Sendable {
    /// The algorithms a project can sign with.
    enum Algorithm: String, Sendable, CaseIterable {
        case hs256 = "HS256", es256 = "ES256", rs256 = "RS256"
    }

    /// An asymmetric signing key and its id. Kept as bytes: swift-crypto's key types are not
    /// `Sendable`.
    private struct SigningKey: Sendable {
        var kid: String
        var ecBytes: Data?
        var rsaBytes: Data?

        var ec: P256.Signing.PrivateKey? { ecBytes.flatMap { try? P256.Signing.PrivateKey(rawRepresentation: $0) } }
        var rsa: _RSA.Signing.PrivateKey? { rsaBytes.flatMap { try? _RSA.Signing.PrivateKey(derRepresentation: $0) } }
    }

    let algorithm: Algorithm
    private let secretBytes: Data
    private var secret: SymmetricKey { SymmetricKey(data: secretBytes) }
    /// Every key published, the newest (the one that signs) last.
    private let keys: Mutex<[SigningKey]>

    init(secret: String, algorithm: Algorithm = .hs256) {
        self.algorithm = algorithm
        self.secretBytes = Data(secret.utf8)
        keys = Mutex(algorithm == .hs256 ? [] : [Self.makeKey(algorithm)])
    }

    private static func makeKey(_ algorithm: Algorithm) -> SigningKey {
        let kid = UUID().uuidString.lowercased()
        switch algorithm {
        case .hs256: return SigningKey(kid: kid)
        case .es256: return SigningKey(kid: kid, ecBytes: P256.Signing.PrivateKey().rawRepresentation)
        // 2048 bits is what Supabase's RSA signing keys use.
        case .rs256:
            // A server that cannot make its key must not sign with anything else under an RS256 header.
            guard let key = try? _RSA.Signing.PrivateKey(keySize: .bits2048) else { fatalError("cannot generate an RSA signing key") }
            return SigningKey(kid: kid, rsaBytes: key.derRepresentation)
        }
    }

    /// Signs `claims` (a JSON object).
    func sign(_ claims: [String: Any]) -> String {
        let key = keys.withLock { $0.last }
        let kid = key?.kid ?? "authd-dev"
        let header = Self.base64URL(Data(#"{"alg":"\#(algorithm.rawValue)","kid":"\#(kid)","typ":"JWT"}"#.utf8))
        let payload = Self.base64URL((try? JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data())
        let input = Data((header + "." + payload).utf8)
        let signature: Data
        if let ec = key?.ec {
            signature = (try? ec.signature(for: input).rawRepresentation) ?? Data()
        } else if let rsa = key?.rsa {
            signature = (try? rsa.signature(for: SHA256.hash(data: input), padding: .insecurePKCS1v1_5).rawRepresentation) ?? Data()
        } else {
            signature = Data(HMAC<SHA256>.authenticationCode(for: input, using: secret))
        }
        return header + "." + payload + "." + Self.base64URL(signature)
    }

    /// Verifies the signature with the project's algorithm and the key the header names, and
    /// returns the claims; nil when the token is malformed, forged or signed another way.
    func verify(_ token: String) -> [String: Any]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Self.decodeBase64URL(String(parts[0])), let signature = Self.decodeBase64URL(String(parts[2])),
              let payload = Self.decodeBase64URL(String(parts[1])),
              let header = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: Any],
              header["alg"] as? String == algorithm.rawValue else { return nil }
        let input = Data((parts[0] + "." + parts[1]).utf8)
        let kid = header["kid"] as? String
        let key = keys.withLock { keys in keys.first { $0.kid == kid } }
        let valid: Bool
        switch algorithm {
        case .hs256:
            valid = HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: input, using: secret)
        case .es256:
            valid = (try? P256.Signing.ECDSASignature(rawRepresentation: signature)).map { key?.ec?.publicKey.isValidSignature($0, for: input) ?? false } ?? false
        case .rs256:
            valid = key?.rsa?.publicKey.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: input),
                                                          padding: .insecurePKCS1v1_5) ?? false
        }
        guard valid else { return nil }
        return (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any]
    }

    /// Makes a new key the signing one; the earlier ones stay published (and valid) unless
    /// `retiringOthers`. Returns the new key's id; nil for an HS256 project, which has no keys.
    func rotate(retiringOthers: Bool) -> String? {
        guard algorithm != .hs256 else { return nil }
        let key = Self.makeKey(algorithm)
        keys.withLock { keys in
            if retiringOthers { keys.removeAll() }
            keys.append(key)
        }
        return key.kid
    }

    /// The JWKS document: the public halves of the keys, none for an HS256 project.
    func keySet() -> [String: Any] {
        let published = keys.withLock { $0 }.compactMap { key -> [String: Any]? in
            var jwk: [String: Any] = ["kid": key.kid, "use": "sig", "key_ops": ["verify"], "alg": algorithm.rawValue, "ext": true]
            if let ec = key.ec {
                let raw = ec.publicKey.rawRepresentation
                jwk.merge(["kty": "EC", "crv": "P-256", "x": Self.base64URL(raw.prefix(32)), "y": Self.base64URL(raw.suffix(32))]) { $1 }
            } else if let rsa = key.rsa, let primitives = try? rsa.publicKey.getKeyPrimitives() {
                jwk.merge(["kty": "RSA", "n": Self.base64URL(primitives.modulus), "e": Self.base64URL(primitives.publicExponent)]) { $1 }
            } else {
                return nil
            }
            return jwk
        }
        return ["keys": published]
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decodeBase64URL(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
