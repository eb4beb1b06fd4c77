import AuthCore
import AuthTestSupport
import Foundation
import Testing

/// The session rules, input by input. Synchronous: no sleeping, no I/O.
@Suite struct SessionMachineTests {
    let t0 = Fixtures.t0
    /// No jitter, so deadlines are exact: lead for a 3600 s token is 360 s.
    let policy = RefreshPolicy(jitterFraction: 0)
    let r1 = RequestID(1), r2 = RequestID(2), r3 = RequestID(3)

    func signedInMachine(at now: Date? = nil) -> SessionMachine {
        var machine = SessionMachine(policy: policy)
        _ = machine.storedSessionLoaded(Fixtures.session(1), now: now ?? t0)
        return machine
    }

    func token(_ n: Int, receivedAt: Date? = nil, lifetime: TimeInterval = 3600) -> Result<IssuedToken, TokenFailure> {
        .success(IssuedToken(accessToken: "access-\(n)", expiresAt: (receivedAt ?? t0).addingTimeInterval(lifetime)))
    }

    @Test func nothingStoredMeansSignedOutWithAnInitialEvent() {
        var machine = SessionMachine(policy: policy)
        #expect(machine.storedSessionLoaded(nil, now: t0) == [.emit(.initialSession(expired: false))])
        #expect(machine.phase == .signedOut(nil))
        #expect(machine.tokenRequested(r1, validFor: 0, now: t0) == [.answer(r1, .failure(.notSignedIn(nil)))])
    }

    @Test func aValidStoredSessionIsServedAndTheTimerArmedBeforeExpiry() {
        var machine = SessionMachine(policy: policy)
        let actions = machine.storedSessionLoaded(Fixtures.session(1), now: t0.addingTimeInterval(10))
        #expect(actions == [.emit(.initialSession(expired: false)), .armTimer(t0.addingTimeInterval(3600 - 360))])
        #expect(machine.phase == .signedIn)
        #expect(machine.tokenRequested(r1, validFor: 60, now: t0.addingTimeInterval(20)) == [.answer(r1, token(1))])
    }

    @Test func anExpiredStoredSessionIsFlaggedAndRefreshedAtOnce() {
        var machine = SessionMachine(policy: policy)
        let actions = machine.storedSessionLoaded(Fixtures.session(1), now: t0.addingTimeInterval(4000))
        #expect(actions == [.emit(.initialSession(expired: true)), .emit(.refreshing), .refresh(refreshToken: "refresh-1", generation: 0)])
        #expect(machine.phase == .refreshing)
    }

    @Test func requestsWaitingDuringLoadAreAnsweredOnceLoaded() {
        var machine = SessionMachine(policy: policy)
        #expect(machine.tokenRequested(r1, validFor: 0, now: t0) == [])
        let actions = machine.storedSessionLoaded(Fixtures.session(1), now: t0)
        #expect(actions.contains(.answer(r1, token(1))))
    }

