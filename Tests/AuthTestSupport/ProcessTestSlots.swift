import Foundation
import Synchronization

/// Bounds how many tests run real processes (development servers, daemons, keyrings, authctl)
/// at once. Swift Testing starts every test of the run together; on a two-core machine dozens of
/// stacks starting at the same moment made every timeout in the process measure the machine's
/// queue rather than the code. A test waits for a slot without holding a thread (the wait is a
/// suspension), then runs its blocking body on a thread of its own (`offPool`).
///
/// The number of slots is `AUTHD_TEST_SLOTS`, else one more than the processor count: a stack
/// spends much of its life waiting on its children, so one more than the cores keeps them busy.
public final class ProcessTestSlots: Sendable {
    /// The slots every suite of the test process shares.
    public static let shared = ProcessTestSlots(count: ProcessInfo.processInfo.environment["AUTHD_TEST_SLOTS"].flatMap(Int.init)
        ?? ProcessInfo.processInfo.activeProcessorCount + 1)

    private struct State {
        var free: Int
        var waiting: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        var lastWaiter: UInt64 = 0
    }

    /// Behind a lock rather than an actor: a cancelled waiter must leave the queue from the
    /// cancellation handler itself, which cannot wait for an actor.
    private let state: Mutex<State>

    /// Slots for `count` tests at once (at least one).
    public init(count: Int) {
        state = Mutex(State(free: max(1, count)))
    }

    /// How many tests wait for a slot now.
    public var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Takes a slot, waiting for one as long as it takes; a cancelled test (its time limit
    /// reached) stops waiting at once, with `CancellationError`, and takes none.
    private func acquire() async throws {
        let waiter = state.withLock { (state: inout State) -> UInt64? in
            if state.free > 0 {
                state.free -= 1
                return nil
            }
            state.lastWaiter += 1
            return state.lastWaiter
        }
        guard let waiter else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                // Checked under the lock that the handler takes: a cancellation either comes
                // before this (and is seen here) or finds the waiter queued.
                let cancelled = state.withLock { state in
                    if Task.isCancelled { return true }
                    state.waiting.append((waiter, continuation))
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let dropped = state.withLock { state in
                state.waiting.firstIndex { $0.id == waiter }.map { state.waiting.remove(at: $0).continuation }
            }
            dropped?.resume(throwing: CancellationError())
        }
    }

    private func release() {
        // First come, first served: the slot passes straight to the longest waiter.
        let next = state.withLock { (state: inout State) -> CheckedContinuation<Void, any Error>? in
            if state.waiting.isEmpty {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst().continuation
        }
        next?.resume()
    }

    /// Runs `body` on a thread of its own once a slot is free, and frees the slot afterwards,
    /// whatever happens.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await acquire()
        let result = await Result(catching: { try await offPool(body) })
        release()
        return try result.get()
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing `body`.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

/// Runs a blocking test `body` that starts real processes on a thread of its own, within the
/// bound `ProcessTestSlots.shared` keeps.
public func withProcessSlot<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await ProcessTestSlots.shared.run(body)
}
