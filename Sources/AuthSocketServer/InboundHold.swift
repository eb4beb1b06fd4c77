import NIOCore

/// Keeps what arrives on a new connection until its task has built the rest of the pipeline.
///
/// Reads start off, but a peer that sends its requests and shuts its side down at once makes NIO
/// read up to the end of file anyway, before the line decoder exists; without this handler those
/// requests would fall off the end of the pipeline and the client would wait forever.
final class InboundHold: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private var reads: [NIOAny] = []
    private var events: [Any] = []

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        reads.append(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {}

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        events.append(event)
    }

    /// Hands on everything held, in order, then leaves the pipeline.
    func removeHandler(context: ChannelHandlerContext, removalToken: ChannelHandlerContext.RemovalToken) {
        let (reads, events) = (self.reads, self.events)
        self.reads = []
        self.events = []
        for read in reads { context.fireChannelRead(read) }
        if !reads.isEmpty { context.fireChannelReadComplete() }
        for event in events { context.fireUserInboundEventTriggered(event) }
        context.leavePipeline(removalToken: removalToken)
    }
}
