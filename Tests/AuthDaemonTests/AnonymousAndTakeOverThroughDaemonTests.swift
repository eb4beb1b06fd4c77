import AuthCore
import AuthdClient
import AuthProtocol
import AuthTestSupport
import Foundation
import Testing

/// The anonymous sign-in and the session take-over seen from a client, with the real socket.
@Suite struct AnonymousAndTakeOverThroughDaemonTests {
    /// The error a call ends with, or nil when it succeeded.
    static func refusal<M: RPCMethod>(_ daemon: DaemonHarness, _ method: M.Type, _ parameters: M.Parameters) async throws -> AuthdError? {
        try await offPool { () -> AuthdError? in
            do { _ = try daemon.connect().call(method, parameters); return nil } catch let error as AuthdError { return error }
        }
    }

    @Test func anAnonymousSignInShowsTheUserAsAnonymousAndGivingItAnEmailRefreshes() async throws {
        try await DaemonHarness.run { daemon in
            let status = try await offPool { try daemon.connect().call(Methods.SignInAnonymously.self, .init(data: ["theme": .string("dark")])) }
            #expect(status.state == "signed_in")
            #expect(status.user?.isAnonymous == true && status.user?.id == "anon-1")
            #expect(daemon.store.stored("default")?.user.isAnonymous == true)
            let refreshesBefore = daemon.api.refreshCalls
            // FakeGoTrue confirms an email at once, as an auto-confirming project does: the user is permanent now.
            _ = try await offPool { try daemon.connect().call(Methods.UpdateUser.self, .init(email: "kept@example.com")) }
            try #require(await eventually { daemon.api.refreshCalls == refreshesBefore + 1 })
            let after = try await offPool { try daemon.connect().call(Methods.Status.self, ProfileParameters()) }
            #expect(after.user?.isAnonymous == nil)
        }
    }

    @Test func aSessionIsTakenOverByItsRefreshToken() async throws {
        try await DaemonHarness.run { daemon in
            let status = try await offPool { try daemon.connect().call(Methods.SignInWithRefreshToken.self, .init(refreshToken: "app-refresh-token")) }
            #expect(status.state == "signed_in" && status.degraded == nil)
            // Exchanged, then refreshed once more: the app's token is two steps behind the one stored.
            #expect(daemon.api.refreshCalls == 2)
            #expect(daemon.store.stored("default")?.refreshToken == "refresh-2")
        }
    }

    @Test func aTakeOverWhoseAnswerIsLostIsTriedOnceMore() async throws {
        let api = FakeGoTrue()
        api.failNextRefreshes([.unreachable(url: "https://example.test", detail: "timed out")])
        try await DaemonHarness.run(api: api) { daemon in
            let status = try await offPool { try daemon.connect().call(Methods.SignInWithRefreshToken.self, .init(refreshToken: "app-refresh-token")) }
            #expect(status.state == "signed_in")
            #expect(daemon.api.refreshCalls == 3, "the lost answer, its retry, the second exchange")
        }
    }

    @Test func aRefusedTokenChangesNothingAndSaysWhy() async throws {
        let api = FakeGoTrue()
        api.failNextRefreshes([.http(status: 400, code: "refresh_token_already_used", message: "Invalid Refresh Token: Already Used", retryAfter: nil)])
        let store = InMemorySessionStore(sessions: ["default": Fixtures.session(7, receivedAt: Date())])
        try await DaemonHarness.run(api: api, store: store) { daemon in
            let error = try await Self.refusal(daemon, Methods.SignInWithRefreshToken.self, .init(refreshToken: "spent-token"))
            guard case .signInRefused(let message)? = error else { Issue.record("expected a refusal, got \(String(describing: error))"); return }
            #expect(message.contains("does not open a session") && message.contains("refresh_token_already_used"))
            #expect(!message.contains("spent-token"))
            #expect(daemon.api.refreshCalls == 1, "a refusal is not retried")
            #expect(daemon.store.stored("default")?.refreshToken == "refresh-7", "the session held before is kept")
        }
    }

    @Test func whatCannotBeARefreshTokenIsRefusedBeforeAnythingIsSent() async throws {
        try await DaemonHarness.run { daemon in
            let jwt = Fixtures.accessToken(aal: "aal1", amr: ["password"])
            for bad in ["", "has space", String(repeating: "a", count: 2049), "tab\there", jwt] {
                let error = try await Self.refusal(daemon, Methods.SignInWithRefreshToken.self, .init(refreshToken: bad))
                guard case .rejected(_, let message)? = error else {
                    Issue.record("expected invalid params for a token of \(bad.utf8.count) bytes, got \(String(describing: error))"); continue
                }
                #expect(message.hasPrefix("invalid params") && message.contains("refresh_token"))
                if !bad.isEmpty { #expect(!message.contains(bad)) }
            }
            let jwtError = try await Self.refusal(daemon, Methods.SignInWithRefreshToken.self, .init(refreshToken: jwt))
            #expect("\(String(describing: jwtError))".contains("access token (a JWT)"))
            #expect(daemon.api.refreshCalls == 0)
            #expect(daemon.store.stored("default") == nil)
        }
    }
}
