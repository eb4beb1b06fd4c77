import FoundationEssentials
import Logging
import NIOCore
import NIOPosix

/// Serving an admitted connection: its pipeline on the event loop, then, if it needs one, its task.
extension UnixSocketServer {
    /// The names of each connection's `InboundHold`s: raw bytes until its pipeline is built, then
    /// lines until its task has wrapped it.
    static let bytesHoldName = "authd.inbound-hold.bytes"
    static let linesHoldName = "authd.inbound-hold.lines"

    /// Builds a served connection's pipeline on its event loop and turns reads on: the line
    /// decoder, `ImmediateAnswerer` (a cached token goes out from here), the idle closer, and an
    /// `InboundHold` for everything else. The hold calls `claim` when it first keeps something,
    /// for the connection's task to take over (`serve`), or `closedUnclaimed` when the connection
    /// ends without ever needing one.
    static func startServing(_ channel: Channel, peer: PeerCredentials, client: ClientIdentity, id: UInt64, slot: SlotHold, limits: ConnectionLimits,
                             timers: any ConnectionTimers, notices: ConnectionNotice.Prepared, handler: any SocketRequestHandler, logger: Logger,
                             claim: @escaping (ServedConnection) -> Void,
                             closedUnclaimed: @escaping (Outbox) -> Void) throws {
        let (items, continuation) = AsyncStream<Outbox.Item>.makeStream()
        let outbox = Outbox(continuation: continuation, limit: limits.maxQueuedBytes, finalLine: notices.tooSlow) {
            logger.notice("client reads too slowly; dropping it", metadata: ["client.pid": "\(peer.pid)", "connection.id": "\(id)"])
            // The final error goes out if the client reads again soon; if not, the connection is cut.
            channel.eventLoop.scheduleTask(in: TimeAmount(limits.dropGrace)) { channel.close(promise: nil) }
        }
        let activity = ConnectionActivity(now: timers.now())
        let hangUp = ConnectionHangUp()
        // The channel closes when the client closes its socket (not when it only shuts down its
        // writing side: half-closure is allowed) or when the daemon closes it.
        channel.closeFuture.whenComplete { _ in hangUp.end() }
        let context = ConnectionContext(id: id, peer: peer, client: client, outbox: outbox, activity: activity, hangUp: hangUp)
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(ByteToMessageHandler(LineFrameDecoder(maxLength: limits.maxLineLength)))
        try pipeline.addHandler(ImmediateAnswerer(outbox: outbox, activity: activity, timers: timers) { line in
            handler.answerAtOnce(line: line, connection: context)
        })
        if let idleTimeout = limits.idleTimeout, let idleNotice = notices.idle {
            try pipeline.addHandler(IdleConnectionCloser(
                timeout: TimeAmount(idleTimeout), timers: timers, activity: activity, outbox: outbox, notice: idleNotice) {
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
    static func serve(_ served: ServedConnection, handler: any SocketRequestHandler, limits: ConnectionLimits,
                      timers: any ConnectionTimers, logger: Logger) async {
        defer { served.slot.release() }
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
                                        await handler.handle(line: data, connection: context)
                                        activity.requestFinished(now: timers.now())
                                    }
                                case .call(let work):
                                    requests.addTask {
                                        await work()
                                        activity.requestFinished(now: timers.now())
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
}
