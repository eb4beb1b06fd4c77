import NIOCore
import Synchronization

/// How far an exchange got, shared with the deadline's timer and the cancellation handler,
/// which run on other threads.
final class ExchangeProgress: Sendable {
    /// Whether any of the request was handed to the connection.
    let sent = Atomic<Bool>(false)
    /// Whether the deadline closed the connection.
    let timedOut = Atomic<Bool>(false)

    private struct State {
        /// The promise a connection attempt answers, until it is answered.
        var waiting: EventLoopPromise<any Channel>?
        var channel: (any Channel)?
        var cancelled = false
    }

    private let state = Mutex(State())

    /// The connection `connecting` makes, unless the exchange is cancelled first: then at once a
    /// cancellation, and a connection made later is closed. Whoever takes the promise from the
    /// state under the lock answers it, so it is answered exactly once.
    func connection(_ connecting: EventLoopFuture<any Channel>) async throws -> any Channel {
        let answer = connecting.eventLoop.makePromise(of: (any Channel).self)
        let cancelled = state.withLock { state in
            if !state.cancelled { state.waiting = answer }
            return state.cancelled
        }
        if cancelled { answer.fail(HTTPExchangeError.cancelled) }
        connecting.whenComplete { result in
            let (waiting, keep) = self.state.withLock { state -> (EventLoopPromise<any Channel>?, Bool) in
                defer { state.waiting = nil }
                if case .success(let channel) = result, !state.cancelled { state.channel = channel }
                return (state.waiting, !state.cancelled)
            }
            switch result {
            case .success(let channel):
                if keep { waiting?.succeed(channel) } else { channel.close(promise: nil) }
            case .failure(let error):
                waiting?.fail(error)
            }
        }
        return try await answer.futureResult.get()
    }

    /// Closes the connection, now or as soon as there is one, and ends a connection attempt.
    func cancel() {
        let (waiting, channel) = state.withLock { state in
            state.cancelled = true
            defer { state.waiting = nil }
            return (state.waiting, state.channel)
        }
        waiting?.fail(HTTPExchangeError.cancelled)
        channel?.close(promise: nil)
    }
}