    @Test func concurrentRequestsShareOneRefreshAndSeeTheNewTokenOnlyAfterItIsStored() {
        var machine = signedInMachine()
        let now = t0.addingTimeInterval(200) // 3400 s left
        #expect(machine.tokenRequested(r1, validFor: 3500, now: now) == [.emit(.refreshing), .refresh(refreshToken: "refresh-1", generation: 0)])
        #expect(machine.tokenRequested(r2, validFor: 3500, now: now) == [])
        #expect(machine.waitingCount == 2)

        let stored = Session(grant: Fixtures.grant(2), receivedAt: now)
        #expect(machine.refreshSucceeded(Fixtures.grant(2), generation: 0, now: now) == [.store(stored, generation: 0)])
        // Write-ahead: while the new session is being stored, nobody gets it.
        #expect(machine.phase == .persisting)
        #expect(machine.tokenRequested(r3, validFor: 3500, now: now) == [])
        #expect(machine.session?.accessToken == "access-1")

        let actions = machine.storeFinished(generation: 0, failure: nil, now: now)
        #expect(actions == [.emit(.tokenRefreshed), .answer(r1, token(2, receivedAt: now)), .answer(r2, token(2, receivedAt: now)),
                            .answer(r3, token(2, receivedAt: now)), .armTimer(now.addingTimeInterval(3240))])
        #expect(machine.session?.accessToken == "access-2")
    }

    @Test func theTokenAnsweredAtOnceIsWhatARequestWouldGetAndNeverAnUnstoredSuccessor() {
        var machine = SessionMachine(policy: policy)
        #expect(machine.answer(validFor: 0, now: t0) == nil) // loading
        _ = machine.storedSessionLoaded(nil, now: t0)
        #expect(machine.answer(validFor: 0, now: t0) == nil) // signed out

        machine = signedInMachine()
        let now = t0.addingTimeInterval(200)
        let current = IssuedToken(accessToken: "access-1", expiresAt: t0.addingTimeInterval(3600))
        #expect(machine.answer(validFor: 60, now: now) == current)
        #expect(machine.tokenRequested(r1, validFor: 60, now: now) == [.answer(r1, .success(current))])
        // Exactly the validity left is enough; a second more is not, and then the machine must act.
        #expect(machine.answer(validFor: 3400, now: now) == current)
        #expect(machine.answer(validFor: 3401, now: now) == nil)

        _ = machine.tokenRequested(r2, validFor: 3500, now: now)
        #expect(machine.phase == .refreshing)
        #expect(machine.answer(validFor: 60, now: now) == current)
        #expect(machine.answer(validFor: 3500, now: now) == nil)
        _ = machine.refreshSucceeded(Fixtures.grant(2), generation: 0, now: now)
        #expect(machine.phase == .persisting)
        #expect(machine.answer(validFor: 60, now: now) == current) // the successor is not stored yet
        _ = machine.storeFinished(generation: 0, failure: nil, now: now)
        #expect(machine.answer(validFor: 3500, now: now) == IssuedToken(accessToken: "access-2", expiresAt: now.addingTimeInterval(3600)))

        _ = machine.signOutRequested(scope: .local, now: now).actions
        #expect(machine.answer(validFor: 0, now: now) == nil)
    }

    @Test func undemandingRequestsGetTheCurrentTokenWhileARefreshRuns() {
        var machine = signedInMachine()
        _ = machine.timerFired(now: t0.addingTimeInterval(3300))
        #expect(machine.phase == .refreshing)
        #expect(machine.tokenRequested(r1, validFor: 60, now: t0.addingTimeInterval(3300)) == [.answer(r1, token(1))])
    }

    @Test func theTimerRefreshesOnlyOnceTheDeadlineHasPassed() {
        var machine = signedInMachine()
        #expect(machine.timerFired(now: t0.addingTimeInterval(3000)) == [.armTimer(t0.addingTimeInterval(3240))])
        #expect(machine.timerFired(now: t0.addingTimeInterval(3241)) == [.emit(.refreshing), .refresh(refreshToken: "refresh-1", generation: 0)])
    }

    @Test func aMinimumValidityLongerThanTheLifetimeFailsAtOnce() {
        var machine = signedInMachine()
        #expect(machine.tokenRequested(r1, validFor: 7200, now: t0) ==
                [.answer(r1, .failure(.minimumValidityTooLong(requested: 7200, lifetime: 3600)))])
    }

    static let transientFailures: [(ServerFailure, DegradedReason)] = [
        (.unreachable(url: "https://x", detail: "connection refused"), .offline),
        (.http(status: 503, code: nil, message: "service unavailable", retryAfter: nil), .serverError),
        (.http(status: 500, code: "unexpected_failure", message: "boom", retryAfter: nil), .serverError),
        (.http(status: 429, code: "over_request_rate_limit", message: "slow down", retryAfter: 120), .rateLimited),
        (.http(status: 409, code: "conflict", message: "conflict", retryAfter: nil), .serverError),
        (.http(status: 408, code: "request_timeout", message: "timeout", retryAfter: nil), .serverError),
        (.http(status: 403, code: "bad_jwt", message: "bad jwt", retryAfter: nil), .serverError),
        (.http(status: 400, code: "bad_json", message: "bad json", retryAfter: nil), .serverError),
        (.invalidResponse(detail: "html from a proxy"), .serverError),
    ]

    @Test(arguments: transientFailures)
    func aTransientFailureKeepsTheSessionAndRetriesLater(_ failure: ServerFailure, _ reason: DegradedReason) {
        var machine = signedInMachine()
        let now = t0.addingTimeInterval(3300) // past the deadline, token still valid for 300 s
        _ = machine.timerFired(now: now)
        _ = machine.tokenRequested(r1, validFor: 600, now: now)
        let actions = machine.refreshFailed(failure, generation: 0, now: now, random: 1)
        #expect(machine.phase == .signedIn)
        #expect(machine.session?.accessToken == "access-1")
        #expect(!actions.contains(.delete))
        #expect(actions.contains(.answer(r1, token(1)))) // still valid: served rather than refused
        let retryAt = machine.degraded?.retryAt
        #expect(machine.degraded?.reason == reason)
        #expect(actions.first == .emit(.refreshFailing(reason, detail: failure.localizedDescription, retryAt: retryAt!)))
        #expect(actions.contains(.armTimer(retryAt!)))
        if case .http(429, _, _, let retryAfter?) = failure { #expect(retryAt! >= now.addingTimeInterval(retryAfter)) }
    }

    @Test func onceExpiredWhileOfflineRequestsGetAnOfflineErrorNotNotSignedIn() {
        var machine = signedInMachine()
        let now = t0.addingTimeInterval(3700)
        _ = machine.timerFired(now: now)
        _ = machine.tokenRequested(r1, validFor: 0, now: now)
        let failure = ServerFailure.unreachable(url: "https://x", detail: "no network")
        let actions = machine.refreshFailed(failure, generation: 0, now: now)
        #expect(actions.contains(.answer(r1, .failure(.refreshFailing(.offline, detail: failure.localizedDescription)))))
        // Within the retry gap a request does not start another attempt.
        #expect(machine.tokenRequested(r2, validFor: 0, now: now.addingTimeInterval(1)) ==
                [.answer(r2, .failure(.refreshFailing(.offline, detail: failure.localizedDescription)))])
        // After it, a request tries again at once.
        #expect(machine.tokenRequested(r3, validFor: 0, now: now.addingTimeInterval(3)) ==
                [.emit(.refreshing), .refresh(refreshToken: "refresh-1", generation: 0)])
    }

    @Test(arguments: Array(ServerFailure.fatalRefreshCodes).sorted())
    func aFatalCodeEndsTheSessionWithThatReason(_ code: String) {
        var machine = signedInMachine()
        let now = t0.addingTimeInterval(3300)
        _ = machine.timerFired(now: now)
        _ = machine.tokenRequested(r1, validFor: 600, now: now)
        let actions = machine.refreshFailed(.http(status: 400, code: code, message: "x", retryAfter: nil), generation: 0, now: now)
        let reason = SignOutReason.sessionEnded(code: code)
        #expect(actions == [.cancelTimer, .delete, .emit(.signedOut(reason)), .answer(r1, .failure(.notSignedIn(reason)))])
        #expect(machine.phase == .signedOut(reason))
        #expect(machine.session == nil)
    }

    @Test func aRefreshThatFinishesAfterSignOutIsDropped() {
        var machine = signedInMachine()
        _ = machine.timerFired(now: t0.addingTimeInterval(3300))
        let signOut = machine.signOutRequested(scope: .local, now: t0.addingTimeInterval(3301)).actions
        #expect(signOut == [.cancelTimer, .delete, .emit(.signedOut(.userRequested))])
        #expect(machine.refreshSucceeded(Fixtures.grant(2), generation: 0, now: t0.addingTimeInterval(3302)) == [])
        #expect(machine.refreshFailed(.unreachable(url: "u", detail: "d"), generation: 0, now: t0.addingTimeInterval(3302)) == [])
        #expect(machine.phase == .signedOut(.userRequested))
        #expect(machine.session == nil)
    }

    @Test func aRefreshThatFinishesAfterANewSignInIsDropped() {
        var machine = signedInMachine()
        _ = machine.timerFired(now: t0.addingTimeInterval(3300))
        let fresh = Fixtures.session(7, receivedAt: t0.addingTimeInterval(3301))
        #expect(machine.signedIn(fresh, request: r1, now: t0.addingTimeInterval(3301)) == [.cancelTimer, .store(fresh, generation: 1)])
        #expect(machine.refreshSucceeded(Fixtures.grant(2), generation: 0, now: t0.addingTimeInterval(3302)) == [])
        let stored = machine.storeFinished(generation: 1, failure: nil, now: t0.addingTimeInterval(3302))
        #expect(stored.prefix(2) == [.emit(.signedIn), .answer(r1, token(7, receivedAt: t0.addingTimeInterval(3301)))])
        #expect(machine.session?.accessToken == "access-7")
    }

    @Test func aSignOutDuringTheFirstSignInsKeyringWriteWins() {
        var machine = SessionMachine(policy: policy)
        _ = machine.storedSessionLoaded(nil, now: t0)
        _ = machine.signedIn(Fixtures.session(1), request: r1, now: t0)
        #expect(machine.session == nil && machine.phase == .persisting)
        let (actions, credential) = machine.signOutRequested(scope: .local, now: t0)
        #expect(credential == .accessToken("access-1")) // the session being written is the one signed out
        #expect(actions == [.cancelTimer, .delete, .emit(.signedOut(.userRequested)), .answer(r1, .failure(.notSignedIn(.userRequested)))])
        // The write that was under way finishes afterwards: it must not bring the session back.
        #expect(machine.storeFinished(generation: 1, failure: nil, now: t0) == [])
        #expect(machine.phase == .signedOut(.userRequested))
        #expect(machine.session == nil)
    }

    @Test func aKeyringWriteFailureKeepsServingFromMemoryAndSaysSo() {
        var machine = SessionMachine(policy: policy)
        _ = machine.storedSessionLoaded(nil, now: t0)
        _ = machine.signedIn(Fixtures.session(1), request: r1, now: t0)
        let actions = machine.storeFinished(generation: 1, failure: .locked, now: t0)
        #expect(actions.prefix(3) == [.emit(.signedIn), .emit(.keyringUnavailable(.locked)), .answer(r1, token(1))])
        #expect(machine.phase == .signedIn)
        #expect(machine.keyringFailure == .locked)
    }

    @Test func aFailedKeyringWriteIsRetriedUntilItSucceeds() {
        var machine = SessionMachine(policy: policy)
        _ = machine.storedSessionLoaded(nil, now: t0)
        _ = machine.signedIn(Fixtures.session(1), request: r1, now: t0)
        let failed = machine.storeFinished(generation: 1, failure: .locked, now: t0, random: 1)
        // First retry after the backoff's first step (2 s at random 1), well before the refresh deadline.
        let retryAt = t0.addingTimeInterval(2)
        #expect(machine.storeRetryAt == retryAt)
        #expect(failed.last == .armTimer(retryAt))
        #expect(machine.timerFired(now: t0.addingTimeInterval(1)) == [.armTimer(retryAt)])
        #expect(machine.timerFired(now: retryAt) == [.store(Fixtures.session(1), generation: 1), .armTimer(t0.addingTimeInterval(3240))])

        // Still failing: announced once only, and the next retry waits longer.
        let again = machine.storeFinished(generation: 1, failure: .locked, now: retryAt, random: 1)
        #expect(!again.contains(.emit(.keyringUnavailable(.locked))))
        #expect(machine.storeRetryAt == retryAt.addingTimeInterval(4))

        _ = machine.timerFired(now: retryAt.addingTimeInterval(4))
        let recovered = machine.storeFinished(generation: 1, failure: nil, now: retryAt.addingTimeInterval(4))
        #expect(recovered == [.emit(.keyringAvailable), .armTimer(t0.addingTimeInterval(3240))])
        #expect(machine.keyringFailure == nil)
        #expect(machine.storeRetryAt == nil)
    }

    @Test func aSignOutStopsKeyringRetries() {
        var machine = SessionMachine(policy: policy)
        _ = machine.storedSessionLoaded(nil, now: t0)
        _ = machine.signedIn(Fixtures.session(1), request: nil, now: t0)
        _ = machine.storeFinished(generation: 1, failure: .timedOut, now: t0)
        _ = machine.signOutRequested(scope: .local, now: t0).actions
        #expect(machine.storeRetryAt == nil)
        #expect(machine.timerFired(now: t0.addingTimeInterval(10)) == [])
    }

    @Test func anUnreadableKeyringAtStartIsNotASignOut() {
        var machine = SessionMachine(policy: policy)
        _ = machine.tokenRequested(r1, validFor: 0, now: t0)
        let actions = machine.storedSessionUnavailable(.locked, now: t0, random: 1)
        #expect(actions == [.emit(.keyringUnavailable(.locked)), .answer(r1, .failure(.storeUnavailable(.locked))),
                            .armTimer(t0.addingTimeInterval(2))])
        #expect(machine.tokenRequested(r2, validFor: 0, now: t0) == [.cancelTimer, .loadStore])
    }

    // MARK: A keyring unreadable at start is read again

    func unreadableAtStart() -> SessionMachine {
        var machine = SessionMachine(policy: policy)
        _ = machine.storedSessionUnavailable(.locked, now: t0, random: 1)
        return machine
    }

    @Test func theStoreIsReadAgainWithCappedBackoffAndAnnouncedOnlyOnce() {
        var machine = unreadableAtStart()
        var now = t0
        var delays: [TimeInterval] = []
        for _ in 0..<8 {
            now = now.addingTimeInterval(100)
            #expect(machine.timerFired(now: now) == [.cancelTimer, .loadStore])
            #expect(machine.timerFired(now: now) == [], "one read at a time")
            let actions = machine.storedSessionUnavailable(.locked, now: now, random: 1)
            #expect(!actions.contains(.emit(.keyringUnavailable(.locked))), "the same failure is not announced again")
            guard case .armTimer(let at)? = actions.last else { Issue.record("no timer: \(actions)"); return }
            delays.append(at.timeIntervalSince(now))
        }
        #expect(delays == [4, 8, 16, 30, 30, 30, 30, 30])
        // A different failure is news.
        _ = machine.timerFired(now: now)
        #expect(machine.storedSessionUnavailable(.timedOut, now: now, random: 1).first == .emit(.keyringUnavailable(.timedOut)))
    }

    @Test func onceReadableTheStoredSessionIsServedAfterKeyringAvailable() {
        var machine = unreadableAtStart()
        let now = t0.addingTimeInterval(5)
        #expect(machine.tokenRequested(r1, validFor: 0, now: now) == [.cancelTimer, .loadStore])
        #expect(machine.tokenRequested(r2, validFor: 0, now: now) == [], "joins the read in flight")
        let actions = machine.storedSessionLoaded(Fixtures.session(1), now: now)
        #expect(actions == [.cancelTimer, .emit(.keyringAvailable), .emit(.initialSession(expired: false)),
                            .answer(r1, token(1)), .answer(r2, token(1)), .armTimer(t0.addingTimeInterval(3600 - 360))])
        #expect(machine.phase == .signedIn)
    }

    @Test func aTokenRequestRightAfterAFailedReadDoesNotReadAgain() {
        var machine = unreadableAtStart()
        _ = machine.tokenRequested(r1, validFor: 0, now: t0.addingTimeInterval(5))
        _ = machine.storedSessionUnavailable(.locked, now: t0.addingTimeInterval(5), random: 1)
        #expect(machine.tokenRequested(r2, validFor: 0, now: t0.addingTimeInterval(6)) == [.answer(r2, .failure(.storeUnavailable(.locked)))])
    }

    @Test func aSignInWhileTheKeyringIsUnreadableWinsOverALateRead() {
        var machine = unreadableAtStart()
        _ = machine.timerFired(now: t0.addingTimeInterval(2))
        _ = machine.signedIn(Fixtures.session(2), request: nil, now: t0.addingTimeInterval(3))
        #expect(machine.storedSessionLoaded(Fixtures.session(1), now: t0.addingTimeInterval(3)) == [])
        #expect(machine.storedSessionUnavailable(.locked, now: t0.addingTimeInterval(3)) == [])
        #expect(machine.phase == .persisting)
        _ = machine.storeFinished(generation: machine.generation, failure: nil, now: t0.addingTimeInterval(3))
        #expect(machine.session == Fixtures.session(2) && machine.phase == .signedIn)
    }

    @Test func aResumeReadsAnUnreadableKeyringAtOnce() {
        var machine = unreadableAtStart()
        #expect(machine.resumed(now: t0.addingTimeInterval(1)) == [.cancelTimer, .loadStore])
    }

    // MARK: Resume, network, clock

    /// Signed in, then one refresh failed with `failure` at t0+3300; the retry is backed off.
    func failing(_ failure: ServerFailure) -> SessionMachine {
        var machine = signedInMachine()
        _ = machine.timerFired(now: t0.addingTimeInterval(3300))
        _ = machine.refreshFailed(failure, generation: 0, now: t0.addingTimeInterval(3300), random: 1)
        return machine
    }

    static let offline = ServerFailure.unreachable(url: "https://x", detail: "network is unreachable")
    static let serverDown = ServerFailure.http(status: 503, code: nil, message: "down", retryAfter: 120)
    static let rateLimited = ServerFailure.http(status: 429, code: "over_request_rate_limit", message: "slow down", retryAfter: 120)

    @Test func whenTheNetworkComesBackAnOfflineFailureIsRetriedAtOnce() {
        var machine = failing(Self.offline)
        #expect(machine.degraded?.retryAt == t0.addingTimeInterval(3302))
        // Within the minimum gap after the failure: brought forward to the end of the gap, not now.
        #expect(machine.networkChanged(now: t0.addingTimeInterval(3300.5)) == [.armTimer(t0.addingTimeInterval(3302))])
        // A second failure backs off for 4 s; the network coming back in the middle retries now.
        var twice = failing(Self.offline)
        _ = twice.timerFired(now: t0.addingTimeInterval(3302))
        _ = twice.refreshFailed(Self.offline, generation: 0, now: t0.addingTimeInterval(3302), random: 1)
        #expect(twice.degraded?.retryAt == t0.addingTimeInterval(3306))
        #expect(twice.networkChanged(now: t0.addingTimeInterval(3305)) == [.emit(.refreshing), .refresh(refreshToken: "refresh-1", generation: 0)])
    }

    @Test(arguments: [serverDown, rateLimited])
    func aNetworkChangeDoesNotCutShortAServersBackoff(_ failure: ServerFailure) {
        var machine = failing(failure)
        #expect(machine.networkChanged(now: t0.addingTimeInterval(3310)) == [.armTimer(t0.addingTimeInterval(3420))])
    }

    @Test func aResumeRetriesOfflineAndServerFailuresButHonoursARateLimit() {
        for (failure, retries) in [(Self.offline, true), (Self.serverDown, true), (Self.rateLimited, false)] {
            var machine = failing(failure)
            let actions = machine.resumed(now: t0.addingTimeInterval(3310))
            #expect(actions.contains(.refresh(refreshToken: "refresh-1", generation: 0)) == retries, "\(failure)")
        }
    }

    @Test func aResumeWhenNothingFailedOnlyChecksTheDeadline() {
        var machine = signedInMachine()
        #expect(machine.resumed(now: t0.addingTimeInterval(100)) == [.armTimer(t0.addingTimeInterval(3240))])
        #expect(machine.resumed(now: t0.addingTimeInterval(3250)) == [.emit(.refreshing), .refresh(refreshToken: "refresh-1", generation: 0)])
    }

    @Test func aForwardJumpPastTheDeadlineRefreshesAtOnce() {
        var machine = signedInMachine()
        #expect(machine.clockJumped(by: 7200, now: t0.addingTimeInterval(7300)) == [.emit(.refreshing), .refresh(refreshToken: "refresh-1", generation: 0)])
    }

    @Test func aBackwardJumpMovesTheSessionWithTheClockAndStoresIt() {
        var machine = signedInMachine()
        // One hour back at t0+100: the token still has 3500 real seconds, so it now expires at t0+3600-3600.
        let now = t0.addingTimeInterval(100 - 3600)
        let actions = machine.clockJumped(by: -3600, now: now)
        var shifted = Fixtures.session(1)
        shifted.shift(by: -3600)
        #expect(actions == [.store(shifted, generation: 0), .armTimer(t0.addingTimeInterval(3240 - 3600))])
        #expect(machine.session?.remaining(at: now) == 3500)
        #expect(machine.session?.lifetime == 3600)
        #expect(machine.storeFinished(generation: 0, failure: nil, now: now) == [.armTimer(t0.addingTimeInterval(3240 - 3600))])
    }

    @Test func aBackwardJumpWhileFailingKeepsTheRetryDelay() {
        var machine = failing(Self.serverDown)
        let now = t0.addingTimeInterval(3301 - 600)
        _ = machine.clockJumped(by: -600, now: now)
        #expect(machine.degraded?.retryAt == t0.addingTimeInterval(3420 - 600))
        #expect(machine.nextRefreshAt == t0.addingTimeInterval(3420 - 600))
    }
}

