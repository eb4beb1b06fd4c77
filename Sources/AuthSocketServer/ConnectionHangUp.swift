import Synchronization

/// Whether a connection has ended for good: its client closed its socket, or the daemon closed
/// the connection. A request that only waits (for a browser, for a sign-in page) stops waiting
/// then, instead of holding the connection's slot until its flow ends minutes later.
///
/// A half-close is not an end: a client that shuts down its writing side still reads the
/// answers to what it asked (`printf … | nc -N -U`), so only the channel's close counts.
public final class ConnectionHangUp: Sendable {
    private struct State {
        var ended = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Creates the hang-up of a connection that is open.
    public init() {}

    /// Whether the connection has ended.
    public var hasEnded: Bool { state.withLock { $0.ended } }

    /// How many `untilEnded` are waiting (for tests, which cancel one that waits).
    package var waiting: Int { state.withLock { $0.waiters.count } }

    /// The connection has ended: every `untilEnded` returns.
    package func end() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.ended = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the connection has ended, or once the calling task is cancelled.
    public func untilEnded() async {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // Cancelled before the continuation was kept (its handler found nothing), or ended: return now.
                let now = state.withLock { state -> Bool in
                    if state.ended || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Runs `body`, cancelling it when the connection ends first, and returns what it returns (a
    /// cancelled wait answers at once; the answer then goes nowhere).
    public func cancellingOnEnd<T: Sendable>(_ body: @escaping @Sendable () async -> T) async -> T {
        await withTaskGroup(of: Finished<T>.self) { group in
            group.addTask { .body(await body()) }
            group.addTask {
                await self.untilEnded()
                return .connectionEnded
            }
            while let finished = await group.next() {
                // Either way the other one stops: the body's answer is all that is wanted.
                group.cancelAll()
                if case .body(let value) = finished { return value }
            }
            preconditionFailure("the body's task always finishes")
        }
    }

    private enum Finished<T: Sendable>: Sendable {
        case body(T)
        case connectionEnded
    }
}
