import FoundationEssentials
import FoundationGaps

/// A JWT in compact form, split but not trusted: its header's algorithm and key id, its claims
/// as JSON, and the bytes its signature covers. Whether the signature holds is for a verifier.
public struct CompactJWT: Sendable, Equatable {
    /// The header's `alg` (`HS256`, `ES256`, `RS256`, …).
    public var algorithm: String
    /// The header's `kid`, when it has one.
    public var keyID: String?
    /// The claims: the payload's JSON object, as sent.
    public var claims: Data
    /// `header.payload` as sent: what the signature signs.
    public var signingInput: Data
    /// The signature's bytes.
    public var signature: Data

    private struct Header: Decodable {
        var alg: String
        var kid: String?
    }

    /// Splits `token`; nil unless it has three base64url parts, a header with an `alg` and a
    /// payload that is a JSON object.
    public init?(_ token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Self.base64URLDecoded(parts[0]), let claims = Self.base64URLDecoded(parts[1]),
              let signature = Self.base64URLDecoded(parts[2]),
              let header = try? JSONDecoder().decode(Header.self, from: headerData),
              (try? JSONValue(parsing: claims))?.objectValue != nil else { return nil }
        algorithm = header.alg
        keyID = header.kid
        self.claims = claims
        signingInput = Data("\(parts[0]).\(parts[1])".utf8)
        self.signature = signature
    }

    /// base64url without padding, as JWTs and JWKs write bytes; nil for anything else.
    public static func base64URLDecoded(_ text: some StringProtocol) -> Data? {
        guard text.utf8.allSatisfy({ $0.isBase64URLDigit }) else { return nil }
        var base64 = String(text).replacing("-", with: "+").replacing("_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}

private extension UInt8 {
    var isBase64URLDigit: Bool {
        (0x41...0x5a).contains(self) || (0x61...0x7a).contains(self) || (0x30...0x39).contains(self) || self == 0x2d || self == 0x5f
    }
}
