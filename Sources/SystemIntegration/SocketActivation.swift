import CSystemd
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The listening socket systemd passed (`LISTEN_FDS`, socket activation), if any.
public enum SocketActivation {
    /// A socket passed by the service manager.
    public struct Inherited: Sendable {
        /// The descriptor (3).
        public let descriptor: Int32
        /// The path it is bound to.
        public let path: String
    }

    /// Why the passed sockets cannot be used.
    public struct Failure: Error, LocalizedError {
        /// What is wrong and what to do.
        public let errorDescription: String?
    }

    /// The one Unix stream socket passed by systemd, or nil when none was passed. The
    /// `LISTEN_*` variables are removed, so nothing started later inherits them.
    public static func take() throws(Failure) -> Inherited? {
        let count = sd_listen_fds(1)
        if count < 0 { throw Failure(errorDescription: "cannot read the sockets systemd passed: \(String(cString: strerror(-count)))") }
        if count == 0 { return nil }
        guard count == 1 else {
            throw Failure(errorDescription: "systemd passed \(count) sockets; authd.socket must have exactly one ListenStream=")
        }
        let descriptor = SD_LISTEN_FDS_START
        guard sd_is_socket_unix(descriptor, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else {
            throw Failure(errorDescription: "the socket systemd passed is not a listening Unix stream socket; authd.socket needs ListenStream=%t/authd/authd.sock")
        }
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        let path = withUnsafeBytes(of: address.sun_path) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        guard named == 0, path.hasPrefix("/") else {
            throw Failure(errorDescription: "the socket systemd passed has no file system path; authd.socket needs ListenStream=%t/authd/authd.sock")
        }
        return Inherited(descriptor: descriptor, path: path)
    }
}
