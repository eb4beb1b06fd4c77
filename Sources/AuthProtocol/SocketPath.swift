#if canImport(Glibc)
import Glibc
#endif

/// Where the daemon's socket lives.
public enum SocketPath {
    /// The socket file name inside the runtime directory.
    public static let fileName = "authd.sock"
    /// The directory name inside `$XDG_RUNTIME_DIR`.
    public static let directoryName = "authd"

    /// The socket path: `$AUTHD_SOCKET` when set, else `$XDG_RUNTIME_DIR/authd/authd.sock`.
    /// Without `XDG_RUNTIME_DIR`, `/run/user/<uid>` is used when it exists (as systemd creates it).
    public static func resolve(environment: [String: String]) throws(SocketPathError) -> String {
        try resolve { environment[$0] }
    }

    /// `resolve(environment:)` for this process's environment.
    public static func resolve() throws(SocketPathError) -> String {
        try resolve(variable: ProcessEnvironment.value)
    }

    // A lookup function rather than a dictionary: a short-lived client reads two variables and
    // should not build a dictionary of all of them first.
    private static func resolve(variable: (String) -> String?) throws(SocketPathError) -> String {
        if let explicit = variable("AUTHD_SOCKET"), !explicit.isEmpty { return explicit }
        return try runtimeDirectory(variable: variable) + "/\(directoryName)/\(fileName)"
    }

    /// `$XDG_RUNTIME_DIR`, or `/run/user/<uid>` when that exists.
    private static func runtimeDirectory(variable: (String) -> String?) throws(SocketPathError) -> String {
        if let runtime = variable("XDG_RUNTIME_DIR"), !runtime.isEmpty { return runtime }
        let fallback = "/run/user/\(getuid())"
        var info = stat()
        if stat(fallback, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return fallback }
        throw .noRuntimeDirectory
    }
}

/// The socket path could not be worked out.
public enum SocketPathError: Error, Sendable, CustomStringConvertible {
    /// Neither `XDG_RUNTIME_DIR` nor `/run/user/<uid>` exists.
    case noRuntimeDirectory

    /// What to do about it.
    public var description: String {
        "XDG_RUNTIME_DIR is not set and /run/user/\(getuid()) does not exist: set XDG_RUNTIME_DIR or pass --socket PATH (or AUTHD_SOCKET)"
    }
}
