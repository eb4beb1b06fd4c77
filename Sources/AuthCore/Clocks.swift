import FoundationEssentials

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

    /// Reads `wall` and `monotonic` at one moment: the monotonic clock between two readings of
    /// the wall clock, whose midpoint is taken. When those two lie further apart than
    /// `tightSpread` (the thread was descheduled between them, or the clock was set just then)
    /// it reads again, up to `attempts` times, and keeps the closest pair.
    ///
    /// Why: two plain reads with a thread descheduled for seconds between them looked like a
    /// wall clock set by that much. On a loaded machine a "backward jump" of 5 s moved the
    /// session's expiry 5 s earlier for good, and it was refreshed early.
    public init(_ wall: any WallClock, _ monotonic: any MonotonicClock) {
        var closest: (spread: TimeInterval, reading: ClockReading)?
        for _ in 0..<Self.attempts {
            let before = wall.now()
            let seconds = monotonic.seconds()
            let spread = wall.now().timeIntervalSince(before)
            let reading = ClockReading(wall: before.addingTimeInterval(spread / 2), monotonic: seconds)
            if abs(spread) <= Self.tightSpread {
                self = reading
                return
            }
            if closest.map({ abs(spread) < $0.spread }) ?? true { closest = (abs(spread), reading) }
        }
        // `attempts` is positive, so the loop ran and kept a reading.
        self = closest!.reading
    }

    /// The widest gap between the two wall-clock reads of a reading that is taken at once: far
    /// above what reading two clocks costs (well under a microsecond), far below the two seconds
    /// that `ClockJump` calls a jump.
    public static let tightSpread: TimeInterval = 0.05

    /// How many times a reading is tried before the closest pair is kept.
    public static let attempts = 8

    /// How the wall clock moved between `earlier` and this reading, measured against the monotonic clock.
    public func jump(since earlier: ClockReading) -> ClockJump {
        ClockJump(wallElapsed: wall.timeIntervalSince(earlier.wall), monotonicElapsed: monotonic - earlier.monotonic)
    }
}
