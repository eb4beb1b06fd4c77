import AuthCore
import AuthDaemon
import AuthdClient
import AuthProtocol
import AuthTestSupport
import Foundation
import Testing

/// Refresh behaviour seen from a client: one refresh for many waiters, transient failures kept,
/// fatal ones signed out with the reason.
@Suite struct RefreshThroughDaemonTests {
    /// A stored session due for refresh at once (120 s left of 3600, inside the 360 s lead), yet
    /// valid long enough that a slow start of the harness under the whole suite cannot see it
    /// expire: with 10 s left, a loaded CI run once did, and the still-valid token was gone.
    static func storeDueForRefresh() -> InMemorySessionStore {
        InMemorySessionStore(sessions: ["default": Fixtures.session(100, receivedAt: Date().addingTimeInterval(-3480))])
    }

    @Test func manyConcurrentRequestsShareOneRefresh() async throws {
        let api = FakeGoTrue()
        api.setRefreshDelay(.milliseconds(300))
        let store = InMemorySessionStore(sessions: ["default": Fixtures.session(100, receivedAt: Date().addingTimeInterval(-3000))])
        try await DaemonHarness.run(api: api, store: store) { daemon in
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        try await offPool {
                            try daemon.connect().call(Methods.Token.self, .init(minValidity: 1200)).accessToken
                        }
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(Set(tokens) == ["access-1"])
            #expect(daemon.api.refreshCalls == 1)
            #expect(daemon.store.stored("default")?.accessToken == "access-1")
        }
    }

    @Test func aTransientFailureKeepsTheSessionAndServesTheStillValidToken() async throws {
        let api = FakeGoTrue()
        api.failNextRefreshes(Array(repeating: .unreachable(url: "https://example.test/auth/v1", detail: "connection refused"), count: 50))
        try await DaemonHarness.run(api: api, store: Self.storeDueForRefresh()) { daemon in
            try await offPool {
                let client = try daemon.connect()
                let token = try client.call(Methods.Token.self, .init())
                #expect(token.accessToken == "access-100")
                let status = try client.call(Methods.Status.self, .init())
                #expect(status.state == "signed_in")
                #expect(status.degraded?.reason == "offline")
                #expect(status.degraded?.detail.contains("cannot reach https://example.test/auth/v1") == true)
            }
            #expect(daemon.store.stored("default") != nil)
            #expect(!daemon.store.log.contains { $0.hasPrefix("delete") })
        }
    }

    @Test func aKeyringThatRefusesTheWriteIsRetriedAndTheSessionStoredOnceItRecovers() async throws {
        let store = InMemorySessionStore()
        store.setFailure(.locked)
        try await DaemonHarness.run(store: store) { daemon in
            let status = try await offPool {
                try daemon.connect().call(Methods.SignInWithPassword.self, .init(email: "a@example.com", password: "correct horse"))
            }
            #expect(status.state == "signed_in")
            #expect(status.keyring == "unavailable")
            #expect(daemon.store.stored("default") == nil)
            #expect(try await offPool { try daemon.connect().call(Methods.Token.self, .init()) }.accessToken == "access-1")

            store.setFailure(nil)
            #expect(try await eventually(every: .milliseconds(100)) {
                try await offPool { try daemon.connect().call(Methods.Status.self, .init()) }.keyring == "ok"
            })
            #expect(daemon.store.stored("default")?.accessToken == "access-1")
        }
    }

    @Test func aFatalRefreshErrorSignsOutWithTheServersReason() async throws {
        let api = FakeGoTrue()
        api.failNextRefreshes([.http(status: 400, code: "refresh_token_already_used", message: "Invalid Refresh Token: Already Used", retryAfter: nil)])
        try await DaemonHarness.run(api: api, store: Self.storeDueForRefresh()) { daemon in
            var status = SessionStatus(profile: "", state: "", server: "")
            #expect(try await eventually {
                status = try await offPool { try daemon.connect().call(Methods.Status.self, .init()) }
                return status.state == "signed_out"
            })
            #expect(status.signOutReason == "refresh_token_already_used")
            try await offPool {
                do {
                    _ = try daemon.connect().call(Methods.Token.self, .init())
                    Issue.record("token after a fatal refresh error")
                } catch let AuthdError.notSignedIn(message) {
                    #expect(message.contains("refresh_token_already_used"))
                }
            }
        }
    }
}
