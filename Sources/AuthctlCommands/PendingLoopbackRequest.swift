import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// One connection to the loopback listener whose request line has not come in full yet: what
/// came so far and the moment it is given up. The whole request line must arrive by that one
/// deadline, however it trickles in, so a peer that sends a byte now and then holds nothing up
/// for longer than that.
struct PendingLoopbackRequest {
    /// How long a connection has for its request line, from the moment it was accepted.
    static let lifetime: TimeInterval = 5
    /// The most read of a request before it is given up: far more than a browser's request line.
    static let maximumBytes = 16384

    /// The accepted socket, non-blocking.
    let connection: Int32
    /// When the connection is closed if its request line is still not complete.
    let deadline: Date
    private var head: [UInt8] = []

    /// What a read came to.
    enum Progress {
        /// The request line is not complete yet: wait for more.
        case waiting
        /// The peer closed, failed or sent too much without a line end: close it.
        case failed
        /// The request line is complete: the target of a `GET`, or nil for any other request.
        case requested(target: String?)
    }

    /// A request accepted at `now`.
    init(connection: Int32, acceptedAt now: Date) {
        self.connection = connection
        deadline = now.addingTimeInterval(Self.lifetime)
    }

    /// Reads what the socket holds now, without waiting.
    mutating func readAvailable() -> Progress {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while head.count < Self.maximumBytes {
            let count = read(connection, &buffer, buffer.count)
            // The browser launcher's children end while we read: SIGCHLD interrupts the call.
            if count < 0, errno == EINTR { continue }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { return .waiting }
            if count <= 0 { return .failed }
            head += buffer[0..<count]
            if head.contains(UInt8(ascii: "\n")) { return .requested(target: Self.getTarget(head)) }
        }
        return .failed
    }

    /// The target of the `GET` request line at the start of `head`, nil for anything else.
    static func getTarget(_ head: [UInt8]) -> String? {
        guard let line = String(decoding: head, as: UTF8.self).split(separator: "\r\n").first else { return nil }
        let parts = line.split(separator: " ")
        guard parts.count >= 2, parts[0] == "GET" else { return nil }
        return String(parts[1])
    }
}
