import NIOCore

/// The time the socket server's connections read and wait on: when a connection was last
/// active, and when its idle closer looks again. In authd, the event loops' own monotonic clock
/// (`EventLoopConnectionTimers`); in tests, a clock the test moves, so that an idle close is
/// seen to happen exactly at its timeout instead of after a sleep that a loaded machine stretches.
public protocol ConnectionTimers: Sendable {
    /// Nanoseconds of a monotonic clock.
    func now() -> UInt64
    /// Runs `body` on `loop` once `delay` has passed; the answer cancels it (on `loop`).
    func schedule(in delay: TimeAmount, on loop: any EventLoop, _ body: @escaping @Sendable () -> Void) -> ScheduledConnectionTimer
}

/// A timer `ConnectionTimers.schedule` has set.
public struct ScheduledConnectionTimer: Sendable {
    private let cancelling: @Sendable () -> Void

    /// A timer that `cancel` stops.
    public init(cancel: @escaping @Sendable () -> Void) { cancelling = cancel }

    /// Stops the timer if it has not fired; after it fired, nothing.
    public func cancel() { cancelling() }
}

/// The event loops' own clock and timers: what authd runs on.
public struct EventLoopConnectionTimers: ConnectionTimers {
    /// The event loops' clock.
    public init() {}

    /// `NIODeadline.now()`, in nanoseconds.
    public func now() -> UInt64 { NIODeadline.now().uptimeNanoseconds }

    /// `loop.scheduleTask(in:)`.
    public func schedule(in delay: TimeAmount, on loop: any EventLoop, _ body: @escaping @Sendable () -> Void) -> ScheduledConnectionTimer {
        let scheduled = loop.scheduleTask(in: delay, body)
        return ScheduledConnectionTimer { scheduled.cancel() }
    }
}
