import AuthCore
import AuthDaemon
import AuthTestSupport
import Foundation
import Testing

/// A driver whose job loop has ended (authd stopping, or a test's service group cancelled)
/// answers every request rather than leave it waiting on actions nobody carries out: a request
/// left waiting keeps its connection, and so the socket server and the whole service group, from
/// ever ending. The time limits only end a failing run (before the fix, these waited forever).
@Suite(.timeLimit(.minutes(5))) struct DriverStopTests {
    @Test func aVerificationOutWhenTheDriverStopsIsAnsweredWhenItComesBack() async throws {
        let wall = ManualWallClock(Fixtures.t0), monotonic = ManualMonotonicClock()
        let store = InMemorySessionStore(sessions: ["default": Fixtures.session(1, receivedAt: Fixtures.t0)])
        let driver = ClockJumpTests.driver(store: store, wall: wall, monotonic: monotonic)
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
        // The job loop has ended: the verification's answer would store the new session, which
        // no keyring loop is left to do.
        releaseSink.yield()
        guard case .failure(.session(.stopping)) = await verification else {
            Issue.record("the verification did not fail as stopping: \(await verification)")
            return
        }
    }

    @Test func requestsToAStoppedDriverFailAtOnceAndStatusStillAnswers() async throws {
        let wall = ManualWallClock(Fixtures.t0), monotonic = ManualMonotonicClock()
        let store = InMemorySessionStore(sessions: ["default": Fixtures.session(1, receivedAt: Fixtures.t0)])
        let driver = ClockJumpTests.driver(store: store, wall: wall, monotonic: monotonic)
        await withTaskGroup(of: Void.self) { serving in
            serving.addTask { await driver.run() }
            #expect(await driver.status().state == "signed_in")
            serving.cancelAll()
        }
        #expect(await driver.token(validFor: 60) == .failure(.stopping))
        guard case .failure(.stopping) = await driver.adopt(Fixtures.grant(3), announcing: .signedIn) else {
            Issue.record("a sign-in was adopted by a stopped driver")
            return
        }
        #expect(await driver.status().state == "signed_in")
        // The session is kept for the next authd: stopping is not signing out.
        #expect(try await store.load(profile: "default") != nil)
    }

    @Test func aDriverStoppedBeforeTheStoredSessionWasReadLetsStatusGo() async throws {
        let wall = ManualWallClock(Fixtures.t0), monotonic = ManualMonotonicClock()
        let driver = ClockJumpTests.driver(store: InMemorySessionStore(), wall: wall, monotonic: monotonic)
        // Cancelled before it starts, the driver still reads the store once and then stops.
        await withTaskGroup(of: Void.self) { serving in
            serving.cancelAll()
            serving.addTask { await driver.run() }
        }
        #expect(await driver.token(validFor: 60) == .failure(.stopping))
        #expect(await driver.status().state == "signed_out")
    }
}
