import AuthdClient
import AuthTestSupport
import Foundation
import Synchronization
import Testing

/// The Swift client library (`AuthdClient`) against a real authd: tokens, typed errors, and an
/// event subscriber that outlives the daemon.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct ClientLibraryTests {
    @Test func aSubscriberSurvivesADaemonRestartAndSeesTheNextRefresh() async throws {
        let stack = try Stack(name: "lib-restart")
        defer { stack.tearDown() }
        // 20 s tokens refreshed 3 s before expiry: the refresh comes about 17 s after sign-in,
        // well after the restart below, so it is the restarted daemon that makes it.
        let firstDaemon = try await offPool {
            try stack.startDevServer(lifetime: 20)
            return try stack.startSignedIn(email: "lib@example.com", password: "lib-password", daemonArguments: ["--refresh-lead", "3"])
        }
        let client = try await AuthdClient.connect(socketPath: stack.socketPath, clientName: "restart-test")
        let firstToken = try await client.token()
        let events = EventRecorder()
        let subscriber = Task { try await events.record(client.events()) }
        defer { subscriber.cancel() }
        #expect(await events.waitFor { $0.kind == .initialSession })
        // Grants from now on reach the stream; one made before it was subscribed (a run so slow
        // that the first refresh came during the setup) cannot.
        let grantsBefore = try await offPool { try stack.refreshGrants() }

        try await offPool {
            firstDaemon.stop()
            try stack.startDaemon(extra: ["--refresh-lead", "3"])
        }
        // The stream came back on its own, with a fresh snapshot marked as such ...
        #expect(await events.waitFor(timeout: 10) { $0.kind == .initialSession && $0.afterReconnect })
        // ... and the restarted daemon's refresh reaches it.
        #expect(await events.waitFor(timeout: 25) { $0.kind == .tokenRefreshed }, "\(events.names)")
        let refreshed = try #require(events.all.first { $0.kind == .tokenRefreshed })
        // Every grant the server made shows in the stream as a new expiry: as a TOKEN_REFRESHED,
        // or, for one made while the stream was reconnecting (a slow run), in the snapshot that
        // follows the reconnect. Asked this way rather than by counting TOKEN_REFRESHED alone:
        // events missed while disconnected are what `afterReconnect` warns of.
        let grants = try await offPool { try stack.refreshGrants() } - grantsBefore
        #expect(grants >= 1)
        #expect(await events.waitUntil(timeout: 30) { expiries(in: $0).count - 1 >= grants }, "\(grants) grants, \(events.names)")
        // The restart caused no refresh: each new token came when the one before was due, about
        // 17 s later, so it outlives it by about that much (a refresh at the restart would have
        // gained only the second or two the restart took).
        let seen = expiries(in: events.all)
        #expect(seen.first == Int64(firstToken.expiresAt.timeIntervalSince1970), "the first snapshot shows the first token")
        for (earlier, later) in zip(seen, seen.dropFirst()) {
            #expect(later - earlier >= 12, "a refresh gained only \(later - earlier) s: it was not a scheduled one (\(seen))")
        }
        // The request connection broke with the first daemon; the next call reconnects by itself.
        let secondToken = try await client.token()
        #expect(secondToken.value != firstToken.value)
        #expect(Int64(secondToken.expiresAt.timeIntervalSince1970) >= refreshed.status.expiresAt ?? .max)
        #expect(events.names.first == "INITIAL_SESSION")
        #expect(!"\(events.all)".contains(secondToken.value), "an event carried a token")
        #expect(!"\(secondToken)".contains(secondToken.value), "AccessToken's description shows the token")
        try stack.expectNoSecretPrinted([firstToken.value, secondToken.value, "lib-password"], besides: [])
    }

    @Test func socketActivatedTheFirstCallStartsAuthdAndACrashIsBridged() async throws {
        let stack = try Stack(name: "lib-activated")
        defer { stack.tearDown() }
        try await offPool {
            try stack.startDevServer(lifetime: 3600)
            try stack.signUp(email: "act@example.com", password: "act-password")
        }
        let pidFile = stack.directory.appendingPathComponent("authd.pid").path
        // Through bash, which records the unit's pid: as with systemd-socket-activate, Foundation's
        // Process did not reap a direct child that had started children of its own.
        let unitPIDFile = stack.directory.appendingPathComponent("unit.pid").path
        let unit = try Spawned("/bin/bash", ["-c", #"/usr/bin/python3 "$@" & echo $! >"$0"; wait $!"#, unitPIDFile,
                                             Binaries.repositoryRoot.appendingPathComponent("Tests/EndToEndTests/Helpers/socket-unit.py").path,
                                             stack.socketPath, pidFile, Binaries.path("authd"), "--profile", stack.profile,
                                             "--url", stack.serverURL, "--anon-key", "e2e-anon-key", "--log-level", "debug"],
                               environment: stack.environment, in: stack.directory, name: "socket-unit")
        defer {
            for file in [pidFile, unitPIDFile] { if let pid = recordedPID(in: file) { kill(pid, SIGKILL) } }
            unit.stop()
        }
        try await offPool {
            try FileManager.default.createDirectory(atPath: (stack.socketPath as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            guard unit.waitForOutput({ $0.contains("listening") }) else { throw StackError("socket unit did not start: \(unit.stderr)") }
        }
        #expect(recordedPID(in: pidFile) == nil, "authd ran before anyone connected")

        // The library's first connection is what starts authd.
        let client = try await AuthdClient.connect(socketPath: stack.socketPath)
        #expect(client.daemon.capabilities.contains("events"))
        let firstPID = try #require(recordedPID(in: pidFile))
        do { _ = try await client.token(); Issue.record("a token without a session") } catch {
            guard case .notSignedIn(let message) = error else { Issue.record("expected notSignedIn, got \(error)"); return }
            #expect(message.contains("authctl login"))
        }
        let events = EventRecorder()
        let subscriber = Task { try await events.record(client.events()) }
        defer { subscriber.cancel() }
        #expect(await events.waitFor { $0.kind == .initialSession && $0.status.state == "signed_out" })
        let login = try await offPool { try stack.authctl(["login", "--email", "act@example.com", "--password-stdin"], input: "act-password\n") }
        #expect(login.status == 0, "\(login.stderr)")
        #expect(await events.waitFor { $0.kind == .signedIn && $0.status.user?.email == "act@example.com" })
        let token = try await client.token(minValidity: 60)

        // A crash: the socket stays with the unit, the next call starts a new authd and waits for it.
        kill(firstPID, SIGKILL)
        let again = try await client.token()
        #expect(again.value == token.value, "the session was read back from the keyring")
        let secondPID = try #require(recordedPID(in: pidFile))
        #expect(secondPID != firstPID)
        #expect(await events.waitFor(timeout: 10) { $0.kind == .initialSession && $0.afterReconnect && $0.status.state == "signed_in" },
                "\(events.names)")
        try stack.expectNoSecretPrinted([token.value, "act-password"], besides: [unit])
    }

    /// The typed calls for signing in and for the user, against a project with its CAPTCHA on,
    /// asymmetric signing keys and secure password change.
    @Test func typedCallsSignInBehindACaptchaVerifyClaimsAndChangeAPasswordWithACode() async throws {
        let stack = try Stack(name: "lib-typed")
        defer { stack.tearDown() }
        try await offPool {
            try stack.startDevServer(lifetime: 3600, extra: ["--captcha-token", "lib-captcha", "--signing-algorithm", "RS256"])
            try stack.startDaemon()
        }
        let client = try await AuthdClient.connect(socketPath: stack.socketPath)
        let email = "lib-typed@example.com", password = "lib-typed-password", newPassword = "lib-typed-password-2"
        do { _ = try await client.signUp(email: email, password: password); Issue.record("signed up without the CAPTCHA") } catch {
            guard case .signInRefused(let message) = error else { Issue.record("got \(error)"); return }
            #expect(message.contains("--captcha-token-file"))
        }
        let created = try await client.signUp(email: email, password: password, captchaToken: "lib-captcha")
        #expect(created.status.state == "signed_in" && !created.confirmationSent)
        let claims = try await client.claims()
        #expect(claims.verified && claims.algorithm == "RS256" && claims.claims["email"]?.stringValue == email, "\(claims.detail)")

        #expect(try await client.signOut().status.state == "signed_out")
        do { _ = try await client.signIn(email: email, password: password); Issue.record("signed in without the CAPTCHA") } catch {
            guard case .signInRefused = error else { Issue.record("got \(error)"); return }
        }
        #expect(try await client.signIn(email: email, password: password, captchaToken: "lib-captcha").state == "signed_in")

        _ = try await offPool { try stack.devPOST("/auth/v1/admin/dev/settings", #"{"update_password_require_reauthentication":true,"reauthentication_window":0}"#) }
        do { _ = try await client.updateUser(password: newPassword); Issue.record("changed the password without a code") } catch {
            guard case .rejected(let reason, _) = error else { Issue.record("got \(error)"); return }
            #expect(reason == "reauthentication_needed")
        }
        #expect(try await client.reauthenticate() == .init(sentTo: email, channel: "email"))
        let code = try await offPool { try stack.outboxCode(to: email, type: "reauthentication") }
        #expect(try await client.updateUser(password: newPassword, nonce: code).user["email"]?.stringValue == email)
        #expect(try await client.user().user["email"]?.stringValue == email)
        try stack.expectNoSecretPrinted([password, newPassword, code], besides: [])
    }

    @Test func typedCallsForAnonymousUsersIdentitiesSSOAndTakingOverASession() async throws {
        let stack = try Stack(name: "lib-more")
        defer { stack.tearDown() }
        try await offPool {
            try stack.startDevServer(lifetime: 3600)
            try stack.startDaemon()
        }
        let client = try await AuthdClient.connect(socketPath: stack.socketPath)
        let anonymous = try await client.signInAnonymously(data: ["theme": .string("dark")])
        #expect(anonymous.user?.isAnonymous == true)
        #expect(try await client.listIdentities().identities.isEmpty)
        let email = "lib-more-\(UUID().uuidString.prefix(6).lowercased())@example.com"
        _ = try await client.updateUser(email: email)
        #expect(try await client.listIdentities().identities.map(\.provider) == ["email"])

        // SSO: the flow starts in authd; the test is the browser, following the IdP to the loopback address.
        let domain = "lib-\(UUID().uuidString.prefix(6).lowercased()).example"
        _ = try await offPool { try stack.devPOST("/auth/v1/admin/dev/sso", #"{"domains":["\#(domain)"],"email":"grace@\#(domain)"}"#) }
        let redirect = "http://127.0.0.1:9/callback"
        let flow = try await client.beginSingleSignOn(domain: domain, redirectTo: redirect)
        let landed = try await offPool {
            try runCommand("/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{redirect_url}", flow.url], environment: stack.environment).stdout
        }
        #expect(landed.hasPrefix(redirect + "?authd_flow="), "\(landed)")
        let status = try await client.completeBrowserFlow(callbackURL: landed, flowID: flow.flowID)
        #expect(status.user?.email == "grace@\(domain)")

        // A take-over the server refuses changes nothing.
        do { _ = try await client.signIn(refreshToken: "not-a-session-token"); Issue.record("took over a token the server refuses") } catch {
            guard case .signInRefused(let message) = error else { Issue.record("got \(error)"); return }
            #expect(message.contains("does not open a session"))
        }
        #expect(try await client.status().user?.email == "grace@\(domain)", "a refused take-over changes nothing")
    }

    @Test func typedErrorsSayWhatToDo() async throws {
        let stack = try Stack(name: "lib-errors")
        defer { stack.tearDown() }
        // No daemon at all.
        do { _ = try await AuthdClient.connect(socketPath: stack.socketPath); Issue.record("connected to nothing") } catch {
            guard case .daemonUnavailable(let message) = error else { Issue.record("got \(error)"); return }
            #expect(message.contains("systemctl --user enable --now authd.socket"), "\(message)")
        }
        try await offPool {
            try stack.startDevServer(lifetime: 3600)
            try stack.startDaemon()
        }
        do { _ = try await AuthdClient.connect(profile: "nope", socketPath: stack.socketPath); Issue.record("unknown profile accepted") } catch {
            guard case .unknownProfile(let message) = error else { Issue.record("got \(error)"); return }
            #expect(message.contains("authctl profile add nope"), "\(message)")
        }
        let client = try await AuthdClient.connect(profile: stack.profile, socketPath: stack.socketPath)
        #expect(try await client.status().state == "signed_out")
        do { _ = try await client.token(minValidity: 100_000); Issue.record("token without a session") } catch {
            guard case .notSignedIn(let message) = error else { Issue.record("got \(error)"); return }
            #expect(message.contains("authctl login"), "\(message)")
            #expect(!error.isTransient)
        }
    }
}

/// Keeps what an event stream delivered, for a test to wait on.
final class EventRecorder: Sendable {
    private let events = Mutex<[AuthEvent]>([])

    /// Appends every event of `stream` until it ends.
    func record(_ stream: AuthdEventStream) async throws {
        for try await event in stream { events.withLock { $0.append(event) } }
    }

    var all: [AuthEvent] { events.withLock { $0 } }
    var names: [String] { all.map(\.name) }

    /// Waits until an event matching `predicate` has arrived (polling, without blocking a thread).
    func waitFor(timeout: TimeInterval = 10, _ predicate: (AuthEvent) -> Bool) async -> Bool {
        await waitUntil(timeout: timeout) { $0.contains(where: predicate) }
    }

    /// Waits until the events so far satisfy `condition` (polling, without blocking a thread).
    func waitUntil(timeout: TimeInterval = 10, _ condition: ([AuthEvent]) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(all) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition(all)
    }
}

/// The distinct token expiries that `events` showed, in the order they first appeared.
private func expiries(in events: [AuthEvent]) -> [Int64] {
    var seen: [Int64] = []
    for event in events where event.kind == .initialSession || event.kind == .tokenRefreshed {
        if let expiry = event.status.expiresAt, !seen.contains(expiry) { seen.append(expiry) }
    }
    return seen
}
