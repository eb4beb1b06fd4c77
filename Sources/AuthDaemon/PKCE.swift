import Crypto
import FoundationEssentials

/// The random values of browser and ID-token sign-ins: PKCE verifiers and challenges (RFC 7636),
/// nonces, flow ids. All from the system's CSPRNG (`getrandom`).
enum PKCE {
    private static let alphanumerics = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
    private static let unreserved = alphanumerics + Array("-._~")

    /// A 64-character code verifier from the unreserved alphabet (RFC 7636 allows 43–128).
    static func makeVerifier() -> String { randomString(length: 64, from: unreserved) }

    /// The S256 challenge: base64url without padding of the verifier's SHA-256.
    static func challenge(for verifier: String) -> String {
        base64URL(Data(SHA256.hash(data: Data(verifier.utf8))))
    }

    /// A raw nonce and the lower-case hex SHA-256 that Apple and Google put in the ID token.
    /// Letters and digits only (256 bits): a nonce is typed on command lines (`--nonce RAW`),
    /// where one starting with `-` would read as an option.
    static func makeNonce() -> (raw: String, sha256Hex: String) {
        let raw = randomString(length: 43, from: alphanumerics)
        return (raw, SHA256.hash(data: Data(raw.utf8)).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())
    }

    /// An identifier for a pending flow (letters and digits: it travels in URLs' queries).
    static func makeFlowID() -> String { randomString(length: 16, from: alphanumerics) }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacing("+", with: "-").replacing("/", with: "_")
            .replacing("=", with: "")
    }

    private static func randomString(length: Int, from alphabet: [Character]) -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in alphabet[Int(generator.next(upperBound: UInt(alphabet.count)))] })
    }
}
