import Foundation

/// A serial queue with a thread of its own, for calls that block (libsecret over D-Bus, or an
/// unlock dialog on a desktop).
///
/// On Linux, Swift's cooperative pool and Dispatch's global queues share worker threads, so
/// blocking one of those threads on D-Bus can stall unrelated async work. This thread is never
/// one of them; work items run one at a time, in the order they were submitted.
final class BlockingWorker: @unchecked Sendable {
    // Unchecked: `queue` is only touched under `condition`.
    private let condition = NSCondition()
    private var queue: [@Sendable () -> Void] = []

    init(name: String) {
        // The thread keeps the worker alive: it lives as long as the process, like the store it serves.
        let thread = Thread { self.loop() }
        thread.name = name
        thread.start()
    }

    /// Runs `work` on the worker thread after everything submitted before it.
    func submit(_ work: @escaping @Sendable () -> Void) {
        condition.lock()
        queue.append(work)
        condition.signal()
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while queue.isEmpty { condition.wait() }
            let work = queue.removeFirst()
            condition.unlock()
            work()
        }
    }
}
