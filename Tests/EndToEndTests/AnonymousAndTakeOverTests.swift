import AuthTestSupport
import Foundation
import Testing

/// An anonymous user kept by giving it an email, and a session an app held taken over by authd,
/// through `authctl`, the real daemon and keyring, and the development server.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct AnonymousAndTakeOverTests {
    @Test func anAnonymousUserIsKeptByGivingItAnEmail() async throws {
        try await Stack.running("anonymous", lifetime: 3600) { stack in
            let daemon = try stack.startDaemon()
            defer { daemon.stop() }
            let login = try stack.authctl(["login", "--anonymous", "--json"])
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stderr.contains("Signed in as anonymous user") && login.stderr.contains("authctl user update --email"))
            let user = try #require(try stack.statusJSON()["user"] as? [String: Any])
            let id = try #require(user["id"] as? String)
            #expect(user["is_anonymous"] as? Bool == true && user["email"] == nil)
            #expect(try Self.claims(stack)["is_anonymous"] as? Bool == true)
            #expect(try stack.authctl(["status"]).stdout.contains("signed in as anonymous user \(id)"))

            // A password alone is refused: GoTrue wants an email or phone with it. Nothing changes.
            let passwordOnly = try stack.authctl(["user", "update", "--password-stdin"], input: "anon-pw-\(UUID().uuidString)\n")
            #expect(passwordOnly.status != 0)
            #expect(passwordOnly.stderr.contains("together with an email address or phone number"))

            // The development server confirms at once (as a project without "Confirm email"):
            // the user is permanent, keeps its id, and authd refreshes for a token that says so.
            let email = "kept-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let grantsBefore = try stack.refreshGrants()
            #expect(try stack.authctl(["user", "update", "--email", email]).status == 0)
            // Answered once the refreshed token is stored (AnonymousConversionTests slows the refresh down).
            #expect(try stack.refreshGrants() > grantsBefore)
            #expect(try Self.claims(stack)["is_anonymous"] as? Bool == false)
            let kept = try #require(try stack.statusJSON()["user"] as? [String: Any])
            #expect(kept["id"] as? String == id && kept["email"] as? String == email && kept["is_anonymous"] == nil)
        }
    }

    @Test func aProjectWithoutAnonymousSignInsRefusesSayingSo() async throws {
        try await Stack.running("anonymous-off", lifetime: 3600) { stack in
            let daemon = try stack.startDaemon()
            defer { daemon.stop() }
            try stack.devPOST("/auth/v1/admin/dev/settings", #"{"anonymous_users":false}"#)
            let refused = try stack.authctl(["login", "--anonymous"])
            #expect(refused.status == 5)
            #expect(refused.stderr.contains("does not allow anonymous sign-ins"))
            #expect(try stack.statusJSON()["state"] as? String == "signed_out")
        }
    }

    @Test func anAppsStoredSessionIsTakenOverAndRefreshedByAuthd() async throws {
        try await Stack.running("take-over", lifetime: 20) { stack in
            let email = "moving-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let password = "moving-pw-\(UUID().uuidString)"
            try stack.signUp(email: email, password: password)
            let daemon = try stack.startDaemon()
            defer { daemon.stop() }
            // The app's own session, as supabase-js stores it: the whole session object.
            let (stored, appRefreshToken) = try stack.appSession(email: email, password: password)

            let grantsBefore = try stack.refreshGrants()
            let moved = try stack.authctl(["login", "--with-session", "--json"], input: stored)
            #expect(moved.status == 0, "\(moved.stderr)")
            #expect(try stack.refreshGrants() == grantsBefore + 2, "the token was exchanged at once, and the session refreshed once more")
            #expect(try stack.statusJSON()["user"].flatMap { ($0 as? [String: Any])?["email"] as? String } == email)
            // (Its access token may equal the app's: same claims, minted in the same second.)
            #expect(try stack.authctl(["token"]).status == 0)

            // authd refreshes the session from now on (20 s tokens).
            let fresh = try stack.authctl(["token", "--min-valid", "20"])
            #expect(fresh.status == 0)
            // At least this refresh (a slow machine may have reached the scheduled one too).
            #expect(try stack.refreshGrants() >= grantsBefore + 3)
            try stack.expectNoSecretPrinted([appRefreshToken], besides: [daemon])
        }
    }

    @Test func aRefusedOrMalformedTokenChangesNothing() async throws {
        try await Stack.running("take-over-refused", lifetime: 3600) { stack in
            let email = "stays-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let daemon = try stack.startSignedIn(email: email, password: "stays-pw-\(UUID().uuidString)")
            defer { daemon.stop() }
            let unknown = "unknown\(UUID().uuidString.prefix(8))"
            let refused = try stack.authctl(["login", "--with-session"], input: unknown + "\n")
            #expect(refused.status == 5)
            #expect(refused.stderr.contains("does not open a session") && !refused.stderr.contains(unknown))
            let empty = try stack.authctl(["login", "--with-session"], input: #"{"access_token":"x"}"#)
            #expect(empty.status == 1 && empty.stderr.contains("no refresh token on standard input"))
            let jwt = try stack.authctl(["login", "--with-session"], input: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln\n")
            #expect(jwt.status == 1 && jwt.stderr.contains("access token (a JWT)"))
            let status = try stack.statusJSON()
            #expect(status["state"] as? String == "signed_in")
            #expect((status["user"] as? [String: Any])?["email"] as? String == email)
        }
    }

    /// The claims of the token authd serves.
    static func claims(_ stack: Stack) throws -> [String: Any] {
        let report = try stack.authctl(["claims", "--json"])
        return ((try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any])?["claims"] as? [String: Any]) ?? [:]
    }
}
