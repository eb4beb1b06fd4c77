import FoundationEssentials
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSOCKS
import NIOSSL
import NIOTLS
import Synchronization

/// One HTTP/1.1 request and its answer, on a connection of its own, on SwiftNIO's shared event
/// loops (the daemon's socket server runs on the same ones).
///
/// authd sends a request every hour or so, to one server: it needs no connection pool, no HTTP/2
/// and no retries, which is what async-http-client would have added (and 4.5 MiB to the
/// executable, README "Benchmarks"). What it does need is here: a proxy tunnel (CONNECT, or SOCKS5
/// through NIOSOCKS), TLS through NIOSSL, NIOHTTP1's codec, one deadline for the whole exchange,
/// a cap on the answer, and an exact account of whether the request was sent: a failure before
/// it left cannot have reached the server, which the session rules rely on.
enum HTTPExchange {
    /// What to send. `target` is the request target (path and query, percent-encoded).
    struct Request: Sendable {
        var method: HTTPMethod
        var target: String
        var headers: HTTPHeaders
        var body: Data?
    }

    /// What came back.
    struct Response {
        var status: Int
        var headers: HTTPHeaders
        var body: Data
    }

    /// Where to connect and how.
    struct Route: Sendable {
        /// The server's host, as the URL names it (an IPv6 address without brackets).
        var host: String
        var port: Int
        /// TLS with this context when the URL is https.
        var tls: NIOSSLContext?
        var proxy: ProxySettings
    }

    /// Sends `request` along `route` and reads the answer, of at most `maxAnswerBytes` of body,
    /// all before `deadline`. Failures are `HTTPExchangeFailure`s, which say whether anything was sent.
    static func perform(_ request: Request, route: Route, deadline: NIODeadline, maxAnswerBytes: Int) async throws(HTTPExchangeFailure) -> Response {
        let progress = ExchangeProgress()
        do {
            return try await withTaskCancellationHandler {
                try await run(request, route: route, deadline: deadline, maxAnswerBytes: maxAnswerBytes, progress: progress)
            } onCancel: {
                progress.cancel()
            }
        } catch {
            let sent = progress.sent.load(ordering: .relaxed)
            if progress.timedOut.load(ordering: .relaxed) { throw HTTPExchangeFailure(HTTPExchangeError.timedOut, sent: sent) }
            if Task.isCancelled { throw HTTPExchangeFailure(HTTPExchangeError.cancelled, sent: sent) }
            throw HTTPExchangeFailure(error, sent: sent)
        }
    }

    private static func run(_ request: Request, route: Route, deadline: NIODeadline, maxAnswerBytes: Int,
                            progress: ExchangeProgress) async throws -> Response {
        // An IP address is checked against the address connected to (NIOSSL does so without a
        // name), which through a proxy would be the proxy's: that combination is refused.
        if route.tls != nil, route.proxy != .direct, address(route.host, port: route.port) != nil {
            throw HTTPExchangeError.addressThroughProxy
        }
        let channel = try await progress.connection(connect(route, deadline: deadline))
        let expiry = channel.eventLoop.scheduleTask(deadline: deadline) {
            progress.timedOut.store(true, ordering: .relaxed)
            channel.close(promise: nil)
        }
        defer {
            expiry.cancel()
            channel.close(promise: nil)
        }
        try await openTunnel(on: channel, route: route)
        if let tls = route.tls { try await startTLS(on: channel, route: route, context: tls) }
        return try await exchange(request, on: channel, maxAnswerBytes: maxAnswerBytes, progress: progress)
    }

    /// A TCP connection to the server, or to the proxy in front of it (name resolution included).
    private static func connect(_ route: Route, deadline: NIODeadline) -> EventLoopFuture<any Channel> {
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let timeout = deadline - .now()
        guard timeout > .zero else { return eventLoop.makeFailedFuture(HTTPExchangeError.timedOut) }
        let bootstrap = ClientBootstrap(group: eventLoop).connectTimeout(timeout)
        let (host, port): (String, Int)
        switch route.proxy {
        case .http(let proxyHost, let proxyPort, _, _), .socks(let proxyHost, let proxyPort): (host, port) = (proxyHost, proxyPort)
        case .direct, .unsupported: (host, port) = (route.host, route.port)
        }
        // An address needs no resolving: connecting to it directly spares the resolver's thread
        // hop (getaddrinfo runs on a Dispatch queue), which a loopback server would wait on.
        if let address = address(host, port: port) { return bootstrap.connect(to: address) }
        return bootstrap.connect(host: host, port: port)
    }

