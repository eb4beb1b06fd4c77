import NIOCore

/// Answers, right on the event loop, the request lines that need no waiting (a cached token):
/// no hop to the connection's task, no actor, no queue. A line the handler read but cannot
/// answer at once goes on as the work that answers it (`InboundFrame.call`), so it is not read
/// again; every other line goes on as it came.
///
/// Sits after the line decoder and before the idle closer, so a line answered here is never
/// counted as in flight. It only answers while the connection's own queue is empty and NIO can
/// take more output: a client that does not read falls back to the bounded outbox and its
/// `too_slow` drop, and nothing it sends can grow memory here.
final class ImmediateAnswerer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = InboundFrame
    typealias InboundOut = InboundFrame
    typealias OutboundOut = ByteBuffer

    private let answer: (UnsafeRawBufferPointer) -> ImmediateAnswer
    private let outbox: Outbox
    private let activity: ConnectionActivity
    private let timers: any ConnectionTimers

    /// `answer` says what to do with a request line; an answer given marks `activity` at `timers`' now.
    init(outbox: Outbox, activity: ConnectionActivity, timers: any ConnectionTimers, answer: @escaping (UnsafeRawBufferPointer) -> ImmediateAnswer) {
        self.answer = answer
        self.timers = timers
        self.outbox = outbox
        self.activity = activity
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .line(let buffer) = unwrapInboundIn(data), context.channel.isWritable, outbox.isIdle else {
            context.fireChannelRead(data)
            return
        }
        switch buffer.withUnsafeReadableBytes(answer) {
        case .reply(let reply):
            activity.touch(now: timers.now())
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: reply)), promise: nil)
        case .later(let work):
            context.fireChannelRead(wrapInboundOut(.call(work)))
        case .pass:
            context.fireChannelRead(data)
        }
    }
}
