import AuthCore
import AuthTestSupport
import Foundation
import Testing

/// A change at the server that alters the token's claims (an anonymous user given an email):
/// the held token is stale, the session is refreshed, and the change's caller and every token
/// request are answered only with the refreshed token, once it is stored. Synchronous tables.
@Suite struct ClaimsRefreshTests {
    let t0 = Fixtures.t0
    /// No jitter: the deadline of a 3600 s token is 3240 s after it was received.
    let policy = RefreshPolicy(jitterFraction: 0)
    let r1 = RequestID(1), r2 = RequestID(2), r3 = RequestID(3), r4 = RequestID(4)
    let permanent = UserSummary(id: "user-1", email: "kept@example.com")

    /// A machine serving `access-1` to an anonymous user, stored at `t0`.
    func anonymousMachine(policy: RefreshPolicy? = nil) -> SessionMachine {
        var machine = SessionMachine(policy: policy ?? self.policy)
        var anonymous = Fixtures.session(1)
        anonymous.user = UserSummary(id: "user-1", isAnonymous: true)
        _ = machine.storedSessionLoaded(anonymous, now: t0)
        return machine
    }

    func token(_ n: Int, receivedAt: Date? = nil) -> Result<IssuedToken, TokenFailure> {
        .success(IssuedToken(accessToken: "access-\(n)", expiresAt: (receivedAt ?? t0).addingTimeInterval(3600)))
    }

    static func isRefresh(_ action: SessionAction) -> Bool {
        if case .refresh = action { return true }
        return false
    }