    /// Runs `addHandlers` on the channel's event loop, then waits for `stage`. `stage` is failed
    /// when the handlers cannot be added (the connection closed in between), so that no promise
    /// is left behind.
    private static func run(stage: EventLoopPromise<Void>, on channel: any Channel,
                            adding addHandlers: @escaping @Sendable (ChannelPipeline.SynchronousOperations) throws -> Void) async throws {
        do {
            try await channel.eventLoop.submit { try addHandlers(channel.pipeline.syncOperations) }.get()
        } catch {
            stage.fail(error)
            throw error
        }
        try await stage.futureResult.get()
    }

    /// Through a proxy, asks it for a tunnel to the server (CONNECT for an HTTP proxy, for http as
    /// for https, so that the proxy sees no request; SOCKS5 names the host for the proxy to resolve).
    private static func openTunnel(on channel: any Channel, route: Route) async throws {
        let opened: EventLoopPromise<Void>
        switch route.proxy {
        case .direct, .unsupported:
            return
        case .http(_, _, let username, let password):
            opened = channel.eventLoop.makePromise()
            let authorization = username.map { "Basic " + Data("\($0):\(password ?? "")".utf8).base64EncodedString() }
            let target = authority(host: route.host, port: route.port)
            try await run(stage: opened, on: channel) { pipeline in
                try pipeline.addHandler(ProxyTunnelHandler(authority: target, authorization: authorization, opened: opened))
            }
        case .socks:
            opened = channel.eventLoop.makePromise()
            // A name goes to the proxy unresolved (as socks5h:// asks, and DNS stays with the proxy).
            let target = address(route.host, port: route.port).map(SOCKSAddress.address) ?? .domain(route.host, port: route.port)
            try await run(stage: opened, on: channel) { pipeline in
                try pipeline.addHandlers([
                    SOCKSClientHandler(targetAddress: target),
                    StageWatcher(done: opened) { $0 is SOCKSProxyEstablishedEvent },
                ])
            }
        }
    }

    /// The TLS handshake, with the server's name for SNI and for the certificate check (an IP
    /// address, reached directly, is checked against the address connected to).
    private static func startTLS(on channel: any Channel, route: Route, context: NIOSSLContext) async throws {
        let serverName = address(route.host, port: route.port) == nil ? route.host : nil
        let handshake = channel.eventLoop.makePromise(of: Void.self)
        try await run(stage: handshake, on: channel) { pipeline in
            try pipeline.addHandlers([
                try NIOSSLClientHandler(context: context, serverHostname: serverName),
                StageWatcher(done: handshake) { event in
                    guard let event = event as? TLSUserEvent, case .handshakeCompleted = event else { return false }
                    return true
                },
            ])
        }
    }

    /// Writes the request and collects the answer.
    private static func exchange(_ request: Request, on channel: any Channel, maxAnswerBytes: Int, progress: ExchangeProgress) async throws -> Response {
        let answered = channel.eventLoop.makePromise(of: Response.self)
        let head = HTTPRequestHead(version: .http1_1, method: request.method, uri: request.target, headers: request.headers)
        let body = request.body.map { ByteBuffer(bytes: $0) }
        do {
            try await channel.eventLoop.submit {
                let pipeline = channel.pipeline.syncOperations
                try pipeline.addHTTPClientHandlers(leftOverBytesStrategy: .dropBytes)
                try pipeline.addHandler(ResponseCollector(limit: maxAnswerBytes, answered: answered))
                // On the event loop, so that nothing can close the connection between the check
                // and the writes: from here on the server may have seen some or all of the request.
                guard channel.isActive else { throw HTTPExchangeError.connectionClosed }
                progress.sent.store(true, ordering: .relaxed)
                channel.write(HTTPClientRequestPart.head(head), promise: nil)
                if let body { channel.write(HTTPClientRequestPart.body(.byteBuffer(body)), promise: nil) }
                channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
            }.get()
        } catch {
            answered.fail(error)
            throw error
        }
        return try await answered.futureResult.get()
    }

