import Synchronization

/// A gate a test opens once: `wait()` returns once `open()` has been called, before or after it
/// began. It ignores cancellation on purpose: a call held at it (a fake server's answer) stays
/// held through the cancellation the test means to come first, and answers only when the test
/// says, as a real server answers whatever the client's task does meanwhile.
public final class Latch: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    /// Creates a closed latch.
    public init() {}

    /// Returns once the latch is open.
    public func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isOpen = state.withLock { state in
                if !state.isOpen { state.waiters.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }

    /// Opens the latch: every wait, begun or to come, returns.
    public func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
