import AuthCore
import AuthTestSupport
import Foundation
import Testing

/// Raising a session with a second factor: the hold that keeps refreshes away from a
/// verification, the session it brings, and the sign-outs that ask for a second factor.
@Suite struct SecondFactorMachineTests {
    let t0 = Fixtures.t0
    let policy = RefreshPolicy(jitterFraction: 0)
    let r1 = RequestID(1), r2 = RequestID(2)

    func signedInMachine() -> SessionMachine {
        var machine = SessionMachine(policy: policy)
        _ = machine.storedSessionLoaded(Fixtures.session(1), now: t0)
        return machine
    }

    @Test func noRefreshStartsWhileAVerificationIsOutAndTheRaisedSessionIsAnnounced() {
        var machine = signedInMachine()
        #expect(machine.holdRefreshes() == true)
        #expect(machine.holdRefreshes() == false, "one hold at a time")
        let generation = machine.generation
        // Past the refresh deadline and with a demanding request: still no refresh, and no timer
        // for a deadline that has passed (it would fire at once, again and again).
        let late = t0.addingTimeInterval(3300)
        #expect(machine.timerFired(now: late) == [])
        #expect(machine.tokenRequested(r2, validFor: 600, now: late) == [])
        #expect(machine.phase == .signedIn)

        let raised = Session(grant: Fixtures.grant(2), receivedAt: late)
        #expect(machine.elevated(raised, request: r1, generation: generation, now: late) == [.cancelTimer, .store(raised, generation: generation + 1)])
        #expect(!machine.refreshesHeld)
        let actions = machine.storeFinished(generation: generation + 1, failure: nil, now: late)
        let token = IssuedToken(accessToken: "access-2", expiresAt: late.addingTimeInterval(3600))
        #expect(actions.first == .emit(.mfaChallengeVerified))
        // The verification's own request and the one that waited both get the raised session's token.
        #expect(actions.contains(.answer(r1, .success(token))) && actions.contains(.answer(r2, .success(token))))
        #expect(!actions.contains { if case .refresh = $0 { true } else { false } })
    }

    @Test func theHoldIsRefusedWhileARefreshIsOutAndTakenOnceItIsStored() {
        var machine = signedInMachine()
        let due = t0.addingTimeInterval(3300)
        _ = machine.timerFired(now: due)
        #expect(machine.phase == .refreshing)
        #expect(machine.holdRefreshes() == false)
        _ = machine.refreshSucceeded(Fixtures.grant(2), generation: 0, now: due)
        #expect(machine.holdRefreshes() == false, "the new session is still being written")
        _ = machine.storeFinished(generation: 0, failure: nil, now: due)
        #expect(machine.holdRefreshes() == true)
    }

    @Test func aFailedVerificationReleasesTheHoldAndARefreshThatCameDueStarts() {
        var machine = signedInMachine()
        #expect(machine.holdRefreshes() == true)
        let late = t0.addingTimeInterval(3300)
        #expect(machine.timerFired(now: late) == [])
        #expect(machine.releaseRefreshes(now: late) == [.emit(.refreshing), .refresh(refreshToken: "refresh-1", generation: 0)])
        #expect(machine.releaseRefreshes(now: late) == [], "released once")
    }

    @Test func aSignOutDuringTheVerificationWinsAndItsSessionIsDropped() {
        var machine = signedInMachine()
        #expect(machine.holdRefreshes() == true)
        let generation = machine.generation
        _ = machine.signOutRequested(scope: .local, now: t0)
        #expect(!machine.refreshesHeld)
        let raised = Session(grant: Fixtures.grant(2), receivedAt: t0)
        #expect(machine.elevated(raised, request: r1, generation: generation, now: t0) == [.answer(r1, .failure(.notSignedIn(.userRequested)))])
        #expect(machine.phase == .signedOut(.userRequested) && machine.session == nil)
    }

    @Test func aNewSignInDuringTheVerificationReplacesItsSession() {
        var machine = signedInMachine()
        #expect(machine.holdRefreshes() == true)
        let generation = machine.generation
        _ = machine.signedIn(Fixtures.session(3), request: nil, now: t0)
        #expect(!machine.refreshesHeld)
        let raised = Session(grant: Fixtures.grant(2), receivedAt: t0)
        #expect(machine.elevated(raised, request: r1, generation: generation, now: t0) == [.answer(r1, .failure(.notSignedIn(.replaced)))])
    }

    @Test func aRefreshCanBeAskedForWhenTheServerChangedTheLevel() {
        var machine = signedInMachine()
        #expect(machine.refreshRequested(now: t0.addingTimeInterval(10)) == [.emit(.refreshing), .refresh(refreshToken: "refresh-1", generation: 0)])
        #expect(machine.refreshRequested(now: t0.addingTimeInterval(10)) == [], "one is out already")
    }

