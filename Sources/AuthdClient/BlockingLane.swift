import Foundation

/// A thread of its own that runs blocking socket calls one after another.
///
/// Async callers hand their blocking work here instead of running it on Swift's cooperative pool,
/// whose few threads every task in the process shares: a read waiting on authd must never stall
/// the app's other tasks.
final class BlockingLane: Sendable {
    private let queue = JobQueue()

    /// Starts the thread, named `name` for debuggers.
    init(name: String) {
        let queue = self.queue
        let thread = Thread { queue.drain() }
        thread.name = name
        thread.start()
    }

    deinit { queue.stop() }

    /// Runs `body` on the lane's thread, after the work queued before it, and returns its result.
    func run<T: Sendable, Failure: Error>(_ body: @escaping @Sendable () throws(Failure) -> T) async throws(Failure) -> T {
        let result: Result<T, Failure> = await withCheckedContinuation { continuation in
            queue.enqueue { continuation.resume(returning: Result { () throws(Failure) -> T in try body() }) }
        }
        return try result.get()
    }
}

/// The jobs waiting for a lane's thread.
private final class JobQueue: @unchecked Sendable {
    // Unchecked: every field is read and written under `condition`.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var stopped = false

    func enqueue(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Ends `drain` once the queued jobs have run. Only called when no caller is left.
    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    /// The thread's loop.
    func drain() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty { condition.unlock(); return }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}
