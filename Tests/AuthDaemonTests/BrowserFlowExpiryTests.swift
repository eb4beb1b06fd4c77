import AuthCore
import AuthProtocol
import AuthTestSupport
import Foundation
import Testing

/// How `oauth.wait` ends when nobody completes its flow: at the flow's lifetime on the daemon's
/// clock, kept by a timer that lives only as long as a wait does.
@Suite struct BrowserFlowExpiryTests {
    private static let lifetime = OAuthFlowBook.lifetime

    /// A daemon whose time is the test's: the wall clock stands still, so a flow begun now has
    /// exactly its lifetime left when it is waited for.
    private static func run(_ monotonic: SteppingMonotonicClock, _ body: @Sendable (DaemonHarness) async throws -> Void) async throws {
        try await DaemonHarness.run(clock: ManualWallClock(Date()), monotonic: monotonic, body)
    }

    /// A provider's sign-in to an app's own address; its flow's id.
    private static func begin(_ daemon: DaemonHarness) async throws -> String {
        try await offPool { try daemon.connect().call(Methods.OAuthBegin.self, .init(provider: "github", redirectTo: "myapp://confirm")) }.flowID
    }

    @Test func aWaitedFlowExpiresAtItsLifetimeAndNotBefore() async throws {
        let monotonic = SteppingMonotonicClock()
        try await Self.run(monotonic) { daemon in
            let flowID = try await Self.begin(daemon)
            async let reason = InteractiveSignInThroughDaemonTests.refusal(daemon, Methods.OAuthWait.name, #"{"flow_id":"\#(flowID)"}"#)
            #expect(await monotonic.waitForSleep(of: Self.lifetime))
            monotonic.advance(by: Self.lifetime - 1)
            // A second before its end the wait's timer is still set: nothing else ends this wait.
            #expect(monotonic.sleeps(endingIn: 1) == 1)
            monotonic.advance(by: 1)
            #expect(try await reason == "flow_expired")
            // The flow went with its time: a new wait is told there is none.
            let again = try await InteractiveSignInThroughDaemonTests.refusal(daemon, Methods.OAuthWait.name, #"{"flow_id":"\#(flowID)"}"#)
            #expect(again == "oauth_failed")
        }
    }

    /// A client that begins waits and hangs up, over and over, leaves nothing behind: each wait's
    /// timer ends with it, rather than sleeping out the rest of the flow's five minutes.
    @Test func aWaitWhoseClientHangsUpTakesItsTimerWithIt() async throws {
        let monotonic = SteppingMonotonicClock()
        try await Self.run(monotonic) { daemon in
            let flowID = try await Self.begin(daemon)
            let wait = Data(#"{"jsonrpc":"2.0","id":2,"method":"oauth.wait","params":{"flow_id":"\#(flowID)"}}"#.utf8 + [0x0A])
            for round in 1...20 {
                let raw = try await offPool { () -> LineConnection in
                    let raw = try daemon.raw()
                    try raw.write(wait)
                    return raw
                }
                try #require(await monotonic.waitForSleep(of: Self.lifetime), "round \(round): the wait set no timer")
                raw.close()
                try #require(await eventually { monotonic.sleeps(endingIn: Self.lifetime) == 0 }, "round \(round): a hung-up wait left its timer behind")
            }
            // The flow itself still waits for its redirect, and still ends at its time.
            async let reason = InteractiveSignInThroughDaemonTests.refusal(daemon, Methods.OAuthWait.name, #"{"flow_id":"\#(flowID)"}"#)
            #expect(await monotonic.waitForSleep(of: Self.lifetime))
            monotonic.advance(by: Self.lifetime)
            #expect(try await reason == "flow_expired")
        }
    }
}
