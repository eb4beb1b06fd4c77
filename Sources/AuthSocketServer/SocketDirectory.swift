import AuthIPC
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Prepares the directory that holds the socket and refuses to run where it would be unsafe.
enum SocketDirectory {
    /// Creates the socket's directory (0700) if needed, checks it is ours and private, and fails if
    /// another daemon already answers on the socket (so we never steal a live socket).
    static func prepare(forSocketAt path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if mkdir(directory, 0o700) != 0, errno != EEXIST {
            throw SocketSetupError("cannot create \(directory): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard stat(directory, &info) == 0 else {
            throw SocketSetupError("cannot inspect \(directory): \(String(cString: strerror(errno)))")
        }
        guard info.st_uid == getuid() else {
            throw SocketSetupError("\(directory) belongs to uid \(info.st_uid), not to us (uid \(getuid())); refusing to listen there")
        }
        if info.st_mode & 0o022 != 0 {
            throw SocketSetupError("\(directory) is writable by other users (mode \(String(info.st_mode & 0o777, radix: 8))), so another user could replace the socket; put the socket in a private directory (the default is $XDG_RUNTIME_DIR/authd)")
        }
        if isLive(path) {
            throw SocketSetupError("another authd is already listening on \(path)")
        }
    }

    /// Whether something accepts connections on `path` (a file left by a crash does not).
    private static func isLive(_ path: String) -> Bool {
        (try? LineConnection.connect(path: path)) != nil
    }
}

/// The socket could not be set up safely.
public struct SocketSetupError: Error, LocalizedError {
    /// What went wrong and what to do.
    public let errorDescription: String?
    init(_ message: String) { errorDescription = message }
}
