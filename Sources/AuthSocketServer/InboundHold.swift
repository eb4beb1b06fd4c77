import NIOCore

/// Keeps what arrives on a new connection until its task has wrapped the channel, and stops
/// reading while it keeps anything.
///
/// Two of these sit in each new pipeline. The first, alone at accept time, keeps raw bytes: reads
/// start off, but a peer that sends its requests and shuts its side down at once makes NIO read
/// up to the end of file anyway, before the line decoder exists. The second sits behind the
/// decoder and `ImmediateAnswerer` while the connection's task is on its way: a token request is
/// answered at once, and any other line waits here. Without them those lines would fall off the
/// end of the pipeline and the client would wait forever; and because a hold that keeps a line
/// lets no further read through, what a peer sends meanwhile waits in the kernel, not in memory.
final class InboundHold: ChannelDuplexHandler, RemovableChannelHandler {
    /// Never unwrapped: the first hold keeps `ByteBuffer`s, the second `InboundFrame`s.
    typealias InboundIn = Any
    typealias OutboundIn = ByteBuffer

    private var reads: [NIOAny] = []
    private var events: [Any] = []
    private var readWanted = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        reads.append(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {}

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        events.append(event)
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
