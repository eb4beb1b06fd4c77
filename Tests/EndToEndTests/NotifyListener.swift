import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A `NOTIFY_SOCKET` like systemd's: a Unix datagram socket that collects what the daemon sends
/// with `sd_notify`.
final class NotifyListener: @unchecked Sendable {
    // Unchecked: used from one test at a time.
    let path: String
    private let descriptor: Int32
    private(set) var messages: [String] = []

    init(in directory: URL) throws {
        path = directory.appendingPathComponent("notify.sock").path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw StackError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() where index < buffer.count - 1 { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { throw StackError("bind \(path): \(String(cString: strerror(errno)))") }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Reads datagrams until one satisfies `predicate` or `timeout` passes; true if one did.
    func waitFor(timeout: TimeInterval = 15, _ predicate: (String) -> Bool) -> Bool {
        if messages.contains(where: predicate) { return true }
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { continue }
            let message = String(decoding: buffer[0..<count], as: UTF8.self)
            messages.append(message)
            if predicate(message) { return true }
        }
        return false
    }

    /// Every assignment received so far (one per line of each datagram).
    var assignments: [String] { messages.flatMap { $0.split(separator: "\n").map(String.init) } }

    deinit {
        close(descriptor)
        unlink(path)
    }
}
