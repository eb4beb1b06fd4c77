import AuthTestSupport
import Foundation
import Testing

/// The daemon against every fault class the server can produce, injected at the real
/// development server and seen through the real socket.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct FaultTests {
    static let transient: [(fault: String, reason: String)] = [
        (#"{"status":503,"html":true}"#, "server_error"),
        (#"{"status":500,"code":"unexpected_failure"}"#, "server_error"),
        (#"{"status":429,"code":"over_request_rate_limit","retry_after":1}"#, "rate_limited"),
        (#"{"status":409,"code":"conflict"}"#, "server_error"),
        (#"{"status":408,"code":"request_timeout"}"#, "server_error"),
        (#"{"status":403,"code":"bad_jwt"}"#, "server_error"),
        (#"{"drop":true}"#, "offline"),
    ]

    /// One stack per fault, one after the other: each fault costs a forced refresh, its retries
    /// and the recovery, and seven in one minute would meet the daemon's limit of 10 refresh
    /// grants a minute (that limit has its own tests in RefreshStormTests).
    @Test(.serialized, arguments: Self.transient)
    func aTransientFaultKeepsTheSessionServesTheValidTokenAndRecovers(_ fault: String, _ reason: String) async throws {
        // 20 s tokens: long enough that a slow spell of the whole suite on two cores between a
        // refresh and the next request cannot see the still-valid token expire (with 8 s, one
        // CI run did), short enough that the retries after each fault stay quick.
        try await Stack.running("transient", lifetime: 20) { stack in
            try stack.startSignedIn(email: "transient@example.com", password: "transient-password")
            let watcher = try stack.watch(["--json"])
            defer { watcher.stop() }
            #expect(watcher.waitForOutput { $0.contains("INITIAL_SESSION") })

            try stack.injectRefreshFault(fault)
            // Asking for a token that must outlive the current one forces a refresh, which fails:
            // the still-valid token is served anyway.
            let token = try stack.authctl(["token", "--min-valid", "20"])
            #expect(token.status == 0, "\(fault): \(token.stderr)")
            #expect((claims(of: token.stdout.trimmingCharacters(in: .whitespacesAndNewlines))["exp"] as? Double ?? 0) > Date().timeIntervalSince1970)
            let degraded = try stack.statusJSON()
            #expect(degraded["state"] as? String == "signed_in", "\(fault)")
            #expect((degraded["degraded"] as? [String: Any])?["reason"] as? String == reason, "\(fault): \(degraded)")

            try stack.clearRefreshFault()
            var recovered = false
            let deadline = Date().addingTimeInterval(15)
            while !recovered, Date() < deadline {
                usleep(200_000)
                recovered = try stack.statusJSON()["degraded"] == nil
            }
            #expect(recovered, "\(fault): still degraded after the fault cleared")
            #expect(watcher.waitForOutput { $0.contains("TOKEN_REFRESHED") }, "\(fault)")
            let names = Stack.events(watcher).compactMap { $0["event"] as? String }
            #expect(!names.contains("SIGNED_OUT"))
            let reasons = Stack.events(watcher).filter { $0["event"] as? String == "REFRESH_FAILING" }.compactMap { $0["reason"] as? String }
            #expect(Set(reasons) == [reason], "\(fault): \(reasons)")
        }
    }

    static let fatal = ["refresh_token_not_found", "refresh_token_already_used", "session_expired", "session_not_found",
                        "user_banned", "validation_failed", "user_not_found"]

    @Test func everyFatalCodeEndsTheSessionWithThatReasonSeenByASubscriber() async throws {
        try await Stack.running("fatal", lifetime: 3600) { stack in
            try stack.signUp(email: "fatal@example.com", password: "fatal-password")
            try stack.startDaemon()
            let watcher = try stack.watch(["--json"])
            defer { watcher.stop() }
            #expect(watcher.waitForOutput { $0.contains("INITIAL_SESSION") })

            for code in Self.fatal {
                #expect(try stack.authctl(["login", "--email", "fatal@example.com", "--password-stdin"], input: "fatal-password\n").status == 0)
                try stack.injectRefreshFault(#"{"status":400,"code":"\#(code)","message":"session over","count":1}"#)
                let token = try stack.authctl(["token", "--min-valid", "3600"])
                #expect(token.status == 4, "\(code): \(token.stderr)")
                #expect(token.stderr.contains(code))
                let status = try stack.authctl(["status"])
                #expect(status.status == 4)
                #expect(status.stdout.contains("signed out (\(code))"))
            }
            #expect(watcher.waitForOutput { $0.components(separatedBy: "SIGNED_OUT").count - 1 == Self.fatal.count })
            let reasons = Stack.events(watcher).filter { $0["event"] as? String == "SIGNED_OUT" }.compactMap { $0["reason"] as? String }
            #expect(reasons == Self.fatal)
        }
    }

    @Test func aRefreshAnsweredTooLateIsRetriedWithTheSameTokenAndTheSessionSurvives() async throws {
        // The server rotates the token but its answer arrives after the client's 15 s timeout: the
        // rotated token is lost to the daemon, which must present the old one again and be given
        // the rotated session (GoTrue accepts the parent of the active token), never a sign-out.
        try await Stack.running("late-answer", lifetime: 60) { stack in
            try stack.startSignedIn(email: "late-answer@example.com", password: "late-answer-password")
            let watcher = try stack.watch(["--json"])
            defer { watcher.stop() }
            #expect(watcher.waitForOutput { $0.contains("INITIAL_SESSION") })
            let before = try stack.refreshGrants()
            try stack.injectRefreshFault(#"{"delay":17,"count":1}"#)
            let token = try stack.authctl(["token", "--min-valid", "60"])
            #expect(token.status == 0, "the still-valid token is served: \(token.stderr)")
            let degraded = try stack.statusJSON()["degraded"] as? [String: Any]
            #expect(degraded?["reason"] as? String == "offline", "\(String(describing: degraded))")
            #expect(watcher.waitForOutput(timeout: 20) { $0.contains("TOKEN_REFRESHED") })
            #expect(try stack.refreshGrants() == before + 2)
            #expect(try stack.statusJSON()["state"] as? String == "signed_in")
            #expect(!watcher.stdout.contains("SIGNED_OUT"))
        }
    }

    @Test func sessionsRevokedAtTheServerEndWithItsReasonAtTheNextRefresh() async throws {
        try await Stack.running("revoked", lifetime: 3600) { stack in
            try stack.startSignedIn(email: "revoked@example.com", password: "revoked-password")
            let watcher = try stack.watch(["--json"])
            defer { watcher.stop() }
            #expect(watcher.waitForOutput { $0.contains("INITIAL_SESSION") })
            let revoke = try runCommand("/usr/bin/curl", ["-sS", "-X", "POST", "\(stack.serverURL)/auth/v1/admin/dev/revoke",
                                                          "-d", #"{"email":"revoked@example.com"}"#], environment: stack.environment)
            let revoked = (try? JSONSerialization.jsonObject(with: Data(revoke.stdout.utf8)) as? [String: Any])?["revoked_sessions"] as? Int
            #expect((revoked ?? 0) >= 1, "\(revoke.stdout) \(revoke.stderr)")
            // The access token still verifies until it expires; the next refresh learns the truth.
            #expect(try stack.authctl(["token"]).status == 0)
            let token = try stack.authctl(["token", "--min-valid", "3600"])
            #expect(token.status == 4)
            #expect(token.stderr.contains("refresh_token_not_found"), "\(token.stderr)")
            #expect(watcher.waitForOutput { $0.contains("SIGNED_OUT") })
            let reasons = Stack.events(watcher).filter { $0["event"] as? String == "SIGNED_OUT" }.compactMap { $0["reason"] as? String }
            #expect(reasons == ["refresh_token_not_found"])
        }
    }
}