@Suite struct RefreshPolicyTests {
    @Test(arguments: [(3600.0, 360.0), (600, 60), (100, 50), (10, 5)])
    func leadIsTheLargerOfAMinuteAndTenPercentButAtMostHalf(_ lifetime: TimeInterval, _ lead: TimeInterval) {
        #expect(RefreshPolicy().lead(forLifetime: lifetime) == lead)
    }

    @Test func aFixedLeadOverridesTheComputedOne() {
        #expect(RefreshPolicy(fixedLead: 20).lead(forLifetime: 3600) == 20)
    }

    @Test func backoffDoublesIsCappedAndHonoursRetryAfter() {
        let policy = RefreshPolicy()
        let delays = (1...10).map { policy.backoff(attempt: $0, retryAfter: nil, random: 1) }
        #expect(delays == [2, 4, 8, 16, 32, 64, 128, 256, 300, 300])
        #expect(policy.backoff(attempt: 1, retryAfter: nil, random: 0) == 1)
        #expect(policy.backoff(attempt: 1, retryAfter: 90, random: 0) == 90)
        #expect(policy.backoff(attempt: 1, retryAfter: 900, random: 0) == 900)
    }

    @Test func jitterOnlyMovesTheDeadlineEarlier() {
        let session = Fixtures.session(1)
        let policy = RefreshPolicy()
        let early = policy.refreshDeadline(for: session, random: 1)
        let late = policy.refreshDeadline(for: session, random: 0)
        #expect(late == session.expiresAt.addingTimeInterval(-360))
        #expect(early == late.addingTimeInterval(-72))
    }
}

