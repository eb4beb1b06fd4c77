import NIOCore

/// Keeps what arrives on a new connection until its task has wrapped the channel, and stops
/// reading while it keeps anything.
///
/// Two of these sit in each new pipeline. The first, alone at accept time, keeps raw bytes: reads
/// start off, but a peer that sends its requests and shuts its side down at once makes NIO read
/// up to the end of file anyway, before the line decoder exists. The second sits behind the
/// decoder and `ImmediateAnswerer`: a token request is answered at once, and any other line (or
/// event) waits here while the connection's task is started for it, by `claim`. A connection that
/// only ever asks for cached tokens never needs that task: when its peer shuts its side down, the
/// hold closes it, and `closedUnclaimed` says it ended without one. Without the
/// holds those lines would fall off the end of the pipeline and the client would wait forever;
/// and because a hold that keeps a line lets no further read through, what a peer sends meanwhile
/// waits in the kernel, not in memory.
final class InboundHold: ChannelDuplexHandler, RemovableChannelHandler {
    /// Never unwrapped: the first hold keeps `ByteBuffer`s, the second `InboundFrame`s.
    typealias InboundIn = Any
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var reads: [NIOAny] = []
    private var events: [Any] = []
    private var readWanted = false
    private var claim: (() -> Void)?
    private var closedUnclaimed: (() -> Void)?

    /// A hold. `claim` runs once, when it first keeps something; `closedUnclaimed` runs instead
    /// when the connection closes before that.
    init(claim: (() -> Void)? = nil, closedUnclaimed: (() -> Void)? = nil) {
        self.claim = claim
        self.closedUnclaimed = closedUnclaimed
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        reads.append(data)
        claimOnce()
    }

    func channelReadComplete(context: ChannelHandlerContext) {}

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // Unclaimed, the hold keeps nothing yet (the first thing kept claims it).
        if claim != nil, case .inputClosed? = event as? ChannelEvent {
            // The peer is done and every line it sent was answered at once: no task is needed to
            // end the connection. It closes once those answers are written (writes complete in
            // order, so the empty one completes last), as the task would close it.
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(capacity: 0))).whenComplete { _ in
                channel.close(promise: nil)
            }
            return
        }
        events.append(event)
        claimOnce()
    }

    // Called when the hold leaves the pipeline: after `claim`, when the connection's task takes
    // over; before it, only when the channel closes (NIO then removes every handler, even from a
    // channel that never became active).
    func handlerRemoved(context: ChannelHandlerContext) {
        guard claim != nil else { return }
        claim = nil
        closedUnclaimed?()
        closedUnclaimed = nil
    }

    private func claimOnce() {
        guard let claim else { return }
        self.claim = nil
        closedUnclaimed = nil
        claim()
    }

    func read(context: ChannelHandlerContext) {
        if reads.isEmpty && events.isEmpty {
            context.read()
        } else {
            readWanted = true
        }
    }

    /// Hands on everything held, in order, asks for the read it held back, then leaves the pipeline.
    func removeHandler(context: ChannelHandlerContext, removalToken: ChannelHandlerContext.RemovalToken) {
        let (reads, events) = (self.reads, self.events)
        self.reads = []
        self.events = []
        for read in reads { context.fireChannelRead(read) }
        if !reads.isEmpty { context.fireChannelReadComplete() }
        for event in events { context.fireUserInboundEventTriggered(event) }
        if readWanted {
            readWanted = false
            context.read()
        }
        context.leavePipeline(removalToken: removalToken)
    }
}
