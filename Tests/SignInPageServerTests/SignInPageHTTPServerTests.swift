import BlockingCalls
import Foundation
import NIOCore
import SignInPage
import SignInPageServer
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The sign-in page's server on real TCP: who it answers, what it reads, and the limits. Each
/// test ends within a minute even when what it waits for never comes.
@Suite(.timeLimit(.minutes(1))) struct SignInPageHTTPServerTests {
    /// An identity that names every client `uid`.
    struct FixedIdentity: LoopbackPeerIdentity {
        let uid: UInt32?
        func uid(client: SocketAddress, server: SocketAddress) async -> UInt32? { uid }
    }

    /// An identity that names the first client another user, and every later one this one.
    final class FirstIsAStranger: LoopbackPeerIdentity {
        let asked = Atomic<Int>(0)
        func uid(client: SocketAddress, server: SocketAddress) async -> UInt32? {
            asked.add(1, ordering: .relaxed).oldValue == 0 ? getuid() &+ 1 : getuid()
        }
    }

    /// Counts the requests that reached `respond`, and keeps the last.
    final class Requests: Sendable {
        let count = Atomic<Int>(0)
        let last = Mutex<SignInPageHTTPRequest?>(nil)

        func record(_ request: SignInPageHTTPRequest) {
            count.add(1, ordering: .relaxed)
            last.withLock { $0 = request }
        }
    }

    /// Runs a server with `identity` and `limits` while `body` runs, answering every request with
    /// a page that names its method and target; the server is closed and waited for afterwards.
    static func withServer(identity: any LoopbackPeerIdentity = FixedIdentity(uid: getuid()),
                           limits: SignInPageHTTPServer.Limits = SignInPageHTTPServer.Limits(),
                           respond: (@Sendable (SignInPageHTTPRequest) async -> SignInPageHTTPResponse)? = nil,
                           _ body: (UInt16, Requests) async throws -> Void) async throws {
        let server = try await SignInPageHTTPServer.bind(identity: identity, limits: limits)
        let requests = Requests()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await server.serve { request in
                    requests.record(request)
                    if let respond { return await respond(request) }
                    return .page("<p>\(request.method) \(request.target)</p>")
                }
            }
            do {
                try await body(server.port, requests)
            } catch {
                server.close()
                throw error
            }
            server.close()
            try await group.waitForAll()
        }
    }

    /// The status line, header fields (names lower-cased) and body of an answer.
    static func parse(_ answer: String) -> (status: String, headers: [String: String], body: String)? {
        guard let end = answer.range(of: "\r\n\r\n") else { return nil }
        let lines = answer[..<end.lowerBound].components(separatedBy: "\r\n")
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (lines[0], headers, String(answer[end.upperBound...]))
    }

    @Test func aRequestGetsItsAnswerWithEveryHeaderAndTheConnectionCloses() async throws {
        try await Self.withServer { port, requests in
            let answer = try #require(Self.parse(try await RawHTTPClient.exchange(port: port, [RawHTTPClient.get("/sign-in?x=1", port: port)])))
            #expect(answer.status == "HTTP/1.1 200 OK")
            #expect(answer.body == "<p>GET /sign-in?x=1</p>")
            #expect(answer.headers["content-length"] == String(answer.body.utf8.count))
            #expect(answer.headers["connection"] == "close")
            #expect(answer.headers["content-security-policy"] == SignInPageStyle.contentSecurityPolicy)
            #expect(answer.headers["x-frame-options"] == "DENY")
            #expect(answer.headers["content-type"] == "text/html; charset=utf-8")
            let request = try #require(requests.last.withLock { $0 })
            #expect(request.single("Host") == "127.0.0.1:\(port)" && request.single("User-Agent") == "test")
        }
    }

    @Test func aPostedBodyReachesTheAnswerWhole() async throws {
        try await Self.withServer { port, requests in
            // In two writes: the body comes after the head.
            let head = RawHTTPClient.post("/sign-in/password", body: "email=a%40example.com&password=x", port: port)
            let split = head.index(head.endIndex, offsetBy: -10)
            _ = try await RawHTTPClient.exchange(port: port, [String(head[..<split]), String(head[split...])])
            let request = try #require(requests.last.withLock { $0 })
            #expect(request.method == "POST" && request.target == "/sign-in/password")
            #expect(request.body == Array("email=a%40example.com&password=x".utf8))
        }
    }

    /// Not a byte of another user's is read: a request, or what is not HTTP at all (which the
    /// HTTP parser would answer with a 400), gets nothing back.
    @Test(arguments: [UInt32?.none, .some(getuid() &+ 1)])
    func aConnectionFromAnotherUserOrNoOneKnownIsClosedUnanswered(_ uid: UInt32?) async throws {
        try await Self.withServer(identity: FixedIdentity(uid: uid)) { port, requests in
            for sent in [RawHTTPClient.get("/sign-in", port: port), "\u{1}\u{2} nonsense\r\n\r\n"] {
                let answer = try await RawHTTPClient.exchange(port: port, [sent])
                #expect(answer == "", "\(sent)")
            }
            #expect(requests.count.load(ordering: .relaxed) == 0)
        }
    }

    @Test func aRefusedConnectionLeavesTheServerServing() async throws {
        try await Self.withServer(identity: FirstIsAStranger()) { port, requests in
            #expect(try await RawHTTPClient.exchange(port: port, [RawHTTPClient.get("/sign-in", port: port)]) == "")
            let answer = try await RawHTTPClient.exchange(port: port, [RawHTTPClient.get("/sign-in", port: port)])
            #expect(answer.hasPrefix("HTTP/1.1 200 OK"), "\(answer.prefix(80))")
            #expect(requests.count.load(ordering: .relaxed) == 1)
        }
    }

    @Test func theKernelsTablesNameThisProcesssOwnConnectionAsItsUser() async throws {
        let identity = ProcTablePeerIdentity(lane: BlockingLane(name: "test.peer"))
        try await Self.withServer(identity: identity) { port, requests in
            let answer = try await RawHTTPClient.exchange(port: port, [RawHTTPClient.get("/sign-in", port: port)])
            #expect(answer.hasPrefix("HTTP/1.1 200 OK"), "\(answer)")
            #expect(requests.count.load(ordering: .relaxed) == 1)
        }
    }

    @Test func aSlowClientIsClosedAtTheTimeoutAndNotBefore() async throws {
        let limits = SignInPageHTTPServer.Limits(requestTimeout: .milliseconds(300))
        try await Self.withServer(limits: limits) { port, requests in
            // Half a request, then nothing: the server closes, and the read below ends with that
            // close, which cannot come before the timeout (a lower bound, which a slow machine
            // only makes longer).
            let started = ContinuousClock.now
            let answer = try await RawHTTPClient.exchange(port: port, ["GET /sign-in HTTP/1.1\r\nHost: 127.0.0.1"])
            #expect(ContinuousClock.now - started >= .milliseconds(300))
            #expect(answer == "")
            #expect(requests.count.load(ordering: .relaxed) == 0)
        }
    }

    @Test func aBodyOverTheLimitIsRefusedUnread() async throws {
        try await Self.withServer { port, requests in
            let body = String(repeating: "a", count: SignInPageGate.maximumBodyBytes + 1)
            let answer = try await RawHTTPClient.exchange(port: port, [RawHTTPClient.post("/sign-in/password", body: body, port: port)])
            #expect(answer.hasPrefix("HTTP/1.1 413 "), "\(answer.prefix(80))")
            #expect(requests.count.load(ordering: .relaxed) == 0)
        }
    }

    @Test func whatIsNotHTTPGetsABadRequest() async throws {
        try await Self.withServer { port, requests in
            let answer = try await RawHTTPClient.exchange(port: port, ["\u{1}\u{2} nonsense\r\n\r\n"])
            #expect(answer.hasPrefix("HTTP/1.1 400 "), "\(answer.prefix(80))")
            #expect(requests.count.load(ordering: .relaxed) == 0)
        }
    }

    @Test func connectionsOverTheLimitAreClosedAtOnce() async throws {
        // The first request waits in `respond` until the second connection has been refused; a
        // second request that got in is an issue, not a second reader of the stream.
        let (entered, enter) = AsyncStream<Void>.makeStream()
        let (released, release) = AsyncStream<Void>.makeStream()
        let served = Atomic<Int>(0)
        let limits = SignInPageHTTPServer.Limits(maxConnections: 1)
        try await Self.withServer(limits: limits, respond: { _ in
            guard served.add(1, ordering: .relaxed).oldValue == 0 else {
                Issue.record("a connection over the limit was served")
                return .page("second")
            }
            enter.yield()
            for await _ in released { break }
            return .page("first")
        }) { port, _ in
            try await withThrowingTaskGroup(of: String.self) { group in
                group.addTask { try await RawHTTPClient.exchange(port: port, [RawHTTPClient.get("/sign-in", port: port)]) }
                // Once the first request is in `respond`, its connection holds the one slot.
                for await _ in entered { break }
                let refused = try await RawHTTPClient.exchange(port: port, [RawHTTPClient.get("/sign-in", port: port)])
                #expect(refused == "")
                release.yield()
                release.finish()
                let first = try await group.next()
                #expect(first?.hasSuffix("first") == true)
            }
        }
    }

    /// An identity that says when it is asked and answers only once let go: the owner check of
    /// a connection outlasts the server's loop.
    final class HeldIdentity: LoopbackPeerIdentity {
        let (asked, askedSink) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseSink) = AsyncStream.makeStream(of: Void.self)
        func uid(client: SocketAddress, server: SocketAddress) async -> UInt32? {
            askedSink.yield()
            for await _ in release { break }
            return getuid()
        }
    }

    @Test func aConnectionAcceptedAsTheServerClosesIsClosedNotLeftWaiting() async throws {
        let identity = HeldIdentity()
        let server = try await SignInPageHTTPServer.bind(identity: identity)
        try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask { try await server.serve { _ in .page("<p>served</p>") }; return nil }
            group.addTask { try await RawHTTPClient.exchange(port: server.port, [], seconds: 30) }
            for await _ in identity.asked { break }
            // Accepted, its owner not yet known: the server closes and its loop ends meanwhile.
            server.close()
            let served = try await group.next()
            #expect(served == .some(nil))
            identity.releaseSink.yield()
            // Nobody would ever answer it: it is closed (before the fix, it stayed open).
            let answered = try await group.next()
            #expect(answered == .some(""))
        }
    }
}
