import Synchronization

/// What decides whether a quiet connection may be closed: when it last did something, whether a
/// request is still being answered, and whether it subscribed to events (subscribers are quiet
/// by design and stay open).
public final class ConnectionActivity: Sendable {
    private let lastActive: Atomic<UInt64>
    private let requestsInFlight = Atomic<Int>(0)
    private let subscribed = Atomic<Bool>(false)

    /// Creates the activity of a connection opened at `now` (nanoseconds of a monotonic clock).
    package init(now: UInt64) {
        lastActive = Atomic(now)
    }

    /// The connection subscribed to events: it is never idle from now on.
    public func markSubscribed() { subscribed.store(true, ordering: .relaxed) }

    /// The connection did something at `now` (an answer was queued).
    func touch(now: UInt64) { lastActive.store(now, ordering: .relaxed) }

    /// A request line arrived; it is in flight until `requestFinished`.
    func requestStarted() { requestsInFlight.add(1, ordering: .relaxed) }

    /// Whether a request is being answered (for tests, which wait for the count to settle).
    package var hasRequestInFlight: Bool { requestsInFlight.load(ordering: .acquiring) > 0 }

    /// A request's answer was queued at `now`.
    func requestFinished(now: UInt64) {
        // The time first, released with the count: whoever sees the request done (the idle
        // closer) sees when it was done, not the time of the one before.
        touch(now: now)
        requestsInFlight.subtract(1, ordering: .releasing)
    }

    /// Nanoseconds until the connection counts as idle, or 0 when it is idle at `now`; nil while
    /// it is busy (a request in flight, answers still queued) or subscribed.
    func idleIn(timeout: UInt64, now: UInt64, queuedBytes: Int) -> UInt64? {
        if subscribed.load(ordering: .relaxed) || requestsInFlight.load(ordering: .acquiring) > 0 || queuedBytes > 0 { return nil }
        // Another thread may have touched it a moment "after" `now` was read.
        let last = lastActive.load(ordering: .relaxed)
        let quiet = now > last ? now - last : 0
        return quiet >= timeout ? 0 : timeout - quiet
    }
}
