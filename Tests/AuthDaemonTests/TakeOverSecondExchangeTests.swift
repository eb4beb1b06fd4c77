import AuthCore
import AuthdClient
import AuthProtocol
import AuthTestSupport
import Foundation
import Testing

/// The refresh that follows a take-over's exchange (`SessionTakeOver`), when it fails: through the
/// real socket, the session driver and its keyring writes.
@Suite struct TakeOverSecondExchangeTests {
    @Test func aTransientFailureKeepsTheFirstSessionSaysSoAndIsRetriedByTheDaemon() async throws {
        let api = FakeGoTrue()
        // Retry-After keeps the retry 3 s off, so that what the take-over left can be looked at first.
        api.failRefreshes(after: 1, with: [.http(status: 503, code: nil, message: "upstream unavailable", retryAfter: 3)])
        try await DaemonHarness.run(api: api) { daemon in
            let status = try await offPool { try daemon.connect().call(Methods.SignInWithRefreshToken.self, .init(refreshToken: "app-refresh-token")) }
            // Taken over all the same: the first exchange's session is stored and served, and the
            // status says refreshing fails, which authctl reports as the app's copy still working.
            #expect(status.state == "signed_in")
            #expect(status.degraded?.reason == "server_error")
            #expect(daemon.api.refreshCalls == 2)
            #expect(daemon.store.stored("default")?.refreshToken == "refresh-1")
            let token = try await offPool { try daemon.connect().call(Methods.Token.self, .init()) }
            #expect(token.accessToken == "access-1")
            // The daemon's own retry, 3 s later, makes the second exchange.
            try #require(await eventually { daemon.store.stored("default")?.refreshToken == "refresh-2" })
            #expect(daemon.api.refreshCalls == 3)
            let after = try await offPool { try daemon.connect().call(Methods.Status.self, ProfileParameters()) }
            #expect(after.state == "signed_in" && after.degraded == nil)
        }
    }

    @Test func aRefusalOfTheSecondExchangeEndsTheSessionAndSaysWhy() async throws {
        let api = FakeGoTrue()
        api.failRefreshes(after: 1, with: [.http(status: 400, code: "refresh_token_already_used", message: "Invalid Refresh Token: Already Used", retryAfter: nil)])
        try await DaemonHarness.run(api: api) { daemon in
            let error = try await AnonymousAndTakeOverThroughDaemonTests.refusal(daemon, Methods.SignInWithRefreshToken.self, .init(refreshToken: "app-refresh-token"))
            guard case .notSignedIn(let message)? = error else { Issue.record("expected not signed in, got \(String(describing: error))"); return }
            #expect(message.contains("refresh_token_already_used"))
            #expect(daemon.api.refreshCalls == 2)
            #expect(daemon.store.stored("default") == nil)
            let status = try await offPool { try daemon.connect().call(Methods.Status.self, ProfileParameters()) }
            #expect(status.state == "signed_out" && status.signOutReason == "refresh_token_already_used")
        }
    }
}
