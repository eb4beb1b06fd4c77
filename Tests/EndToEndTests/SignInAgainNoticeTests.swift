import AuthTestSupport
import Foundation
import Testing

/// The "sign in again" notice through the real daemon: a session the server revoked brings a
/// desktop notification (to a stand-in notification server on a D-Bus of the daemon's own), its
/// "Sign in" action opens authd's sign-in page in the browser (a stand-in browser, started as
/// the daemon's `$BROWSER`, where the user types the password into the form the page opened on,
/// its address filled in), and a notice answered by signing in some other way is withdrawn.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct SignInAgainNoticeTests {
    @Test func aRevokedSessionIsToldOnTheDesktopAndSignsInAgainFromTheNotice() async throws {
        let stack = try Stack(name: "notice")
        defer { stack.tearDown() }
        let email = "notice-\(UUID().uuidString.prefix(6).lowercased())@example.com"
        let password = "notice-pw-\(UUID().uuidString)"
        let started = try await offPool { try Self.startOnABusOfItsOwn(stack, email: email, password: password) }
        defer { kill(started.pid, SIGTERM) }
        let notifications = try FakeNotificationService(address: started.busAddress, reaction: .ignore)
        defer { notifications.stop() }

        // Signed in, then revoked at the server: the next refresh finds the session gone.
        try await offPool {
            let login = try stack.authctl(["login", "--email", email, "--password-stdin"], input: password + "\n")
            guard login.status == 0 else { throw StackError("login failed: \(login.stderr)") }
            try stack.devPOST("/auth/v1/admin/dev/revoke", #"{"email":"\#(email)"}"#)
            _ = try stack.authctl(["token", "--min-valid", "3600"])
        }
        #expect(await notifications.wait { $0.shown.count == 1 })
        let shown = try #require(notifications.shown.first)
        #expect(shown.summary == "Sign in again to '\(stack.profile)'" && shown.actions == ["sign-in", "Sign in"])
        #expect(shown.body.contains("(refresh_token_not_found)") && shown.body.contains("authctl login --profile \(stack.profile) --email \(email)"))

        // "Sign in": the page opens in the browser, on the password form with the address in it.
        notifications.click("sign-in", on: shown.id)
        let signedIn = try await offPool {
            waitUntil(timeout: 30) { (try? stack.statusJSON())?["state"] as? String == "signed_in" }
        }
        #expect(signedIn, "\(started.browserLog())")
        // The browser shows its last page after the sign-in it made has ended.
        let pageShown = try await offPool { waitUntil(timeout: 30) { started.browserLog().contains("You are signed in") } }
        #expect(pageShown, "\(started.browserLog())")

        // Revoked again; this time the user signs in from a terminal of their own: the notice goes.
        try await offPool {
            try stack.devPOST("/auth/v1/admin/dev/revoke", #"{"email":"\#(email)"}"#)
            _ = try stack.authctl(["token", "--min-valid", "3600"])
        }
        #expect(await notifications.wait { $0.shown.count == 2 })
        let second = try #require(notifications.shown.last)
        try await offPool {
            let login = try stack.authctl(["login", "--email", email, "--password-stdin"], input: password + "\n")
            guard login.status == 0 else { throw StackError("login failed: \(login.stderr)") }
        }
        #expect(await notifications.wait { $0.withdrawn.contains(second.id) })
        try stack.expectNoSecretPrinted([password], besides: [])
    }

    /// authd for `stack`'s profile on a private D-Bus of its own (with its own keyring, by
    /// `scripts/with-private-keyring`), so that the stand-in notification server there is seen
    /// by no other test's daemon; its `$BROWSER` is the stand-in browser, which types the
    /// password into the page's password form only if the page filled in `email` there.
    static func startOnABusOfItsOwn(_ stack: Stack, email: String, password: String) throws -> (busAddress: String, pid: Int32, browserLog: @Sendable () -> String) {
        try stack.startDevServer(lifetime: 3600)
        try stack.signUp(email: email, password: password)
        let passwordFile = try stack.file("typed-password", contents: password + "\n")
        let log = stack.directory.appendingPathComponent("browser.log").path
        let browser = try stack.script("browser", """
            exec "\(Binaries.repositoryRoot.appendingPathComponent("Tests/EndToEndTests/Helpers/sign-in-page-browser.py").path)" "$1" \\
                --password-file '\(passwordFile)' --expect-email '\(email)' > '\(log)' 2>&1
            """)
        let busFile = stack.directory.appendingPathComponent("bus").path
        let pidFile = stack.directory.appendingPathComponent("authd.pid").path
        var environment = stack.environment
        environment["BROWSER"] = browser
        // A desktop's display (nothing opens on it: the stand-in browser needs none).
        environment["DISPLAY"] = ":99"
        environment["AUTHD_PRIVATE_BUS_STARTED"] = nil
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        let inner = #"echo "$DBUS_SESSION_BUS_ADDRESS" > "$1"; echo $$ > "$2"; shift 2; exec "$@""#
        _ = try Spawned(Binaries.repositoryRoot.appendingPathComponent("scripts/with-private-keyring").path,
                        ["/bin/sh", "-c", inner, "sh", busFile, pidFile, Binaries.path("authd"), "--profile", stack.profile, "--url", stack.serverURL,
                         "--anon-key", "e2e-anon-key", "--log-level", "debug"],
                        environment: environment, in: stack.directory, name: "authd-own-bus")
        guard waitUntil(timeout: 30, { (try? String(contentsOfFile: pidFile, encoding: .utf8)) != nil && (try? stack.authctl(["status"]))?.status == 4 }),
              let address = try? String(contentsOfFile: busFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), !address.isEmpty,
              let pid = Int32((try? String(contentsOfFile: pidFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") else {
            throw StackError("authd did not start on its own bus")
        }
        return (address, pid, { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" })
    }
}
