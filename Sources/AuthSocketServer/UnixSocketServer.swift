import AuthProtocol
import FoundationEssentials
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
    public init(path: String, handler: any SocketRequestHandler, logger: Logger, limits: ConnectionLimits = ConnectionLimits(),
                inheritedDescriptor: Int32? = nil, onListening: @escaping @Sendable () -> Void = {}) {
        self.path = path
        self.inherited = inheritedDescriptor
        self.handler = handler
        self.logger = logger
        self.limits = limits
        self.slots = ConnectionSlots(limit: limits.maxConnections, perClient: limits.maxConnectionsPerClient)
        self.group = MultiThreadedEventLoopGroup.singleton
        self.readiness = onListening
    }

    /// Binds, serves until graceful shutdown or cancellation, then closes and removes the socket.
    public func run() async throws {
        let lock = try SocketDirectory.prepare(forSocketAt: path)
        defer { close(lock) }
        let ownUID = getuid()
        _ = MountView.users  // now, while the parent is still the process that started authd
        let logger = self.logger
        // Children start with reads off. A served one gets its pipeline here, on its event loop, and
        // starts reading at once, so that a token request is answered without any task. The
        // connection gets its task (and is wrapped in an NIOAsyncChannel inside it) only when its
        // second InboundHold first keeps something: a line that cannot be answered at once. A
        // prompt's `$(authctl token)` thus costs the daemon no task and no thread hand-off, and a
        // connection that never needs one is closed by its hold, its idle closer or `live`.
        // Until the wrap, InboundHolds keep what arrives (see there).
        let (limits, handler, connectionIDs, slots) = (self.limits, self.handler, self.connectionIDs, self.slots)
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
                try Self.startServing(channel, peer: peer, client: client, id: id, slot: slot, limits: limits, notices: notices,
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
                    connections.addTask { await self.serve(connection) }
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

    /// Binds and listens under a staging name beside `path`, then renames the socket into place:
    /// a client that sees the path can connect at once (with a plain bind, the file exists a moment
    /// before `listen`, and a connect then is refused as if no daemon ran). The lock taken by
    /// `SocketDirectory.prepare` makes the staging name ours. A path too long for a staging name
    /// is bound directly.
    private static func bindAtomically(_ bootstrap: ServerBootstrap, at path: String) async throws -> any Channel {
        let staging = path + ".new"
        guard staging.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
            let server = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
            chmod(path, 0o600)
            return server
        }
        let server = try await bootstrap.bind(unixDomainSocketPath: staging, cleanupExistingSocketFile: true).get()
        chmod(staging, 0o600)
        // rename() replaces whatever is at the path: only a socket (a crashed daemon's) may go.
        var existing = stat()
        let problem: String?
        if lstat(path, &existing) == 0, existing.st_mode & S_IFMT != S_IFSOCK {
            problem = "\(path) exists and is not a socket; refusing to replace it (move it away, or choose another AUTHD_SOCKET)"
        } else if rename(staging, path) != 0 {
            problem = "cannot move the socket into place at \(path): \(String(cString: strerror(errno)))"
        } else {
            problem = nil
        }
        if let problem {
            try? await server.close()
            unlink(staging)
            throw SocketSetupError(problem)
        }
        return server
    }

    /// Builds a served connection's pipeline on its event loop and turns reads on: the line
    /// decoder, `ImmediateAnswerer` (a cached token goes out from here), the idle closer, and an
    /// `InboundHold` for everything else. The hold calls `claim` when it first keeps something,
    /// for the connection's task to take over (`serve`), or `closedUnclaimed` when the connection
    /// ends without ever needing one.
    private static func startServing(_ channel: Channel, peer: PeerCredentials, client: ClientIdentity, id: UInt64, slot: SlotHold, limits: ConnectionLimits,
                                     notices: ConnectionNotice.Prepared, handler: any SocketRequestHandler, logger: Logger,
                                     claim: @escaping (ServedConnection) -> Void,
                                     closedUnclaimed: @escaping (Outbox) -> Void) throws {
        let (items, continuation) = AsyncStream<Outbox.Item>.makeStream()
        let outbox = Outbox(continuation: continuation, limit: limits.maxQueuedBytes, finalLine: notices.tooSlow) {
            logger.notice("client reads too slowly; dropping it", metadata: ["client.pid": "\(peer.pid)", "connection.id": "\(id)"])
            // The final error goes out if the client reads again soon; if not, the connection is cut.
            channel.eventLoop.scheduleTask(in: TimeAmount(limits.dropGrace)) { channel.close(promise: nil) }
        }
        let activity = ConnectionActivity(now: NIODeadline.now().uptimeNanoseconds)
        let context = ConnectionContext(id: id, peer: peer, client: client, outbox: outbox, activity: activity)
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(ByteToMessageHandler(LineFrameDecoder(maxLength: limits.maxLineLength)))
        try pipeline.addHandler(ImmediateAnswerer(outbox: outbox, activity: activity) { line in
            handler.answerAtOnce(line: line, connection: context)
        })
        if let idleTimeout = limits.idleTimeout, let idleNotice = notices.idle {
            try pipeline.addHandler(IdleConnectionCloser(
                timeout: TimeAmount(idleTimeout), activity: activity, outbox: outbox, notice: idleNotice) {
                    logger.debug("closing an idle connection", metadata: ["client.pid": "\(peer.pid)", "connection.id": "\(id)"])
                })
        }
        let served = ServedConnection(channel: channel, context: context, items: items, slot: slot)
        try pipeline.addHandler(InboundHold(claim: { claim(served) }, closedUnclaimed: { closedUnclaimed(outbox) }), name: linesHoldName)
        logger.debug("connection opened", metadata: ["client.pid": "\(peer.pid)", "client.app": "\(client)", "connection.id": "\(id)"])
        // Bytes the first hold kept go through the decoder now.
        _ = pipeline.removeHandler(name: bytesHoldName)
        try channel.syncOptions?.setOption(.autoRead, value: true)
    }

    /// The task of a connection that needed one: wraps the channel for async use, hands held and
    /// later lines to the handler, writes the outbox in order, and ends with the connection.
    private func serve(_ served: ServedConnection) async {
        defer { served.slot.release() }
        let limits = self.limits
        let logger = self.logger
        let rawChannel = served.channel
        let context = served.context
        let peer = context.peer
        let (id, outbox, activity, items) = (context.id, context.outbox, context.activity, served.items)
        let channel: NIOAsyncChannel<InboundFrame, ByteBuffer>
        do {
            channel = try await rawChannel.eventLoop.submit {
                let wrapped = try NIOAsyncChannel<InboundFrame, ByteBuffer>(wrappingChannelSynchronously: rawChannel)
                // The lines held since the accept go to the wrapper now, and reading goes on.
                _ = rawChannel.pipeline.syncOperations.removeHandler(name: Self.linesHoldName)
                return wrapped
            }.get()
        } catch {
            logger.debug("connection setup failed", metadata: ["connection.id": "\(id)", "error": "\(error)"])
            rawChannel.close(promise: nil)
            return
        }
        logger.debug("connection claimed by a task", metadata: ["connection.id": "\(id)"])
        do {
            // Shutdown closes the channel through `live` (see `run`).
            try await channel.executeThenClose { inbound, outbound in
                await withDiscardingTaskGroup { tasks in
                    tasks.addTask {
                        // The single writer: answers and events leave in the order they were queued.
                        writing: for await item in items {
                            // Lines queued before an overflow are dropped; only the final error goes.
                            guard outbox.taken(item) else { continue }
                            switch item {
                            case .line(let line):
                                do { try await outbound.write(ByteBuffer(bytes: line)) } catch {
                                    // The peer cannot take output any more (it shut its side
                                    // down): end the connection instead of leaving it half open.
                                    rawChannel.close(promise: nil)
                                    outbox.finish()
                                    break writing
                                }
                            case .final(let line):
                                try? await rawChannel.writeAndFlush(ByteBuffer(bytes: line))
                                rawChannel.close(promise: nil)
                            }
                        }
                    }
                    await withDiscardingTaskGroup { requests in
                        do {
                            for try await frame in inbound {
                                switch frame {
                                case .line(let buffer):
                                    let data = Data(buffer.readableBytesView)
                                    requests.addTask {
                                        await self.handler.handle(line: data, connection: context)
                                        activity.requestFinished(now: NIODeadline.now().uptimeNanoseconds)
                                    }
                                case .call(let work):
                                    requests.addTask {
                                        await work()
                                        activity.requestFinished(now: NIODeadline.now().uptimeNanoseconds)
                                    }
                                case .tooLong:
                                    logger.notice("request line too long; closing", metadata: ["client.pid": "\(peer.pid)", "connection.id": "\(id)"])
                                    outbox.send(ConnectionNotice.lineTooLong(limit: limits.maxLineLength))
                                    return
                                }
                            }
                        } catch {
                            logger.debug("connection read ended", metadata: ["connection.id": "\(id)", "error": "\(error)"])
                        }
                    }
                    // Subscribers keep the connection open; once the client is gone, nothing more is sent.
                    await handler.connectionClosed(context)
                    outbox.finish()
                }
            }
        } catch {
            logger.debug("connection ended with an error", metadata: ["connection.id": "\(id)", "error": "\(error)"])
        }
        logger.debug("connection closed", metadata: ["connection.id": "\(id)"])
    }

    /// The names of each connection's `InboundHold`s: raw bytes until its pipeline is built, then
    /// lines until its task has wrapped it.
    private static let bytesHoldName = "authd.inbound-hold.bytes"
    private static let linesHoldName = "authd.inbound-hold.lines"

    /// `SO_PEERPIDFD` (Linux 6.5+): a pidfd of the connected process, which tells whether the pid
    /// still names it after its `/proc` entry was read. Only ENOPROTOOPT means the kernel has no
    /// such option; any other failure (the process already exited) leaves the client unidentified.
    private static func peerPidfd(of channel: Channel) -> EventLoopFuture<PeerPidfd> {
        guard let provider = channel as? SocketOptionProvider else { return channel.eventLoop.makeSucceededFuture(.unsupported) }
        let future: EventLoopFuture<Int32> = provider.unsafeGetSocketOption(level: NIOBSDSocket.OptionLevel(rawValue: SOL_SOCKET),
                                                                          name: NIOBSDSocket.Option(rawValue: 77 /* SO_PEERPIDFD */))
        return future.map { fd in fd >= 0 ? .fd(fd) : .failed }.recover { error in
            (error as? IOError)?.errnoCode == ENOPROTOOPT ? .unsupported : .failed
        }
    }

    private static func peerCredentials(of channel: Channel) -> EventLoopFuture<PeerCredentials> {
        guard let provider = channel as? SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(PeerRefused())
        }
        return provider.unsafeGetSocketOption(level: NIOBSDSocket.OptionLevel(rawValue: SOL_SOCKET),
                                              name: NIOBSDSocket.Option(rawValue: SO_PEERCRED))
    }
}

