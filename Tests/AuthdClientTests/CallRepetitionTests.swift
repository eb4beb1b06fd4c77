import AuthdClient
import Foundation
import Testing

/// authd closing a connection while a call is out (it stopped or restarted): the library sends a
/// call that is safe to repeat once more on a new connection, and never sends a take-over twice,
/// since a refresh token authd spent, presented again, can end the whole session.
@Suite struct CallRepetitionTests {
    static let token = #"{"access_token":"header.payload.sig","token_type":"bearer","expires_at":1800000000,"expires_in":60,"scopes":["all"]}"#

    /// A scripted daemon that hangs up on `method` and answers `hello` and `session.token`.
    private func daemon(hangingUpOn method: String) throws -> ScriptedDaemon {
        try ScriptedDaemon(hangingUpOn: method) { method in
            switch method {
            case "hello": return ScriptedDaemon.hello
            case "session.token": return Self.token
            default: return nil
            }
        }
    }

    /// Records an issue unless `call` fails as `daemonUnavailable`, as a call whose connection
    /// closed unanswered does.
    private func expectDaemonUnavailable<T>(_ what: String, _ call: () async throws(AuthdError) -> T) async {
        do {
            _ = try await call()
            Issue.record("\(what) was answered")
        } catch {
            guard case .daemonUnavailable = error else { Issue.record("expected daemonUnavailable, got \(error)"); return }
        }
    }

    @Test func aTakeOverWhoseAnswerIsLostIsNotSentAgain() async throws {
        let daemon = try daemon(hangingUpOn: "session.signInWithRefreshToken")
        defer { daemon.stop() }
        let client = try await AuthdClient.connect(socketPath: daemon.path)
        // The connection has been used: before the fix, its break made the library send again.
        _ = try await client.token()
        await expectDaemonUnavailable("the take-over") { () async throws(AuthdError) in try await client.signIn(refreshToken: "app-refresh-token") }
        #expect(daemon.received.filter { $0 == "session.signInWithRefreshToken" }.count == 1, "\(daemon.received)")
        // It went on a connection opened for it (a second hello), and the client goes on working.
        #expect(daemon.received.filter { $0 == "hello" }.count == 2, "\(daemon.received)")
        #expect(try await client.token().value == "header.payload.sig")
    }

    /// The other side of the rule, and proof that the daemon above would have seen a second send.
    @Test func aTokenRequestWhoseAnswerIsLostIsSentOnceMoreOnANewConnection() async throws {
        let daemon = try daemon(hangingUpOn: "session.token")
        defer { daemon.stop() }
        let client = try await AuthdClient.connect(socketPath: daemon.path)
        await expectDaemonUnavailable("the token request") { () async throws(AuthdError) in try await client.token() }
        #expect(daemon.received == ["hello", "session.token", "hello", "session.token"])
    }
}
