import AuthProtocol
import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Listens on a Unix socket and feeds newline-framed requests to a `SocketRequestHandler`.
///
/// Every connection is a child task of `run()`, and every request a child task of its
/// connection, so nothing outlives the server. Peers whose uid differs from ours get one
/// `access_denied` line and are closed before a byte of theirs is read. Stop it with graceful
/// shutdown (as `ServiceGroup` does on SIGTERM): that closes the listener and every connection.
/// Cancelling instead can drop connections NIO had accepted but not yet handed over.
public final class UnixSocketServer: Service, Sendable {
    private let path: String
    private let handler: any SocketRequestHandler
    private let logger: Logger
    private let maxLineLength: Int
    private let group: MultiThreadedEventLoopGroup
    private let connectionIDs = ManagedAtomicCounter()
    private let readiness: @Sendable () -> Void
    private let inherited: Int32?

    /// Creates a server for `path`; `onListening` runs once the socket accepts connections.
    ///
    /// With `inheritedDescriptor` (socket activation: systemd bound `path` and passed the listening
    /// socket), that socket is used as it is: not bound, not chmod-ed and not removed at the end,
    /// since systemd keeps listening on it to start the daemon again on the next connection.
    public init(path: String, handler: any SocketRequestHandler, logger: Logger, maxLineLength: Int = 64 * 1024,
                inheritedDescriptor: Int32? = nil, onListening: @escaping @Sendable () -> Void = {}) {
        self.path = path
        self.inherited = inheritedDescriptor
        self.handler = handler
        self.logger = logger
        self.maxLineLength = maxLineLength
        self.group = MultiThreadedEventLoopGroup.singleton
        self.readiness = onListening
    }