@Suite struct SessionRedactionTests {
    @Test func printingASessionNeverShowsATokenOrTheRefreshToken() {
        let session = Fixtures.session(1)
        var dumped = ""
        dump(session, to: &dumped)
        for text in ["\(session)", String(reflecting: session), dumped, "\(Session(grant: Fixtures.grant(1), receivedAt: Fixtures.t0))",
                     "\(Fixtures.grant(1))", "\(IssuedToken(accessToken: "access-1", expiresAt: Fixtures.t0))"] {
            #expect(!text.contains("access-1"))
            #expect(!text.contains("refresh-1"))
        }
    }
}

/// Sign-ins that announce something other than `SIGNED_IN`, and changes to the user.
@Suite struct AccountEventTests {
    let t0 = Fixtures.t0
    let policy = RefreshPolicy(jitterFraction: 0)
    let r1 = RequestID(1), r2 = RequestID(2)

    func token(_ n: Int) -> Result<IssuedToken, TokenFailure> {
        .success(IssuedToken(accessToken: "access-\(n)", expiresAt: t0.addingTimeInterval(3600)))
    }

    @Test func aRecoverySignInIsAnnouncedAsPasswordRecoveryOnceStored() {
        var machine = SessionMachine(policy: policy)
        _ = machine.storedSessionLoaded(nil, now: t0)
        let session = Fixtures.session(2)
        let actions = machine.signedIn(session, request: nil, now: t0, announcing: .passwordRecovery)
        #expect(actions == [.cancelTimer, .store(session, generation: machine.generation)])
        let stored = machine.storeFinished(generation: machine.generation, failure: nil, now: t0)
        #expect(stored.first == .emit(.passwordRecovery))
        #expect(!stored.contains(.emit(.signedIn)))
        #expect(machine.phase == .signedIn)
    }

