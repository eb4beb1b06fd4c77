import AuthCore
import AuthDaemon
import AuthTestSupport
import Foundation
import Testing

/// A driver whose job loop has ended (authd stopping, or a test's service group cancelled)
/// answers every request rather than leave it waiting on actions nobody carries out: a request
/// left waiting keeps its connection, and so the socket server and the whole service group, from
/// ever ending. The stored session is left as it was, but for a sign-out's delete. A regression
/// shows as a test that never ends (before the fix, these waited forever): a continuation nobody
/// resumes ignores the time limit's cancellation, and `scripts/test`'s stall report names the test.
@Suite(.timeLimit(.minutes(5))) struct DriverStopTests {
    /// A driver serving the session stored in `store`, stopped (its task cancelled) once it has
    /// read it.
    private func stoppedDriver(store: InMemorySessionStore) async -> SessionDriver {
        let driver = ClockJumpTests.driver(store: store, wall: ManualWallClock(Fixtures.t0), monotonic: ManualMonotonicClock())
        await withTaskGroup(of: Void.self) { serving in
            serving.addTask { await driver.run() }
            #expect(await driver.status().state == "signed_in")
            serving.cancelAll()
        }
        return driver
    }

    /// A server that holds each refresh until `answer` opens; `called` yields as each one arrives.
    private struct HeldRefreshes {
        let api = FakeGoTrue()
        let called: AsyncStream<Void>
        let answer = Latch()

        init() {
            let (called, calledSink) = AsyncStream.makeStream(of: Void.self)
            self.called = called
            api.holdRefreshes { [answer] in
                calledSink.yield()
                await answer.wait()
            }
        }
    }

    /// Serves `driver` and runs `request` once the stored session is read; stops the driver (its
    /// task cancelled, as at authd's end) once the server has a refresh, which it answers only
    /// then (`HeldRefreshes`). Returns what `request` returned.
    private func stopWhileRefreshing<Answer: Sendable>(_ driver: SessionDriver, held: HeldRefreshes,
                                                        before: () -> Void = {},
                                                        request: @escaping @Sendable () async -> Answer) async -> Answer? {
        await withTaskGroup(of: Answer?.self) { serving in
            serving.addTask {
                await driver.run()
                return nil
            }
            _ = await driver.status() // the stored session is read
            before()
            serving.addTask { await request() }
            for await _ in held.called { break }
            serving.cancelAll()
            // The keyring's loop has ended with the job loop: the server's answer comes too late
            // to be stored, and so nothing the machine does can answer the request.
            held.answer.open()
            var answer: Answer?
            for await result in serving { answer = result ?? answer }
            return answer
        }
    }

    @Test func aTokenRequestWaitingOnARefreshWhenTheDriverStopsFailsAsStopping() async throws {
        let store = InMemorySessionStore(sessions: ["default": Fixtures.session(1, receivedAt: Fixtures.t0)])
        let held = HeldRefreshes()
        let wall = ManualWallClock(Fixtures.t0), monotonic = ManualMonotonicClock()
        let driver = ClockJumpTests.driver(store: store, api: held.api, wall: wall, monotonic: monotonic)
        let answer = await stopWhileRefreshing(driver, held: held, before: {
            // 10 s of the token's hour left: a request for 60 s waits for a refresh.
            wall.advance(by: 3590)
            monotonic.advance(by: 3590)
        }, request: { await driver.token(validFor: 60) })
        #expect(answer == .failure(.stopping))
        // The refreshed session was not kept: the stored token is its parent, which GoTrue answers
        // with the current one.
        #expect(held.api.refreshCalls == 1)
        #expect(try await store.load(profile: "default")?.refreshToken == "refresh-1")
    }

    /// Takes over `Fixtures.grant(7)` on a driver of `store` and stops it while the refresh after
    /// the adoption is out (`stopWhileRefreshing`, which runs `before` first). Returns the
    /// take-over's outcome and how many refreshes the server got.
    private func takeOverStoppedWhileRefreshing(_ store: InMemorySessionStore, before: () -> Void = {})
        async -> (outcome: Result<SessionTakeOver.Outcome, TokenFailure>?, refreshCalls: Int) {
        let held = HeldRefreshes()
        let driver = ClockJumpTests.driver(store: store, api: held.api, wall: ManualWallClock(Fixtures.t0), monotonic: ManualMonotonicClock())
        let outcome = await stopWhileRefreshing(driver, held: held, before: before) { await driver.adoptTakenOver(Fixtures.grant(7)) }
        return (outcome, held.api.refreshCalls)
    }

    @Test func aTakeOverWhoseSecondExchangeIsOutWhenTheDriverStopsIsInterrupted() async throws {
        let store = InMemorySessionStore()
        let (outcome, refreshCalls) = await takeOverStoppedWhileRefreshing(store)
        // The refresh that leaves the app's copy behind was made at the server and its answer not
        // kept: the take-over cannot say it is complete, nor that the app's copy is still the
        // parent, nor (as `stopping` would) that it may be asked for again.
        #expect(outcome == .success(.interrupted))
        #expect(refreshCalls == 1)
        #expect(try await store.load(profile: "default")?.refreshToken == "refresh-7")
    }

    @Test func aTakeOverHeldInMemoryOnlyWhenTheDriverStopsFailsAsStopping() async throws {
        let store = InMemorySessionStore()
        // The keyring refuses the adopted session, which is served from memory until authd ends:
        // nothing of it outlives the stop, so the take-over is not done and is to be asked again.
        let (outcome, refreshCalls) = await takeOverStoppedWhileRefreshing(store) { store.setFailure(.locked) }
        #expect(outcome == .failure(.stopping))
        #expect(refreshCalls == 1)
        #expect(store.stored("default") == nil)
    }

    @Test func aVerificationOutWhenTheDriverStopsFailsAsStopping() async throws {
        let store = InMemorySessionStore(sessions: ["default": Fixtures.session(1, receivedAt: Fixtures.t0)])
        let driver = ClockJumpTests.driver(store: store, wall: ManualWallClock(Fixtures.t0), monotonic: ManualMonotonicClock())
        let (called, calledSink) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseSink) = AsyncStream.makeStream(of: Void.self)
        async let verification = driver.elevate { _ throws(ServerFailure) in
            calledSink.yield()
            for await _ in release { break }
            return Fixtures.grant(2)
        }
        await withTaskGroup(of: Void.self) { serving in
            serving.addTask { await driver.run() }
            for await _ in called { break }
            serving.cancelAll()
        }
        // The job loop has ended while the server verified: no keyring loop is left to store what
        // it answered, which is dropped as if authd had been killed, rather than waited on forever.
        releaseSink.yield()
        guard case .failure(.session(.stopping)) = await verification else {
            Issue.record("the verification did not fail as stopping: \(await verification)")
            return
        }
        #expect(try await store.load(profile: "default")?.refreshToken == "refresh-1")
        // The stopped driver answers nothing more from the machine.
        #expect(await driver.token(validFor: 60) == .failure(.stopping))
    }

    @Test func requestsToAStoppedDriverFailAtOnceAndTheSessionIsKept() async throws {
        let store = InMemorySessionStore(sessions: ["default": Fixtures.session(1, receivedAt: Fixtures.t0)])
        let driver = await stoppedDriver(store: store)
        #expect(await driver.token(validFor: 60) == .failure(.stopping))
        #expect(await driver.status().state == "signed_in")
        // Stopping is not signing out.
        #expect(try await store.load(profile: "default")?.refreshToken == "refresh-1")
    }

    @Test func aSignInAfterTheStopFailsAsStoppingAndWritesNothing() async throws {
        let store = InMemorySessionStore(sessions: ["default": Fixtures.session(1, receivedAt: Fixtures.t0)])
        let driver = await stoppedDriver(store: store)
        guard case .failure(.stopping) = await driver.adopt(Fixtures.grant(3), announcing: .signedIn) else {
            Issue.record("a stopped driver adopted a sign-in")
            return
        }
        guard case .failure(.stopping) = await driver.adoptTakenOver(Fixtures.grant(4)) else {
            Issue.record("a stopped driver adopted a take-over")
            return
        }
        #expect(try await store.load(profile: "default")?.refreshToken == "refresh-1")
    }

    @Test func aSignOutAskedForAfterTheStopStillDeletesTheStoredSession() async throws {
        let store = InMemorySessionStore(sessions: ["default": Fixtures.session(1, receivedAt: Fixtures.t0)])
        let driver = await stoppedDriver(store: store)
        _ = await driver.signOut(scope: .local)
        #expect(try await store.load(profile: "default") == nil)
    }

    @Test func aSignOutOfTheOtherSessionsAfterTheStopKeepsThisOne() async throws {
        let store = InMemorySessionStore(sessions: ["default": Fixtures.session(1, receivedAt: Fixtures.t0)])
        let driver = await stoppedDriver(store: store)
        let outcome = await driver.signOut(scope: .others)
        // Nothing reached the server, and the reason is the stop, not a missing token.
        #expect(!outcome.confirmed && outcome.detail?.contains("authd is stopping") == true)
        #expect(try await store.load(profile: "default")?.refreshToken == "refresh-1")
    }

    @Test func aVerificationThatEndsTheSessionAfterTheStopStillDeletesIt() async throws {
        let store = InMemorySessionStore(sessions: ["default": Fixtures.session(1, receivedAt: Fixtures.t0)])
        let driver = ClockJumpTests.driver(store: store, wall: ManualWallClock(Fixtures.t0), monotonic: ManualMonotonicClock())
        let (called, calledSink) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseSink) = AsyncStream.makeStream(of: Void.self)
        async let verification = driver.elevate { _ throws(ServerFailure) -> SessionGrant in
            calledSink.yield()
            for await _ in release { break }
            // The project's hook refused it: GoTrue signed every session of the user out.
            throw .http(status: 403, code: "mfa_verification_rejected", message: "rejected", retryAfter: nil)
        }
        await withTaskGroup(of: Void.self) { serving in
            serving.addTask { await driver.run() }
            for await _ in called { break }
            serving.cancelAll()
        }
        releaseSink.yield()
        guard case .failure(.server) = await verification else {
            Issue.record("the verification did not fail with the server's refusal: \(await verification)")
            return
        }
        #expect(try await store.load(profile: "default") == nil)
    }
}
