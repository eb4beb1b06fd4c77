import Foundation

/// The wall clock, behind a port so the drivers can be tested with a manual one.
public protocol WallClock: Sendable {
    /// The current wall-clock time.
    func now() -> Date
}

/// A clock that never jumps and keeps counting through suspend, in seconds from any origin. Every
/// wait the daemon makes (an approval's timeout, a browser flow's lifetime, the clock watch, the
/// watchdog tick) sleeps on it, so that one injected clock decides what time it is.
public protocol MonotonicClock: Sendable {
    /// Seconds since this clock's origin.
    func seconds() -> TimeInterval
    /// Returns after `seconds` of this clock have passed; throws `CancellationError` when the
    /// task is cancelled first.
    func sleep(for seconds: TimeInterval) async throws
}

/// A one-shot timer with a wall-clock deadline. Arming again replaces the earlier deadline.
public protocol RefreshTimer: Sendable {
    /// Fires `handler` at `deadline` (at once if it has passed).
    func arm(at deadline: Date, handler: @escaping @Sendable () -> Void)
    /// Disarms the timer.
    func cancel()
}

/// Both clocks read at one moment.
public struct ClockReading: Sendable, Equatable {
    /// The wall-clock time.
    public var wall: Date
    /// The monotonic clock's seconds.
    public var monotonic: TimeInterval

    /// Creates a reading.
    public init(wall: Date, monotonic: TimeInterval) {
        self.wall = wall
        self.monotonic = monotonic
    }

    /// Reads `wall` and `monotonic` now.
    public init(_ wall: any WallClock, _ monotonic: any MonotonicClock) {
        self.init(wall: wall.now(), monotonic: monotonic.seconds())
    }

    /// How the wall clock moved between `earlier` and this reading, measured against the monotonic clock.
    public func jump(since earlier: ClockReading) -> ClockJump {
        ClockJump(wallElapsed: wall.timeIntervalSince(earlier.wall), monotonicElapsed: monotonic - earlier.monotonic)
    }
}
