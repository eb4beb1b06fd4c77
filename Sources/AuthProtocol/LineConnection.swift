#if canImport(Glibc)
import Glibc
#endif

/// A blocking, newline-framed connection to a Unix socket. Small on purpose: short-lived clients
/// (authctl, scripts) pay nothing for an event loop they would use once, and nothing for
/// Foundation either.
public final class LineConnection: @unchecked Sendable {
    // Unchecked: the fd and buffer are used from one thread at a time by contract (one caller).
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var closed = false
    /// The longest line accepted from the daemon.
    public let maxLineLength: Int

    private init(fd: Int32, maxLineLength: Int) {
        self.fd = fd
        self.maxLineLength = maxLineLength
    }

    deinit { close() }

    /// Connects to the socket at `path`, and checks that a process of this user serves it
    /// before anything is written (`IPCError.foreignServer` otherwise).
    public static func connect(path: String, maxLineLength: Int = 1 << 20) throws(IPCError) -> LineConnection {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .io("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            Glibc.close(fd)
            throw .io("socket path is longer than \(capacity - 1) bytes: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if result != 0 {
            let code = errno
            Glibc.close(fd)
            if code == ENOENT || code == ECONNREFUSED || code == ENOTDIR {
                throw .daemonNotRunning(path: path)
            }
            throw .io("connect to \(path): \(String(cString: strerror(code)))")
        }
        do throws(IPCError) { try checkServedByUs(fd, path: path) } catch {
            Glibc.close(fd)
            throw error
        }
        return LineConnection(fd: fd, maxLineLength: maxLineLength)
    }

    /// Throws unless the process that listens on the connected socket `fd` runs as our uid.
    ///
    /// Whoever can put a socket at the path (a wrong `--socket` or `AUTHD_SOCKET`, a runtime
    /// directory another user created first) would otherwise be sent passwords and codes and
    /// be believed about tokens. authd refuses clients of other users the same way; here the
    /// client refuses the server. Root is no exception: a daemon of another uid is not root's.
    private static func checkServedByUs(_ fd: Int32, path: String) throws(IPCError) {
        var credentials = ServerCredentials()
        var length = socklen_t(MemoryLayout<ServerCredentials>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
              Int(length) == MemoryLayout<ServerCredentials>.size else {
            throw .io("cannot tell who serves \(path) (SO_PEERCRED: \(String(cString: strerror(errno)))), so nothing was sent to it")
        }
        let ours = getuid()
        guard credentials.uid == ours else { throw .foreignServer(path: path, uid: credentials.uid, expectedUID: ours) }
    }

    /// Sets how long `readLine` may block, in seconds; nil waits forever.
    public func setReadTimeout(_ seconds: Double?) {
        var value = timeval()
        if let seconds {
            value.tv_sec = Int(seconds)
            value.tv_usec = Int((seconds - Double(Int(seconds))) * 1_000_000)
        }
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Writes all of `bytes` (an array, `Data` or any other collection of bytes).
    public func write(_ bytes: some Collection<UInt8>) throws(IPCError) {
        var failure: IPCError?
        Array(bytes).withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < raw.count {
                let written = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno == EPIPE || errno == ECONNRESET ? .closedByDaemon : .io("write: \(String(cString: strerror(errno)))")
                    return
                }
                offset += written
            }
        }
        if let failure { throw failure }
    }

    /// Reads one line without its newline; nil when the daemon closed the connection.
    public func readLine() throws(IPCError) -> [UInt8]? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            if buffer.count > maxLineLength { throw .io("the daemon sent a line longer than \(maxLineLength) bytes") }
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            let count = recv(fd, &chunk, chunk.count, 0)
            if count == 0 { return nil }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { throw .timedOut }
                if errno == ECONNRESET { return nil }
                throw .io("read: \(String(cString: strerror(errno)))")
            }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    /// Wakes a `readLine` blocked on another thread, which then returns nil, and stops further
    /// I/O; the descriptor itself stays open until `close()`, so it cannot be reused meanwhile.
    public func interrupt() {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Tells the daemon nothing more will be sent (a half close); answers can still be read.
    public func finishWriting() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// Closes the connection; further calls fail.
    public func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
    }
}

/// What `SO_PEERCRED` reports: laid out like `struct ucred` (pid, uid, gid), which Glibc only
/// declares under `_GNU_SOURCE`.
private struct ServerCredentials {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}
