import AuthdClient
import AuthTestSupport
import Foundation
import Synchronization
import Testing

/// Signing in with nothing to say how, through the real binaries: `authctl login` opens authd's
/// sign-in page in the browser (a stand-in browser that fills in the page's form as a person
/// would, started as `$BROWSER`), asks on the terminal where no browser can be shown (a real
/// pseudo-terminal), and says what to give where neither can be had; Ctrl-C closes the page; an
/// app's one call (`AuthdClient.signInInteractively`) has the daemon itself open the browser.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct InteractiveSignInTests {
    static let helpers = Binaries.repositoryRoot.appendingPathComponent("Tests/EndToEndTests/Helpers")

    /// `stack`'s environment without a desktop session or a browser of the user's.
    static func withoutDesktop(_ stack: Stack) -> [String: String] {
        var environment = stack.environment
        for name in ["DISPLAY", "WAYLAND_DISPLAY", "BROWSER"] { environment[name] = nil }
        return environment
    }

    /// A `$BROWSER` that signs in on the page with `password` (kept in a file, off every command
    /// line), writing what it saw to `browser.log`.
    static func browser(_ stack: Stack, password: String, extra: String = "") throws -> String {
        let passwordFile = try stack.file("browser-password", contents: password + "\n")
        return try stack.script("browser", """
            exec "\(helpers.appendingPathComponent("sign-in-page-browser.py").path)" "$1" --password-file '\(passwordFile)' \(extra) \
                > '\(stack.directory.appendingPathComponent("browser.log").path)' 2>&1
            """)
    }

    @Test func loginWithNoWayGivenSignsInOnThePageInTheBrowser() async throws {
        try await Stack.running("page-login", lifetime: 3600) { stack in
            let (email, password) = ("page-\(UUID().uuidString.prefix(6).lowercased())@example.com", "page-pw-\(UUID().uuidString)")
            try stack.signUp(email: email, password: password)
            try stack.startDaemon()
            let watcher = try stack.watch(["--json"])
            defer { watcher.stop() }
            #expect(watcher.waitForOutput { $0.contains("INITIAL_SESSION") })
            var environment = Self.withoutDesktop(stack)
            environment["BROWSER"] = try Self.browser(stack, password: password, extra: "--email '\(email)'")

            let login = try stack.authctl(["login", "--json"], environment: environment)
            #expect(login.status == 0, "\(login.stderr) \(stack.file("browser.log"))")
            #expect(login.stderr.contains("Opened your browser to sign in") && login.stderr.contains("/sign-in/open/"))
            #expect(login.stderr.contains("Signed in as \(email)"))
            let status = try JSONSerialization.jsonObject(with: Data(login.stdout.utf8)) as? [String: Any]
            #expect(status?["state"] as? String == "signed_in")
            // The browser shows its last page after the sign-in it made has ended.
            #expect(waitUntil(timeout: 30) { stack.file("browser.log").contains("You are signed in") }, "\(stack.file("browser.log"))")
            #expect(watcher.waitForOutput { $0.contains(#""event":"INTERACTIVE_SIGN_IN_ENDED""#) && $0.contains(#""reason":"signed_in""#) })
            let names = Stack.events(watcher).compactMap { $0["event"] as? String }
            #expect(names.firstIndex(of: "SIGNED_IN").map { $0 < names.firstIndex(of: "INTERACTIVE_SIGN_IN_ENDED")! } == true, "\(names)")
            try stack.expectNoSecretPrinted([password], besides: [watcher])
        }
    }

    @Test func withoutADesktopLoginAsksOnTheTerminalForThePasswordOrACode() async throws {
        try await Stack.running("terminal-login", lifetime: 3600) { stack in
            let (email, password) = ("tty-\(UUID().uuidString.prefix(6).lowercased())@example.com", "tty-pw-\(UUID().uuidString)")
            try stack.signUp(email: email, password: password)
            try stack.startDaemon()
            let passwordFile = try stack.file("typed-password", contents: password + "\n")
            let prompts = Self.helpers.appendingPathComponent("answer-prompts.py").path
            let typed = try runCommand(prompts, ["--answer", "Email: =\(email)", "--answer-file", "Password for \(email)=\(passwordFile)",
                                                 "--", Binaries.path("authctl"), "login"], environment: Self.withoutDesktop(stack))
            #expect(typed.status == 0, "\(typed.stdout)")
            #expect(typed.stdout.contains("Signed in as \(email)"), "\(typed.stdout)")
            #expect(!typed.stdout.contains(password), "the password was echoed")

            // The password left empty: a code by email, typed once it was sent.
            _ = try stack.authctl(["logout"])
            let code = "curl -sS '\(stack.serverURL)/auth/v1/admin/dev/outbox?to=\(email)' | python3 -c 'import json,sys; print([m for m in json.load(sys.stdin)[\"messages\"] if m[\"type\"] == \"magiclink\"][-1][\"code\"])'"
            let coded = try runCommand(prompts, ["--answer", "Email: =\(email)", "--answer", "Password for \(email)=", "--answer-command", "Code: =\(code)",
                                                 "--", Binaries.path("authctl"), "login"], environment: Self.withoutDesktop(stack))
            #expect(coded.status == 0, "\(coded.stdout)")
            #expect(coded.stdout.contains("A code was sent by email to \(email).") && coded.stdout.contains("Signed in as \(email)"), "\(coded.stdout)")
            try stack.expectNoSecretPrinted([password], besides: [])
        }
    }

    @Test func withNeitherADesktopNorATerminalLoginSaysWhatToGive() async throws {
        try await Stack.running("no-way-login", lifetime: 3600) { stack in
            try stack.startDaemon()
            // A session of its own: no controlling terminal, even when the suite runs from one.
            let login = try runCommand("/usr/bin/setsid", ["--wait", Binaries.path("authctl"), "login"], environment: Self.withoutDesktop(stack))
            #expect(login.status == 64, "\(login.stderr)")
            #expect(login.stderr.contains("give --email ADDRESS") && login.stderr.contains("--web"), "\(login.stderr)")
        }
    }

    @Test func ctrlCWhileThePageIsOpenClosesIt() async throws {
        try await Stack.running("page-interrupt", lifetime: 3600) { stack in
            try stack.startDaemon()
            let watcher = try stack.watch(["--json"])
            defer { watcher.stop() }
            #expect(watcher.waitForOutput { $0.contains("INITIAL_SESSION") })
            let login = try Spawned(Binaries.path("authctl"), ["login", "--web", "--no-browser"], environment: Self.withoutDesktop(stack),
                                    in: stack.directory, name: "login-web")
            defer { login.stop() }
            #expect(login.waitForOutput(timeout: 30) { _ in login.stderr.contains("Waiting for you to sign in") }, "\(login.stderr)")
            #expect(login.stderr.contains("To sign in, open this address in a browser on this computer"))
            login.signal(SIGINT)
            #expect(login.waitForExit(timeout: 30) == 130, "\(login.stderr)")
            #expect(login.stderr.contains("authctl: cancelled: the sign-in page is closed"), "\(login.stderr)")
            #expect(watcher.waitForOutput { $0.contains(#""event":"INTERACTIVE_SIGN_IN_ENDED""#) && $0.contains(#""reason":"cancelled""#) })
        }
    }

    @Test func anAppsOneCallHasTheDaemonOpenThePageAndReturnsSignedIn() async throws {
        let stack = try Stack(name: "page-app")
        defer { stack.tearDown() }
        let (email, password) = ("app-\(UUID().uuidString.prefix(6).lowercased())@example.com", "app-pw-\(UUID().uuidString)")
        try await offPool {
            try stack.startDevServer(lifetime: 3600)
            try stack.signUp(email: email, password: password)
            stack.daemonEnvironmentOverrides["BROWSER"] = try Self.browser(stack, password: password, extra: "--email '\(email)'")
            try stack.startDaemon()
        }
        let watcher = try await offPool { try stack.watch(["--json"]) }
        defer { watcher.stop() }
        let client = try await AuthdClient.connect(socketPath: stack.socketPath, clientName: "page-app-test")
        let opened = OpenedPages()
        let status = try await client.signInInteractively(method: "password", email: email, opened: { opened.record($0.browserOpened) })
        #expect(status.state == "signed_in" && status.user?.email == email)
        #expect(opened.seen == [true], "authd itself started the browser")
        // The browser shows its last page after the sign-in it made has ended.
        let shown = try await offPool { waitUntil(timeout: 30) { stack.file("browser.log").contains("You are signed in") } }
        #expect(shown, "\(stack.file("browser.log"))")
        // A page whose browser never comes: the app gives up (its task is cancelled), the page closes.
        let waiting = Task { try await client.signInInteractively(openBrowser: false, opened: { _ in }) }
        waiting.cancel()
        await #expect(throws: AuthdError.self) { try await waiting.value }
        let cancelled = try await offPool {
            watcher.waitForOutput(timeout: 30) { $0.contains(#""event":"INTERACTIVE_SIGN_IN_ENDED""#) && $0.contains(#""reason":"cancelled""#) }
        }
        #expect(cancelled, "\(watcher.stdout)")
        // Asked not to open a browser, with nothing to show the address: refused before a page opens.
        await #expect(throws: AuthdError.self) { try await client.signInInteractively(openBrowser: false) }
        try await offPool { try stack.expectNoSecretPrinted([password], besides: []) }
    }
}

/// Whether each page an app opened came up in a browser, as `opened` saw it.
final class OpenedPages: Sendable {
    private let opened = Mutex<[Bool]>([])
    func record(_ browserOpened: Bool) { opened.withLock { $0.append(browserOpened) } }
    var seen: [Bool] { opened.withLock { $0 } }
}
