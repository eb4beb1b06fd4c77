import AuthCore
import AuthTestSupport
import Foundation
import Testing

/// The rules that keep clients and servers from making authd refresh in a loop: one refresh per
/// request at most, a breaker on refresh grants a minute, and numbers that cannot trap.
@Suite struct RefreshLimitTests {
    let t0 = Fixtures.t0
    let policy = RefreshPolicy(jitterFraction: 0)

    func signedIn(lifetime: TimeInterval) -> SessionMachine {
        var machine = SessionMachine(policy: policy)
        _ = machine.storedSessionLoaded(Fixtures.session(1, lifetime: lifetime), now: t0)
        return machine
    }

    /// Refreshes at `now` for request `id`, with the server answering a token of `expiresIn`
    /// seconds and the keyring writing it; returns the actions of the write.
    func refreshOnce(_ machine: inout SessionMachine, id: UInt64, minimum: TimeInterval, now: Date,
                     grant: Int, expiresIn: Int, latency: TimeInterval) -> [SessionAction] {
        let asked = machine.tokenRequested(RequestID(id), validFor: minimum, now: now)
        #expect(asked.contains(.refresh(refreshToken: "refresh-\(grant - 1)", generation: 0)), "\(asked)")
        let answeredAt = now.addingTimeInterval(latency)
        _ = machine.refreshSucceeded(Fixtures.grant(grant, lifetime: expiresIn), generation: 0, now: answeredAt)
        return machine.storeFinished(generation: 0, failure: nil, now: answeredAt.addingTimeInterval(0.003), random: 0)
    }

    @Test func aMinimumEqualToTheLifetimeCausesOneRefreshAndIsAnsweredWithTheFreshToken() {
        var machine = signedIn(lifetime: 60)
        let now = t0.addingTimeInterval(5)
        // The fresh token lives 60 s from its receipt, a few milliseconds before the answer: short
        // of the 60 s asked. It is answered anyway, with its real expiry, and nothing more is sent.
        let stored = refreshOnce(&machine, id: 1, minimum: 60, now: now, grant: 2, expiresIn: 60, latency: 0.25)
        let fresh = IssuedToken(accessToken: "access-2", expiresAt: now.addingTimeInterval(60.25))
        #expect(stored.contains(.answer(RequestID(1), .success(fresh))))
        #expect(!stored.contains { if case .refresh = $0 { true } else { false } })
        #expect(machine.phase == .signedIn)
    }

    @Test func aTokenAWholeSecondShortOfTheMinimumIsAnsweredToo() {
        var machine = signedIn(lifetime: 3600)
        // GoTrue's expires_in is whole seconds; an integer exp may leave a token a second short.
        let stored = refreshOnce(&machine, id: 1, minimum: 3600, now: t0.addingTimeInterval(100), grant: 2, expiresIn: 3599, latency: 0.01)
        #expect(stored.contains { if case .answer(RequestID(1), .success) = $0 { true } else { false } })
        #expect(!stored.contains { if case .refresh = $0 { true } else { false } })
    }

    @Test func aMinimumAboveTheLifetimeIsRefusedWithoutARefreshWhateverItsSize() {
        var machine = signedIn(lifetime: 60)
        for minimum in [61, 1e9, 9.223372036854775807e18, .greatestFiniteMagnitude, .infinity] as [TimeInterval] {
            let actions = machine.tokenRequested(RequestID(1), validFor: minimum, now: t0)
            #expect(actions == [.answer(RequestID(1), .failure(.minimumValidityTooLong(requested: minimum, lifetime: 60)))])
        }
    }

