import AuthTestSupport
import Foundation
import Testing

/// The "sign in again" notice through the real daemon: a session the server revoked brings a
/// desktop notification (to a stand-in notification server on a D-Bus of the daemon's own), its
/// "Sign in" action runs `authctl login` in a terminal (a stand-in running it on a real
/// pseudo-terminal, where the user types the password), and a notice answered by signing in
/// some other way is withdrawn.
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

        // "Sign in": authctl login runs in the terminal, where the password is typed.
        notifications.click("sign-in", on: shown.id)
        let signedIn = try await offPool {
            waitUntil(timeout: 30) { (try? stack.statusJSON())?["state"] as? String == "signed_in" }
        }
        #expect(signedIn, "\(started.terminalLog())")
        #expect(started.terminalLog().contains("Signed in as \(email)"))

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
    /// by no other test's daemon; `x-terminal-emulator` on its PATH is the terminal stand-in.
    static func startOnABusOfItsOwn(_ stack: Stack, email: String, password: String) throws -> (busAddress: String, pid: Int32, terminalLog: @Sendable () -> String) {
        try stack.startDevServer(lifetime: 3600)
        try stack.signUp(email: email, password: password)
        let bin = stack.directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let passwordFile = try stack.file("typed-password", contents: password + "\n")
        let log = stack.directory.appendingPathComponent("terminal.log").path
        // Quotes each argument for script(1)'s -c, then types the password on the pseudo-terminal.
        let terminal = try stack.script("x-terminal-emulator", """
            [ "$1" = -e ] && shift
            quoted=""
            for argument in "$@"; do quoted="$quoted '$(printf %s "$argument" | sed "s/'/'\\\\\\\\''/g")'"; done
            (sleep 1; cat '\(passwordFile)'; sleep 1; echo) | script -qec "$quoted" /dev/null >> '\(log)' 2>&1
            """)
        try FileManager.default.moveItem(atPath: terminal, toPath: bin.appendingPathComponent("x-terminal-emulator").path)
        let busFile = stack.directory.appendingPathComponent("bus").path
        let pidFile = stack.directory.appendingPathComponent("authd.pid").path
        var environment = stack.environment
        environment["PATH"] = bin.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        // A desktop's display (nothing opens on it: the terminal stand-in needs none).
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
