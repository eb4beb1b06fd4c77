import AuthCore
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// The system's wall clock.
public struct SystemClock: WallClock {
    /// Creates the system clock.
    public init() {}
    /// `Date()`.
    public func now() -> Date { Date() }
}

/// `ContinuousClock`, which on Linux is CLOCK_BOOTTIME: it counts time asleep, so a suspend is
/// not mistaken for a wall-clock jump.
public struct SystemMonotonicClock: MonotonicClock {
    private let origin = ContinuousClock.now

    /// Creates the clock.
    public init() {}

    /// Seconds since the clock was created.
    public func seconds() -> TimeInterval {
        let elapsed = ContinuousClock.now - origin
        return TimeInterval(elapsed.components.seconds) + TimeInterval(elapsed.components.attoseconds) / 1e18
    }

    /// `Task.sleep` on `ContinuousClock`.
    public func sleep(for seconds: TimeInterval) async throws {
        try await Task.sleep(for: .seconds(max(0, seconds)), clock: .continuous)
    }
}

/// `RefreshTimer` on a `DispatchSourceTimer` with a `DispatchWallTime` deadline.
///
/// Wall-time deadlines are absolute CLOCK_REALTIME timers: one that passed while the laptop slept
/// fires as soon as it wakes, where a monotonic (`DispatchTime`) deadline would fire late by the
/// time asleep.
public final class DispatchWallTimer: RefreshTimer, Sendable {
    /// The armed timer source, which is kept under the mutex.
    private let source = Mutex<ArmedSource?>(nil)

    /// Unchecked: Dispatch's timer sources are not marked Sendable, but are safe from any thread.
    private struct ArmedSource: @unchecked Sendable {
        let timer: DispatchSourceTimer
    }
    private let queue = DispatchQueue(label: "authd.refresh-timer")

    /// Creates a disarmed timer.
    public init() {}

    /// Arms the timer for `deadline`.
    public func arm(at deadline: Date, handler: @escaping @Sendable () -> Void) {
        // Between the epoch and the year 9999: whatever the date, the conversion cannot trap.
        let seconds = min(max(deadline.timeIntervalSince1970, 0), 253_402_300_799)
        var spec = timespec()
        spec.tv_sec = Int(saturating: seconds, rounding: .down)
        spec.tv_nsec = min(Int(saturating: (seconds - seconds.rounded(.down)) * 1_000_000_000), 999_999_999)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(wallDeadline: DispatchWallTime(timespec: spec), leeway: .milliseconds(100))
        timer.setEventHandler(handler: handler)
        let armed = ArmedSource(timer: timer)
        source.withLock {
            $0?.timer.cancel()
            $0 = armed
        }
        timer.resume()
    }

    /// Disarms the timer.
    public func cancel() {
        source.withLock {
            $0?.timer.cancel()
            $0 = nil
        }
    }

    deinit { source.withLock { $0?.timer.cancel() } }
}
