import AuthProtocol
import AuthSocketServer
import AuthTestSupport
import Foundation
import Synchronization
import Testing

/// A connection that only asks for cached tokens is served on the socket's event loop and never
/// gets a task of its own. These check that it still ends like every other connection: its slot
/// comes back, a half-close ends it after its answers, shutdown closes it, and a later request of
/// another kind is served as usual.
@Suite struct TokenOnlyConnectionTests {
    private static let tokenLine = Data("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"session.token\",\"params\":{}}\n".utf8)

    private func signIn(_ daemon: DaemonHarness) async throws {
        try await offPool {
            let client = try daemon.connect()
            _ = try client.call(Methods.SignInWithPassword.self, .init(email: "a@example.com", password: "correct horse"))
        }
    }

    /// The access token in a `session.token` answer with id 7, or nil.
    private func token(_ line: [UInt8]?) -> String? {
        let answer = object(line)
        guard answer["id"] as? Int == 7 else { return nil }
        return (answer["result"] as? [String: Any])?["access_token"] as? String
    }

    /// A new raw connection that has been handed one cached token.
    private func connectionWithToken(_ daemon: DaemonHarness) throws -> LineConnection {
        let raw = try daemon.raw()
        raw.setReadTimeout(20)
        try raw.write(Self.tokenLine)
        #expect(token(try raw.readLine()) != nil)
        return raw
    }

    /// A connection that has been handed a cached token, once the daemon has a free slot for it
    /// (a slot that never came back fails here).
    private func servedConnectionWithToken(_ daemon: DaemonHarness) throws -> LineConnection? {
        try daemon.servedRaw(sending: Self.tokenLine) { token($0) != nil }
    }

    @Test func slotsComeBackFromConnectionsThatOnlyTookTokens() async throws {
        try await DaemonHarness.run(limits: ConnectionLimits(maxConnections: 2)) { daemon in
            try await signIn(daemon)
            try await offPool {
                // Fifteen times the limit, one after another: each must be served.
                for _ in 0..<30 {
                    let raw = try servedConnectionWithToken(daemon)
                    #expect(raw != nil)
                    raw?.close()
                }
                // The limit still holds: two open connections, and a third is refused.
                let open = try (0..<2).compactMap { _ in try servedConnectionWithToken(daemon) }
                #expect(open.count == 2)
                let third = try daemon.raw()
                third.setReadTimeout(20)
                let refusal = object(try third.readLine())
                #expect(((refusal["error"] as? [String: Any])?["data"] as? [String: Any])?["reason"] as? String == "busy")
                open.forEach { $0.close() }
            }
        }
    }

    @Test func aHalfCloseAfterTokensEndsTheConnectionOnceTheyAreWritten() async throws {
        try await DaemonHarness.run { daemon in
            try await signIn(daemon)
            try await offPool {
                let raw = try daemon.raw()
                raw.setReadTimeout(20)
                try raw.write(Self.tokenLine + Self.tokenLine)
                raw.finishWriting()
                #expect(token(try raw.readLine()) != nil)
                #expect(token(try raw.readLine()) != nil)
                #expect(try raw.readLine() == nil)
            }
        }
    }

    @Test func anotherRequestAfterTokensIsServedOnTheSameConnection() async throws {
        try await DaemonHarness.run { daemon in
            try await signIn(daemon)
            try await offPool {
                let raw = try connectionWithToken(daemon)
                try raw.write(Data("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"hello\"}\n".utf8))
                let hello = object(try raw.readLine())
                #expect(hello["id"] as? Int == 8 && hello["result"] is [String: Any])
                try raw.write(Self.tokenLine)
                #expect(token(try raw.readLine()) != nil)
                raw.close()
            }
        }
    }

    @Test func shutdownClosesAConnectionThatOnlyTookTokens() async throws {
        let kept = Mutex<LineConnection?>(nil)
        try await DaemonHarness.run { daemon in
            try await signIn(daemon)
            let raw = try await offPool { try connectionWithToken(daemon) }
            kept.withLock { $0 = raw }
        }
        // The harness stopped the daemon as SIGTERM does; the open connection must see the end.
        let raw = try #require(kept.withLock { $0 })
        #expect(try await offPool { try raw.readLine() } == nil)
        raw.close()
    }
}
