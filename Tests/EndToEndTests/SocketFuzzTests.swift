import AuthdClient
import AuthProtocol
import AuthTestSupport
import Foundation
import Synchronization
import Testing

/// Throws hostile and broken input at a live authd over its socket while another client keeps
/// asking for tokens: the daemon must never crash, answer every line it answers with JSON, close
/// every connection it was done with, and never make the other client wait or fail.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct SocketFuzzTests {
    @Test func garbageOnTheSocketNeverCrashesTheDaemonOrDisturbsAnotherClient() async throws {
        let cases = Int(ProcessInfo.processInfo.environment["AUTHD_SOCKET_FUZZ_CASES"] ?? "") ?? 1500
        let seed = UInt64(ProcessInfo.processInfo.environment["AUTHD_SOCKET_FUZZ_SEED"] ?? "") ?? UInt64(Date().timeIntervalSince1970)
        try await Stack.running("fuzz", lifetime: 3600) { stack in
            let daemon = try stack.startSignedIn(email: "fuzz@example.com", password: "fuzz-password")
            let generator = SocketFuzzCases(seeds: try Self.seedRequests())
            let tokens = TokenLoop(socketPath: stack.socketPath)
            let thread = Thread { tokens.run() }
            thread.start()

            var random = SplitMix64(seed: seed)
            var bytesSent = 0, linesAnswered = 0, notJSON = 0, leftOpen = 0
            let started = Date()
            for _ in 0..<cases {
                let payload = generator.next(&random)
                bytesSent += payload.count
                guard let connection = try? LineConnection.connect(path: stack.socketPath, maxLineLength: 4 << 20) else {
                    Issue.record("could not connect during the fuzz run")
                    break
                }
                connection.setReadTimeout(10)
                try? connection.write(payload)
                connection.finishWriting()
                // A half-closed client still gets every answer, and then the daemon closes.
                do {
                    while let line = try connection.readLine() {
                        linesAnswered += 1
                        if (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] == nil { notJSON += 1 }
                    }
                } catch {
                    leftOpen += 1
                }
                connection.close()
            }
            let elapsed = Date().timeIntervalSince(started)
            tokens.stop()
            while !tokens.finished { usleep(10_000) }

            print("socket fuzz: \(cases) cases, \(bytesSent) bytes, \(linesAnswered) lines answered in \(String(format: "%.1f", elapsed)) s (seed \(seed)); "
                  + "other client: \(tokens.successes) tokens, \(tokens.failures.count) failures, slowest \(String(format: "%.0f", tokens.slowest * 1000)) ms")
            #expect(daemon.process.isRunning, "authd died during the fuzz run (seed \(seed))")
            #expect(notJSON == 0, "lines that are not JSON objects (seed \(seed))")
            #expect(leftOpen == 0, "connections not closed after the client half-closed (seed \(seed))")
            #expect(tokens.failures.isEmpty, "\(tokens.failures.prefix(3)) (seed \(seed))")
            #expect(tokens.successes > 10)
            #expect(try stack.authctl(["status"]).status == 0)
        }
    }

    /// Every request fixture of the protocol, except the ones that would end the session the
    /// other client relies on.
    static func seedRequests() throws -> [Data] {
        let folder = Binaries.repositoryRoot.appendingPathComponent("Tests/AuthProtocolTests/Fixtures")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            .filter { $0.hasPrefix("request-") && !["request-sign-out.json", "request-user-update.json"].contains($0) }
            .map { try Data(contentsOf: folder.appendingPathComponent($0)).filter { $0 != UInt8(ascii: "\n") } }
    }
}

/// A client that asks for a token again and again on one connection until stopped.
final class TokenLoop: Sendable {
    private let socketPath: String
    private let state = Mutex<(successes: Int, failures: [String], slowest: TimeInterval, stopped: Bool, finished: Bool)>((0, [], 0, false, false))

    init(socketPath: String) { self.socketPath = socketPath }

    var successes: Int { state.withLock { $0.successes } }
    var failures: [String] { state.withLock { $0.failures } }
    var slowest: TimeInterval { state.withLock { $0.slowest } }
    var finished: Bool { state.withLock { $0.finished } }

    func stop() { state.withLock { $0.stopped = true } }

    func run() {
        defer { state.withLock { $0.finished = true } }
        guard let connection = try? AuthdConnection.connect(socketPath: socketPath) else {
            state.withLock { $0.failures.append("could not connect") }
            return
        }
        while !state.withLock({ $0.stopped }) {
            let started = Date()
            do {
                let token = try connection.call(Methods.Token.self, .init(), timeout: 5)
                let took = Date().timeIntervalSince(started)
                state.withLock {
                    $0.successes += token.accessToken.isEmpty ? 0 : 1
                    $0.slowest = max($0.slowest, took)
                }
            } catch {
                state.withLock { $0.failures.append("\(error)") }
            }
            usleep(2_000)
        }
    }
}
