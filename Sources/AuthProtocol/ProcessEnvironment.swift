#if canImport(Glibc)
import Glibc
#endif

/// This process's environment variables, read without Foundation, so that short-lived clients
/// that only need a socket path do not pay for loading it.
public enum ProcessEnvironment {
    /// The value of `name`, as `getenv` finds it; nil when unset.
    public static func value(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }
}
