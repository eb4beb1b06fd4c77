import AuthCore
import AuthDaemon
import AuthProtocol
import AuthTestSupport
import Foundation
import Logging
import Testing

/// How `oauth.wait` ends when nobody completes its flow: at the flow's lifetime on the daemon's
/// clock, kept by a timer that lives only as long as a wait does.
@Suite struct BrowserFlowExpiryTests {
    private static let lifetime = OAuthFlowBook.lifetime

    /// A daemon on clocks the test moves (the wall clock only with the monotonic one, so a flow
    /// begun now has exactly its lifetime left when it is waited for), a flow begun there, and an
    /// `oauth.wait` (id 2) for it out on a raw connection with its timer set.
    private struct WaitedFlow {
        let daemon: DaemonHarness
        let wall: ManualWallClock
        let monotonic: SteppingMonotonicClock
        let flowID: String
        let connection: LineConnection

        /// Both clocks forward by `seconds`, as time passes.
        func advance(by seconds: TimeInterval) {
            wall.advance(by: seconds)
            monotonic.advance(by: seconds)
        }
    }

    /// Runs `body` with a `WaitedFlow`; everything stops when it returns.
    private static func withWaitedFlow(_ body: @Sendable (WaitedFlow) async throws -> Void) async throws {
        let wall = ManualWallClock(Date()), monotonic = SteppingMonotonicClock()
        try await DaemonHarness.run(clock: wall, monotonic: monotonic) { daemon in
            let flowID = try await begin(daemon)
            let connection = try await waiting(daemon, for: flowID)
            defer { connection.close() }
            try #require(await monotonic.waitForSleep(of: lifetime), "the wait set no timer")
            try await body(WaitedFlow(daemon: daemon, wall: wall, monotonic: monotonic, flowID: flowID, connection: connection))
        }
    }

    /// A provider's sign-in to an app's own address; its flow's id.
    private static func begin(_ daemon: DaemonHarness) async throws -> String {
        try await offPool { try daemon.connect().call(Methods.OAuthBegin.self, .init(provider: "github", redirectTo: "myapp://confirm")) }.flowID
    }

    private static func line(_ id: Int, _ method: String, _ params: String = "{}") -> Data {
        Data("{\"jsonrpc\":\"2.0\",\"id\":\(id),\"method\":\"\(method)\",\"params\":\(params)}\n".utf8)
    }

    /// A raw connection with an `oauth.wait` (id 2) for `flowID` in the daemon's hands.
    private static func waiting(_ daemon: DaemonHarness, for flowID: String) async throws -> LineConnection {
        try await offPool {
            let raw = try daemon.raw()
            raw.setReadTimeout(30)
            try raw.write(line(2, Methods.OAuthWait.name, #"{"flow_id":"\#(flowID)"}"#))
            return raw
        }
    }

    /// The stable reason of an error line.
    private static func reason(_ line: [UInt8]?) -> String? {
        ((object(line)["error"] as? [String: Any])?["data"] as? [String: Any])?["reason"] as? String
    }

    /// Whether a wait was answered that its flow expired.
    private static func isExpired(_ answer: Result<Void, SignInFailure>) -> Bool {
        if case .failure(.flow(.expired)) = answer { return true }
        return false
    }

    @Test func aWaitedFlowExpiresAtItsLifetimeAndNotBefore() async throws {
        try await Self.withWaitedFlow { flow in
            flow.advance(by: Self.lifetime - 1)
            // A second before its end the wait is unanswered: the next line on its connection
            // answers a later request.
            let early = try await offPool { () -> [UInt8]? in
                try flow.connection.write(Self.line(3, "hello"))
                return try flow.connection.readLine()
            }
            #expect(object(early)["id"] as? Int == 3, "the wait was answered before its flow's time was up")
            flow.advance(by: 1)
            let answer = try await offPool { try flow.connection.readLine() }
            #expect(object(answer)["id"] as? Int == 2 && Self.reason(answer) == "flow_expired")
            // The flow went with its time: a new wait is told there is none.
            let again = try await InteractiveSignInThroughDaemonTests.refusal(flow.daemon, Methods.OAuthWait.name, #"{"flow_id":"\#(flow.flowID)"}"#)
            #expect(again == "oauth_failed")
        }
    }

    /// A client that begins waits and hangs up, over and over, leaves nothing behind: each wait's
    /// timer ends with it, rather than sleeping out the rest of the flow's five minutes. The flow
    /// itself still waits for its redirect, and still ends at its time.
    @Test func aWaitWhoseClientHangsUpTakesItsTimerWithIt() async throws {
        try await Self.withWaitedFlow { flow in
            for round in 1...20 {
                let raw = try await Self.waiting(flow.daemon, for: flow.flowID)
                // Its timer beside the first wait's.
                try #require(await eventually { flow.monotonic.sleeps(endingIn: Self.lifetime) == 2 }, "round \(round): the wait set no timer")
                raw.close()
                try #require(await eventually { flow.monotonic.sleeps(endingIn: Self.lifetime) == 1 }, "round \(round): a hung-up wait left its timer behind")
            }
            flow.advance(by: Self.lifetime)
            #expect(Self.reason(try await offPool { try flow.connection.readLine() }) == "flow_expired")
        }
    }

    /// A wait its flow's redirect answers returns then, not when the timer it no longer needs
    /// would have run out, and leaves no timer.
    @Test func aWaitAnsweredByItsRedirectTakesItsTimerWithIt() async throws {
        try await Self.withWaitedFlow { flow in
            // FakeGoTrue refuses the code (it does not know the flow's verifier), which ends the flow.
            _ = try await InteractiveSignInThroughDaemonTests.refusal(flow.daemon, Methods.OAuthComplete.name, #"{"callback_url":"myapp://confirm?code=c0de"}"#)
            let answer = try await offPool { try flow.connection.readLine() }
            #expect(object(answer)["id"] as? Int == 2 && object(answer)["error"] != nil, "the wait was not answered by its flow's end")
            #expect(await eventually { flow.monotonic.sleeps(endingIn: Self.lifetime) == 0 }, "an answered wait left its timer behind")
        }
    }

    /// authd's stop answers a wait still out as expired, and one asked for after it at once.
    @Test(.timeLimit(.minutes(1))) func aStopAnswersTheWaitsAsExpired() async throws {
        let monotonic = SteppingMonotonicClock()
        let driver = SessionDriver(profile: "default", server: "https://example.test", store: InMemorySessionStore(), api: FakeGoTrue(),
                                   clock: ManualWallClock(Date()), monotonic: monotonic, timer: InertTimer(), logger: Logger(label: "test"))
        let browser = ProfileServices(session: driver).browser
        guard case .success(let begun) = await browser.begin(.provider("github", scopes: nil), redirectTo: "myapp://confirm", owner: "app", bind: false) else {
            Issue.record("the flow did not begin")
            return
        }
        let running = Task { await browser.run() }
        async let waited = browser.wait(for: begun.flow.id)
        try #require(await monotonic.waitForSleep(of: Self.lifetime))
        running.cancel()
        await running.value
        #expect(Self.isExpired(await waited))
        #expect(Self.isExpired(await browser.wait(for: begun.flow.id)))
        #expect(monotonic.sleeps(endingIn: Self.lifetime) == 0)
    }
}