/// What the accept built for a served connection, handed to a task once the connection needs
/// one: the channel (reading, not yet wrapped for async use), its context (with the outbox its
/// pipeline already writes to) and the outbox's items, which the task sends.
struct ServedConnection: Sendable {
    let channel: any Channel
    let context: ConnectionContext
    let items: AsyncStream<Outbox.Item>
    /// The connection's slot, given back when it ends.
    let slot: SlotHold
}

/// A connection's slot, given back exactly once whichever way the connection ends (its task,
/// closing without one, or failing while being set up).
final class SlotHold: Sendable {
    private let held = Atomic<Bool>(true)
    private let giveBack: @Sendable () -> Void

    init(giveBack: @escaping @Sendable () -> Void) { self.giveBack = giveBack }

    /// Gives the slot back, the first time only.
    func release() {
        if held.exchange(false, ordering: .acquiringAndReleasing) { giveBack() }
    }
}

/// A channel that reports no peer credentials.
struct PeerRefused: Error {}

/// A counter for connection ids.
package final class ManagedAtomicCounter: Sendable {
    private let value = Atomic<UInt64>(0)
    package init() {}
    package func next() -> UInt64 { value.add(1, ordering: .relaxed).newValue }
}

/// The connection slots in use, bounded by `ConnectionLimits.maxConnections` in all and by
/// `maxConnectionsPerClient` for each client.
final class ConnectionSlots: Sendable {
    private let inUse = Mutex<(total: Int, byClient: [String: Int])>((0, [:]))
    private let limit: Int
    private let perClient: Int

    /// Whether a slot was taken.
    enum Outcome: Equatable {
        case taken
        /// Every slot is in use.
        case allTaken
        /// The client holds its share already.
        case clientsShareTaken
    }

    init(limit: Int, perClient: Int) {
        self.limit = limit
        self.perClient = perClient
    }

    /// Takes a slot for `client` (nothing is taken unless it says `taken`).
    func take(for client: String) -> Outcome {
        inUse.withLock { inUse in
            guard inUse.total < limit else { return .allTaken }
            guard inUse.byClient[client, default: 0] < perClient else { return .clientsShareTaken }
            inUse.total += 1
            inUse.byClient[client, default: 0] += 1
            return .taken
        }
    }

    /// Gives `client`'s slot back.
    func release(for client: String) {
        inUse.withLock { inUse in
            inUse.total -= 1
            inUse.byClient[client, default: 1] -= 1
            if inUse.byClient[client] == 0 { inUse.byClient[client] = nil }
        }
    }
}
