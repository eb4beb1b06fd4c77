import AuthCore
import AuthTestSupport
import Foundation
import Testing

/// How a sign-out ends the session here and which token tells the server: decided by the machine
/// and `SignOutRules`, without a driver.
@Suite struct SignOutRulesTests {
    let t0 = Fixtures.t0

    private func signedIn(at now: Date) -> SessionMachine {
        var machine = SessionMachine(policy: RefreshPolicy(jitterFraction: 0))
        _ = machine.storedSessionLoaded(Fixtures.session(1, receivedAt: t0), now: now)
        return machine
    }

    @Test func localAndGlobalEndTheSessionHereAndUseTheAccessTokenWhileItIsGoodForTheCall() {
        for scope in [SignOutScope.local, .global] {
            var machine = signedIn(at: t0)
            let (actions, credential) = machine.signOutRequested(scope: scope, now: t0.addingTimeInterval(3600 - 31))
            #expect(credential == .accessToken("access-1"))
            #expect(actions.contains(.delete) && actions.contains(.emit(.signedOut(.userRequested))))
            #expect(machine.phase == .signedOut(.userRequested))
        }
    }

    @Test func anAccessTokenWithLessThanTheCallsMinimumLeftIsRefreshedFirst() {
        var machine = signedIn(at: t0)
        // 29 s left: /logout would answer bad_jwt by the time it reads the token.
        let (_, credential) = machine.signOutRequested(scope: .local, now: t0.addingTimeInterval(3600 - 29))
        #expect(credential == .refreshFirst(refreshToken: "refresh-1", fallback: "access-1"))
        // Exactly the minimum is enough.
        var other = signedIn(at: t0)
        #expect(other.signOutRequested(scope: .global, now: t0.addingTimeInterval(3600 - ServerCallToken.minimumValidity)).tellServer
                == .accessToken("access-1"))
    }

    @Test func othersKeepsThisSessionAndAsksForAValidToken() {
        var machine = signedIn(at: t0)
        let (actions, credential) = machine.signOutRequested(scope: .others, now: t0.addingTimeInterval(3599))
        #expect(actions.isEmpty && credential == .validToken)
        #expect(machine.phase == .signedIn && machine.session != nil)
    }

    @Test func withoutASessionThereIsNothingToEndOrTell() {
        var machine = SessionMachine()
        _ = machine.storedSessionLoaded(nil, now: t0)
        let (actions, credential) = machine.signOutRequested(scope: .global, now: t0)
        #expect(actions.isEmpty && credential == nil)
    }

    @Test func aSessionStillBeingStoredIsSignedOutToo() {
        var machine = SessionMachine()
        _ = machine.storedSessionLoaded(nil, now: t0)
        _ = machine.signedIn(Fixtures.session(2, receivedAt: t0), request: nil, now: t0)
        #expect(machine.phase == .persisting)
        let (actions, credential) = machine.signOutRequested(scope: .local, now: t0)
        #expect(credential == .accessToken("access-2"))
        #expect(actions.contains(.delete))
        // The write that was out can no longer bring the session back.
        #expect(machine.storeFinished(generation: 1, failure: nil, now: t0).isEmpty)
        #expect(machine.phase == .signedOut(.userRequested))
    }

    @Test(arguments: [
        (nil, true), (ServerFailure.http(status: 401, code: "bad_jwt", message: "m", retryAfter: nil), true),
        (.http(status: 403, code: nil, message: "m", retryAfter: nil), true), (.http(status: 404, code: nil, message: "m", retryAfter: nil), true),
        (.http(status: 500, code: nil, message: "m", retryAfter: nil), false), (.http(status: 429, code: nil, message: "m", retryAfter: 3), false),
        (.unreachable(url: "https://x", detail: "refused"), false), (.invalidResponse(detail: "d"), false),
    ] as [(ServerFailure?, Bool)])
    func theServerConfirmsUnlessItFailedWithoutSayingTheSessionIsGone(_ failure: ServerFailure?, _ confirmed: Bool) {
        let outcome = SignOutRules.outcome(failure)
        #expect(outcome.confirmed == confirmed)
        #expect((outcome.detail != nil) == !confirmed)
    }
}
