import Foundation

/// Bounds how many tests run real processes (development servers, daemons, keyrings, authctl)
/// at once. Swift Testing starts every test of the run together; on a two-core machine dozens of
/// stacks starting at the same moment made every timeout in the process measure the machine's
/// queue rather than the code. A test waits for a slot without holding a thread (the wait is a
/// suspension), then runs its blocking body on a thread of its own (`offPool`).
///
/// The number of slots is `AUTHD_TEST_SLOTS`, else one more than the processor count: a stack
/// spends much of its life waiting on its children, so one more than the cores keeps them busy.
public actor ProcessTestSlots {
    /// The slots every suite of the test process shares.
    public static let shared = ProcessTestSlots(count: ProcessInfo.processInfo.environment["AUTHD_TEST_SLOTS"].flatMap(Int.init)
        ?? ProcessInfo.processInfo.activeProcessorCount + 1)

    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Slots for `count` tests at once (at least one).
    public init(count: Int) {
        free = max(1, count)
    }

    private func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            free += 1
        } else {
            // First come, first served: the slot passes straight to the longest waiter.
            waiting.removeFirst().resume()
        }
    }

    /// Runs `body` on a thread of its own once a slot is free, and frees the slot afterwards,
    /// whatever happens.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        await acquire()
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
