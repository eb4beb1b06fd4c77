import AuthTestSupport
import Foundation
import Testing

/// What a client can put into the daemon's log: its executable's path, which is whatever its
/// owner named it.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct LogLineTests {
    @Test func aClientsPathCannotForgeALogLineOrColourTheTerminal() async throws {
        try await Stack.running("loglines", lifetime: 3600) { stack in
            // Started by hand (stderr is no journal): plain lines, at trace level.
            let daemon = try stack.startDaemon()
            // authctl's front answers `token` itself, so the client the daemon sees is this copy.
            let hostile = stack.directory.appendingPathComponent("x\nPRIORITY=0\nMESSAGE=forged \u{1B}[31mred\u{1B}[0m").path
            try FileManager.default.copyItem(atPath: Binaries.path("authctl"), toPath: hostile)
            // Beside it, the authd executable, which is the full tool the front hands the "not
            // signed in" answer to. Copied by cp, not from here: the front execs it itself,
            // without a retry, and a copy written by this process can be held open by a child
            // another test forks meanwhile (ETXTBSY).
            let full = try runCommand("/bin/cp", [Binaries.path("authd"), stack.directory.appendingPathComponent("authd").path],
                                      environment: [:])
            #expect(full.status == 0, "\(full.stderr)")
            let token = try runCommand(hostile, ["token"], environment: stack.environment)
            #expect(token.status == 4, "not signed in: \(token.stderr)")

            let log = daemon.stderr
            #expect(log.contains(#"client.app=\#(stack.directory.path)/x\nPRIORITY=0\nMESSAGE=forged \x1b[31mred\x1b[0m"#), "\(log)")
            #expect(!log.contains("\u{1B}"))
            #expect(!log.split(separator: "\n").contains { $0.hasPrefix("PRIORITY=") || $0.hasPrefix("MESSAGE=") }, "\(log)")
        }
    }
}
