import Foundation
import NIOCore
import Synchronization
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Serves `DevAuthAPI` over HTTP/1.1 with SwiftNIO.
public final class DevHTTPServer: Sendable {
    private let channel: Channel

    /// The port actually bound (useful with port 0).
    public var port: Int { channel.localAddress?.port ?? 0 }

    private init(channel: Channel) {
        self.channel = channel
    }

    /// Binds `host:port` (port 0 picks a free one) and starts serving.
    public static func start(api: DevAuthAPI, host: String = "127.0.0.1", port: Int) async throws -> DevHTTPServer {
        try await start(host: host, port: port) { _ in api }
    }

    /// Binds `host:port` and serves the API `makeAPI` builds for the port actually bound (its
    /// issuer URL names the port). Binding once matters: binding to learn a free port, closing,
    /// and binding it again let another process take the port in between. With `tls`, it speaks
    /// HTTPS only.
    public static func start(host: String = "127.0.0.1", port: Int, tls: DevTLSFiles? = nil,
                             api makeAPI: @Sendable (_ boundPort: Int) -> DevAuthAPI) async throws -> DevHTTPServer {
        // Read once now, so that unreadable files fail the start instead of every connection.
        _ = try tls?.context()
        let slot = APISlot()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                // Nobody has been told the port before the API exists; a stray early connection is closed.
                guard let api = slot.api.withLock({ $0 }) else { return channel.close() }
                return channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: try tls.context()))
                    }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(DevHTTPHandler(api: api))
                }
            }
            .bind(host: host, port: port).get()
        let api = makeAPI(channel.localAddress?.port ?? port)
        slot.api.withLock { $0 = api }
        return DevHTTPServer(channel: channel)
    }

    /// Waits until the server is closed.
    public func waitUntilClosed() async throws {
        try await channel.closeFuture.get()
    }

    /// Stops serving.
    public func stop() async {
        try? await channel.close()
    }
}

/// One connection: collects a request (body up to 1 MiB), asks the API, writes the answer.
final class DevHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private static let maxBody = 1 << 20
    private let api: DevAuthAPI
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()
    private var tooLarge = false

    init(api: DevAuthAPI) { self.api = api }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let requestHead):
            head = requestHead
            body.clear()
            tooLarge = false
        case .body(var chunk):
            if body.readableBytes + chunk.readableBytes > Self.maxBody { tooLarge = true } else { body.writeBuffer(&chunk) }
        case .end:
            guard let head else { return }
            self.head = nil
            var headers: [String: String] = [:]
            for (name, value) in head.headers { headers[name.lowercased()] = value }
            let request = DevRequest(method: head.method.rawValue, target: head.uri, headers: headers,
                                     body: Data(body.readableBytesView))
            let response = tooLarge
                ? DevError.response(413, "request_too_large", "Request body too large", request: request)
                : api.handle(request)
            if response.delay > 0 {
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                let keepAlive = head.isKeepAlive
                context.eventLoop.scheduleTask(in: .milliseconds(Int64(response.delay * 1000))) {
                    let (handler, context) = loopBound.value
                    handler.write(response, keepAlive: keepAlive, context: context)
                }
            } else {
                write(response, keepAlive: head.isKeepAlive, context: context)
            }
        }
    }

    /// `Date` as HTTP servers send it (RFC 9110 IMF-fixdate); clients compare clocks with it.
    static func httpDate(_ date: Date = Date()) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let length = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &parts)
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func write(_ response: DevResponse, keepAlive: Bool, context: ChannelHandlerContext) {
        if response.dropConnection {
            context.close(promise: nil)
            return
        }
        var headers = HTTPHeaders()
        let hasType = response.headers.keys.contains { $0.lowercased() == "content-type" }
        if !response.body.isEmpty, !hasType { headers.add(name: "Content-Type", value: "application/json") }
        headers.add(name: "Content-Length", value: String(response.body.count))
        headers.add(name: "Date", value: Self.httpDate())
        for (name, value) in response.headers { headers.add(name: name, value: value) }
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        let status = HTTPResponseStatus(statusCode: response.status)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        if !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
        }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            done.whenComplete { _ in loopBound.value.close(promise: nil) }
        }
    }
}

/// The API a server serves, set once the bound port is known.
private final class APISlot: Sendable {
    let api = Mutex<DevAuthAPI?>(nil)
}
