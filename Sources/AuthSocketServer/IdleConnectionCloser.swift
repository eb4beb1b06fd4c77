import NIOCore

/// Closes a connection that has been quiet for the idle timeout, after writing the idle notice.
///
/// Sits right after the line decoder (and the ImmediateAnswerer, whose lines are answered at
/// once and so never in flight): a complete request line counts as in flight from the
/// moment it is decoded (it may wait a while for the connection's task under load), and a client
/// that trickles bytes without ever finishing a line does not count as active. It checks on a
/// timer set for the moment the connection could first be idle; a busy or subscribed connection
/// is checked again a timeout later.
final class IdleConnectionCloser: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = InboundFrame
    typealias InboundOut = InboundFrame

    private let timeout: TimeAmount
    private let timers: any ConnectionTimers
    private let activity: ConnectionActivity
    private let outbox: Outbox
    private let notice: ByteBuffer
    private let onIdle: () -> Void
    private var check: ScheduledConnectionTimer?

    /// Closes the connection once `activity` has been quiet for `timeout` on `timers`' clock.
    init(timeout: TimeAmount, timers: any ConnectionTimers, activity: ConnectionActivity, outbox: Outbox, notice: ByteBuffer,
         onIdle: @escaping () -> Void) {
        self.timeout = timeout
        self.timers = timers
        self.activity = activity
        self.outbox = outbox
        self.notice = notice
        self.onIdle = onIdle
    }

    // The clock starts once the connection is active: the handler is added at accept time, before
    // NIO registers the channel, and a check that found it not yet active would never come back.
    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { schedule(context: context, in: timeout) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if check == nil { schedule(context: context, in: timeout) }
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Finished (and so counted down) by the connection's task once it has been answered.
        switch unwrapInboundIn(data) {
        case .line, .call: activity.requestStarted()
        case .tooLong: break
        }
        context.fireChannelRead(data)
    }

    private func schedule(context: ChannelHandlerContext, in delay: TimeAmount) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        check = timers.schedule(in: delay, on: context.eventLoop) {
            let (closer, context) = loopBound.value
            closer.evaluate(context: context)
        }
    }

    private func evaluate(context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        let remaining = activity.idleIn(timeout: UInt64(timeout.nanoseconds), now: timers.now(),
                                        queuedBytes: outbox.queuedBytes)
        switch remaining {
        case nil:
            schedule(context: context, in: timeout)
        case let nanoseconds? where nanoseconds > 0:
            schedule(context: context, in: .nanoseconds(Int64(nanoseconds)))
        default:
            onIdle()
            let channel = context.channel
            context.writeAndFlush(NIOAny(notice)).whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