    /// `host:port` as a request line or Host header writes it (IPv6 in brackets); the host alone
    /// without a port.
    static func authority(host: String, port: Int?) -> String {
        (host.contains(":") ? "[\(host)]" : host) + (port.map { ":\($0)" } ?? "")
    }

    /// `host` as an IP address, or nil when it is a name.
    static func address(_ host: String, port: Int) -> SocketAddress? {
        try? SocketAddress(ipAddress: host, port: port)
    }
}

/// A failure of an exchange, and whether the request had been written when it happened.
struct HTTPExchangeFailure: Error {
    /// What went wrong: an `HTTPExchangeError`, or SwiftNIO's or NIOSSL's own error.
    var underlying: any Error
    /// Whether any of the request had been handed to the connection.
    var sent: Bool

    init(_ underlying: any Error, sent: Bool) {
        self.underlying = underlying
        self.sent = sent
    }
}

/// The exchange's own failures, beside SwiftNIO's and NIOSSL's.
enum HTTPExchangeError: Error, Equatable {
    /// The deadline passed.
    case timedOut
    /// The task waiting for the answer was cancelled.
    case cancelled
    /// The connection closed before a whole answer came.
    case connectionClosed
    /// The answer's body was larger than allowed.
    case answerTooLarge
    /// The HTTP proxy refused the tunnel with this status (0: its answer was not HTTP).
    case proxyRefused(status: Int)
    /// An https server named by its IP address cannot be checked through a proxy (its
    /// certificate would be compared with the proxy's address).
    case addressThroughProxy
}

/// How far an exchange got, shared with the deadline's timer and the cancellation handler,
/// which run on other threads.
private final class ExchangeProgress: Sendable {
    /// Whether any of the request was handed to the connection.
    let sent = Atomic<Bool>(false)
    /// Whether the deadline closed the connection.
    let timedOut = Atomic<Bool>(false)

    private struct State {
        /// The promise a connection attempt answers, until it is answered.
        var waiting: EventLoopPromise<any Channel>?
        var channel: (any Channel)?
        var cancelled = false
    }

    private let state = Mutex(State())

    /// The connection `connecting` makes, unless the exchange is cancelled first: then at once a
    /// cancellation, and a connection made later is closed. Whoever takes the promise from the
    /// state under the lock answers it, so it is answered exactly once.
    func connection(_ connecting: EventLoopFuture<any Channel>) async throws -> any Channel {
        let answer = connecting.eventLoop.makePromise(of: (any Channel).self)
        let cancelled = state.withLock { state in
            if !state.cancelled { state.waiting = answer }
            return state.cancelled
        }
        if cancelled { answer.fail(HTTPExchangeError.cancelled) }
        connecting.whenComplete { result in
            let (waiting, keep) = self.state.withLock { state -> (EventLoopPromise<any Channel>?, Bool) in
                defer { state.waiting = nil }
                if case .success(let channel) = result, !state.cancelled { state.channel = channel }
                return (state.waiting, !state.cancelled)
            }
            switch result {
            case .success(let channel):
                if keep { waiting?.succeed(channel) } else { channel.close(promise: nil) }
            case .failure(let error):
                waiting?.fail(error)
            }
        }
        return try await answer.futureResult.get()
    }

    /// Closes the connection, now or as soon as there is one, and ends a connection attempt.
    func cancel() {
        let (waiting, channel) = state.withLock { state in
            state.cancelled = true
            defer { state.waiting = nil }
            return (state.waiting, state.channel)
        }
        waiting?.fail(HTTPExchangeError.cancelled)
        channel?.close(promise: nil)
    }
}

/// A handler that settles one stage of the exchange: the first outcome wins. An error or the
/// connection's end before an outcome fails the stage (an error also closes the connection), and
/// so does the handler's removal, so that no promise is ever left unanswered.
private protocol StageHandler: ChannelInboundHandler, RemovableChannelHandler {
    associatedtype Outcome: Sendable
    /// The stage's promise, answered once.
    var outcome: EventLoopPromise<Outcome> { get }
    /// Whether `outcome` was answered.
    var isSettled: Bool { get set }
}

