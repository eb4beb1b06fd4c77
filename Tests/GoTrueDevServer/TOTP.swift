import Crypto
import Foundation

/// Time-based one-time passwords as GoTrue checks them (RFC 6238 with the parameters of its
/// `totp.ValidateCustom` call: HMAC-SHA1, 6 digits, a 30-second period, one period of skew either
/// way), and the RFC 4648 base32 that carries the secret.
enum TOTP {
    static let digits = 6
    static let period: TimeInterval = 30
    static let skew = 1

    /// A new secret: 20 random bytes (the library GoTrue uses makes 20), base32 without padding.
    static func newSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return base32((0..<20).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// The code for `secret` (raw bytes) at `time`, `digits` long.
    static func code(secret: [UInt8], at time: Date, digits: Int = digits) -> String {
        let counter = UInt64(max(0, floor(time.timeIntervalSince1970 / period)))
        return code(secret: secret, counter: counter, digits: digits)
    }

    /// RFC 4226's HOTP value of `counter`.
    static func code(secret: [UInt8], counter: UInt64, digits: Int = digits) -> String {
        let message = withUnsafeBytes(of: counter.bigEndian) { Data($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: secret)))
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary = (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: digits - value.count) + value
    }

    /// Whether `code` is right for the base32 `secret` at `time`, in this period or the one
    /// before or after. Like GoTrue's library, a code of the wrong length is simply wrong.
    static func isValid(_ code: String, secret: String, at time: Date) -> Bool {
        guard code.count == digits, let key = base32Decode(secret) else { return false }
        let counter = Int64(floor(time.timeIntervalSince1970 / period))
        var matched = false
        for step in -Int64(skew)...Int64(skew) where counter + step >= 0 {
            // Every candidate is compared in full, so the time taken does not tell which one matched.
            matched = constantTimeEqual(Self.code(secret: key, counter: UInt64(counter + step)), code) || matched
        }
        return matched
    }

    /// Compares two strings without stopping at the first difference.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// RFC 4648 base32, upper case, without `=` padding (how GoTrue hands out TOTP secrets).
    static func base32(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                output.append(alphabet[Int((buffer >> UInt32(bits - 5)) & 31)])
                bits -= 5
            }
        }
        if bits > 0 { output.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes base32 (either case, padding optional); nil for any other character.
    static func base32Decode(_ text: String) -> [UInt8]? {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for character in text.uppercased().utf8 where character != UInt8(ascii: "=") {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            if bits >= 8 {
                output.append(UInt8((buffer >> UInt32(bits - 8)) & 0xff))
                bits -= 8
            }
        }
        return output
    }
}