    @Test func theChangeIsAnsweredAndAnnouncedOnlyOnceTheRefreshedTokenIsStored() {
        var machine = anonymousMachine()
        let now = t0.addingTimeInterval(10)
        // Metadata keeps the user anonymous: the claims that matter stand, and the answer is at once.
        let stillAnonymous = UserSummary(id: "user-1", isAnonymous: true)
        let metadata = machine.userUpdated(stillAnonymous, request: r1, now: now)
        #expect(!metadata.contains(where: Self.isRefresh) && metadata.suffix(2) == [.emit(.userUpdated), .answer(r1, token(1))])
        _ = machine.storeFinished(generation: machine.generation, failure: nil, now: now)

        // Given an email, the token's `is_anonymous: true` is stale: a refresh, and nobody answered yet.
        #expect(machine.userUpdated(permanent, request: r2, now: now) == [.emit(.refreshing), .refresh(refreshToken: "refresh-1", generation: machine.generation)])
        #expect(machine.session?.user == permanent)
        // A token request meanwhile, however undemanding, waits: the published machine answers nothing.
        #expect(machine.answer(validFor: 0, now: now) == nil)
        #expect(machine.tokenRequested(r3, validFor: 0, now: now) == [])
        #expect(machine.refreshSucceeded(Fixtures.grant(2), generation: machine.generation, now: now) == [.store(Session(grant: Fixtures.grant(2), receivedAt: now), generation: machine.generation)])
        #expect(machine.answer(validFor: 0, now: now) == nil, "written, not yet stored")
        #expect(machine.tokenRequested(r4, validFor: 0, now: now) == [])

        let stored = machine.storeFinished(generation: machine.generation, failure: nil, now: now)
        let fresh = token(2, receivedAt: now)
        #expect(stored == [.emit(.tokenRefreshed), .emit(.userUpdated), .answer(r3, fresh), .answer(r4, fresh), .answer(r2, fresh),
                           .armTimer(now.addingTimeInterval(3240))])
        #expect(machine.answer(validFor: 0, now: now) == (try? fresh.get()))
    }

    @Test func aRefreshAlreadyOutWhenTheUserChangedDoesNotCount() {
        var machine = anonymousMachine()
        let deadline = t0.addingTimeInterval(3240)
        #expect(machine.timerFired(now: deadline).contains(where: Self.isRefresh))
        // The server may have answered that refresh before it made the change: its token proves nothing.
        #expect(machine.userUpdated(permanent, request: r1, now: deadline) == [])
        _ = machine.refreshSucceeded(Fixtures.grant(2), generation: machine.generation, now: deadline)
        let first = machine.storeFinished(generation: machine.generation, failure: nil, now: deadline)
        #expect(first == [.emit(.tokenRefreshed), .emit(.refreshing), .refresh(refreshToken: "refresh-2", generation: machine.generation)])
        #expect(machine.answer(validFor: 0, now: deadline) == nil)

        _ = machine.refreshSucceeded(Fixtures.grant(3), generation: machine.generation, now: deadline)
        let second = machine.storeFinished(generation: machine.generation, failure: nil, now: deadline)
        #expect(second.prefix(3) == [.emit(.tokenRefreshed), .emit(.userUpdated), .answer(r1, token(3, receivedAt: deadline))])
    }

    @Test func aTransientFailureKeepsTheSessionAndTellsTheCallerTheTokenIsNotNewYet() {
        var machine = anonymousMachine()
        let now = t0.addingTimeInterval(10)
        _ = machine.userUpdated(permanent, request: r1, now: now)
        _ = machine.tokenRequested(r2, validFor: 0, now: now)
        let failure = ServerFailure.unreachable(url: "https://x", detail: "connection refused")
        let failed = machine.refreshFailed(failure, generation: machine.generation, now: now, random: 1)
        let detail = failure.localizedDescription
        let retryAt = try! #require(machine.degraded?.retryAt)
        // The usual rules: kept, retried with backoff, the held token served while no refresh can
        // be had. The change's caller was promised a new token, and is told there is none yet.
        #expect(failed == [.emit(.refreshFailing(.offline, detail: detail, retryAt: retryAt)), .armTimer(retryAt),
                           .answer(r2, token(1)), .answer(r1, .failure(.refreshFailing(.offline, detail: detail)))])
        #expect(machine.phase == .signedIn && machine.session?.user == permanent)
        #expect(machine.tokenRequested(r3, validFor: 0, now: now.addingTimeInterval(1)) == [.answer(r3, token(1))], "within the retry gap")
        // Still stale: from the retry on a request tries again. The server asks for 30 s.
        #expect(machine.tokenRequested(r4, validFor: 0, now: retryAt).contains(where: Self.isRefresh))
        _ = machine.refreshFailed(.http(status: 503, code: nil, message: "down", retryAfter: 30), generation: machine.generation, now: retryAt, random: 1)
        let secondRetry = try! #require(machine.degraded?.retryAt)
        #expect(secondRetry >= retryAt.addingTimeInterval(30))
        // Another change's caller joins the wait for the fresh token.
        let r9 = RequestID(9)
        let joined = machine.userUpdated(permanent, request: r9, now: retryAt.addingTimeInterval(1))
        #expect(!joined.contains { if case .answer(r9, _) = $0 { true } else { false } }, "\(joined)")
        // Its summary is written at once; the write ends without answering it either.
        let written = machine.storeFinished(generation: machine.generation, failure: nil, now: retryAt.addingTimeInterval(1))
        #expect(!written.contains { if case .answer(r9, _) = $0 { true } else { false } }, "\(written)")
        #expect(!written.contains(where: Self.isRefresh), "not before the backoff's retry")
        // Only the claims are stale and the held token serves: past the retry gap, requests still
        // do not refresh before the backoff's retry, however many there are, and answering them
        // answers nobody else.
        for second in [3.0, 10, 29] {
            #expect(machine.tokenRequested(r3, validFor: 0, now: retryAt.addingTimeInterval(second)) == [.answer(r3, token(1))], "\(second) s on")
        }
        // From the retry on, a request tries again, and the retry that works announces the change.
        #expect(machine.tokenRequested(r4, validFor: 0, now: secondRetry).contains(where: Self.isRefresh))
        _ = machine.refreshSucceeded(Fixtures.grant(2), generation: machine.generation, now: secondRetry)
        let stored = machine.storeFinished(generation: machine.generation, failure: nil, now: secondRetry)
        #expect(stored.prefix(2) == [.emit(.tokenRefreshed), .emit(.userUpdated)])
        #expect(stored.contains(.answer(r4, token(2, receivedAt: secondRetry))))
        #expect(stored.contains(.answer(r9, token(2, receivedAt: secondRetry))))
    }

    /// A stale token that no longer serves the minimum asked for is refreshed after the retry gap,
    /// as any token would be: the backoff holds back only requests the held token can answer.
    @Test func aStaleTokenTooShortForTheRequestIsRetriedAfterTheGap() {
        var machine = anonymousMachine()
        let now = t0.addingTimeInterval(10)
        _ = machine.userUpdated(permanent, request: r1, now: now)
        _ = machine.refreshFailed(.unreachable(url: "https://x", detail: "connection refused"), generation: machine.generation, now: now, random: 1)
        let later = now.addingTimeInterval(3)
        #expect(machine.tokenRequested(r2, validFor: 3599, now: later).contains(where: Self.isRefresh))
    }

    @Test func theBackoffTimerRetriesAStaleTokenAfterAFailure() {
        var machine = anonymousMachine()
        let now = t0.addingTimeInterval(10)
        _ = machine.userUpdated(permanent, request: r1, now: now)
        _ = machine.refreshFailed(.http(status: 503, code: nil, message: "down", retryAfter: nil), generation: machine.generation, now: now, random: 1)
        let retryAt = try! #require(machine.degraded?.retryAt)
        #expect(!machine.timerFired(now: retryAt.addingTimeInterval(-0.5)).contains(where: Self.isRefresh), "not before the backoff ends")
        #expect(machine.timerFired(now: retryAt).contains(where: Self.isRefresh))
    }

    @Test func aFatalFailureEndsTheSessionAndTellsTheCaller() {
        var machine = anonymousMachine()
        let now = t0.addingTimeInterval(10)
        _ = machine.userUpdated(permanent, request: r1, now: now)
        let ended = machine.refreshFailed(.http(status: 400, code: "refresh_token_not_found", message: "x", retryAfter: nil),
                                          generation: machine.generation, now: now)
        let reason = SignOutReason.sessionEnded(code: "refresh_token_not_found")
        #expect(ended.contains(.answer(r1, .failure(.notSignedIn(reason)))))
        #expect(machine.phase == .signedOut(reason))
    }

    @Test func theBreakerHoldingTheRefreshBackTellsTheCallerAndRefreshesWhenItHasRoom() {
        var machine = anonymousMachine(policy: RefreshPolicy(jitterFraction: 0, refreshLimit: 1, refreshLimitWindow: 60))
        let now = t0.addingTimeInterval(3240)
        // The scheduled refresh takes the one grant the window allows (the user still anonymous).
        _ = machine.timerFired(now: now)
        var stillAnonymous = Fixtures.grant(2)
        stillAnonymous.user = UserSummary(id: "user-1", isAnonymous: true)
        _ = machine.refreshSucceeded(stillAnonymous, generation: machine.generation, now: now)
        _ = machine.storeFinished(generation: machine.generation, failure: nil, now: now)

        let held = machine.userUpdated(permanent, request: r2, now: now.addingTimeInterval(1))
        #expect(!held.contains(where: Self.isRefresh))
        #expect(held.contains { if case .answer(r2, .failure(.refreshFailing(.refreshLimited, _))) = $0 { true } else { false } })
        #expect(machine.answer(validFor: 0, now: now.addingTimeInterval(1)) == nil, "still stale")
        #expect(machine.timerFired(now: now.addingTimeInterval(60)).contains(where: Self.isRefresh), "the window has room again")
    }

    @Test func aChangeWhileTheTokenIsStaleWaitsWithTheFirst() {
        var machine = anonymousMachine()
        let now = t0.addingTimeInterval(10)
        _ = machine.userUpdated(permanent, request: r1, now: now)
        let renamed = UserSummary(id: "user-1", email: "renamed@example.com")
        #expect(machine.userUpdated(renamed, request: r2, now: now) == [])
        _ = machine.refreshSucceeded(Fixtures.grant(2), generation: machine.generation, now: now)
        let stored = machine.storeFinished(generation: machine.generation, failure: nil, now: now)
        #expect(stored.filter { $0 == .emit(.userUpdated) }.count == 1)
        #expect(stored.contains(.answer(r1, token(2, receivedAt: now))) && stored.contains(.answer(r2, token(2, receivedAt: now))))
    }

    @Test func aSignOutOrANewSignInTellsTheWaitingCaller() {
        var machine = anonymousMachine()
        let now = t0.addingTimeInterval(10)
        _ = machine.userUpdated(permanent, request: r1, now: now)
        let refreshGeneration = machine.generation
        #expect(machine.signOutRequested(scope: .local, now: now).actions.contains(.answer(r1, .failure(.notSignedIn(.userRequested)))))
        #expect(machine.refreshSucceeded(Fixtures.grant(2), generation: refreshGeneration, now: now) == [])

        machine = anonymousMachine()
        _ = machine.userUpdated(permanent, request: r1, now: now)
        let other = Fixtures.session(7, receivedAt: now)
        #expect(machine.signedIn(other, request: r2, now: now).contains(.answer(r1, .failure(.notSignedIn(.replaced)))))
        _ = machine.storeFinished(generation: machine.generation, failure: nil, now: now)
        #expect(machine.answer(validFor: 0, now: now)?.accessToken == "access-7", "the new session's token is not stale")
    }
    /// The change's summary is stored at once and the refreshed token later: a restart in
    /// between reads a permanent user with a token that still says `is_anonymous: true`. That
    /// token is stale: nobody gets it, and it is refreshed at once.
    @Test func aStaleTokenReadBackAfterARestartIsRefreshedAtOnce() {
        var stored = Fixtures.session(1)
        stored.accessToken = Fixtures.accessToken(aal: "aal1", amr: ["anonymous"], extraClaims: #""is_anonymous":true"#)
        stored.user = permanent
        var machine = SessionMachine(policy: policy)
        let loaded = machine.storedSessionLoaded(stored, now: t0.addingTimeInterval(10))
        #expect(loaded.contains(where: Self.isRefresh), "\(loaded)")
        #expect(machine.answer(validFor: 0, now: t0.addingTimeInterval(10)) == nil)
        // Still anonymous in both, or permanent in both: the token is current.
        for (token, user) in [(#""is_anonymous":true"#, UserSummary(id: "user-1", isAnonymous: true)), (#""is_anonymous":false"#, permanent)] {
            var current = Fixtures.session(1)
            current.accessToken = Fixtures.accessToken(aal: "aal1", extraClaims: token)
            current.user = user
            var fresh = SessionMachine(policy: policy)
            #expect(!fresh.storedSessionLoaded(current, now: t0.addingTimeInterval(10)).contains(where: Self.isRefresh))
            #expect(fresh.answer(validFor: 0, now: t0.addingTimeInterval(10)) != nil)
        }
    }
}
