#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials

/// Standard input, output and error as plain descriptors: what `FileHandle` did for the product,
/// without Foundation.
public enum StandardStreams {
    /// Writes `text` to standard error, all of it unless the descriptor fails.
    public static func writeError(_ text: String) { write(Array(text.utf8), to: STDERR_FILENO) }

    /// Writes `bytes` to standard output, all of it unless the descriptor fails. False when the
    /// write failed (a closed pipe).
    @discardableResult
    public static func writeOutput(_ bytes: some Collection<UInt8>) -> Bool { write(Array(bytes), to: STDOUT_FILENO) }

    /// Writes `bytes` to `descriptor`, retrying short writes and interruptions; false on failure.
    @discardableResult
    public static func write(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    /// Everything `descriptor` (standard input by default) gives until its end, or until `limit`
    /// bytes; nil when reading fails.
    public static func readToEnd(from descriptor: Int32 = STDIN_FILENO, limit: Int = 16 << 20) -> Data? {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while data.count < limit {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[..<count])
        }
        return data
    }
}
