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
        // On the UTF-8 bytes: splitting and rewriting a String works on grapheme clusters, which
        // made reading a token's claims the costliest step of a refresh after the I/O (every
        // event a refresh emits reads the assurance from the token).
        let bytes = Array(token.utf8)
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        guard dots.count == 2 else { return nil }
        let headerPart = bytes[..<dots[0]], claimsPart = bytes[(dots[0] + 1)..<dots[1]], signaturePart = bytes[(dots[1] + 1)...]
        guard let headerData = Self.base64URLDecoded(bytes: headerPart), let claims = Self.base64URLDecoded(bytes: claimsPart),
              let signature = Self.base64URLDecoded(bytes: signaturePart),
              let header = try? JSONDecoder().decode(Header.self, from: headerData),
              (try? JSONValue(parsing: claims))?.objectValue != nil else { return nil }
        algorithm = header.alg
        keyID = header.kid
        self.claims = claims
        signingInput = Data(bytes[..<dots[1]])
        self.signature = signature
    }

    /// base64url without padding, as JWTs and JWKs write bytes; nil for anything else.
    public static func base64URLDecoded(_ text: some StringProtocol) -> Data? {
        base64URLDecoded(bytes: Array(text.utf8)[...])
    }

    /// `base64URLDecoded` of UTF-8 bytes: rewritten to the standard alphabet with its padding,
    /// byte for byte, and decoded by Foundation.
    static func base64URLDecoded(bytes: ArraySlice<UInt8>) -> Data? {
        guard bytes.allSatisfy({ $0.isBase64URLDigit }) else { return nil }
        var base64 = Data(capacity: bytes.count + 3)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "-"): base64.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): base64.append(UInt8(ascii: "/"))
            default: base64.append(byte)
            }
        }
        base64.append(contentsOf: repeatElement(UInt8(ascii: "="), count: (4 - bytes.count % 4) % 4))
        return Data(base64Encoded: base64)
    }
}

private extension UInt8 {
    var isBase64URLDigit: Bool {
        (0x41...0x5a).contains(self) || (0x61...0x7a).contains(self) || (0x30...0x39).contains(self) || self == 0x2d || self == 0x5f
    }
}
