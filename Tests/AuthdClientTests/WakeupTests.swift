import BlockingCalls
import Foundation
import Testing

/// `Wakeup.wait(seconds:)` counts its time limit on the monotonic clock (sem_clockwait). A
/// deadline read from one clock and waited for on another would end the wait at once (a
/// monotonic deadline taken for a wall-clock one lies in 1970) or never.
@Suite struct WakeupTests {
    @Test func aWaitWithNothingPostedLastsItsTimeLimitAndNoMore() {
        let wakeup = Wakeup()
        let started = DispatchTime.now().uptimeNanoseconds
        #expect(wakeup.wait(seconds: 0.3) == false)
        let waited = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        // At least the limit; the upper bound only catches a wait that never ends on its own.
        #expect(waited >= 0.3 && waited < 600, "waited \(waited) s")
    }

    @Test func aPostEndsTheWaitEarlyAndOnePostMadeBeforeIsKept() {
        let wakeup = Wakeup()
        wakeup.post()
        #expect(wakeup.wait(seconds: 30) == true)
        let poster = Thread { usleep(100_000); wakeup.post() }
        poster.start()
        let started = DispatchTime.now().uptimeNanoseconds
        #expect(wakeup.wait(seconds: 30) == true)
        #expect(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 < 600)
    }
}
