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

/// A monotonic clock whose time is the test's: it moves only by `advance`, and a `sleep` returns
/// once the clock has been moved past its end (or throws `CancellationError` when its task is
/// cancelled first). `waitForSleepers` lets a test advance only once the waits it means have
/// begun, so that "nothing happened yet" and "now it happened" are both exact, with no real time
/// in between.
public final class SteppingMonotonicClock: MonotonicClock {
    private struct Sleeper {
        var until: TimeInterval
        var continuation: CheckedContinuation<Void, any Error>?
    }

    private struct State {
        var now: TimeInterval = 0
        var sleepers: [UInt64: Sleeper] = [:]
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Starts at 0.
    public init() {}

    /// Seconds since the origin.
    public func seconds() -> TimeInterval { state.withLock { $0.now } }

    /// How many sleeps are waiting now.
    public var sleepers: Int { state.withLock { $0.sleepers.count } }

    /// How many sleeps end `seconds` from now, whether already suspended or about to be: a sleep
    /// that was cancelled is no longer counted.
    public func sleeps(endingIn seconds: TimeInterval) -> Int {
        state.withLock { state in state.sleepers.values.filter { abs($0.until - state.now - seconds) < 0.001 }.count }
    }

    /// Returns once the clock has been advanced by `seconds` from now.
    public func sleep(for seconds: TimeInterval) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.sleepers[state.nextID] = Sleeper(until: state.now + max(0, seconds))
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    guard let sleeper = state.sleepers[id] else { return .success(()) }
                    if sleeper.until <= state.now {
                        state.sleepers[id] = nil
                        return .success(())
                    }
                    state.sleepers[id]?.continuation = continuation
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiting = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let sleeper = state.sleepers.removeValue(forKey: id) else { return nil }
                if sleeper.continuation == nil { state.cancelled.insert(id) }
                return sleeper.continuation
            }
            waiting?.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward; every sleep whose end it passes returns.
    public func advance(by seconds: TimeInterval) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now += seconds
            let due = state.sleepers.filter { $0.value.until <= state.now && $0.value.continuation != nil }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.compactMap(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Waits until a sleep of `seconds` from now is waiting (among others: a test names the wait
    /// it means by its length); false when none was within `timeout` seconds of real time (a bound
    /// that only ends a failing test).
    public func waitForSleep(of seconds: TimeInterval, timeout: TimeInterval = 30) async -> Bool {
        await eventually(within: timeout, every: .milliseconds(5)) {
            state.withLock { state in state.sleepers.values.contains { $0.continuation != nil && abs($0.until - state.now - seconds) < 0.001 } }
        }
    }

    /// Waits until at least `count` sleeps are waiting; false when they were not within
    /// `timeout` seconds of real time (a bound that only ends a failing test).
    public func waitForSleepers(_ count: Int, timeout: TimeInterval = 30) async -> Bool {
        await eventually(within: timeout, every: .milliseconds(5)) {
            state.withLock { $0.sleepers.values.filter { $0.continuation != nil }.count } >= count
        }
    }
}
