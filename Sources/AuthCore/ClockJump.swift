import FoundationEssentials

/// Tells a wall-clock jump (the time was set, NTP stepped it) from time simply passing.
///
/// Compared with a monotonic clock that keeps counting through suspend (CLOCK_BOOTTIME), a
/// suspend moves both clocks alike and is not a jump; a clock that was set moves only the wall.
public struct ClockJump: Sendable, Equatable {
    /// Wall-clock seconds that passed.
    public var wallElapsed: TimeInterval
    /// Monotonic seconds that passed.
    public var monotonicElapsed: TimeInterval

    /// Creates a comparison of two elapsed times.
    public init(wallElapsed: TimeInterval, monotonicElapsed: TimeInterval) {
        self.wallElapsed = wallElapsed
        self.monotonicElapsed = monotonicElapsed
    }

    /// How far the wall clock jumped (positive: forward).
    public var offset: TimeInterval { wallElapsed - monotonicElapsed }

    /// Whether the difference is more than scheduling noise.
    public func isJump(tolerance: TimeInterval = 2) -> Bool { abs(offset) > tolerance }
}
