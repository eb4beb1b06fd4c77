import BlockingCalls
import Foundation
import Synchronization
import Testing

/// `Wakeup.wait(seconds:)` counts its time limit on the monotonic clock (sem_clockwait). A
/// deadline read from one clock and waited for on another would end the wait at once (a
/// monotonic deadline taken for a wall-clock one lies in 1970) or never.
///
/// A wait in progress is looked at from the kernel's side rather than timed: its thread is
/// blocked in a futex wait whose operation names the clock of the deadline and whose arguments
/// point at the deadline itself (`/proc/self/task/TID/syscall`). The bounds on how long a test
/// waits for something only end a failing test.
@Suite struct WakeupTests {
    #if arch(x86_64)
    static let futexCall = 202
    #else
    static let futexCall = 98 // arm64
    #endif
    static let futexWaitBitset = 9, futexPrivateFlag = 128, futexClockRealtime = 256

    /// The monotonic clock, in nanoseconds.
    static func monotonicNow() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// One `wait(seconds:)` on a thread of its own, named so that the kernel's view of it can be found.
    final class Waiter: Sendable {
        private struct State {
            var startedAt: Int64?
            var answer: Bool?
            var endedAt: Int64?
        }
        private let name: String
        private let state = Mutex(State())

        init(_ wakeup: Wakeup, seconds: Double, name: String) {
            self.name = name
            let thread = Thread { [self] in
                // The kernel's name for this thread, set by the thread itself. Foundation's
                // `Thread.current.name` did not always rename the kernel thread: on a loaded
                // machine the thread kept the name of the pool thread that started it (a stack
                // dump showed it blocked in its wait as "…root.default-qos"), the lookup below
                // never found it, and the test polled a pool thread for 30 s.
                // (Written to /proc: glibc's pthread_setname_np is not visible to Swift here.)
                try? name.write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
                let startedAt = WakeupTests.monotonicNow()
                state.withLock { $0.startedAt = startedAt }
                let answer = wakeup.wait(seconds: seconds)
                let endedAt = WakeupTests.monotonicNow()
                state.withLock { $0.answer = answer; $0.endedAt = endedAt }
            }
            thread.start()
        }

        /// The monotonic clock just before the call, once the thread has read it.
        var startedAt: Int64? { state.withLock { $0.startedAt } }
        /// What `wait` answered, and the monotonic clock then; nil while it waits.
        var ended: (answer: Bool, at: Int64)? { state.withLock { state in state.answer.map { ($0, state.endedAt ?? 0) } } }

        /// Waits (in real time, up to `timeout` seconds) for the answer.
        func answer(within timeout: TimeInterval) -> (answer: Bool, at: Int64)? {
            let deadline = Date().addingTimeInterval(timeout)
            while ended == nil, Date() < deadline { usleep(1_000) }
            return ended
        }

        /// The futex wait with a deadline that the thread is blocked in: its operation and its
        /// deadline. Waits (up to 30 s) until the thread is in one; nil if it never is.
        func futexWait() -> (operation: Int, deadline: timespec)? {
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline {
                if let tid = threadID(), let call = Self.futexWait(of: tid) { return call }
                usleep(1_000)
            }
            return nil
        }

        private func threadID() -> String? {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            return tasks.first { (try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) == name }
        }

        /// `futex(uaddr, op, val, timeout, ...)`, as the kernel shows it: "202 0x… 0x89 0x0 0x…".
        private static func futexWait(of tid: String) -> (operation: Int, deadline: timespec)? {
            let fields = ((try? String(contentsOfFile: "/proc/self/task/\(tid)/syscall", encoding: .utf8)) ?? "").split(separator: " ")
            func argument(_ index: Int) -> UInt? { fields.count > index ? UInt(fields[index].dropFirst(2), radix: 16) : nil }
            guard let number = fields.first.flatMap({ Int($0) }), number == WakeupTests.futexCall,
                  let operation = argument(2).map({ Int($0) }), operation & 0x7f == WakeupTests.futexWaitBitset,
                  let timeout = argument(4).flatMap({ UnsafePointer<timespec>(bitPattern: $0) })
            else { return nil }
            // The deadline lies on the waiting thread's stack, which stays put while it is blocked.
            return (operation, timeout.pointee)
        }
    }

    @Test func aWaitWithNothingPostedLastsItsTimeLimit() {
        let wakeup = Wakeup()
        let waiter = Waiter(wakeup, seconds: 0.3, name: "wakeup-limit")
        // A wait that never ended on its own is ended by a post after a minute: it then answers true.
        var ended = waiter.answer(within: 60)
        if ended == nil {
            wakeup.post()
            ended = waiter.answer(within: 60)
        }
        #expect(ended?.answer == false, "the wait did not end at its time limit")
        if let ended, let startedAt = waiter.startedAt {
            #expect(ended.at - startedAt >= 300_000_000, "waited \(Double(ended.at - startedAt) / 1e9) s")
        }
    }

    @Test func theTimeLimitIsADeadlineOnTheMonotonicClockThatMuchAfterTheCall() throws {
        let wakeup = Wakeup()
        let waiter = Waiter(wakeup, seconds: 3600, name: "wakeup-clock")
        let wait = try #require(waiter.futexWait(), "the waiting thread never blocked in a futex wait with a deadline")
        let observedAt = Self.monotonicNow()
        // FUTEX_WAIT_BITSET, without FUTEX_CLOCK_REALTIME: the deadline is on the monotonic clock.
        #expect(wait.operation & ~Self.futexPrivateFlag == Self.futexWaitBitset, "futex operation \(String(wait.operation, radix: 16))")
        // Exactly the limit after the clock was read in the call: between the readings just before and after it.
        let deadline = Int64(wait.deadline.tv_sec) * 1_000_000_000 + Int64(wait.deadline.tv_nsec)
        let startedAt = try #require(waiter.startedAt)
        #expect(deadline >= startedAt + 3_600_000_000_000 && deadline <= observedAt + 3_600_000_000_000,
                "deadline \(deadline) ns, the call between \(startedAt) and \(observedAt) ns")
        wakeup.post()
        #expect(waiter.answer(within: 60)?.answer == true)
    }

    @Test func aPostEndsTheWaitEarlyAndOnePostMadeBeforeIsKept() throws {
        let wakeup = Wakeup()
        wakeup.post()
        #expect(wakeup.wait(seconds: 30) == true)
        // A wait in progress (blocked in the kernel, an hour to go) ends with the post, answering true.
        let waiter = Waiter(wakeup, seconds: 3600, name: "wakeup-post")
        _ = try #require(waiter.futexWait(), "the waiting thread never blocked in a futex wait with a deadline")
        #expect(waiter.ended == nil)
        wakeup.post()
        #expect(waiter.answer(within: 60)?.answer == true)
    }
}
