import AuthProtocol
import FoundationEssentials
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
#if canImport(Glibc)
import Glibc
#endif

/// Listens on a Unix socket and feeds newline-framed requests to a `SocketRequestHandler`.
///
/// A connection lives on its event loop, where cached tokens are answered, until it sends
/// anything else; from then on it is a child task of `run()`, and every request a child task of
/// its connection, so nothing outlives the server. Peers whose uid differs from ours get one
/// `access_denied` line and are closed before a byte of theirs is read; `ConnectionLimits` bound
/// the line length, the number of connections, quiet connections and unread output, each ending
/// with one error line that says why. Graceful shutdown (as `ServiceGroup` does on SIGTERM) and
/// cancellation both close the listener and every connection.
public final class UnixSocketServer: Service, Sendable {
    private let path: String
    private let handler: any SocketRequestHandler
    private let logger: Logger
    private let limits: ConnectionLimits
    private let timers: any ConnectionTimers
    private let slots: ConnectionSlots
    private let group: MultiThreadedEventLoopGroup
    private let connectionIDs = ManagedAtomicCounter()
    private let readiness: @Sendable () -> Void
    private let inherited: Int32?

    /// Creates a server for `path`; `onListening` runs once the socket accepts connections.
    ///
    /// With `inheritedDescriptor` (socket activation: systemd bound `path` and passed the listening
    /// socket), that socket is used as it is: not bound, not chmod-ed and not removed at the end,
    /// since systemd keeps listening on it to start the daemon again on the next connection.
    /// Connections keep time (their idle timeout) on `timers`.
    public init(path: String, handler: any SocketRequestHandler, logger: Logger, limits: ConnectionLimits = ConnectionLimits(),
                timers: any ConnectionTimers = EventLoopConnectionTimers(),
                inheritedDescriptor: Int32? = nil, onListening: @escaping @Sendable () -> Void = {}) {
        self.path = path
        self.inherited = inheritedDescriptor
        self.handler = handler
        self.logger = logger
        self.limits = limits
        self.timers = timers
        self.slots = ConnectionSlots(limit: limits.maxConnections, perClient: limits.maxConnectionsPerClient)
        self.group = MultiThreadedEventLoopGroup.singleton
        self.readiness = onListening
    }

