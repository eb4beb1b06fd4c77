import Crypto
import Foundation

/// SHA-256 of a string, for the development server's password digests.
enum SHA256Digest {
    static func hash(_ text: String) -> [UInt8] { Array(SHA256.hash(data: Data(text.utf8))) }
}
