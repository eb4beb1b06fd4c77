import FoundationEssentials
import NIOCore

/// Sends a peer that may not be served (another user, no free slot) one line saying why, then
/// closes, all on the connection's event loop. Reads are never turned on for such a peer, so
/// nothing it sends is read, let alone handled.
final class RefusalWriter: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let line: Data
    private var sent = false

    /// A writer of `line`, sent once the connection is active.
    init(line: Data) {
        self.line = line
    }

    // Added at accept time, before NIO registers the channel: the line goes out once it is active.
    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { refuse(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        refuse(context: context)
        context.fireChannelActive()
    }

    private func refuse(context: ChannelHandlerContext) {
        guard !sent else { return }
        sent = true
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: line))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}
