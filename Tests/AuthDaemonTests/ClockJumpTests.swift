import AuthCore
import AuthDaemon
import AuthTestSupport
import Foundation
import Logging
import Synchronization
import Testing

@Suite struct ClockJumpTests {
    /// A driver on the test's clocks whose timer never fires: only the clock check acts.
    static func driver(store: InMemorySessionStore, api: FakeGoTrue = FakeGoTrue(), wall: ManualWallClock,
                       monotonic: ManualMonotonicClock) -> SessionDriver {
        SessionDriver(profile: "default", server: "https://example.test", store: store, api: api, clock: wall,
                      monotonic: monotonic, timer: InertTimer(), policy: RefreshPolicy(jitterFraction: 0), logger: Logger(label: "test"))
    }

    @Test(arguments: [(3605.0, 5.0, true), (-3595.0, 5.0, true), (5.0, 5.0, false), (7200.0, 7200.0, false), (6.5, 5.0, false)])
    func jumpsAreToldFromTimePassingAndFromSuspend(_ wall: TimeInterval, _ monotonic: TimeInterval, _ jumped: Bool) {
        #expect(ClockJump(wallElapsed: wall, monotonicElapsed: monotonic).isJump() == jumped)
    }

    @Test func aWallClockJumpPastExpiryRefreshesAtOnceButASuspendLeavesItToTheTimer() async throws {
        let t0 = Fixtures.t0
        let wall = ManualWallClock(t0), monotonic = ManualMonotonicClock()
        let api = FakeGoTrue()
        let store = InMemorySessionStore(sessions: ["default": Fixtures.session(1, receivedAt: t0)])
        let driver = Self.driver(store: store, api: api, wall: wall, monotonic: monotonic)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await driver.run() }
            #expect(await driver.status().state == "signed_in") // waits for the load

            // Asleep for two hours: both clocks moved, so the check does nothing (the wall-clock
            // timer is what fires after a real suspend).
            wall.advance(by: 7200)
            monotonic.advance(by: 7200)
            // A refresh would have begun in checkClock's own turn of the driver (the machine
            // moves to refreshing before the request goes out): no waiting needed to see none did.
            await driver.checkClock()
            #expect(await driver.status().state == "signed_in")
            #expect(api.refreshCalls == 0)

            // The clock is set two more hours ahead while only a second passes: refresh at once.
            wall.advance(by: 7200)
            monotonic.advance(by: 1)
            await driver.checkClock()
            #expect(await eventually { api.refreshCalls > 0 })
            #expect(api.refreshCalls == 1)
            #expect(await eventually { await driver.status().expiresAt == Int64(wall.now().timeIntervalSince1970) + 3600 })
            group.cancelAll()
        }
    }

    @Test func aBackwardJumpMovesTheExpiryWithTheClockAndStoresIt() async throws {
        let t0 = Fixtures.t0
        let wall = ManualWallClock(t0.addingTimeInterval(100)), monotonic = ManualMonotonicClock()
        let store = InMemorySessionStore(sessions: ["default": Fixtures.session(1, receivedAt: t0)])
        let driver = Self.driver(store: store, wall: wall, monotonic: monotonic)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await driver.run() }
            let before = await driver.status().expiresAt
            #expect(before == Int64(t0.timeIntervalSince1970) + 3600)

            // NTP steps the clock an hour back while a second passes: the token's 3499 real seconds
            // stay 3499 seconds on the new clock, in memory and in the keyring.
            wall.advance(by: -3600 + 1)
            monotonic.advance(by: 1)
            await driver.checkClock()
            #expect(await driver.status().expiresAt == before! - 3600)
            #expect(await eventually { store.stored("default")?.expiresAt == t0 })
            group.cancelAll()
        }
    }
}

extension ClockJumpTests {
    /// A clock set back that the driver has not looked at yet: no token is answered from the old
    /// dates, neither on the event loop nor by the actor, which looks at the clock first.
    @Test func aJumpNotYetCheckedIsNeverAnsweredFromTheOldDates() async throws {
        let t0 = Fixtures.t0
        let wall = ManualWallClock(t0.addingTimeInterval(100)), monotonic = ManualMonotonicClock()
        let store = InMemorySessionStore(sessions: ["default": Fixtures.session(1, receivedAt: t0)])
        let driver = Self.driver(store: store, wall: wall, monotonic: monotonic)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await driver.run() }
            _ = await driver.status() // waits for the load
            #expect(driver.tokenAtOnce(validFor: 60)?.expiresAt == t0.addingTimeInterval(3600))

            // An hour back while a second passes; nobody has run the clock check.
            wall.advance(by: -3600 + 1)
            monotonic.advance(by: 1)
            #expect(driver.tokenAtOnce(validFor: 60) == nil)
            // The actor sees the jump before it answers: the expiry moved with the clock.
            let token = try await driver.token(validFor: 60).get()
            #expect(token.expiresAt == t0)
            #expect(driver.tokenAtOnce(validFor: 60)?.expiresAt == t0)
            group.cancelAll()
        }
    }
}

/// `daemon.checkServer` through the account operations: reachability and the skew against the server's clock.
@Suite struct ServerCheckTests {
    @Test func theSkewIsOurClockMinusTheServersAndAFailureSaysWhy() async throws {
        let wall = ManualWallClock(Fixtures.t0)
        let api = FakeGoTrue()
        let driver = SessionDriver(profile: "default", server: "https://example.test", store: InMemorySessionStore(), api: api,
                                   clock: wall, timer: InertTimer(), logger: Logger(label: "test"))
        let accounts = ProfileServices(session: driver).accounts
        api.setServerClock(.success(Fixtures.t0.addingTimeInterval(-90)))
        let ahead = await accounts.checkServer()
        #expect(ahead.reachable && ahead.clockSkew == 90)
        api.setServerClock(.success(nil))
        #expect(await accounts.checkServer().clockSkew == nil)
        api.setServerClock(.failure(.unreachable(url: "https://example.test/auth/v1", detail: "connection refused")))
        let down = await accounts.checkServer()
        #expect(!down.reachable)
        #expect(down.detail?.contains("connection refused") == true)
    }
}
