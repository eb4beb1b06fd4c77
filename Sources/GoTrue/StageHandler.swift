import NIOCore

/// A handler that settles one stage of the exchange: the first outcome wins. An error or the
/// connection's end before an outcome fails the stage (an error also closes the connection), and
/// so does the handler's removal, so that no promise is ever left unanswered.
protocol StageHandler: ChannelInboundHandler, RemovableChannelHandler {
    associatedtype Outcome: Sendable
    /// The stage's promise, answered once.
    var outcome: EventLoopPromise<Outcome> { get }
    /// Whether `outcome` was answered.
    var isSettled: Bool { get set }
}

extension StageHandler {
    /// Answers the stage with `value`, unless it was answered before.
    func settle(_ value: Outcome) {
        guard !isSettled else { return }
        isSettled = true
        outcome.succeed(value)
    }

    /// Fails the stage, unless it was answered before, and closes the connection with `context`.
    func fail(_ error: any Error, closing context: ChannelHandlerContext?) {
        guard !isSettled else { return }
        isSettled = true
        outcome.fail(error)
        context?.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error, closing: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(HTTPExchangeError.connectionClosed, closing: nil)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        fail(HTTPExchangeError.connectionClosed, closing: nil)
    }
}