    /// Binds, serves until graceful shutdown or cancellation, then closes and removes the socket.
    public func run() async throws {
        let lock = try SocketDirectory.prepare(forSocketAt: path)
        defer { close(lock) }
        let ownUID = getuid()
        let logger = self.logger
        // Read now, while the parent is still the process that started authd.
        let views = MountView.users
        if views.isEmpty {
            logger.warning("authd cannot read its own mount namespace: every client outside a Flatpak or Snap is unidentified")
        } else {
            logger.debug("clients that see these files are named by their path", metadata: ["mount.views": "\(views.map(\.summary))"])
        }
        // Children start with reads off. A served one gets its pipeline here, on its event loop, and
        // starts reading at once, so that a token request is answered without any task. The
        // connection gets its task (and is wrapped in an NIOAsyncChannel inside it) only when its
        // second InboundHold first keeps something: a line that cannot be answered at once. A
        // prompt's `$(authctl token)` thus costs the daemon no task and no thread hand-off, and a
        // connection that never needs one is closed by its hold, its idle closer or `live`.
        // Until the wrap, InboundHolds keep what arrives (see there).
        let (limits, timers, handler, connectionIDs, slots) = (self.limits, self.timers, self.handler, self.connectionIDs, self.slots)
        let maxConnections = limits.maxConnections
        let notices = ConnectionNotice.Prepared(limits: limits)
        let (claimed, claims) = AsyncStream<ServedConnection>.makeStream()
        let live = LiveConnections()
        let initialize: @Sendable (Channel) -> EventLoopFuture<Void> = { channel in
            do {
                try channel.pipeline.syncOperations.addHandler(InboundHold(), name: Self.bytesHoldName)
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
            // The pidfd first, so that it is closed whatever happens next.
            return Self.peerPidfd(of: channel).flatMap { pidfd in
                Self.peerCredentials(of: channel).map { ($0, pidfd) }.flatMapErrorThrowing { error in
                    if case .fd(let descriptor) = pidfd { close(descriptor) }
                    throw error
                }
            }.flatMap { peer, pidfd in
                guard peer.uid == ownUID else {
                    if case .fd(let descriptor) = pidfd { close(descriptor) }
                    logger.warning("refused connection from another user", metadata: ["client.pid": "\(peer.pid)", "client.uid": "\(peer.uid)"])
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(RefusalWriter(line: ConnectionNotice.refusal(uid: peer.uid)))
                    }
                }
                return SandboxFileReader.identify(pid: peer.pid, pidfd: pidfd, on: channel.eventLoop).flatMapThrowing { client in
                    try admit(channel, peer: peer, client: client)
                }
            }
        }
        /// Takes a slot for an identified connection and starts serving it, or refuses it.
        @Sendable func admit(_ channel: Channel, peer: PeerCredentials, client: ClientIdentity) throws {
            // Counted here; given back once, when the connection closes, with a task or without.
            switch slots.take(for: client.quotaKey) {
            case .taken:
                break
            case .allTaken:
                logger.warning("refused connection: too many connections", metadata: ["client.pid": "\(peer.pid)", "connections.max": "\(maxConnections)"])
                try channel.pipeline.syncOperations.addHandler(RefusalWriter(line: ConnectionNotice.busy(limit: maxConnections)))
                return
            case .clientsShareTaken:
                logger.warning("refused connection: the client has too many connections",
                               metadata: ["client.pid": "\(peer.pid)", "client.app": "\(client)", "connections.max_per_client": "\(limits.maxConnectionsPerClient)"])
                try channel.pipeline.syncOperations.addHandler(RefusalWriter(line: ConnectionNotice.busyForClient(limit: limits.maxConnectionsPerClient)))
                return
            }
            let slot = SlotHold { slots.release(for: client.quotaKey) }
            let id = connectionIDs.next()
            do {
                try Self.startServing(channel, peer: peer, client: client, id: id, slot: slot, limits: limits, timers: timers, notices: notices,
                                      handler: handler, logger: logger) { served in
                    claims.yield(served)
                } closedUnclaimed: { outbox in
                    outbox.finish()
                    slot.release()
                    logger.debug("connection closed", metadata: ["connection.id": "\(id)"])
                }
            } catch {
                slot.release()
                throw error
            }
            live.add(channel, id: id)
        }
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelOption(.autoRead, value: false)
            .childChannelInitializer(initialize)
        let server: any Channel
        if let inherited {
            server = try await bootstrap.withBoundSocket(inherited).get()
            logger.info("listening on the socket systemd passed", metadata: ["socket.path": "\(path)"])
        } else {
            server = try await Self.bindAtomically(bootstrap, at: path)
            logger.info("listening", metadata: ["socket.path": "\(path)"])
        }
        // The listener closes only when the server ends (shutdown, cancellation, or an error it
        // cannot go on from): the loop below ends then, and every connection is closed.
        server.closeFuture.whenComplete { _ in claims.finish() }
        readiness()
        defer { if inherited == nil { unlink(path) } }

        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { connections in
                for await connection in claimed {
                    connections.addTask { await Self.serve(connection, handler: handler, limits: limits, timers: timers, logger: logger) }
                }
                // Nothing is accepted from here on. Every connection is closed here, with a task
                // or without (a subscriber would otherwise keep its task, and so the daemon, alive
                // forever); the tasks end with their connections, and the group waits for that.
                // Requests still waiting (an app waiting for the user's decision) are cancelled:
                // their connections are gone, and the stop must not wait out their timeouts.
                server.close(promise: nil)
                live.closeAll()
                connections.cancelAll()
            }
        } onGracefulShutdown: {
            // Closing the listener ends the loop above, which closes the rest.
            server.close(promise: nil)
        }
    }
}