    @Test func theBreakerHoldsBackTheEleventhRefreshOfAMinuteServesTheValidTokenAndSaysSoOnce() {
        var machine = signedIn(lifetime: 3600)
        var now = t0.addingTimeInterval(1)
        for grant in 2...11 {
            _ = refreshOnce(&machine, id: UInt64(grant), minimum: 3600, now: now, grant: grant, expiresIn: 3600, latency: 0.1)
            now.addTimeInterval(1)
        }
        // The eleventh within the minute: held back until the first leaves the window.
        let held = machine.tokenRequested(RequestID(20), validFor: 3600, now: now)
        let retryAt = t0.addingTimeInterval(61)
        let degraded = machine.degraded
        #expect(degraded?.reason == .refreshLimited)
        #expect(degraded?.retryAt == retryAt)
        let detail = degraded?.detail ?? ""
        #expect(detail.contains("10 refresh grants in 60 s"))
        #expect(held == [.emit(.refreshFailing(.refreshLimited, detail: detail, retryAt: retryAt)), .armTimer(retryAt),
                         .answer(RequestID(20), .success(IssuedToken(accessToken: "access-11", expiresAt: t0.addingTimeInterval(10.1 + 3600))))])
        // More requests meanwhile are answered at once, without another event.
        let again = machine.tokenRequested(RequestID(21), validFor: 3600, now: now.addingTimeInterval(1))
        #expect(again.count == 2)
        #expect(again.contains { if case .answer(RequestID(21), .success) = $0 { true } else { false } })
        // Once the window has room, the timer clears the state and a request refreshes again.
        #expect(machine.timerFired(now: retryAt).contains { if case .armTimer = $0 { true } else { false } })
        #expect(machine.degraded == nil)
        #expect(machine.tokenRequested(RequestID(22), validFor: 3600, now: retryAt)
                == [.emit(.refreshing), .refresh(refreshToken: "refresh-11", generation: 0)])
    }

    /// A refresh asked for (a take-over's second exchange, a factor removed) that the breaker
    /// holds back is owed: it starts when the breaker has room, not at the next scheduled
    /// refresh an hour later, and only once.
    @Test func aRequestedRefreshHeldBackByTheBreakerStartsWhenItHasRoom() {
        var machine = signedIn(lifetime: 3600)
        var now = t0.addingTimeInterval(1)
        for grant in 2...11 {
            _ = refreshOnce(&machine, id: UInt64(grant), minimum: 3600, now: now, grant: grant, expiresIn: 3600, latency: 0.1)
            now.addTimeInterval(1)
        }
        let retryAt = t0.addingTimeInterval(61)
        let held = machine.refreshRequested(now: now)
        #expect(!held.contains { if case .refresh = $0 { true } else { false } }, "\(held)")
        #expect(held.contains(.armTimer(retryAt)), "\(held)")
        // The breaker has room: the owed refresh starts, though the token has an hour left.
        #expect(machine.timerFired(now: retryAt) == [.emit(.refreshing), .refresh(refreshToken: "refresh-11", generation: 0)])
        _ = machine.refreshSucceeded(Fixtures.grant(12, lifetime: 3600), generation: 0, now: retryAt)
        _ = machine.storeFinished(generation: 0, failure: nil, now: retryAt, random: 0)
        // Paid: the next timer refreshes nothing before the schedule says so.
        #expect(!machine.timerFired(now: retryAt.addingTimeInterval(60)).contains { if case .refresh = $0 { true } else { false } })
    }

    /// A factor removed while a refresh is out: that refresh may predate the change, so the one
    /// asked for is owed and starts once it is stored.
    @Test func aRefreshAskedForWhileAnotherIsOutRunsAfterIt() {
        var machine = signedIn(lifetime: 3600)
        let now = t0.addingTimeInterval(100)
        #expect(machine.tokenRequested(RequestID(1), validFor: 3600, now: now).contains(.refresh(refreshToken: "refresh-1", generation: 0)))
        #expect(machine.refreshRequested(now: now) == [], "one refresh at a time")
        _ = machine.refreshSucceeded(Fixtures.grant(2, lifetime: 3600), generation: 0, now: now)
        let stored = machine.storeFinished(generation: 0, failure: nil, now: now, random: 0)
        #expect(stored.contains(.refresh(refreshToken: "refresh-2", generation: 0)), "\(stored)")
    }

    @Test func anExpiredTokenHeldBackByTheBreakerIsRefusedAsRateLimitedAndRefreshedWhenAllowed() {
        // A server granting one-second tokens: the schedule alone would refresh twice a second.
        var machine = signedIn(lifetime: 1)
        var now = t0
        var grants = 1
        var sawHold = false
        for _ in 0..<200 {
            now.addTimeInterval(0.5)
            let actions = machine.timerFired(now: now)
            if actions.contains(where: { if case .refresh = $0 { true } else { false } }) {
                grants += 1
                _ = machine.refreshSucceeded(Fixtures.grant(grants, lifetime: 1), generation: 0, now: now)
                _ = machine.storeFinished(generation: 0, failure: nil, now: now, random: 0)
            }
            if machine.degraded?.reason == .refreshLimited, machine.session!.remaining(at: now) < 0 {
                sawHold = true
                let refused = machine.tokenRequested(RequestID(1), validFor: 0, now: now)
                #expect(refused.contains { if case .answer(_, .failure(.refreshFailing(.refreshLimited, _))) = $0 { true } else { false } })
            }
        }
        #expect(sawHold)
        // 100 s of one-second tokens: at most 10 refreshes a minute, so at most 20 (two windows).
        #expect(grants - 1 <= 20)
        #expect(grants - 1 >= 10)
    }

    @Test func aSetClockCannotEmptyTheBreaker() {
        var machine = signedIn(lifetime: 3600)
        var now = t0.addingTimeInterval(1)
        for grant in 2...11 {
            _ = refreshOnce(&machine, id: UInt64(grant), minimum: 3600, now: now, grant: grant, expiresIn: 3600, latency: 0.1)
            now.addTimeInterval(0.5)
        }
        // The clock is set an hour forward: the window still counts real time.
        now.addTimeInterval(3600)
        _ = machine.clockJumped(by: 3600, now: now)
        let actions = machine.tokenRequested(RequestID(30), validFor: 3000, now: now)
        #expect(!actions.contains { if case .refresh = $0 { true } else { false } })
        #expect(machine.degraded?.reason == .refreshLimited)
    }

    /// The driver notices a step of the wall clock seconds late: refreshes made in between were
    /// recorded on the new time and are shifted once more. They count as made now, so a step of
    /// a day holds refreshes back for one window at most.
    @Test func aClockStepNoticedLateHoldsRefreshesBackForOneWindowAtMost() {
        var machine = signedIn(lifetime: 3600)
        let day: TimeInterval = 86_400
        var now = t0.addingTimeInterval(1 + day) // the clock was set a day forward, not yet noticed
        for grant in 2...11 {
            _ = refreshOnce(&machine, id: UInt64(grant), minimum: 3600, now: now, grant: grant, expiresIn: 3600, latency: 0.1)
            now.addTimeInterval(0.2)
        }
        _ = machine.clockJumped(by: day, now: now)
        let held = machine.tokenRequested(RequestID(40), validFor: 3600, now: now)
        #expect(!held.contains { if case .refresh = $0 { true } else { false } })
        let later = now.addingTimeInterval(61)
        _ = machine.timerFired(now: later)
        #expect(machine.tokenRequested(RequestID(41), validFor: 3600, now: later).contains { if case .refresh = $0 { true } else { false } })
    }

    /// A hold whose timer another input re-armed still ends when the window has room.
    @Test func aHoldEndsWhenTheWindowHasRoomWhateverElseHappened() {
        var machine = signedIn(lifetime: 3600)
        var now = t0.addingTimeInterval(1)
        for grant in 2...11 {
            _ = refreshOnce(&machine, id: UInt64(grant), minimum: 3600, now: now, grant: grant, expiresIn: 3600, latency: 0.1)
            now.addTimeInterval(1)
        }
        _ = machine.tokenRequested(RequestID(50), validFor: 3600, now: now)
        let retryAt = try! #require(machine.degraded?.retryAt)
        // The network changes meanwhile: the machine re-arms its timer, not past the hold.
        let rearmed = machine.networkChanged(now: now.addingTimeInterval(1))
        #expect(rearmed.contains(.armTimer(retryAt)), "\(rearmed)")
        _ = machine.timerFired(now: retryAt)
        #expect(machine.degraded == nil)
    }

    @Test func aStoredSessionWithAnImpossibleExpiryIsRefreshedAtOnce() {
        for expiresIn in [9.2e18, -5, 1e300, Session.maximumLifetime + 1] as [TimeInterval] {
            var machine = SessionMachine(policy: policy)
            var stored = Fixtures.session(1)
            stored.expiresAt = t0.addingTimeInterval(expiresIn)
            let actions = machine.storedSessionLoaded(stored, now: t0.addingTimeInterval(10))
            #expect(actions == [.emit(.initialSession(expired: true)), .emit(.refreshing), .refresh(refreshToken: "refresh-1", generation: 0)])
            #expect(machine.session?.expiresAt == t0.addingTimeInterval(10))
        }
    }

    @Test func aGrantOfAnImpossibleLifetimeIsKeptWithinAYear() {
        let session = Session(grant: Fixtures.grant(2, lifetime: .max), receivedAt: t0)
        #expect(session.lifetime == Session.maximumLifetime)
        #expect(Session(grant: Fixtures.grant(2, lifetime: -30), receivedAt: t0).lifetime == 0)
    }

    @Test(arguments: [Double.infinity, -.infinity, .nan, 1e400, 9.2e18, -1])
    func anyRetryAfterGivesAFiniteBackoffOfAtMostAnHour(_ retryAfter: Double) {
        let delay = policy.backoff(attempt: 3, retryAfter: retryAfter, random: 0.5)
        #expect(delay.isFinite)
        #expect(delay >= 0 && delay <= RefreshPolicy.retryAfterCap)
    }

    @Test(arguments: [(Double.nan, Int64(0)), (.infinity, .max), (-.infinity, .min), (9.3e18, .max), (-9.3e18, .min),
                      (9_223_372_036_854_775_807, .max), (1.9, 1), (-1.9, -1)])
    func aSaturatingConversionNeverTraps(_ value: Double, _ expected: Int64) {
        #expect(Int64(saturating: value) == expected)
    }
}
