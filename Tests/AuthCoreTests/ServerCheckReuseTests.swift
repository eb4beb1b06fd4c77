import AuthCore
import Testing

/// When `daemon.checkServer` asks the server: by the rules alone, with the time passed in.
@Suite struct ServerCheckReuseTests {
    @Test func callsDuringACheckJoinItAndItsAnswerIsReusedForFiveSeconds() {
        var rules = ServerCheckReuse<String>()
        #expect(rules.reuseFor == 5)
        #expect(rules.call(now: 100) == .check)
        // However many calls come while it is under way, none starts another.
        for moment in stride(from: 100.0, to: 115, by: 0.5) { #expect(rules.call(now: moment) == .join) }
        rules.finished("up", now: 115)
        #expect(rules.call(now: 115) == .answer("up"))
        #expect(rules.call(now: 119.9) == .answer("up"))
        #expect(rules.call(now: 120) == .check)
        #expect(rules.call(now: 120.1) == .join)
    }

    /// The user's own tool (authctl doctor, run again once the network is fixed) gets a new
    /// check, not the kept answer; it still joins one under way.
    @Test func aFreshCallTakesNoKeptAnswerButJoinsACheckUnderWay() {
        var rules = ServerCheckReuse<String>()
        #expect(rules.call(now: 0) == .check)
        #expect(rules.call(now: 0.5, fresh: true) == .join)
        rules.finished("up", now: 1)
        #expect(rules.call(now: 1.5) == .answer("up"))
        #expect(rules.call(now: 1.5, fresh: true) == .check)
    }

    /// authctl run in a loop (any program of the user may run it) makes at most five checks in
    /// any five seconds: after that, a fresh call gets the kept answer too.
    @Test func freshCallsInALoopAskTheServerAtMostOnceASecond() {
        var rules = ServerCheckReuse<String>()
        var starts: [Double] = []
        for step in 0..<1000 {
            let now = Double(step) * 0.01  // 100 calls a second for 10 s
            if rules.call(now: now, fresh: true) == .check {
                starts.append(now)
                rules.finished("up", now: now)
            }
        }
        // Five at once, then one as each leaves the five-second window: ten in ten seconds.
        #expect(starts.count == 10, "\(starts)")
        #expect(starts.prefix(5) == [0, 0.01, 0.02, 0.03, 0.04])
        for (index, start) in starts.enumerated() where index >= 5 {
            #expect(start - starts[index - 5] >= 5, "\(starts)")
        }
    }

    @Test func aFailureIsReusedLikeAnyAnswer() {
        var rules = ServerCheckReuse<String>(reuseFor: 2)
        #expect(rules.call(now: 0) == .check)
        rules.finished("unreachable", now: 1)
        #expect(rules.call(now: 2.9) == .answer("unreachable"))
        #expect(rules.call(now: 3) == .check)
        rules.finished("up", now: 3.5)
        #expect(rules.call(now: 3.5) == .answer("up"))
    }

    /// A monotonic clock never goes back; were a time before the answer's passed in, the answer
    /// would not be trusted to be recent.
    @Test func aTimeBeforeTheAnswerAsksAgain() {
        var rules = ServerCheckReuse<String>()
        #expect(rules.call(now: 50) == .check)
        rules.finished("up", now: 50)
        #expect(rules.call(now: 49) == .check)
    }

    /// The most checks a stream of calls can cause: one per reuse window plus the check's own
    /// length, here a call every 10 ms for a minute with checks lasting 1 s.
    @Test func aCallerWithoutPauseGetsOneCheckPerWindow() {
        var rules = ServerCheckReuse<Int>()
        var checks = 0
        var endsAt: Double?
        for tick in 0..<6_000 {
            let now = Double(tick) / 100
            if let end = endsAt, now >= end {
                rules.finished(checks, now: end)
                endsAt = nil
            }
            if rules.call(now: now) == .check {
                checks += 1
                endsAt = now + 1
            }
        }
        #expect(checks == 10)
    }
}
