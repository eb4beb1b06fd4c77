import AuthProtocol
import AuthTestSupport
import Foundation
import Testing

/// Through the real binaries: a token request can never make authd refresh in a loop, and no
/// number a client or the configuration gives can bring the daemon down.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct RefreshStormTests {
    /// With 60 s tokens, a minimum of exactly the lifetime (which no token can meet once its own
    /// latency is counted) made ~1,000 refresh grants in 5 s. Each request below must be answered
    /// within 5 s and cost at most one grant; one above the lifetime none.
    @Test func minimumsAtTheLifetimeCostOneRefreshEachAndAreAnsweredPromptly() async throws {
        try await Stack.running("storm", lifetime: 60) { stack in
            try stack.startSignedIn(email: "storm@example.com", password: "storm-password")
            for (minimum, maxGrants) in [("60", 1), ("59", 1), ("100000", 0), ("9223372036854775807", 0), ("60", 1)] {
                let before = try stack.refreshGrants()
                let started = Date()
                let result = try stack.authctl(["token", "--min-valid", minimum, "--json"], timeout: 30)
                let took = Date().timeIntervalSince(started)
                let grants = try stack.refreshGrants() - before
                #expect(took < 5, "--min-valid \(minimum) took \(took) s")
                #expect(grants <= maxGrants, "--min-valid \(minimum) made \(grants) refresh grants")
                if maxGrants == 1 {
                    #expect(result.status == 0, "--min-valid \(minimum): \(result.stderr)")
                    let answer = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
                    let expiresIn = answer?["expires_in"] as? Int ?? -1
                    // The fresh token, with its real validity: at most the lifetime, a little short of it.
                    #expect((55...60).contains(expiresIn), "expires_in \(expiresIn)")
                } else {
                    #expect(result.status != 0)
                    #expect(result.stderr.contains("can never be met"), "\(result.stderr)")
                }
                // The daemon is still up and serving.
                #expect(try stack.authctl(["token"]).status == 0)
            }
        }
    }

    /// An app hammering with a minimum nothing can meet gets at most the breaker's refreshes a
    /// minute, a valid token every time, and status says a refresh was held back.
    @Test func aHammeringClientIsHeldToTheBreakersLimit() async throws {
        try await Stack.running("breaker", lifetime: 60) { stack in
            try stack.startSignedIn(email: "breaker@example.com", password: "breaker-password")
            let before = try stack.refreshGrants()
            let started = Date()
            var served = 0
            for _ in 0..<15 {
                if try stack.authctl(["token", "--min-valid", "60"], timeout: 30).status == 0 { served += 1 }
            }
            let grants = try stack.refreshGrants() - before
            #expect(Date().timeIntervalSince(started) < 60, "the test relies on one window")
            #expect(grants == 10, "\(grants) refresh grants for 15 requests")
            #expect(served == 15)
            let status = try stack.statusJSON()
            let degraded = status["degraded"] as? [String: Any]
            #expect(degraded?["reason"] as? String == "refresh_limited", "\(status)")
            #expect(stack.allOutput().contains("refresh held back"))
        }
    }

    /// Numbers that would trap (SIGILL) a daemon converting them unchecked: each is refused or
    /// clamped, and the daemon stays up.
    @Test func hostileNumbersFromAClientAreAnsweredAndTheDaemonStaysUp() async throws {
        try await Stack.running("numbers", lifetime: 3600) { stack in
            let daemon = try stack.startSignedIn(email: "numbers@example.com", password: "numbers-password")
            let lines = [
                #"{"jsonrpc":"2.0","id":1,"method":"session.token","params":{"min_validity":9223372036854775807}}"#,
                #"{"jsonrpc":"2.0","id":2,"method":"session.token","params":{"min_validity":-9223372036854775808}}"#,
                #"{"jsonrpc":"2.0","id":3,"method":"session.token","params":{"min_validity":1e400}}"#,
                #"{"jsonrpc":"2.0","id":4,"method":"session.token","params":{"min_validity":18446744073709551616}}"#,
                #"{"jsonrpc":"2.0","id":5,"method":"session.token","params":{"min_validity":3599.5}}"#,
                #"{"jsonrpc":"2.0","id":9223372036854775807,"method":"session.token","params":{"min_validity":3600}}"#,
            ]
            let connection = try LineConnection.connect(path: stack.socketPath)
            defer { connection.close() }
            connection.setReadTimeout(10)
            try connection.write(Array((lines.joined(separator: "\n") + "\n").utf8))
            connection.finishWriting()
            var answers: [String] = []
            while let line = try connection.readLine() { answers.append(String(decoding: line, as: UTF8.self)) }
            #expect(answers.count == lines.count, "\(answers)")
            for answer in answers { #expect(answer.contains("\"error\"") || answer.contains("\"access_token\""), "\(answer)") }
            #expect(daemon.process.isRunning)
            #expect(try stack.authctl(["status"]).status == 0)
        }
    }

    /// The service manager's numbers too: a WATCHDOG_USEC past Int64 is no usable watchdog.
    @Test func aWatchdogIntervalPastInt64IsIgnored() async throws {
        try await Stack.running("watchdog", lifetime: 3600) { stack in
            stack.daemonEnvironmentOverrides["WATCHDOG_USEC"] = "9223372036854775808"
            let daemon = try stack.startDaemon()
            #expect(daemon.process.isRunning)
            #expect(try stack.authctl(["status"]).status == 4)
        }
    }

    /// A configuration whose numbers cannot be used is a configuration error (exit 78), never a crash.
    @Test(arguments: ["inf", "nan", "-inf", "1e400", "9223372036854775807", "0", "86401"])
    func aRefreshLeadOutOfRangeInTheConfigurationExits78(_ value: String) async throws {
        try await offPool {
            let stack = try Stack(name: "lead")
            defer { stack.tearDown() }
            let config = stack.directory.appendingPathComponent("config/authd")
            try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
            try "refresh_lead = \(value)\n[profiles.default]\nurl = \"http://127.0.0.1:9\"\nanon_key = \"k\"\n"
                .write(to: config.appendingPathComponent("config.toml"), atomically: true, encoding: .utf8)
            let result = try runCommand(Binaries.path("authd"), [], environment: stack.environment, timeout: 30)
            #expect(result.status == 78, "refresh_lead = \(value): exit \(result.status): \(result.stderr)")
            #expect(result.stderr.contains("refresh_lead") || result.stderr.contains("config.toml"), "\(result.stderr)")
        }
    }

    @Test(arguments: [["--refresh-lead", "inf"], ["--refresh-lead", "nan"], ["--idle-timeout", "9223372036854775807"],
                      ["--approval-timeout", "9223372036854775807"], ["--max-connections", "9223372036854775807"]])
    func flagsOutOfRangeAreUsageErrors(_ flags: [String]) async throws {
        try await offPool {
            let stack = try Stack(name: "flags")
            defer { stack.tearDown() }
            let result = try runCommand(Binaries.path("authd"), ["--url", "http://127.0.0.1:9", "--anon-key", "k"] + flags,
                                        environment: stack.environment, timeout: 30)
            #expect(result.status == 64, "\(flags): exit \(result.status): \(result.stderr)")
        }
    }
}
