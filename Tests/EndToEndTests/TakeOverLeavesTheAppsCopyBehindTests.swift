import AuthTestSupport
import Foundation
import Testing

/// What becomes of an app's copy of a session authd took over (`authctl login --with-session`),
/// with the real daemon, keyring and development server: authd refreshes the session twice, so
/// that the copy is no longer the immediate parent of the current refresh token, which GoTrue
/// would answer with authd's current token however late it came.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct TakeOverLeavesTheAppsCopyBehindTests {
    @Test func theAppsCopyGetsNoTokenOfTheSessionAuthdTookOver() async throws {
        // Hour-long tokens: authd refreshes nothing by itself during the test, so the only
        // refreshes after the exchange are the take-over's own.
        try await Stack.running("take-over-copy", lifetime: 3600) { stack in
            let email = "copy-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let password = "copy-pw-\(UUID().uuidString)"
            try stack.signUp(email: email, password: password)
            let daemon = try stack.startDaemon()
            defer { daemon.stop() }
            // The app's own session, as supabase-js stores it: the whole session object.
            let (stored, appRefreshToken) = try stack.appSession(email: email, password: password)

            let grantsBefore = try stack.refreshGrants()
            let moved = try stack.authctl(["login", "--with-session"], input: stored)
            #expect(moved.status == 0, "\(moved.stderr)")
            #expect(try stack.refreshGrants() == grantsBefore + 2, "exchanged, then refreshed once more at once")
            #expect(moved.stderr.contains("Delete the app's stored copy"), "\(moved.stderr)")

            // authd's session works.
            #expect(try stack.authctl(["token"]).status == 0)
            #expect(try stack.statusJSON()["state"] as? String == "signed_in")

            // The app refreshes with its copy, as it would had it not deleted it. (After a single
            // exchange GoTrue would answer it with authd's current refresh token.)
            let answer = try stack.presentRefreshToken(appRefreshToken)
            #expect(answer.status == 400)
            #expect(answer.body["code"] as? String == "refresh_token_already_used")
            #expect(answer.body["access_token"] == nil && answer.body["refresh_token"] == nil, "no token of authd's session")

            // GoTrue took the copy for a stolen token and ended the whole session, authd's too
            // (what README and authctl(1) warn of): authd learns it on its next refresh, and says why.
            #expect(try stack.refreshGrants() == grantsBefore + 3, "the copy's refresh grant, and no other")
            let after = try stack.authctl(["token", "--min-valid", "3600"])
            #expect(after.status != 0)
            let status = try stack.statusJSON()
            #expect(status["state"] as? String == "signed_out")
            #expect(["refresh_token_not_found", "refresh_token_already_used"].contains(status["sign_out_reason"] as? String ?? ""), "\(status)")
            try stack.expectNoSecretPrinted([appRefreshToken], besides: [daemon])
        }
    }
}

extension Stack {
    /// Presents `refreshToken` to the server's refresh grant with curl, as an app would; the body
    /// goes through curl's standard input, never its command line (readable by every user).
    /// Returns the HTTP status and the JSON object answered.
    func presentRefreshToken(_ refreshToken: String) throws -> (status: Int, body: [String: Any]) {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["refresh_token": refreshToken]), as: UTF8.self)
        let result = try runCommand("/usr/bin/curl", ["-sS", "-w", "\n%{http_code}", "-X", "POST", "\(serverURL)/auth/v1/token?grant_type=refresh_token",
                                                      "-H", "apikey: e2e-anon-key", "-H", "Content-Type: application/json",
                                                      "-H", "X-Supabase-Api-Version: 2024-01-01", "--data-binary", "@-"],
                                    environment: environment, input: body)
        var lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        guard let status = lines.popLast().flatMap({ Int($0) }) else { throw StackError("no answer to the refresh grant: \(result.stderr)") }
        let json = (try? JSONSerialization.jsonObject(with: Data(lines.joined(separator: "\n").utf8))) as? [String: Any] ?? [:]
        return (status, json)
    }
}
