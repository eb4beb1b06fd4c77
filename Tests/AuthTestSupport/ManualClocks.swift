import AuthCore
import Foundation
import Synchronization

/// A wall clock the test moves by hand.
public final class ManualWallClock: WallClock {
    private let current: Mutex<Date>
    /// Starts at `start`.
    public init(_ start: Date) { current = Mutex(start) }
    /// The current time.
    public func now() -> Date { current.withLock { $0 } }
    /// Moves the clock (forward or back).
    public func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// A monotonic clock the test moves by hand. Its `sleep` waits in real time: the tests that use
/// it drive the session by the clock check and timer inputs, and a sleep that waited for `advance`
/// would wake the driver's own clock watch in the middle of the test's steps.
public final class ManualMonotonicClock: MonotonicClock {
    private let current = Mutex<TimeInterval>(0)
    /// Starts at 0.
    public init() {}
    /// Seconds since the origin.
    public func seconds() -> TimeInterval { current.withLock { $0 } }
    /// Moves the clock forward.
    public func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
    /// Sleeps for `seconds` of real time.
    public func sleep(for seconds: TimeInterval) async throws { try await Task.sleep(for: .seconds(max(0, seconds))) }
}

/// A timer that never fires by itself: a test proves that something else (the clock check, a
/// wake signal) acted. It keeps the last deadline it was armed for.
public final class InertTimer: RefreshTimer {
    private let armed = Mutex<Date?>(nil)
    /// Creates a disarmed timer.
    public init() {}
    /// The deadline it is armed for, if any.
    public var deadline: Date? { armed.withLock { $0 } }
    /// Notes `deadline`; never calls `handler`.
    public func arm(at deadline: Date, handler: @escaping @Sendable () -> Void) { armed.withLock { $0 = deadline } }
    /// Forgets the deadline.
    public func cancel() { armed.withLock { $0 = nil } }
}