    /// A factor removed while a verification is out: the verification's tokens may predate the
    /// removal, so the refresh asked for meanwhile runs once the raised session is stored.
    @Test func aRefreshAskedForDuringAVerificationRunsAfterTheRaisedSessionIsStored() {
        var machine = signedInMachine()
        let now = t0.addingTimeInterval(10)
        let held = machine.holdRefreshes()
        #expect(held)
        let generation = machine.generation
        #expect(machine.refreshRequested(now: now) == [], "not while the verification is out")
        let raised = Session(grant: Fixtures.grant(2), receivedAt: now)
        _ = machine.elevated(raised, request: r1, generation: generation, now: now)
        let stored = machine.storeFinished(generation: generation + 1, failure: nil, now: now)
        #expect(stored.contains(.refresh(refreshToken: "refresh-2", generation: generation + 1)), "\(stored)")
    }

    @Test func aVerificationWithoutAnAnswerHoldsRefreshesUntilShortlyBeforeExpiryOrANewVerification() {
        var machine = signedInMachine()
        #expect(machine.holdRefreshes() == true)
        let now = t0.addingTimeInterval(100)
        let until = t0.addingTimeInterval(3600 - SessionMachine.uncertainMargin)
        let actions = machine.verificationUncertain(now: now)
        #expect(actions.first == .emit(.refreshFailing(.verificationUncertain, detail: SessionMachine.uncertainDetail, retryAt: until)))
        #expect(actions.last == .armTimer(until))
        #expect(machine.hold == .uncertain(until: until) && machine.degraded?.reason == .verificationUncertain)
        // A request that would refresh gets the still-valid token instead; the deadline passing refreshes nothing.
        let late = t0.addingTimeInterval(3300)
        #expect(machine.tokenRequested(r2, validFor: 600, now: late) == [.answer(r2, .success(IssuedToken(accessToken: "access-1", expiresAt: t0.addingTimeInterval(3600))))])
        #expect(machine.timerFired(now: late) == [.armTimer(until)])
        // A new verification refused for certain leaves the wait as it was.
        #expect(machine.holdRefreshes() == true)
        #expect(machine.releaseRefreshes(now: late) == [.armTimer(until)])
        #expect(machine.hold == .uncertain(until: until))
        // A new verification takes the hold over and brings the new tokens.
        #expect(machine.holdRefreshes() == true)
        let raised = Session(grant: Fixtures.grant(2), receivedAt: late)
        #expect(machine.elevated(raised, request: r1, generation: 0, now: late) == [.cancelTimer, .store(raised, generation: 1)])
        _ = machine.storeFinished(generation: 1, failure: nil, now: late)
        #expect(machine.degraded == nil && machine.hold == .none)

        // A timer that fires late (after a suspend) finds the wait over: the request refreshes.
        var late2 = signedInMachine()
        #expect(late2.holdRefreshes() == true)
        _ = late2.verificationUncertain(now: now)
        #expect(late2.tokenRequested(r2, validFor: 3599, now: until.addingTimeInterval(5)) == [.emit(.refreshing), .refresh(refreshToken: "refresh-1", generation: 0)])
        #expect(late2.hold == .none && late2.degraded == nil)

        // Without one, the refresh is tried a minute before the token expires.
        var waited = signedInMachine()
        #expect(waited.holdRefreshes() == true)
        _ = waited.verificationUncertain(now: now)
        #expect(waited.timerFired(now: until) == [.emit(.refreshing), .refresh(refreshToken: "refresh-1", generation: 0)])
        #expect(waited.hold == .none)
    }

    @Test func theServerEndingTheSessionOutsideARefreshSignsOut() {
        var machine = signedInMachine()
        #expect(machine.holdRefreshes() == true)
        _ = machine.releaseRefreshes(now: t0)
        // A session signed in since the verification began is another one, and stays.
        var replaced = signedInMachine()
        _ = replaced.signedIn(Fixtures.session(3), request: nil, now: t0)
        #expect(replaced.serverEndedSession(code: "mfa_verification_rejected", generation: 0, now: t0) == [])
        let actions = machine.serverEndedSession(code: "mfa_verification_rejected", generation: 0, now: t0)
        #expect(actions.contains(.emit(.signedOut(.sessionEnded(code: "mfa_verification_rejected")))) && actions.contains(.delete))
        #expect(machine.serverEndedSession(code: "x", generation: machine.generation, now: t0) == [], "nothing left to end")
    }

