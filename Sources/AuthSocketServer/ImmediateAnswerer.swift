import NIOCore

/// Answers, right on the event loop, the request lines that need no waiting (a cached token):
/// no hop to the connection's task, no actor, no queue. Every other line goes on as before.
///
/// Sits after the line decoder and before the idle closer, so a line answered here is never
/// counted as in flight. It only answers while the connection's own queue is empty and NIO can
/// take more output: a client that does not read falls back to the bounded outbox and its
/// `too_slow` drop, and nothing it sends can grow memory here.
final class ImmediateAnswerer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = InboundFrame
    typealias InboundOut = InboundFrame
    typealias OutboundOut = ByteBuffer

    private let answer: (UnsafeRawBufferPointer) -> [UInt8]?
    private let outbox: Outbox
    private let activity: ConnectionActivity

    /// `answer` returns the line to send for a request line, or nil to pass it on.
    init(outbox: Outbox, activity: ConnectionActivity, answer: @escaping (UnsafeRawBufferPointer) -> [UInt8]?) {
        self.answer = answer
        self.outbox = outbox
        self.activity = activity
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .line(let buffer) = unwrapInboundIn(data), context.channel.isWritable, outbox.isIdle,
           let reply = buffer.withUnsafeReadableBytes(answer) {
            activity.touch(now: NIODeadline.now().uptimeNanoseconds)
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: reply)), promise: nil)
            return
        }
        context.fireChannelRead(data)
    }
}
