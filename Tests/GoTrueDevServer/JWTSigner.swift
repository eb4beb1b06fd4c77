import Crypto
import Foundation

/// HS256 JWTs, as GoTrue signs access tokens with the project's JWT secret.
struct JWTSigner: Sendable {
    private let secret: Data

    init(secret: String) { self.secret = Data(secret.utf8) }

    private var key: SymmetricKey { SymmetricKey(data: secret) }

    /// Signs `claims` (a JSON object).
    func sign(_ claims: [String: Any]) -> String {
        let header = Self.base64URL(Data(#"{"alg":"HS256","kid":"authd-dev","typ":"JWT"}"#.utf8))
        let payload = Self.base64URL((try? JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data())
        let input = header + "." + payload
        let signature = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: key)
        return input + "." + Self.base64URL(Data(signature))
    }

    /// Verifies the signature and returns the claims; nil when the token is malformed or forged.
    func verify(_ token: String) -> [String: Any]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let signature = Self.decodeBase64URL(String(parts[2])),
              let payload = Self.decodeBase64URL(String(parts[1])) else { return nil }
        let input = Data((parts[0] + "." + parts[1]).utf8)
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: input, using: key) else { return nil }
        return (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any]
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
