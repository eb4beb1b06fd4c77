import AuthCore
import AuthTestSupport
import Foundation
import Testing

/// Each finished keyring write is matched to its own write: a rewrite of the current session
/// that finishes first never counts as the write of a newer session still on its way.
@Suite struct KeyringWriteOrderTests {
    let t0 = Fixtures.t0
    let policy = RefreshPolicy(jitterFraction: 0)

    @Test func aRewriteFinishingFirstDoesNotAdoptTheNewSessionWhoseWriteIsStillOut() {
        var machine = SessionMachine(policy: policy)
        _ = machine.storedSessionLoaded(nil, now: t0)
        _ = machine.signedIn(Fixtures.session(1), request: RequestID(1), now: t0)
        // The first write fails: served from memory, rewritten later.
        _ = machine.storeFinished(generation: 1, failure: .timedOut, now: t0)
        #expect(machine.keyringFailure == .timedOut)
        let retryAt = try! #require(machine.storeRetryAt)
        let rewrite = machine.timerFired(now: retryAt)
        #expect(rewrite.contains(.store(Fixtures.session(1), generation: 1)))

        // While the rewrite is out, a request forces a refresh, whose session goes to the keyring too.
        let asked = retryAt
        _ = machine.tokenRequested(RequestID(2), validFor: 3600, now: asked)
        #expect(machine.phase == .refreshing)
        let fresh = Session(grant: Fixtures.grant(2), receivedAt: asked)
        #expect(machine.refreshSucceeded(Fixtures.grant(2), generation: 1, now: asked) == [.store(fresh, generation: 1)])

        // The rewrite finishes: it wrote the old session, so the new one is not served yet.
        let first = machine.storeFinished(generation: 1, failure: nil, now: asked)
        #expect(machine.phase == .persisting)
        #expect(machine.session?.accessToken == "access-1")
        #expect(!first.contains { if case .answer(RequestID(2), _) = $0 { true } else { false } })

        // The new session's own write fails: that is recorded and retried, and the session is
        // served from memory.
        let second = machine.storeFinished(generation: 1, failure: .timedOut, now: asked)
        #expect(machine.session?.accessToken == "access-2")
        #expect(second.contains(.answer(RequestID(2), .success(IssuedToken(accessToken: "access-2", expiresAt: fresh.expiresAt)))))
        #expect(machine.keyringFailure == .timedOut)
        #expect(machine.storeRetryAt != nil)
    }
}
