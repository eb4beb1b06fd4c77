import FoundationGaps
import NIOCore
import NIOHTTP1
import NIOPosix
import SignInPage
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The HTTP server of one sign-in page, on 127.0.0.1 at a port the kernel picks. It holds no
/// rule of its own: `SignInPageGate` and the flow behind `respond` decide every answer. What it
/// does is HTTP/1.1 and the limits of a server every local program can reach:
/// - a connection from a socket of another uid is closed before a byte of it is read, parsed or
///   answered (`LoopbackPeerIdentity`, right after accept: the child channel gets its HTTP
///   handlers, and is registered to read, only once its owner is known to be ours);
/// - one request per connection, read whole within `Limits.requestTimeout` of the accept (a slow
///   client is closed), its body at most `SignInPageGate.maximumBodyBytes`;
/// - at most `Limits.maxConnections` of the user's own at once; more are closed at once;
/// - every answer says `Connection: close` and has its length.
public final class SignInPageHTTPServer: Sendable {
    /// The server's limits.
    public struct Limits: Sendable {
        /// The most connections served at once.
        public var maxConnections: Int
        /// How long a client has, from its accept, to send its whole request.
        public var requestTimeout: TimeAmount

        /// The limits: a few browser connections, and ten seconds for a request.
        public init(maxConnections: Int = 16, requestTimeout: TimeAmount = .seconds(10)) {
            self.maxConnections = maxConnections
            self.requestTimeout = requestTimeout
        }
    }

    typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    /// The port it listens on, at 127.0.0.1.
    public let port: UInt16
    private let listener: NIOAsyncChannel<Connection, Never>
    private let limits: Limits
    private let active = Atomic<Int>(0)
    private let unserved: UnservedConnections

    private init(port: UInt16, listener: NIOAsyncChannel<Connection, Never>, limits: Limits, unserved: UnservedConnections) {
        self.port = port
        self.listener = listener
        self.limits = limits
        self.unserved = unserved
    }

    /// Listens on 127.0.0.1 at a free port; `serve(_:)` then answers.
    public static func bind(identity: any LoopbackPeerIdentity, limits: Limits = Limits(),
                            group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) async throws -> SignInPageHTTPServer {
        let unserved = UnservedConnections()
        let listener = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 32)
            .bind(host: "127.0.0.1", port: 0) { channel in
                // NIO registers the child, and so starts reading it, only once this future has
                // succeeded; a failed one leaves it to us, unregistered, to close.
                let owner = channel.eventLoop.makePromise(of: Bool.self)
                owner.completeWithTask {
                    guard let client = channel.remoteAddress, let server = channel.localAddress else { return false }
                    return await identity.uid(client: client, server: server) == getuid()
                }
                return owner.futureResult.flatMapThrowing { (ours: Bool) -> Connection in
                    guard ours else { throw SignInPageServerError.anotherUser }
                    guard unserved.admit(channel) else { throw SignInPageServerError.closed }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    return try Connection(wrappingChannelSynchronously: channel)
                }.flatMapErrorThrowing { (error: any Error) -> Connection in
                    // Admitted or not, it is closed here: nothing is left for the server to close.
                    unserved.handedOver(channel)
                    channel.close(promise: nil)
                    throw error
                }
            }
        guard let port = listener.channel.localAddress?.port, let port = UInt16(exactly: port) else {
            try? await listener.channel.close()
            throw SignInPageServerError.noPort
        }
        return SignInPageHTTPServer(port: port, listener: listener, limits: limits, unserved: unserved)
    }

    /// Answers each request with `respond` until `close()` or cancellation; returns once every
    /// connection has ended.
    public func serve(_ respond: @escaping @Sendable (SignInPageHTTPRequest) async -> SignInPageHTTPResponse) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            // However the loop ends (closed, cancelled, failed), no accepted connection is left
            // open: the ones it did not take are closed at once, not after those it answers.
            defer { unserved.closeAll() }
            try await listener.executeThenClose { inbound in
                for try await connection in inbound {
                    unserved.handedOver(connection.channel)
                    guard active.add(1, ordering: .relaxed).newValue <= limits.maxConnections else {
                        active.subtract(1, ordering: .relaxed)
                        // Closed unanswered, through the wrapper, which must finish its writer.
                        group.addTask { try? await connection.executeThenClose { _, _ in } }
                        continue
                    }
                    group.addTask {
                        defer { self.active.subtract(1, ordering: .relaxed) }
                        await self.answer(connection, respond)
                    }
                }
            }
        }
    }

    /// Stops listening: `serve` returns once the connections still open have ended.
    public func close() {
        listener.channel.close(promise: nil)
    }

    /// One connection: its owner checked, its request read and answered, then closed.
    private func answer(_ connection: Connection, _ respond: @Sendable (SignInPageHTTPRequest) async -> SignInPageHTTPResponse) async {
        let channel = connection.channel
        // The whole request must come within the timeout; the timer closes a slow client.
        let deadline = channel.eventLoop.scheduleTask(in: limits.requestTimeout) { channel.close(promise: nil) }
        defer { deadline.cancel() }
        try? await connection.executeThenClose { inbound, outbound in
            let response: SignInPageHTTPResponse
            switch try await Self.read(inbound) {
            case .request(let request):
                deadline.cancel()
                response = await respond(request)
            case .tooLarge:
                response = .refusal(413, "That request is too large.")
            case .incomplete:
                return
            }
            try await Self.write(response, to: outbound)
        }
    }

    /// What came on a connection.
    enum Reading {
        case request(SignInPageHTTPRequest)
        case tooLarge
        case incomplete
    }

    /// The first request of `inbound`, its body at most `SignInPageGate.maximumBodyBytes`.
    static func read(_ inbound: NIOAsyncChannelInboundStream<HTTPServerRequestPart>) async throws -> Reading {
        var head: HTTPRequestHead?
        var body: [UInt8] = []
        for try await part in inbound {
            switch part {
            case .head(let received):
                head = received
            case .body(let chunk):
                guard body.count + chunk.readableBytes <= SignInPageGate.maximumBodyBytes else { return .tooLarge }
                body += chunk.readableBytesView
            case .end:
                guard let head else { return .incomplete }
                return .request(SignInPageHTTPRequest(method: head.method.rawValue, target: head.uri,
                                                      headers: head.headers.map { (name: $0.name, value: $0.value) }, body: body))
            }
        }
        return .incomplete
    }

    /// `response`, with its length, and `Connection: close`.
    static func write(_ response: SignInPageHTTPResponse, to outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>) async throws {
        var headers = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
        headers.add(name: "Content-Length", value: String(response.body.count))
        headers.add(name: "Connection", value: "close")
        let status = HTTPResponseStatus(statusCode: response.status, reasonPhrase: response.reason)
        try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers)))
        try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: response.body))))
        try await outbound.write(.end(nil))
    }
}
