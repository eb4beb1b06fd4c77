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
/// executable, docs/benchmarks.md). What it does need is here: a proxy tunnel (CONNECT, or SOCKS5
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