    @Test func theServerEndingASessionThatLackedASecondFactorIsNamedSo() {
        var user = UserSummary(id: "user-1", email: "a@example.com")
        var session = Fixtures.session(1)
        session.accessToken = Fixtures.accessToken(aal: "aal1")
        let lowAAL = ServerFailure.http(status: 400, code: "session_expired",
                                        message: "Invalid Refresh Token: Session Expired (Low AAL: User Needs MFA Verification)", retryAfter: nil)
        #expect(SignOutReason.serverEnded(code: "session_expired", failure: lowAAL, session: session) == .secondFactorRequired(serverCode: "session_expired"))
        let inactivity = ServerFailure.http(status: 400, code: "session_expired", message: "Invalid Refresh Token: Session Expired (Inactivity)", retryAfter: nil)
        #expect(SignOutReason.serverEnded(code: "session_expired", failure: inactivity, session: session) == .sessionEnded(code: "session_expired"))

        let gone = ServerFailure.http(status: 400, code: "refresh_token_not_found", message: "Invalid Refresh Token: Refresh Token Not Found", retryAfter: nil)
        // Without a known verified factor, a vanished session reads like any sign-out elsewhere.
        #expect(SignOutReason.serverEnded(code: "refresh_token_not_found", failure: gone, session: session) == .sessionEnded(code: "refresh_token_not_found"))
        user.verifiedFactors = [FactorSummary(id: "f", type: "totp")]
        session.user = user
        // With one, it is likely (not certain: a sign-out elsewhere reads the same), and the wire
        // keeps the server's code.
        let likely = SignOutReason.serverEnded(code: "refresh_token_not_found", failure: gone, session: session)
        #expect(likely == .endedWithoutSecondFactor(serverCode: "refresh_token_not_found"))
        #expect(likely.code == "refresh_token_not_found" && DesktopNoticeRule.notifies(likely))
        #expect(SignOutReason.secondFactorRequired(serverCode: "session_expired").code == "mfa_verification_required")
        #expect(DesktopNoticeRule.notifies(.sessionEnded(code: "refresh_token_not_found")))
        #expect(!DesktopNoticeRule.notifies(.userRequested) && !DesktopNoticeRule.notifies(.replaced))
        // An aal2 session that vanished was ended for another reason.
        session.accessToken = Fixtures.accessToken(aal: "aal2", amr: ["totp", "password"])
        #expect(SignOutReason.serverEnded(code: "refresh_token_not_found", failure: gone, session: session) == .sessionEnded(code: "refresh_token_not_found"))

        var machine = SessionMachine(policy: policy)
        session.accessToken = Fixtures.accessToken(aal: "aal1")
        _ = machine.storedSessionLoaded(session, now: t0)
        _ = machine.timerFired(now: t0.addingTimeInterval(3300))
        let actions = machine.refreshFailed(lowAAL, generation: 0, now: t0.addingTimeInterval(3300))
        #expect(actions.contains(.emit(.signedOut(.secondFactorRequired(serverCode: "session_expired")))))
    }

    @Test func theLevelIsReadFromTheTokensClaims() throws {
        let assurance = try #require(TokenAssurance(accessToken: Fixtures.accessToken(aal: "aal2", amr: ["totp", "password"])))
        #expect(assurance.level == .aal2 && assurance.methods == ["totp", "password"])
        #expect(TokenAssurance(accessToken: "access-1") == nil, "not a JWT")
        let aal1 = try #require(TokenAssurance(accessToken: Fixtures.accessToken(aal: "aal1")))
        #expect(aal1.nextLevel(for: UserSummary(id: "u")) == .aal1)
        #expect(aal1.nextLevel(for: UserSummary(id: "u", verifiedFactors: [FactorSummary(id: "f", type: "phone")])) == .aal2)
        #expect(AssuranceLevel.aal1 < .aal2 && AssuranceLevel(rawValue: "weird") < .aal1)
    }

    @Test func aSummaryStoredBeforeFactorsWereKeptStillReads() throws {
        let old = Data(#"{"id":"user-1","email":"a@example.com"}"#.utf8)
        let summary = try JSONDecoder().decode(UserSummary.self, from: old)
        #expect(summary == UserSummary(id: "user-1", email: "a@example.com"))
        let kept = UserSummary(id: "user-1", verifiedFactors: [FactorSummary(id: "f", type: "totp", friendlyName: "app")])
        #expect(try JSONDecoder().decode(UserSummary.self, from: try JSONEncoder().encode(kept)) == kept)
    }

    @Test func onlyACanonicalUUIDPassesAsAFactorID() {
        let id = "0F1E2D3C-4B5A-4968-8776-A5B4C3D2E1F0"
        #expect(FactorID.canonical(id) == id.lowercased())
        for hostile in [id + "\u{0}/../../user", "\u{0}" + id, id + " ", " " + id.dropLast(), "+f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0",
                        "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1fg", "0f1e2d3c04b5a-4968-8776-a5b4c3d2e1f0", "../../../../../../../../../../../..", ""] {
            #expect(FactorID.canonical(String(hostile)) == nil, "\(hostile.debugDescription)")
        }
    }
}
