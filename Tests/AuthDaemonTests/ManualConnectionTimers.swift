import AuthSocketServer
import AuthTestSupport
import Foundation
import NIOCore
import Synchronization

/// Connection timers on a clock only the test moves: a timer fires, on its event loop, when
/// `advance` passes its deadline, and `advance` returns once every timer it fired has run.
final class ManualConnectionTimers: ConnectionTimers {
    private struct Timer {
        let deadline: UInt64
        let loop: any EventLoop
        let body: @Sendable () -> Void
    }

    private struct State {
        var now: UInt64 = 1_000_000_000
        var timers: [UInt64: Timer] = [:]
        /// Fired by `advance`, not yet run: a cancel now still stops them, as NIO's does.
        var firing: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    func now() -> UInt64 { state.withLock { $0.now } }

    func schedule(in delay: TimeAmount, on loop: any EventLoop, _ body: @escaping @Sendable () -> Void) -> ScheduledConnectionTimer {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.timers[state.nextID] = Timer(deadline: state.now + UInt64(max(0, delay.nanoseconds)), loop: loop, body: body)
            return state.nextID
        }
        return ScheduledConnectionTimer {
            self.state.withLock { state in
                state.timers[id] = nil
                state.firing.remove(id)
            }
        }
    }

    /// How far from now each timer set is, soonest first.
    var pending: [Duration] {
        state.withLock { state in state.timers.values.map { .nanoseconds(Int64($0.deadline - state.now)) }.sorted() }
    }

    /// Waits until exactly `count` timers are set (connections are accepted on the event loops
    /// a moment after the client's `connect` returns, and a closed one's timer is cancelled a
    /// moment after its close); false if that takes longer than `seconds`, which only a failing
    /// run waits.
    func waitForTimers(_ count: Int, seconds: Double = 30) async -> Bool {
        await eventually(within: seconds, every: .milliseconds(5)) { state.withLock { $0.timers.count } == count }
    }

    /// Moves the clock forward by `duration` and runs every timer it passes, each on its loop,
    /// returning once they all have.
    func advance(by duration: Duration) async {
        let due = state.withLock { state -> [(id: UInt64, timer: Timer)] in
            state.now += UInt64(duration.components.seconds) * 1_000_000_000 + UInt64(duration.components.attoseconds / 1_000_000_000)
            let fired = state.timers.filter { $0.value.deadline <= state.now }
            for id in fired.keys {
                state.timers[id] = nil
                state.firing.insert(id)
            }
            return fired.map { (id: $0.key, timer: $0.value) }.sorted { $0.timer.deadline < $1.timer.deadline }
        }
        for (id, timer) in due {
            try? await timer.loop.submit {
                // On the loop, as a cancel is: one that came first stops it.
                guard self.state.withLock({ $0.firing.remove(id) != nil }) else { return }
                timer.body()
            }.get()
        }
    }
}