    @Test func anUpdatedUserIsKeptStoredAndAnnounced() {
        var machine = SessionMachine(policy: policy)
        _ = machine.storedSessionLoaded(Fixtures.session(1), now: t0)
        let moved = UserSummary(id: Fixtures.session(1).user.id, email: "moved@example.com")
        let actions = machine.userUpdated(moved, request: r1, now: t0)
        var expected = Fixtures.session(1)
        expected.user = moved
        // The token's claims did not change: the caller is answered at once.
        #expect(actions == [.store(expected, generation: machine.generation), .emit(.userUpdated), .answer(r1, token(1))])
        #expect(machine.session?.user.email == "moved@example.com")
        // A second change while the first write is out is announced, and written once that write is done.
        let renamed = UserSummary(id: moved.id, email: "renamed@example.com")
        #expect(machine.userUpdated(renamed, request: r2, now: t0) == [.emit(.userUpdated), .answer(r2, token(1))])
        expected.user = renamed
        #expect(machine.storeFinished(generation: machine.generation, failure: nil, now: t0).contains(.store(expected, generation: machine.generation)))
        #expect(!machine.storeFinished(generation: machine.generation, failure: nil, now: t0).contains { if case .store = $0 { true } else { false } })
    }

    @Test func aStoredSummaryFromBeforeAnonymousUsersDecodesAsPermanent() throws {
        let old = Data(#"{"id":"u-1","email":"a@example.com","verifiedFactors":[]}"#.utf8)
        #expect(try JSONDecoder().decode(UserSummary.self, from: old) == UserSummary(id: "u-1", email: "a@example.com"))
        let kept = UserSummary(id: "u-2", isAnonymous: true)
        #expect(try JSONDecoder().decode(UserSummary.self, from: JSONEncoder().encode(kept)) == kept)
    }

    @Test func anUpdateForAnotherUserChangesNothingAndTellsTheCaller() {
        var machine = SessionMachine(policy: policy)
        _ = machine.storedSessionLoaded(Fixtures.session(1), now: t0)
        #expect(machine.userUpdated(UserSummary(id: "someone-else", email: "x@example.com"), request: r1, now: t0)
                == [.answer(r1, .failure(.notSignedIn(.replaced)))])
        #expect(machine.session == Fixtures.session(1))
    }
}
