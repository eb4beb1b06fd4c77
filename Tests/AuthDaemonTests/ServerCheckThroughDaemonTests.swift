import AuthCore
import AuthDaemon
import AuthdClient
import AuthProtocol
import AuthTestSupport
import Foundation
import Logging
import Testing

/// `daemon.checkServer` is open to every program of the user: however they call it, the server
/// gets one request at a time and none again for a few seconds.
@Suite struct ServerCheckThroughDaemonTests {
    private static func request(_ id: Int) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"daemon.checkServer","params":{"profile":"default"}}"#
    }

    /// 200 calls at once, over four connections that send theirs in one burst each, then more
    /// one after another: every call is answered, with at most a couple of requests to the server
    /// (one, unless the machine is so busy that the burst outlasts the 5 s an answer is reused).
    @Test func twoHundredCallsAtOnceMakeOneRequest() async throws {
        let api = FakeGoTrue()
        // Slow enough that the burst arrives while the first check is under way.
        api.setHealthDelay(.milliseconds(300))
        try await DaemonHarness.run(api: api) { daemon in
            let answered = try await withThrowingTaskGroup(of: Int.self) { group in
                for connection in 0..<4 {
                    group.addTask {
                        try await offPool {
                            let line = try daemon.raw()
                            line.setReadTimeout(30)
                            let ids = (0..<50).map { connection * 50 + $0 }
                            try line.write(Data(ids.map { Self.request($0) + "\n" }.joined().utf8))
                            var reachable = 0
                            for _ in ids {
                                let answer = object(try line.readLine())
                                if (answer["result"] as? [String: Any])?["reachable"] as? Bool == true { reachable += 1 }
                            }
                            return reachable
                        }
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(answered == 200)
            try await offPool {
                let connection = try daemon.connect()
                for _ in 0..<20 {
                    #expect(try connection.call(Methods.CheckServer.self, ProfileParameters(profile: "default")).reachable)
                }
            }
        }
        #expect((1...2).contains(api.healthChecks), "\(api.healthChecks) requests to the server")
    }

    /// The reuse window, driven by a manual monotonic clock: the answer is given again until 5 s
    /// after it came, then the server is asked anew; a failure is kept the same way.
    @Test func anAnswerIsReusedForFiveSecondsThenTheServerIsAskedAgain() async {
        let api = FakeGoTrue()
        let monotonic = ManualMonotonicClock()
        let driver = SessionDriver(profile: "default", server: "https://example.test", store: InMemorySessionStore(), api: api,
                                   clock: ManualWallClock(Fixtures.t0), monotonic: monotonic, timer: InertTimer(),
                                   logger: Logger(label: "test"))
        let check = ProfileServices(session: driver).serverCheck
        #expect(await check.result().reachable)
        api.setServerClock(.failure(.unreachable(url: "https://example.test/auth/v1", detail: "connection refused")))
        monotonic.advance(by: 4.9)
        #expect(await check.result().reachable)
        #expect(api.healthChecks == 1)
        monotonic.advance(by: 0.1)
        let down = await check.result()
        #expect(!down.reachable && down.detail?.contains("connection refused") == true)
        #expect(api.healthChecks == 2)
        api.setServerClock(.success(nil))
        monotonic.advance(by: 4.9)
        #expect(await check.result().reachable == false)
        #expect(api.healthChecks == 2)
    }

    /// A caller that hangs up does not cancel the check the others wait for.
    @Test func aCancelledCallerLeavesTheSharedCheckRunning() async throws {
        let api = FakeGoTrue()
        api.setHealthDelay(.milliseconds(200))
        let driver = SessionDriver(profile: "default", server: "https://example.test", store: InMemorySessionStore(), api: api,
                                   clock: ManualWallClock(Fixtures.t0), monotonic: ManualMonotonicClock(), timer: InertTimer(),
                                   logger: Logger(label: "test"))
        let check = ProfileServices(session: driver).serverCheck
        let first = Task { await check.result() }
        // The second call joins the first one's check once that is under way.
        try #require(await eventually(every: .milliseconds(1)) { api.healthChecks > 0 })
        first.cancel()
        #expect(await check.result().reachable)
        #expect(await first.value.reachable)
        #expect(api.healthChecks == 1)
    }
}
