import CMonotonicWait
#if canImport(Glibc)
import Glibc
#endif

/// A wait with a time limit that another thread can end early: a POSIX semaphore, without
/// Foundation's `NSCondition`. Posts are counted, so a post made before the wait ends it at once.
public final class Wakeup: @unchecked Sendable {
    // Unchecked: a POSIX semaphore is safe from any thread; it is set up in init and torn down in
    // deinit, when no thread can use it any more.
    private let semaphore: UnsafeMutablePointer<sem_t>

    /// Creates a wakeup with nothing posted.
    public init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Ends one wait, now or the next one to come.
    public func post() { sem_post(semaphore) }

    /// Waits until posted, however long that takes.
    public func wait() {
        while sem_wait(semaphore) != 0 {
            // Only a signal can interrupt the wait; anything else is a broken semaphore.
            precondition(errno == EINTR, "sem_wait failed: error \(errno)")
        }
    }

    /// Waits until posted or until `seconds` have passed; true when posted. The seconds are
    /// counted on the monotonic clock: a wall clock set back an hour must not make a two-second
    /// wait (the client library's reconnect) last an hour.
    @discardableResult
    public func wait(seconds: Double) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let whole = Int(max(0, min(seconds, 86_400)))
        let nanoseconds = deadline.tv_nsec + Int((max(0, min(seconds, 86_400)) - Double(whole)) * 1_000_000_000)
        deadline.tv_sec += whole + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        while authd_sem_wait_monotonic(semaphore, &deadline) != 0 {
            if errno != EINTR { return false }
        }
        return true
    }
}
