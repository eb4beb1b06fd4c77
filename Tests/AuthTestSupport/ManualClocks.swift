import Foundation
import Synchronization

/// A wall clock the test moves by hand (through `AuthDaemon.WallClock` by conformance there).
public final class ManualWallClock: Sendable {
    private let current: Mutex<Date>
    /// Starts at `start`.
    public init(_ start: Date) { current = Mutex(start) }
    /// The current time.
    public func now() -> Date { current.withLock { $0 } }
    /// Moves the clock (forward or back).
    public func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// A monotonic clock the test moves by hand.
public final class ManualMonotonicClock: Sendable {
    private let current = Mutex<TimeInterval>(0)
    /// Starts at 0.
    public init() {}
    /// Seconds since the origin.
    public func seconds() -> TimeInterval { current.withLock { $0 } }
    /// Moves the clock forward.
    public func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
}