    /// Binds, serves until graceful shutdown or cancellation, then closes and removes the socket.
    public func run() async throws {
        let lock = try SocketDirectory.prepare(forSocketAt: path)
        defer { close(lock) }
        let ownUID = getuid()
        let logger = self.logger
        // Children start with reads off and are wrapped in an NIOAsyncChannel only inside their own
        // connection task. A child NIO accepted while the listener was closing may never reach a
        // task; as a bare channel it is just dropped, where a wrapped one would trap on its
        // unfinished writer. Bytes a client sends meanwhile wait in the kernel.
        let accept: @Sendable (Channel) -> EventLoopFuture<AcceptedConnection> = { channel in
            Self.peerCredentials(of: channel).flatMapThrowing { peer -> AcceptedConnection in
                guard peer.uid == ownUID else {
                    logger.warning("refused connection from another user", metadata: ["client.pid": "\(peer.pid)", "client.uid": "\(peer.uid)"])
                    return AcceptedConnection(channel: channel, peer: peer, refused: true)
                }
                return AcceptedConnection(channel: channel, peer: peer, refused: false)
            }
        }
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelOption(.autoRead, value: false)
        let server: NIOAsyncChannel<AcceptedConnection, Never>
        if let inherited {
            server = try await bootstrap.bind(inherited, childChannelInitializer: accept)
            logger.info("listening on the socket systemd passed", metadata: ["socket.path": "\(path)"])
        } else {
            server = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true, childChannelInitializer: accept)
            chmod(path, 0o600)
            logger.info("listening", metadata: ["socket.path": "\(path)"])
        }
        readiness()
        defer { if inherited == nil { unlink(path) } }

        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { connections in
                try await server.executeThenClose { inbound in
                    for try await accepted in inbound {
                        let id = connectionIDs.next()
                        connections.addTask { await self.serve(accepted, id: id) }
                    }
                }
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)
        }
    }

    private func serve(_ accepted: AcceptedConnection, id: UInt64) async {
        let peer = accepted.peer
        if accepted.refused {
            // One line so the client can say why, then the close. Reads were never turned on:
            // nothing the peer sent is read.
            try? await accepted.channel.writeAndFlush(ByteBuffer(bytes: Self.refusal(uid: peer.uid)))
            try? await accepted.channel.close()
            return
        }
        let maxLineLength = self.maxLineLength
        let channel: NIOAsyncChannel<InboundFrame, ByteBuffer>
        do {
            channel = try await accepted.channel.eventLoop.submit {
                try accepted.channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(maxLength: maxLineLength)))
                let wrapped = try NIOAsyncChannel<InboundFrame, ByteBuffer>(wrappingChannelSynchronously: accepted.channel)
                try accepted.channel.syncOptions?.setOption(.autoRead, value: true)
                return wrapped
            }.get()
        } catch {
            logger.debug("connection setup failed", metadata: ["connection.id": "\(id)", "error": "\(error)"])
            accepted.channel.close(promise: nil)
            return
        }
        let (lines, continuation) = AsyncStream<Data>.makeStream()
        let context = ConnectionContext(id: id, peer: peer, outbox: Outbox(continuation: continuation))
        logger.debug("connection opened", metadata: ["client.pid": "\(peer.pid)", "connection.id": "\(id)"])
        do {
            // On graceful shutdown every connection is closed too: a subscriber would otherwise
            // keep its task, and so the daemon, alive forever.
            try await withGracefulShutdownHandler {
                try await channel.executeThenClose { inbound, outbound in
                    await withDiscardingTaskGroup { tasks in
                        tasks.addTask {
                            // The single writer: answers and events leave in the order they were queued.
                            for await line in lines {
                                do { try await outbound.write(ByteBuffer(bytes: line)) } catch { break }
                            }
                            continuation.finish()
                        }
                        await withDiscardingTaskGroup { requests in
                            do {
                                for try await frame in inbound {
                                    switch frame {
                                    case .line(let buffer):
                                        let data = Data(buffer.readableBytesView)
                                        requests.addTask { await self.handler.handle(line: data, connection: context) }
                                    case .tooLong:
                                        logger.notice("request line too long; closing", metadata: ["client.pid": "\(peer.pid)", "connection.id": "\(id)"])
                                        continuation.yield(handler.lineTooLongResponse(limit: maxLineLength))
                                        return
                                    }
                                }
                            } catch {
                                logger.debug("connection read ended", metadata: ["connection.id": "\(id)", "error": "\(error)"])
                            }
                        }
                        // Subscribers keep the connection open; once the client is gone, nothing more is sent.
                        await handler.connectionClosed(context)
                        continuation.finish()
                    }
                }
            } onGracefulShutdown: {
                channel.channel.close(promise: nil)
            }
        } catch {
            logger.debug("connection ended with an error", metadata: ["connection.id": "\(id)", "error": "\(error)"])
        }
        logger.debug("connection closed", metadata: ["connection.id": "\(id)"])
    }

    /// The `access_denied` error a peer of another user gets before the connection closes.
    static func refusal(uid: UInt32) -> Data {
        RPCCodec.encodeError(.application(.accessDenied, "access denied: authd serves only the user who runs it (uid \(getuid())), and this client runs as uid \(uid)"), id: nil)
    }

    private static func peerCredentials(of channel: Channel) -> EventLoopFuture<PeerCredentials> {
        guard let provider = channel as? SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(PeerRefused())
        }
        return provider.unsafeGetSocketOption(level: NIOBSDSocket.OptionLevel(rawValue: SOL_SOCKET),
                                              name: NIOBSDSocket.Option(rawValue: SO_PEERCRED))
    }
}

/// A child channel and its peer's credentials, not yet wrapped for async use.
struct AcceptedConnection: Sendable {
    let channel: Channel
    let peer: PeerCredentials
    /// The peer failed the uid check: it gets the refusal and the close, and nothing is read.
    let refused: Bool
}

/// A channel that reports no peer credentials.
struct PeerRefused: Error {}

/// A counter for connection ids.
final class ManagedAtomicCounter: Sendable {
    private let value = Atomic<UInt64>(0)
    func next() -> UInt64 { value.add(1, ordering: .relaxed).newValue }
}
