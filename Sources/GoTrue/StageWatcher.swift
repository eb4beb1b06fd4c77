import NIOCore

/// Waits for one user event (the TLS handshake's end, the SOCKS tunnel's), then leaves the pipeline.
final class StageWatcher: StageHandler {
    typealias InboundIn = NIOAny

    let outcome: EventLoopPromise<Void>
    var isSettled = false
    private let isTheEvent: (Any) -> Bool

    init(done: EventLoopPromise<Void>, isTheEvent: @escaping (Any) -> Bool) {
        self.outcome = done
        self.isTheEvent = isTheEvent
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard !isSettled, isTheEvent(event) else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        settle(())
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
