import AuthCore
import AuthTestSupport
import Foundation
import Testing

/// The take-over rule, on a real `SessionMachine`: the session adopted from the app's token must
/// be refreshed once more before the take-over is complete, and a failure of that refresh keeps
/// the session and leaves the retry to the machine.
@Suite struct SessionTakeOverTests {
    let t0 = Fixtures.t0
    /// No jitter: deadlines are exact.
    let policy = RefreshPolicy(jitterFraction: 0)
    let request = RequestID(1)

    /// A machine that has just stored and served the first exchange's session (`refresh-1`); its
    /// `generation` is the one the session was adopted in.
    func adopted(lifetime: Int = 3600, storedAt: Date? = nil) -> SessionMachine {
        var machine = SessionMachine(policy: policy)
        _ = machine.storedSessionLoaded(nil, now: t0)
        _ = machine.signedIn(Session(grant: Fixtures.grant(1, lifetime: lifetime), receivedAt: t0), request: request, now: t0)
        _ = machine.storeFinished(generation: machine.generation, failure: nil, now: storedAt ?? t0)
        return machine
    }

    func outcome(_ machine: SessionMachine, _ generation: UInt64) -> SessionTakeOver.Outcome {
        SessionTakeOver.outcome(of: machine, adoptedRefreshToken: "refresh-1", generation: generation)
    }

    @Test func theAdoptedSessionIsRefreshedOnceMoreBeforeTheTakeOverIsComplete() {
        var machine = adopted()
        let generation = machine.generation
        // Held and served, but the app's token is still the parent of the one held.
        #expect(machine.session?.refreshToken == "refresh-1")
        #expect(outcome(machine, generation) == .pending(retry: nil))
        #expect(SessionTakeOver.needsSecondExchange(machine, adoptedRefreshToken: "refresh-1", generation: generation))

        #expect(machine.refreshRequested(now: t0) == [.emit(.refreshing), .refresh(refreshToken: "refresh-1", generation: generation)])
        #expect(!SessionTakeOver.needsSecondExchange(machine, adoptedRefreshToken: "refresh-1", generation: generation), "one refresh at a time")
        _ = machine.refreshSucceeded(Fixtures.grant(2), generation: generation, now: t0)
        // Not complete before the new token is stored: a crash now leaves refresh-1, its parent, in the keyring.
        #expect(outcome(machine, generation) == .pending(retry: nil))
        _ = machine.storeFinished(generation: generation, failure: nil, now: t0)
        #expect(machine.session?.refreshToken == "refresh-2")
        #expect(outcome(machine, generation) == .complete)
        #expect(!SessionTakeOver.needsSecondExchange(machine, adoptedRefreshToken: "refresh-1", generation: generation))
    }

    @Test func aTransientFailureOfTheSecondRefreshKeepsTheSessionAndTheMachineRetriesIt() {
        var machine = adopted()
        let generation = machine.generation
        _ = machine.refreshRequested(now: t0)
        let failure = ServerFailure.http(status: 503, code: nil, message: "upstream unavailable", retryAfter: nil)
        _ = machine.refreshFailed(failure, generation: generation, now: t0, random: 0)
        // Backoff: 2 s, spread to 50 % with random 0.
        let retryAt = t0.addingTimeInterval(1)
        #expect(outcome(machine, generation) == .pending(retry: .init(reason: .serverError, detail: failure.readableDescription, retryAt: retryAt)))
        #expect(machine.session?.refreshToken == "refresh-1", "the first exchange's session is kept")
        #expect(machine.tokenRequested(RequestID(2), validFor: 60, now: t0) == [.answer(RequestID(2), .success(IssuedToken(accessToken: "access-1", expiresAt: t0.addingTimeInterval(3600))))])

        // The retry is the machine's own: its timer presents the kept token again.
        #expect(machine.timerFired(now: retryAt) == [.emit(.refreshing), .refresh(refreshToken: "refresh-1", generation: generation)])
        _ = machine.refreshSucceeded(Fixtures.grant(2), generation: generation, now: retryAt)
        _ = machine.storeFinished(generation: generation, failure: nil, now: retryAt)
        #expect(outcome(machine, generation) == .complete)
    }

    @Test func aSecondRefreshTheServerRefusesEndsTheSessionAndSaysWhy() {
        var machine = adopted()
        let generation = machine.generation
        _ = machine.refreshRequested(now: t0)
        let refusal = ServerFailure.http(status: 400, code: "refresh_token_already_used", message: "Invalid Refresh Token: Already Used", retryAfter: nil)
        _ = machine.refreshFailed(refusal, generation: generation, now: t0)
        #expect(machine.session == nil)
        #expect(outcome(machine, generation) == .ended(.sessionEnded(code: "refresh_token_already_used")))
    }

    @Test func aSignInOrSignOutAfterTheAdoptionOvertakesTheTakeOver() {
        var machine = adopted()
        let generation = machine.generation
        _ = machine.signedIn(Fixtures.session(5), request: nil, now: t0)
        _ = machine.storeFinished(generation: machine.generation, failure: nil, now: t0)
        #expect(machine.session?.refreshToken == "refresh-5")
        #expect(outcome(machine, generation) == .overtaken, "another session's token is not the take-over's refresh")
        #expect(!SessionTakeOver.needsSecondExchange(machine, adoptedRefreshToken: "refresh-1", generation: generation))

        var signedOut = adopted()
        let sameGeneration = signedOut.generation
        _ = signedOut.signOutRequested(scope: .local, now: t0)
        #expect(outcome(signedOut, sameGeneration) == .overtaken, "the user's sign-out is not the server's refusal")
    }

    @Test func aRefreshTheMachineStartedByItselfCountsAsTheSecondExchange() {
        // A token that lives 60 s, stored 100 s after it was granted: due at once.
        var machine = adopted(lifetime: 60, storedAt: t0.addingTimeInterval(100))
        let generation = machine.generation
        #expect(machine.phase == .refreshing)
        #expect(!SessionTakeOver.needsSecondExchange(machine, adoptedRefreshToken: "refresh-1", generation: generation), "no second refresh on top")
        _ = machine.refreshSucceeded(Fixtures.grant(2), generation: generation, now: t0.addingTimeInterval(100))
        _ = machine.storeFinished(generation: generation, failure: nil, now: t0.addingTimeInterval(100))
        #expect(outcome(machine, generation) == .complete)
    }

    @Test func refreshesHeldForAVerificationLeaveTheTakeOverPendingWithoutATroubleToShow() {
        var machine = adopted()
        let generation = machine.generation
        let held = machine.holdRefreshes()
        #expect(held)
        #expect(machine.refreshRequested(now: t0) == [])
        #expect(outcome(machine, generation) == .pending(retry: nil))
    }
}
