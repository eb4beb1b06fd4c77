#if canImport(Glibc)
import Glibc
#endif

/// The process's environment variables, read from `environ` without Foundation, so that
/// short-lived clients that only need a socket path do not pay for loading it.
public enum ProcessEnvironment {
    /// Every `NAME=value` pair; a name given twice keeps its first value, as `getenv` does.
    public static func variables() -> [String: String] {
        var variables: [String: String] = [:]
        // Optional on purpose: `clearenv()` may leave `environ` null, whatever the import says.
        let start: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = environ
        guard var entry = start else { return variables }
        while let pointer = entry.pointee {
            let pair = String(cString: pointer)
            if let equals = pair.utf8.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(pair[..<equals])
                if variables[name] == nil { variables[name] = String(pair[pair.index(after: equals)...]) }
            }
            entry += 1
        }
        return variables
    }
}
