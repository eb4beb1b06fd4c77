import FoundationEssentials
import FoundationGaps
#if canImport(Glibc)
import Glibc
#endif

/// Prepares the directory that holds the socket and refuses to run where it would be unsafe.
enum SocketDirectory {
    /// Creates the socket's directory (0700) if needed, checks it is ours and private, and takes the
    /// lock `<socket>.lock` for the life of the process; fails if another daemon holds it. Holding
    /// the lock makes any socket file already there a leftover of a crash, safe to replace.
    /// Returns the lock's descriptor: the lock lasts as long as it stays open.
    static func prepare(forSocketAt path: String) throws -> Int32 {
        let directory = path.pathDirectory
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
        let lockPath = path + ".lock"
        // Write-only, for its owner only: a sandboxed app given this directory read-only (as the
        // README says to) can then open the lock neither way (no read permission; a read-only
        // mount refuses writing), so it cannot hold it and keep a restarted authd from starting.
        let lock = open(lockPath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o200)
        guard lock >= 0 else {
            throw SocketSetupError("cannot open the lock \(lockPath): \(String(cString: strerror(errno)))")
        }
        fchmod(lock, 0o200)
        // flock, not a probe of the socket: two daemons starting at the same moment cannot both win.
        if flock(lock, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            close(lock)
            if code == EWOULDBLOCK {
                throw SocketSetupError("another authd is already running on \(path) (it holds \(lockPath))", alreadyRunning: true)
            }
            throw SocketSetupError("cannot lock \(lockPath): \(String(cString: strerror(code)))")
        }
        return lock
    }
}

/// The socket could not be set up safely.
public struct SocketSetupError: Error, LocalizedError {
    /// What went wrong and what to do.
    public let errorDescription: String?
    /// True when another daemon already serves this socket.
    public let alreadyRunning: Bool
    init(_ message: String, alreadyRunning: Bool = false) {
        errorDescription = message
        self.alreadyRunning = alreadyRunning
    }
}
