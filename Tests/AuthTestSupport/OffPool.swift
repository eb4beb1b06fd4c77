import Foundation

/// Runs a blocking test body on a thread of its own, so that sleeping, waiting for processes or
/// blocking in a system call never starves Swift's cooperative pool, which other suites'
/// in-process daemons, bus watchers and supervisors run on (two threads on a two-core machine).
///
/// The body stays in the calling task (a task-executor preference, not a detached thread), so
/// its task-local values go with it: an `#expect` that fails inside it is recorded against the
/// test that ran it, not against an unknown test.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withTaskExecutorPreference(ThreadPerJobExecutor.shared, isolation: nil) { try body() }
}

/// A task executor that runs each job it is given on a new thread of its own (4 MiB of stack,
/// as the end-to-end bodies need): a blocking job then holds only that thread.
final class ThreadPerJobExecutor: TaskExecutor {
    /// The one executor every `offPool` body uses.
    static let shared = ThreadPerJobExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let thread = Thread { job.runSynchronously(on: executor) }
        thread.stackSize = 4 << 20
        thread.start()
    }
}
