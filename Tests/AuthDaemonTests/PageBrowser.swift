import Foundation
import NIOCore
import NIOPosix

/// A browser on authd's sign-in page, over real TCP to the page's server on 127.0.0.1: it keeps
/// the page's cookie, follows the page's redirects, reads the page token out of each page it is
/// shown and posts forms with the headers a browser sends. On SwiftNIO, so that no test blocks a
/// thread of Swift's pool.
struct PageBrowser {
    /// One answer of the server.
    struct Answer {
        var status: Int
        var headers: [(name: String, value: String)]
        var body: String

        func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
    }

    let port: UInt16
    var cookie: String?
    /// The last page shown.
    private(set) var page = ""

    /// A browser for the page at `url` (`http://127.0.0.1:PORT/...`).
    init(url: String) throws {
        guard let port = URL(string: url)?.port.flatMap(UInt16.init(exactly:)) else { throw BrowserError("no port in \(url)") }
        self.port = port
    }

    /// The page's heading.
    var heading: String { Self.first(#"<h1[^>]*>([^<]*)</h1>"#, in: page) ?? "" }
    /// The page token its forms carry.
    var pageToken: String? { Self.first(#"name="csrf_token" value="([0-9a-f]+)""#, in: page) }
    /// Whether the page has a form posting to `action`.
    func hasForm(_ action: String) -> Bool { page.contains(#"action="\#(action)""#) }

    /// Opens the link as the browser the daemon started would: the cookie, then the page.
    mutating func open(_ url: String) async throws {
        let path = String(url.dropFirst("http://127.0.0.1:\(port)".count))
        let entered = try await get(path)
        guard entered.status == 303, let location = entered.header("Location") else { throw BrowserError("the link answered \(entered.status)") }
        try await show(location)
    }

    /// Shows `path` (the page), waiting out the page that says an operation is under way.
    mutating func show(_ path: String = "/sign-in") async throws {
        for _ in 0..<600 {
            let answer = try await get(path)
            page = answer.body
            guard page.contains(#"http-equiv="refresh""#), !page.contains("Continuing to") else { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BrowserError("the page kept waiting")
    }

    /// Posts `fields` (and the page token) to `action`, as the page's form does, then shows where
    /// it leads.
    mutating func submit(_ action: String, _ fields: [String: String] = [:]) async throws {
        guard let token = pageToken else { throw BrowserError("no page token on the page: \(heading)") }
        var form = fields
        form["csrf_token"] = token
        let body = form.keys.sorted().map { "\(Self.encoded($0))=\(Self.encoded(form[$0]!))" }.joined(separator: "&")
        let answer = try await exchange("POST", action, body: body)
        if answer.status == 303, let location = answer.header("Location") {
            try await show(location)
        } else {
            page = answer.body
        }
    }

    /// A GET as a browser's navigation.
    mutating func get(_ path: String) async throws -> Answer { try await exchange("GET", path, body: nil) }

    private mutating func exchange(_ method: String, _ path: String, body: String?) async throws -> Answer {
        var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nSec-Fetch-Dest: document\r\nSec-Fetch-Mode: navigate\r\n"
        if let cookie { request += "Cookie: \(cookie)\r\n" }
        if let body {
            request += "Origin: http://127.0.0.1:\(port)\r\nSec-Fetch-Site: same-origin\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
        } else {
            request += "Sec-Fetch-Site: none\r\n\r\n"
        }
        let answer = try Self.parse(try await Self.send(request, port: port))
        if let set = answer.header("Set-Cookie"), let pair = set.split(separator: ";").first { cookie = String(pair) }
        return answer
    }

    /// Sends `request` and reads until the server closes (every answer says `Connection: close`),
    /// for at most `seconds`: a server that never answers or never closes fails the exchange
    /// rather than hold the test (the bound only ends a failing run).
    static func send(_ request: String, port: UInt16, seconds: Int64 = 60) async throws -> String {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connect(host: "127.0.0.1", port: Int(port)) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        let deadline = channel.channel.eventLoop.scheduleTask(in: .seconds(seconds)) { channel.channel.close(promise: nil) }
        let received = try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(ByteBuffer(string: request))
            var received = ""
            for try await chunk in inbound { received += String(buffer: chunk) }
            return received
        }
        deadline.cancel()
        // The task's future succeeds only when the deadline closed the channel.
        if (try? await deadline.futureResult.get()) != nil { throw BrowserError("no whole answer within \(seconds) s: \(received.prefix(200))") }
        return received
    }

    /// Whether anything listens at `port` any more.
    static func isListening(port: UInt16) async -> Bool {
        (try? await send("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n", port: port)) != nil
    }

    private static func parse(_ text: String) throws -> Answer {
        guard let end = text.range(of: "\r\n\r\n") else { throw BrowserError("no complete answer: \(text.prefix(200))") }
        let lines = text[..<end.lowerBound].components(separatedBy: "\r\n")
        guard let status = lines.first?.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { throw BrowserError("no status line") }
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return Answer(status: status, headers: headers, body: String(text[end.upperBound...]))
    }

    private static func first(_ pattern: String, in text: String) -> String? {
        guard let regex = try? NSRegularExpression(pattern: pattern),
              let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
              let range = Range(match.range(at: 1), in: text) else { return nil }
        return String(text[range])
    }

    /// A form value as `application/x-www-form-urlencoded` writes it.
    private static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? ""
    }
}

struct BrowserError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
