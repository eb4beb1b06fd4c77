import AuthCore
import AuthdClient
import AuthProtocol
import AuthTestSupport
import Foundation
import Testing

/// An anonymous user given an email, seen from clients on the real socket: the change is answered
/// only once the refreshed token (no longer `is_anonymous`) is stored, and a token request made
/// while that refresh is out waits for it. FakeGoTrue confirms an email at once.
@Suite struct ClaimsChangeThroughDaemonTests {
    static func signInAnonymously(_ daemon: DaemonHarness) async throws {
        let status = try await offPool { try daemon.connect().call(Methods.SignInAnonymously.self, .init()) }
        #expect(status.user?.isAnonymous == true)
    }

    @Test func theUpdateIsAnsweredAfterTheRefreshedTokenIsStored() async throws {
        let api = FakeGoTrue()
        api.setRefreshDelay(.milliseconds(300))
        try await DaemonHarness.run(api: api) { daemon in
            try await Self.signInAnonymously(daemon)
            let anonymousToken = try await offPool { try daemon.connect().call(Methods.Token.self, .init()).accessToken }
            _ = try await offPool { try daemon.connect().call(Methods.UpdateUser.self, .init(email: "kept@example.com")) }
            // No waiting: by the answer the refresh is done and its session stored.
            #expect(daemon.api.refreshCalls == 1)
            #expect(daemon.store.stored("default")?.user.isAnonymous == false)
            let token = try await offPool { try daemon.connect().call(Methods.Token.self, .init()).accessToken }
            #expect(token != anonymousToken && token == daemon.store.stored("default")?.accessToken)
        }
    }

    @Test func aTokenRequestedWhileTheRefreshIsOutWaitsForIt() async throws {
        let api = FakeGoTrue()
        try await DaemonHarness.run(api: api) { daemon in
            try await Self.signInAnonymously(daemon)
            let anonymousToken = try await offPool { try daemon.connect().call(Methods.Token.self, .init()).accessToken }
            api.setRefreshDelay(.seconds(1))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    _ = try await offPool { try daemon.connect().call(Methods.UpdateUser.self, .init(email: "kept@example.com")) }
                }
                // The refresh the change needs is out (held back a second by the server).
                try #require(await eventually { api.refreshCalls == 1 })
                let token = try await offPool { try daemon.connect().call(Methods.Token.self, .init()).accessToken }
                #expect(token != anonymousToken, "the stale anonymous token was served")
                #expect(token == daemon.store.stored("default")?.accessToken)
                try await group.waitForAll()
            }
        }
    }

    @Test func aTransientFailureOfThatRefreshSaysTheChangeIsMadeAndKeepsTheSession() async throws {
        let api = FakeGoTrue()
        try await DaemonHarness.run(api: api) { daemon in
            try await Self.signInAnonymously(daemon)
            // Its retries fail too, so that the status below still finds it failing.
            let refused = ServerFailure.unreachable(url: "https://example.test", detail: "connection refused")
            api.failNextRefreshes([refused, refused, refused])
            let error = try await offPool { () -> AuthdError? in
                do { _ = try daemon.connect().call(Methods.UpdateUser.self, .init(email: "kept@example.com")); return nil } catch let error as AuthdError { return error }
            }
            guard case .offline(let message)? = error else { Issue.record("expected an offline error, got \(String(describing: error))"); return }
            #expect(message.contains("the server made the change") && message.contains("connection refused"))
            let status = try await offPool { try daemon.connect().call(Methods.Status.self, ProfileParameters()) }
            #expect(status.state == "signed_in" && status.user?.isAnonymous == nil && status.degraded?.reason == "offline")
        }
    }
}
