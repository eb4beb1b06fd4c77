import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Who is on the other end of a TCP connection over loopback, from the kernel's socket tables
/// (`/proc/net/tcp`, and `tcp6` for IPv4-mapped sockets): the connecting socket is listed with its
/// owner's uid, its local port being our peer's port and its remote port ours. Used by authctl's
/// loopback redirect listener and the daemon's sign-in page, which answer only their own user.
public enum LoopbackPeer {
    /// The uid owning the socket at the other end of `connection` (accepted on our loopback
    /// listener); nil when the tables do not show it.
    public static func uid(of connection: Int32, serverPort: UInt16) -> uid_t? {
        guard let client = address(of: connection, peer: true), let server = address(of: connection, peer: false) else { return nil }
        return uid(client: client, server: server)
    }

    /// The uid owning the socket at `client` that is connected to `server`; nil when the tables
    /// do not show it. Reads `/proc`: a blocking call, for a thread that may block.
    public static func uid(client: Endpoint, server: Endpoint) -> uid_t? {
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = procFile(table) else { continue }
            if let uid = uid(in: text, local: client, remote: server) { return uid }
        }
        return nil
    }

    /// An IPv4 endpoint as `/proc/net/tcp` writes it: the address's four bytes as one 32-bit
    /// number in the machine's byte order, in hex, and the port.
    public struct Endpoint: Equatable, Sendable {
        /// The address as the tables write it.
        public let address: String
        /// The port.
        public let port: UInt16

        /// The endpoint at `address` (as the tables write it) and `port`.
        public init(address: String, port: UInt16) {
            self.address = address
            self.port = port
        }

        /// The endpoint at the IPv4 address `address` (in network byte order, as `sin_addr.s_addr`) and `port`.
        public init(ipv4 address: UInt32, port: UInt16) {
            self.init(address: LoopbackPeer.hex(address), port: port)
        }
    }

    private static func address(of connection: Int32, peer: Bool) -> Endpoint? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { peer ? getpeername(connection, $0, &length) : getsockname(connection, $0, &length) }
        }
        guard named == 0, address.sin_family == sa_family_t(AF_INET) else { return nil }
        return Endpoint(address: hex(address.sin_addr.s_addr), port: UInt16(bigEndian: address.sin_port))
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// The uid column of the line of `table` (the text of `/proc/net/tcp` or `tcp6`) for the
    /// socket whose local end is `local` and remote end `remote`: the whole four-tuple, so that
    /// no other socket can vouch for this connection. In `tcp6` an IPv4 socket of a dual-stack
    /// client shows as the IPv4-mapped address.
    public static func uid(in table: String, local: Endpoint, remote: Endpoint) -> uid_t? {
        let mapped = "0000000000000000FFFF0000"
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 7 else { continue }
            func matches(_ field: Substring, _ endpoint: Endpoint) -> Bool {
                let parts = field.split(separator: ":")
                guard parts.count == 2, UInt16(parts[1], radix: 16) == endpoint.port else { return false }
                let address = parts[0].uppercased()
                return address == endpoint.address || address == mapped + endpoint.address
            }
            if matches(fields[1], local), matches(fields[2], remote) { return uid_t(fields[7]) }
        }
        return nil
    }

    /// The whole text of a `/proc` file. Read until end of file: such files report a size of 0,
    /// and a reader that trusts the size (as Foundation's does) gets only the first page.
    private static func procFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count < 64 << 20 {
            let count = read(fd, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
