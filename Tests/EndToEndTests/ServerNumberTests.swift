import AuthTestSupport
import Foundation
import Testing

/// Numbers the server sends that no real GoTrue would (`Retry-After: inf`, an `expires_in` near
/// `Int.max`, …), through the real binaries: authd stays up, answers, keeps what it had, and
/// stores nothing it cannot compute with.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct ServerNumberTests {
    static let retryAfters = ["inf", "1e400", "-5", "99999999999999999999", "Fri, 31 Dec 9999 23:59:59 GMT"]

    @Test func aRateLimitWithAnyRetryAfterKeepsTheSessionAndRetriesWithinAnHour() async throws {
        try await Stack.running("retry-after", lifetime: 20) { stack in
            let daemon = try stack.startSignedIn(email: "retry-after@example.com", password: "retry-after-password")
            for value in Self.retryAfters {
                // A new sign-in clears the previous rate limit's backoff, so that the next refresh is tried at once.
                let login = try stack.authctl(["login", "--email", "retry-after@example.com", "--password-stdin"], input: "retry-after-password\n")
                #expect(login.status == 0, "\(value): \(login.stderr)")
                // Once: a fault kept until replaced would have the quick values ("-5", "inf": the
                // usual 1-2 s backoff) retried again and again, and the five values' grants would
                // reach the daemon's limit of 10 a minute. A retry under way reads "refreshing".
                try stack.injectRefreshFault(#"{"status":429,"code":"over_request_rate_limit","retry_after":"\#(value)","count":1}"#)
                let token = try stack.authctl(["token", "--min-valid", "20"])
                #expect(token.status == 0, "\(value): the still-valid token is served: \(token.stderr)")
                #expect(daemon.process.isRunning, "\(value): authd died: \(daemon.stderr.suffix(2000))")
                let status = try stack.statusJSON()
                #expect(["signed_in", "refreshing"].contains(status["state"] as? String ?? ""), "\(value): \(status)")
                let degraded = status["degraded"] as? [String: Any]
                #expect(degraded?["reason"] as? String == "rate_limited", "\(value): \(status)")
                let retryIn = (degraded?["retry_at"] as? Double ?? .infinity) - Date().timeIntervalSince1970
                #expect(retryIn <= 3600 + 60, "\(value): the next try is \(retryIn) s away")
            }
        }
    }

    static let badLifetimes = ["9223372036854775807", "1e400", "0", "-1", "3.5", ""]

    @Test func aRefreshAnsweredWithAnUnusableLifetimeKeepsTheStoredSession() async throws {
        try await Stack.running("refresh-lifetime", lifetime: 20) { stack in
            var daemon = try stack.startSignedIn(email: "refresh-lifetime@example.com", password: "refresh-lifetime-password")
            for raw in Self.badLifetimes {
                // Until cleared, not once: with a 20 s lifetime the token is soon inside its 10 s
                // refresh lead, and on a loaded machine a retry could otherwise succeed before the
                // status below is read (CI once saw that retry under way, 'refreshing').
                try stack.injectRefreshFault(#"{"expires_in":\#(String(reflecting: raw))}"#)
                let token = try stack.authctl(["token", "--min-valid", "20"])
                #expect(token.status == 0, "\(raw): the still-valid token is served: \(token.stderr)")
                #expect(daemon.process.isRunning, "\(raw): authd died: \(daemon.stderr.suffix(2000))")
                let status = try stack.statusJSON()
                #expect(["signed_in", "refreshing"].contains(status["state"] as? String ?? ""), "\(raw): \(status)")
                let degraded = status["degraded"] as? [String: Any] ?? [:]
                #expect(degraded["reason"] as? String == "server_error", "\(raw): \(status)")
                let detail = degraded["detail"] as? String ?? ""
                #expect(detail.contains("expires_in"), "\(raw): \(status)")

                // What the keyring holds is still the session from before: a new daemon reads it and
                // serves it, then refreshes it (the server accepts the parent of its rotated token).
                daemon.stop()
                try stack.clearRefreshFault()
                daemon = try stack.startDaemon()
                let restored = try stack.statusJSON()
                // With a 20 s lifetime the refresh lead is 10 s: on a loaded machine the restored
                // session may already be due, so "refreshing" (still serving it) is as right as "signed_in".
                #expect(["signed_in", "refreshing"].contains(restored["state"] as? String ?? ""), "\(raw): \(restored)")
                #expect((restored["user"] as? [String: Any])?["email"] as? String == "refresh-lifetime@example.com", "\(raw): \(restored)")
                let expiresAt = restored["expires_at"] as? Double ?? .infinity
                #expect(expiresAt <= Date().timeIntervalSince1970 + 20, "\(raw): the stored session lives until \(expiresAt)")
                var recovered = false
                let deadline = Date().addingTimeInterval(20)
                while !recovered, Date() < deadline {
                    recovered = try stack.authctl(["token", "--min-valid", "19"]).status == 0 && stack.statusJSON()["degraded"] == nil
                    if !recovered { usleep(300_000) }
                }
                #expect(recovered, "\(raw): the session did not recover after the fault")
            }
        }
    }

    @Test func aSignInAnsweredWithAnUnusableLifetimeIsRefusedAndNothingIsStored() async throws {
        try await Stack.running("signin-lifetime", lifetime: 3600) { stack in
            try stack.signUp(email: "signin-lifetime@example.com", password: "signin-lifetime-password")
            let daemon = try stack.startDaemon()
            let faults = Self.badLifetimes.map { #"{"grant":"password","expires_in":\#(String(reflecting: $0))}"# }
                + [#"{"grant":"password","status":429,"code":"over_request_rate_limit","retry_after":"inf"}"#]
            for fault in faults {
                try stack.injectRefreshFault(fault)
                let login = try stack.authctl(["login", "--email", "signin-lifetime@example.com", "--password-stdin"], input: "signin-lifetime-password\n")
                #expect(login.status == 6, "\(fault): \(login.status) \(login.stderr)")
                #expect(login.stderr.contains(fault.contains("429") ? "too many attempts" : "expires_in"), "\(fault): \(login.stderr)")
                #expect(daemon.process.isRunning, "\(fault): authd died: \(daemon.stderr.suffix(2000))")
                #expect(try stack.authctl(["status"]).status == 4, "\(fault): signed in after all")
                let stored = try runCommand("/usr/bin/secret-tool", ["lookup", "xdg:schema", "dev.authd.Session", "profile", stack.profile],
                                            environment: stack.environment)
                // Only whether something is there, never its text, which holds tokens.
                let nothingStored = stored.stdout.isEmpty
                #expect(nothingStored, "\(fault): a session was stored in the keyring")
            }
            try stack.clearRefreshFault()
            let login = try stack.authctl(["login", "--email", "signin-lifetime@example.com", "--password-stdin"], input: "signin-lifetime-password\n")
            #expect(login.status == 0, "\(login.stderr)")
        }
    }
}
