import AuthCore
import Crypto
import _CryptoExtras
import FoundationEssentials

/// Checks a JWT's signature with one published key: ES256 (ECDSA P-256, SHA-256) or RS256
/// (RSASSA-PKCS1-v1_5, SHA-256). The key must be of the token's algorithm: a token cannot pick
/// a weaker way to be checked than its key was published for.
enum TokenSignatureCheck {
    /// Why a signature was not accepted.
    enum Refusal: Error, Equatable, CustomStringConvertible {
        /// The key is not usable for the token's algorithm (type, curve or `alg` differ).
        case keyMismatch(String)
        /// The key's numbers do not make a key.
        case badKey(String)
        /// The signature does not hold.
        case badSignature

        var description: String {
            switch self {
            case .keyMismatch(let detail): return "the published key does not fit the token: \(detail)"
            case .badKey(let detail): return "the published key cannot be read: \(detail)"
            case .badSignature: return "the signature does not match the published key"
            }
        }
    }

    /// Nothing when `token`'s signature holds under `key`; the refusal otherwise.
    static func check(_ token: CompactJWT, with key: JSONWebKey) throws(Refusal) {
        if let alg = key.alg, alg != token.algorithm {
            throw .keyMismatch("it is for \(alg.prefix(16)), the token is \(token.algorithm.prefix(16))")
        }
        switch (token.algorithm, key.kty) {
        case ("ES256", "EC"):
            guard key.crv == "P-256", let x = key.x.flatMap(CompactJWT.base64URLDecoded), let y = key.y.flatMap(CompactJWT.base64URLDecoded),
                  x.count == 32, y.count == 32 else { throw .badKey("an ES256 key needs P-256 coordinates x and y of 32 bytes") }
            let publicKey: P256.Signing.PublicKey
            do { publicKey = try P256.Signing.PublicKey(rawRepresentation: x + y) } catch { throw .badKey("the point is not on P-256") }
            guard token.signature.count == 64, let signature = try? P256.Signing.ECDSASignature(rawRepresentation: token.signature),
                  publicKey.isValidSignature(signature, for: token.signingInput) else { throw .badSignature }
        case ("RS256", "RSA"):
            guard let n = key.n.flatMap(CompactJWT.base64URLDecoded), let e = key.e.flatMap(CompactJWT.base64URLDecoded) else {
                throw .badKey("an RS256 key needs n and e")
            }
            // Supabase's keys are 2048 bits. Weighed from the modulus before the key is made, so that
            // a weak key is named as such (swift-crypto refuses some sizes with a bare error).
            let bits = Self.bitLength(n)
            guard bits >= 2048 else { throw .badKey("an RSA key of \(bits) bits is too weak (2048 or more)") }
            let publicKey: _RSA.Signing.PublicKey
            do { publicKey = try _RSA.Signing.PublicKey(n: n, e: e) } catch { throw .badKey("n and e do not make an RSA key") }
            let signature = _RSA.Signing.RSASignature(rawRepresentation: token.signature)
            guard publicKey.isValidSignature(signature, for: SHA256.hash(data: token.signingInput), padding: .insecurePKCS1v1_5) else {
                throw .badSignature
            }
        default:
            throw .keyMismatch("a \(key.kty.prefix(8)) key cannot check \(token.algorithm.prefix(16))")
        }
    }

    /// The number of significant bits of the big-endian unsigned integer `bytes`.
    static func bitLength(_ bytes: Data) -> Int {
        guard let first = bytes.firstIndex(where: { $0 != 0 }) else { return 0 }
        return (bytes.endIndex - first) * 8 - bytes[first].leadingZeroBitCount
    }
}
