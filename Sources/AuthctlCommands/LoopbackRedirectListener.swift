import FoundationEssentials
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
/// code or a junk callback is refused and the sign-in goes on waiting for its own.
final class LoopbackRedirectListener {
    /// The port the kernel picked.
    let port: UInt16
    private let fd: Int32

    /// The `redirect_to` to give the server.
    var redirectURL: String { "http://127.0.0.1:\(port)/callback" }

    /// Binds and listens, or fails with a message.
    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
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
        guard bound == 0, named == 0, listen(fd, 8) == 0 else {
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
    func waitForCallback(flowID: String, until deadline: Date) -> Callback? {
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(left, 1) * 1000))
            if ready <= 0 { continue }
            let connection = accept(fd, nil, nil)
            if connection < 0 { continue }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            guard let target = Self.readRequestTarget(connection) else {
                close(connection)
                continue
            }
            if target.hasPrefix("/callback") {
                let callback = Callback(url: "http://127.0.0.1:\(port)\(target)", connection: connection)
                guard LoopbackPeer.uid(of: connection, serverPort: port) == getuid() else {
                    // Another user's process (or one the kernel cannot name): not our browser.
                    Self.refuse(connection, "This sign-in belongs to another user of this computer.")
                    continue
                }
                guard URLComponents(string: callback.url)?.queryItems?.contains(where: { $0.name == "authd_flow" && $0.value == flowID }) == true else {
                    Self.refuse(connection, "This is not the sign-in authctl is waiting for.")
                    continue
                }
                return callback
            }
            Self.send(connection, Array("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
            close(connection)
        }
    }

    /// The target of a `GET` request line, reading at most 16 KiB for at most 5 s.
    private static func readRequestTarget(_ connection: Int32) -> String? {
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        while head.count < 16384 {
            let count = read(connection, &buffer, buffer.count)
            // The browser launcher's children end while we read: SIGCHLD interrupts the call.
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            head += buffer[0..<count]
            if head.firstIndex(of: UInt8(ascii: "\n")) != nil { break }
        }
        guard let line = String(decoding: head, as: UTF8.self).split(separator: "\r\n").first else { return nil }
        let parts = line.split(separator: " ")
        guard parts.count >= 2, parts[0] == "GET" else { return nil }
        return String(parts[1])
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
            let written = bytes[offset...].withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }
}
