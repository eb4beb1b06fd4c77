import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Who is on the other end of a TCP connection over loopback, from the kernel's socket tables
/// (`/proc/net/tcp`, and `tcp6` for IPv4-mapped sockets): the connecting socket is listed with its
/// owner's uid, its local port being our peer's port and its remote port ours.
enum LoopbackPeer {
    /// The uid owning the socket that connected to `serverPort` through `connection`; nil when
    /// the tables do not show it.
    static func uid(of connection: Int32, serverPort: UInt16) -> uid_t? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(connection, $0, &length) }
        }
        guard named == 0, address.sin_family == sa_family_t(AF_INET) else { return nil }
        let peerPort = UInt16(bigEndian: address.sin_port)
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = procFile(table) else { continue }
            if let uid = uid(in: text, localPort: peerPort, remotePort: serverPort) { return uid }
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

    /// The uid column of the line of `table` (the text of `/proc/net/tcp` or `tcp6`) whose local
    /// port is `localPort` and remote port `remotePort`, both on a loopback address.
    static func uid(in table: String, localPort: UInt16, remotePort: UInt16) -> uid_t? {
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 7, let local = endpoint(fields[1]), let remote = endpoint(fields[2]),
                  local.port == localPort, remote.port == remotePort, local.loopback, remote.loopback else { continue }
            return uid_t(fields[7])
        }
        return nil
    }

    /// A `/proc/net/tcp` address (`0100007F:1F90`, or 32 hex digits for IPv6): its port, and
    /// whether it is 127.0.0.0/8 (also as an IPv4-mapped IPv6 address) or ::1.
    private static func endpoint(_ text: Substring) -> (port: UInt16, loopback: Bool)? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let port = UInt16(parts[1], radix: 16) else { return nil }
        let host = parts[0].uppercased()
        switch host.count {
        case 8:
            // Four bytes in host (little-endian) order: 127.x.y.z reads as ..7F.
            return (port, host.hasSuffix("7F"))
        case 32:
            let mappedLoopback = host.hasPrefix("0000000000000000FFFF0000") && host.hasSuffix("7F")
            return (port, mappedLoopback || host == "00000000000000000000000001000000")
        default:
            return nil
        }
    }
}
