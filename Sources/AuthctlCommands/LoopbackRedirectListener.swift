import FoundationEssentials
import FoundationGaps
#if canImport(Glibc)
import Glibc
#endif

/// A one-shot HTTP listener on 127.0.0.1 with an ephemeral port, where the browser lands after a
/// sign-in. It answers only `GET /callback`; anything else (a favicon request) gets a 404.
///
/// The port and the whole authorize URL are visible to every user of the machine (in the
/// browser's command line), so the listener takes a callback only from a process of our own uid
/// (the kernel's socket table says whose the connecting socket is), and only one that carries the
/// flow's binding (`authd_flow=<flow id>`, which authd put into `redirect_to`): another user's
/// connection is closed before a byte of it is read, a junk callback is refused, and the sign-in
/// goes on waiting for its own.
final class LoopbackRedirectListener {
    /// The port the kernel picked.
    let port: UInt16
    private let fd: Int32

    /// The `redirect_to` to give the server.
    var redirectURL: String { "http://127.0.0.1:\(port)/callback" }

    /// Binds and listens, or fails with a message.
    init() throws {
        // Non-blocking: a connection reset between poll and accept must not leave accept waiting.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw Failure("cannot open a listening socket for the browser: \(String(cString: strerror(errno)))", .failure) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        // The kernel's largest queue: another user's connections, closed unread, must not leave
        // the browser's connect waiting for room.
        guard bound == 0, named == 0, listen(fd, SOMAXCONN) == 0 else {
            close(fd)
            throw Failure("cannot listen on 127.0.0.1 for the browser: \(String(cString: strerror(errno)))", .failure)
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(fd) }

    /// A browser request to `/callback`, still open so that the answer can say how the sign-in went.
    struct Callback {
        /// The full URL the browser asked for.
        let url: String
        fileprivate let connection: Int32

        /// Sends a small HTML page and closes the connection.
        func respond(title: String, message: String) {
            let page = """
            <!doctype html><html><head><meta charset="utf-8"><title>\(title)</title></head>
            <body style="font-family:sans-serif;margin:3em"><h1>\(title)</h1><p>\(message)</p></body></html>
            """
            let body = Array(page.utf8)
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.count)\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n"
            LoopbackRedirectListener.send(connection, Array(head.utf8) + body)
            close(connection)
        }
    }

    /// Waits up to `deadline` for the browser's `GET /callback` for flow `flowID`; nil on timeout.
    /// Connections are served side by side, each with its own deadline for its request line
    /// (`PendingLoopbackRequest`), so a slow one never holds up the browser. Another user's is
    /// closed as soon as it is accepted, before a byte of it is read.
    func waitForCallback(flowID: String, until deadline: Date) -> Callback? {
        var pending: [PendingLoopbackRequest] = []
        defer { pending.forEach { close($0.connection) } }
        while true {
            let now = Date()
            guard now < deadline else { return nil }
            pending.removeAll { request in
                guard request.deadline <= now else { return false }
                close(request.connection)
                return true
            }
            let wake = pending.map(\.deadline).reduce(deadline, min)
            // With as many connections as are read at once, new ones wait in the listen queue.
            let accepting = pending.count < Self.maximumPending
            var polled = [pollfd(fd: fd, events: accepting ? Int16(POLLIN) : 0, revents: 0)]
                + pending.map { pollfd(fd: $0.connection, events: Int16(POLLIN), revents: 0) }
            // Rounded up, so that a deadline is past when poll returns for it; at most a minute at a time.
            let wait = Int32((min(max(wake.timeIntervalSince(now), 0), 60) * 1000).rounded(.up))
            let ready = poll(&polled, nfds_t(polled.count), wait)
            if ready <= 0 { continue }
            // Backwards, so that removing one leaves the indices of those still to look at.
            for index in pending.indices.reversed() where polled[index + 1].revents != 0 {
                switch pending[index].readAvailable() {
                case .waiting: continue
                case .failed: close(pending.remove(at: index).connection)
                case .requested(let target):
                    let request = pending.remove(at: index)
                    if let callback = answer(request.connection, target: target, flowID: flowID) { return callback }
                }
            }
            if accepting, polled[0].revents != 0 { acceptWaiting(into: &pending) }
        }
    }

    /// The most connections read at once; more from our own uid wait in the listen queue.
    private static let maximumPending = 32
    /// The most connections accepted before the loop reads those it has again: a stream of
    /// another user's connections, each costing a look at the kernel's socket tables, never keeps
    /// the loop from reading the browser's request.
    private static let acceptsPerTurn = 8

    /// Accepts some of the connections waiting in the queue: ours are read from now on, each with
    /// its deadline counted from its own accept; another user's (or one whose owner the kernel
    /// cannot name) are reset unread.
    private func acceptWaiting(into pending: inout [PendingLoopbackRequest]) {
        for _ in 0..<Self.acceptsPerTurn where pending.count < Self.maximumPending {
            var connection: Int32
            repeat { connection = accept(fd, nil, nil) } while connection < 0 && (errno == EINTR || errno == ECONNABORTED)
            guard connection >= 0 else { return }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            guard LoopbackPeer.uid(of: connection, serverPort: port) == getuid() else {
                Self.reset(connection)
                continue
            }
            _ = fcntl(connection, F_SETFL, fcntl(connection, F_GETFL) | O_NONBLOCK)
            pending.append(PendingLoopbackRequest(connection: connection, acceptedAt: Date()))
        }
    }

    /// Closes `connection` with a reset rather than a goodbye: no TIME_WAIT entry is left in the
    /// socket tables, which every later connection's owner is looked up in.
    private static func reset(_ connection: Int32) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(connection, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close(connection)
    }

    /// Answers a request whose line came in: the callback for this flow is returned open, with
    /// its answer still to send; anything else is answered (403, 404) and closed.
    private func answer(_ connection: Int32, target: String?, flowID: String) -> Callback? {
        guard let target, target.hasPrefix("/callback") else {
            Self.send(connection, Array("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
            close(connection)
            return nil
        }
        let callback = Callback(url: "http://127.0.0.1:\(port)\(target)", connection: connection)
        guard URLComponents(string: callback.url)?.queryItems?.contains(where: { $0.name == "authd_flow" && $0.value == flowID }) == true else {
            Self.refuse(connection, "This is not the sign-in authctl is waiting for.")
            return nil
        }
        // The answer waits for authd; then it is sent whole, for at most 5 s.
        _ = fcntl(connection, F_SETFL, fcntl(connection, F_GETFL) & ~O_NONBLOCK)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return callback
    }

    /// Answers 403 with `message` and closes the connection; the listener goes on waiting.
    private static func refuse(_ connection: Int32, _ message: String) {
        let body = Array("<!doctype html><html><body><p>\(message)</p></body></html>".utf8)
        send(connection, Array("HTTP/1.1 403 Forbidden\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n".utf8) + body)
        close(connection)
    }

    fileprivate static func send(_ connection: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            // MSG_NOSIGNAL: a peer that went away (a closed tab) must not end authctl with SIGPIPE.
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0, errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }
}