extension StageHandler {
    /// Answers the stage with `value`, unless it was answered before.
    func settle(_ value: Outcome) {
        guard !isSettled else { return }
        isSettled = true
        outcome.succeed(value)
    }

    /// Fails the stage, unless it was answered before, and closes the connection with `context`.
    func fail(_ error: any Error, closing context: ChannelHandlerContext?) {
        guard !isSettled else { return }
        isSettled = true
        outcome.fail(error)
        context?.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error, closing: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(HTTPExchangeError.connectionClosed, closing: nil)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        fail(HTTPExchangeError.connectionClosed, closing: nil)
    }
}

/// Waits for one user event (the TLS handshake's end, the SOCKS tunnel's), then leaves the pipeline.
private final class StageWatcher: StageHandler {
    typealias InboundIn = NIOAny

    let outcome: EventLoopPromise<Void>
    var isSettled = false
    private let isTheEvent: (Any) -> Bool

    init(done: EventLoopPromise<Void>, isTheEvent: @escaping (Any) -> Bool) {
        self.outcome = done
        self.isTheEvent = isTheEvent
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard !isSettled, isTheEvent(event) else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        settle(())
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

/// Asks an HTTP proxy for a tunnel with CONNECT and reads its answer's head; on a 2xx it leaves
/// the pipeline, and what follows is the server's.
private final class ProxyTunnelHandler: StageHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The longest answer head read from a proxy.
    private static let headLimit = 16 * 1024

    let outcome: EventLoopPromise<Void>
    var isSettled = false
    private let authority: String
    private let authorization: String?
    private var received = ByteBuffer()

    init(authority: String, authorization: String?, opened: EventLoopPromise<Void>) {
        self.authority = authority
        self.authorization = authorization
        self.outcome = opened
    }

    func handlerAdded(context: ChannelHandlerContext) {
        var request = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let authorization { request += "Proxy-Authorization: \(authorization)\r\n" }
        request += "\r\n"
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: request)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isSettled else { return }
        var bytes = unwrapInboundIn(data)
        received.writeBuffer(&bytes)
        let view = received.readableBytesView
        guard let end = view.firstRange(of: Array("\r\n\r\n".utf8)) else {
            if received.readableBytes > Self.headLimit { fail(HTTPExchangeError.proxyRefused(status: 0), closing: context) }
            return
        }
        let statusLine = view[view.startIndex..<end.lowerBound].prefix { $0 != UInt8(ascii: "\r") }
        let status = Self.status(of: String(decoding: statusLine, as: UTF8.self))
        // The server speaks only once the request or the TLS greeting has gone through the
        // tunnel, so bytes after the head mean the proxy did not open one.
        guard (200..<300).contains(status), end.upperBound == view.endIndex else {
            fail(HTTPExchangeError.proxyRefused(status: status), closing: context)
            return
        }
        settle(())
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// The status code of `HTTP/1.x NNN reason`, or 0.
    static func status(of line: String) -> Int {
        let parts = line.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let code = Int(parts[1]) else { return 0 }
        return code
    }
}

/// Collects one answer: its head and a body of at most `limit` bytes.
private final class ResponseCollector: StageHandler {
    typealias InboundIn = HTTPClientResponsePart

    let outcome: EventLoopPromise<HTTPExchange.Response>
    var isSettled = false
    private let limit: Int
    private var head: HTTPResponseHead?
    private var body = ByteBuffer()

    init(limit: Int, answered: EventLoopPromise<HTTPExchange.Response>) {
        self.limit = limit
        self.outcome = answered
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isSettled else { return }
        switch unwrapInboundIn(data) {
        case .head(let received):
            // The decoder drops informational answers but 101, after which it reads no more:
            // any head is the answer.
            head = received
        case .body(var chunk):
            guard body.readableBytes + chunk.readableBytes <= limit else {
                fail(HTTPExchangeError.answerTooLarge, closing: context)
                return
            }
            body.writeBuffer(&chunk)
        case .end:
            guard let head else { return }
            settle(HTTPExchange.Response(status: Int(head.status.code), headers: head.headers, body: Data(body.readableBytesView)))
            context.close(promise: nil)
        }
    }
}
