#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A thread of its own that runs blocking calls one after another, in the order they were
/// submitted: libsecret over D-Bus in the daemon, socket reads in the client library.
///
/// Swift's cooperative pool has a thread per core, shared by every task in the process (and on
/// Linux with Dispatch's global queues): a call blocked there on D-Bus, an unlock dialog or a
/// read waiting on authd stalls unrelated async work. This thread is never one of them. Written
/// on POSIX threads, without Foundation.
public final class BlockingLane: Sendable {
    private let queue = JobQueue()

    /// Starts the thread, named `name` (the first 15 bytes) for debuggers and `top -H`.
    public init(name: String) {
        let queue = self.queue
        Self.startThread(name: name) { queue.drain() }
    }

    /// The thread ends once the jobs queued before the lane was released have run.
    deinit { queue.stop() }

    /// Queues `job` to run on the lane's thread after everything submitted before it; returns at once.
    public func submit(_ job: @escaping @Sendable () -> Void) { queue.enqueue(job) }

    /// Runs `body` on the lane's thread, after the work queued before it, and returns its result.
    public func run<T: Sendable, Failure: Error>(_ body: @escaping @Sendable () throws(Failure) -> T) async throws(Failure) -> T {
        let result: Result<T, Failure> = await withCheckedContinuation { continuation in
            queue.enqueue { continuation.resume(returning: Result { () throws(Failure) -> T in try body() }) }
        }
        return try result.get()
    }

    /// A detached POSIX thread running `body`.
    private static func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
        final class Start: Sendable {
            let name: [CChar]
            let body: @Sendable () -> Void
            init(name: String, body: @escaping @Sendable () -> Void) {
                self.name = Array(name.utf8.prefix(15)).map { CChar(bitPattern: $0) } + [0]
                self.body = body
            }
        }
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { argument in
            let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
            // pthread_setname_np is hidden behind _GNU_SOURCE; the kernel's own file does the same.
            let comm = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            if comm >= 0 {
                _ = start.name.withUnsafeBufferPointer { write(comm, $0.baseAddress, $0.count - 1) }
                close(comm)
            }
            start.body()
            return nil
        }, start)
        // Without a thread nothing would ever run: that is a process out of resources.
        precondition(created == 0, "cannot start a thread: error \(created)")
        pthread_detach(thread)
    }
}

/// The jobs waiting for a lane's thread: a list under a mutex and a wakeup counting them.
private final class JobQueue: Sendable {
    private let state = Mutex<(jobs: [@Sendable () -> Void], stopped: Bool)>(([], false))
    private let signal = Wakeup()

    func enqueue(_ job: @escaping @Sendable () -> Void) {
        state.withLock { $0.jobs.append(job) }
        signal.post()
    }

    /// Ends `drain` once the queued jobs have run. Only called when no caller is left.
    func stop() {
        state.withLock { $0.stopped = true }
        signal.post()
    }

    /// The thread's loop: one job per post, until stopped with nothing left.
    func drain() {
        while true {
            signal.wait()
            let job: (@Sendable () -> Void)? = state.withLock { state in
                state.jobs.isEmpty ? nil : state.jobs.removeFirst()
            }
            if let job { job() } else if state.withLock({ $0.stopped }) { return }
        }
    }
}
