import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A server on 127.0.0.1 that records every request as it arrives (method, target, body bytes)
/// and answers each with what `answer` gives: what a client sends, seen from the other end.
final class RecordingHTTPServer: Sendable {
    /// One request as received.
    struct Request: Sendable, Equatable, CustomStringConvertible {
        var method: String
        var target: String
        var body: Data

        var description: String { "\(method) \(target) \(String(decoding: body, as: UTF8.self))" }
    }

    /// An answer: status and JSON body (none when empty).
    struct Answer: Sendable {
        var status: Int
        var body: String
    }

    private let channel: Channel
    private let log: Log

    /// The port bound.
    var port: Int { channel.localAddress?.port ?? 0 }
    /// The project URL a client is made with.
    var base: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// Every request so far, in order.
    var requests: [Request] { log.requests.withLock { $0 } }

    private init(channel: Channel, log: Log) {
        self.channel = channel
        self.log = log
    }

    /// Starts serving on a free port.
    static func start(answer: @escaping @Sendable (Request) -> Answer) async throws -> RecordingHTTPServer {
        let log = Log()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(Handler(record: { request in log.requests.withLock { $0.append(request) } }, answer: answer))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return RecordingHTTPServer(channel: channel, log: log)
    }

    /// Stops serving.
    func stop() async {
        try? await channel.close()
    }

    /// Forgets the requests recorded so far.
    func clear() {
        log.requests.withLock { $0.removeAll() }
    }

    /// The requests, shared by the handlers and the server.
    private final class Log: Sendable {
        let requests = Mutex<[Request]>([])
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        private let record: @Sendable (Request) -> Void
        private let answer: @Sendable (Request) -> Answer
        private var head: HTTPRequestHead?
        private var body = ByteBuffer()

        init(record: @escaping @Sendable (Request) -> Void, answer: @escaping @Sendable (Request) -> Answer) {
            self.record = record
            self.answer = answer
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let requestHead):
                head = requestHead
                body.clear()
            case .body(var chunk):
                body.writeBuffer(&chunk)
            case .end:
                guard let head else { return }
                self.head = nil
                let request = Request(method: head.method.rawValue, target: head.uri, body: Data(body.readableBytesView))
                record(request)
                let reply = answer(request)
                var headers = HTTPHeaders()
                headers.add(name: "Content-Type", value: "application/json")
                headers.add(name: "Content-Length", value: String(reply.body.utf8.count))
                headers.add(name: "Connection", value: "close")
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: reply.status),
                                                                     headers: headers))), promise: nil)
                if !reply.body.isEmpty { context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: reply.body)))), promise: nil) }
                let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in loopBound.value.close(promise: nil) }
            }
        }
    }
}
