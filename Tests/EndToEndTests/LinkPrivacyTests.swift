import AuthTestSupport
import Foundation
import Testing

/// Emailed links and app-scheme redirects against the other users of the computer, who can read
/// every command line (`/proc/PID/cmdline`), and against web pages, which can open an app's
/// address with anything in it. Through the real `authctl`, daemon, keyring and development server.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct LinkPrivacyTests {
    /// Starts `authctl login --otp --link` for `email` (back to `redirect`, or to a loopback
    /// listener) and returns it with the email it made the server send.
    private func startLinkLogin(_ stack: Stack, email: String, redirect: String?, after previous: String? = nil,
                                name: String) throws -> (login: Spawned, message: [String: Any]) {
        let login = try Spawned(Binaries.path("authctl"), ["login", "--otp", "--link", "--email", email, "--timeout", "120"]
                                    + (redirect.map { ["--redirect-url", $0] } ?? []),
                                environment: stack.environment, in: stack.directory, name: name)
        var message: [String: Any]?
        let sent = try waitUntil {
            message = try LinksIdentitiesAndSSOTests.linkMessage(stack, to: email)
            return message != nil && message?["token_hash"] as? String != previous
        }
        guard sent, let message else {
            login.stop()
            throw StackError("no new link was sent to \(email): \(login.stderr)")
        }
        return (login, message)
    }

    /// Where the server's link sends the browser, asked with the link on curl's standard input:
    /// as a browser a web mail page runs in has it, on no command line.
    private func redirect(of link: String, _ stack: Stack) throws -> String {
        try runCommand("/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{redirect_url}", "-K", "-"], environment: stack.environment,
                       input: "url = \"\(link)\"\n").stdout
    }

    /// Opens `url` as a browser would, following redirects, with the URL on no command line; the final HTTP status.
    private func open(_ url: String, _ stack: Stack) throws -> String {
        try runCommand("/usr/bin/curl", ["-sSL", "-o", "/dev/null", "-w", "%{http_code}", "-K", "-"], environment: stack.environment,
                       input: "url = \"\(url)\"\n").stdout
    }

    /// Whether `location` is the app's address with a PKCE code (curl writes `myapp://confirm/?code=…`).
    static func carriesCode(_ location: String) -> Bool {
        location.hasPrefix("myapp://confirm") && URLComponents(string: location)?.queryItems?.contains { $0.name == "code" && !($0.value ?? "").isEmpty } == true
    }

    /// `POST /verify` requests the development server answered so far.
    private func verifyPosts(_ stack: Stack) throws -> Int {
        (try stack.devStats()["requests"] as? [String: Int])?["POST /verify"] ?? 0
    }

    /// A fresh address, so that tests running at once never read each other's emails.
    private func newEmail(_ prefix: String) -> String { "\(prefix)-\(UUID().uuidString.prefix(6).lowercased())@example.com" }

    /// A project whose email template links to the app's scheme with `{{ .TokenHash }}`: the
    /// desktop runs `authctl open-url 'myapp://confirm?token_hash=…'`, whose command line every user
    /// can read. authd sends nothing to the server, says what to change in the template, and the
    /// sign-in waits on for the link done right.
    @Test func aTokenHashOnOpenURLsCommandLineIsRefusedUnusedAndTheSignInWaitsOn() async throws {
        try await Stack.running("hash-refused", lifetime: 3600) { stack in
            let email = newEmail("hash")
            try stack.signUp(email: email, password: "hash-pw-\(UUID().uuidString)")
            let daemon = try stack.startDaemon()
            defer { daemon.stop() }
            // Nobody waits: a real link an app's address is handed (by a web page, say) is refused the same way.
            let challenge = String(repeating: "c", count: 43)
            try stack.devPOST("/auth/v1/otp?redirect_to=myapp://confirm", #"{"email":"\#(email)","code_challenge":"\#(challenge)","code_challenge_method":"s256"}"#)
            let unaskedHash = try #require(try LinksIdentitiesAndSSOTests.linkMessage(stack, to: email)?["token_hash"] as? String)
            let unasked = try stack.authctl(["open-url", "myapp://confirm?token_hash=\(unaskedHash)&type=magiclink"])
            #expect(unasked.status == 8 && unasked.stderr.contains("email template"), "\(unasked.stderr)")
            #expect(try verifyPosts(stack) == 0)
            #expect(try stack.statusJSON()["state"] as? String == "signed_out")

            let (waiting, message) = try startLinkLogin(stack, email: email, redirect: "myapp://confirm", after: unaskedHash, name: "login-hash")
            defer { waiting.stop() }
            let hash = try #require(message["token_hash"] as? String)
            let type = try #require(message["type"] as? String)
            let link = try #require(message["link"] as? String)
            let postsBefore = try verifyPosts(stack)

            let handed = try stack.authctl(["open-url", "myapp://confirm?token_hash=\(hash)&type=\(type)"])
            #expect(handed.status == 8, "\(handed.stderr)")
            #expect(handed.stderr.contains("email template") && handed.stderr.contains("{{ .ConfirmationURL }}"), "\(handed.stderr)")
            #expect(handed.stderr.contains("goes on waiting"))
            let hex = hash.replacingOccurrences(of: "pkce_", with: "")
            #expect(!(handed.stdout + handed.stderr).contains(hex), "authctl echoed the token hash")
            #expect(try verifyPosts(stack) == postsBefore, "the token hash was sent to POST /verify")
            #expect(try stack.statusJSON()["state"] as? String == "signed_out")
            #expect(waiting.process.isRunning, "the waiting sign-in ended: \(waiting.stderr)")

            // The server's own link brings a PKCE code to the same address, and that completes it.
            let location = try redirect(of: link, stack)
            #expect(Self.carriesCode(location), "\(location)")
            let completed = try stack.authctl(["open-url", location])
            #expect(completed.status == 0, "\(completed.stderr)")
            #expect(waiting.waitForExit(timeout: 30) == 0, "\(waiting.stderr)")
            #expect(waiting.stderr.contains("Signed in as \(email)"))
            #expect(try verifyPosts(stack) == postsBefore)
            #expect(!(waiting.stderr + daemon.stderr).contains(hex), "the token hash was printed")
        }
    }

    /// A web page opens `myapp://confirm?error=…&error_description=<words of its choosing>`, or
    /// the app's address with a code of its own: nothing ties either to the user's sign-in, so
    /// neither ends it, and the page's words are printed nowhere.
    @Test func anErrorAWebPageSendsToTheAppsAddressEndsNothingAndIsNotShown() async throws {
        try await Stack.running("unbound-error", lifetime: 3600) { stack in
            let email = newEmail("page")
            try stack.signUp(email: email, password: "page-pw-\(UUID().uuidString)")
            let daemon = try stack.startDaemon()
            defer { daemon.stop() }
            let (waiting, message) = try startLinkLogin(stack, email: email, redirect: "myapp://confirm", name: "login-page")
            defer { waiting.stop() }
            let link = try #require(message["link"] as? String)

            let words = "Your account was locked. Call support at 555-0100"
            let escaped = try #require(words.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let page = try stack.authctl(["open-url", "myapp://confirm?error=access_denied&error_code=otp_expired&error_description=\(escaped)"])
            #expect(page.status == 8, "\(page.stderr)")
            #expect(page.stderr.contains("ended nothing"), "\(page.stderr)")
            #expect(!(page.stdout + page.stderr).contains("Call support") && !page.stderr.contains("locked"))
            #expect(waiting.process.isRunning, "the page ended the sign-in: \(waiting.stderr)")
            // A code of the page's own (the server knows no flow for it) ends nothing either.
            let junk = try stack.authctl(["open-url", "myapp://confirm?code=00000000-0000-4000-8000-000000000000"])
            #expect(junk.status == 8, "\(junk.stderr)")
            #expect(waiting.process.isRunning, "a junk code ended the sign-in: \(waiting.stderr)")

            let completed = try stack.authctl(["open-url", try redirect(of: link, stack)])
            #expect(completed.status == 0, "\(completed.stderr)")
            #expect(waiting.waitForExit(timeout: 30) == 0, "\(waiting.stderr)")
            #expect(waiting.stderr.contains("Signed in as \(email)") && !waiting.stderr.contains("Call support"))
            #expect(!daemon.stderr.contains("Call support"))
        }
    }

    /// Another user (uid 65534) reads every command line while three link flows run: the server's
    /// link back to the loopback listener, a template's `token_hash` link back to it, and the
    /// server's link back to an app's scheme (`authctl open-url`, with a PKCE code). None of the
    /// command lines authd, authctl or the desktop's handler have holds a credential: no token
    /// hash, no code from the emails. The links themselves are opened with no command line, as in
    /// a browser already running; a mail program that hands a link to `xdg-open` shows it to all,
    /// which is the email's doing, not authd's.
    @Test(.enabled(if: getuid() == 0, "needs root to watch as another user"))
    func anotherUserWatchingCommandLinesGetsNothingUsableFromTheLinkFlows() async throws {
        try await Stack.running("cmdline-watch", lifetime: 3600) { stack in
            let email = newEmail("watched")
            try stack.signUp(email: email, password: "watched-pw-\(UUID().uuidString)")
            let daemon = try stack.startDaemon()
            defer { daemon.stop() }
            let (root, home) = try nobodysHome("cmdline-watch")
            defer { try? FileManager.default.removeItem(at: root) }
            let seen = home + "/cmdlines"
            // Every distinct command line, as often as Python can sweep /proc.
            let script = """
                import os, signal, sys
                signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
                seen = set()
                with open(sys.argv[1], "ab", buffering=0) as out:
                    out.write(b"watching\\n")
                    while True:
                        for pid in os.listdir("/proc"):
                            if not pid.isdigit():
                                continue
                            try:
                                with open("/proc/" + pid + "/cmdline", "rb") as f:
                                    line = f.read()
                            except OSError:
                                continue
                            if line and line not in seen:
                                seen.add(line)
                                out.write(line.replace(b"\\0", b" ") + b"\\n")
                """
            let watcher = try Spawned("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, seen],
                                      environment: ["PATH": "/usr/bin:/bin"], in: stack.directory, name: "watcher")
            defer { watcher.stop() }
            #expect(try waitUntil { FileManager.default.fileExists(atPath: seen) }, "the watcher did not start: \(watcher.stderr)")
            var messages: [[String: Any]] = []

            // 1. The server's link, back to the loopback listener with a PKCE code.
            let loopback = try startLinkLogin(stack, email: email, redirect: nil, name: "watched-loopback")
            defer { loopback.login.stop() }
            messages.append(loopback.message)
            let loopbackLink = try #require(loopback.message["link"] as? String)
            #expect(try open(loopbackLink, stack) == "200")
            #expect(loopback.login.waitForExit(timeout: 30) == 0, "\(loopback.login.stderr)")
            #expect(try stack.authctl(["logout"]).status == 0)

            // 2. A template linking to the same listener with the token hash: taken there, privately.
            let template = try startLinkLogin(stack, email: email, redirect: nil, after: loopback.message["token_hash"] as? String,
                                              name: "watched-template")
            defer { template.login.stop() }
            messages.append(template.message)
            let templateLink = try #require(template.message["link"] as? String)
            let listener = try #require(URLComponents(string: templateLink)?.queryItems?.first { $0.name == "redirect_to" }?.value)
            let hash = try #require(template.message["token_hash"] as? String)
            let type = try #require(template.message["type"] as? String)
            #expect(try open("\(listener)&token_hash=\(hash)&type=\(type)", stack) == "200")
            #expect(template.login.waitForExit(timeout: 30) == 0, "\(template.login.stderr)")
            #expect(try stack.authctl(["logout"]).status == 0)

            // 3. The server's link back to an app's scheme: the desktop runs open-url with the code.
            let scheme = try startLinkLogin(stack, email: email, redirect: "myapp://confirm", after: hash, name: "watched-scheme")
            defer { scheme.login.stop() }
            messages.append(scheme.message)
            let schemeLink = try #require(scheme.message["link"] as? String)
            let location = try redirect(of: schemeLink, stack)
            #expect(Self.carriesCode(location), "\(location)")
            #expect(try stack.authctl(["open-url", location]).status == 0)
            #expect(scheme.login.waitForExit(timeout: 30) == 0, "\(scheme.login.stderr)")
            #expect((try stack.statusJSON()["user"] as? [String: Any])?["email"] as? String == email)

            // The watcher is quick enough to catch an open-url: a made-up hash (which the server
            // would not take) handed over until the watcher has seen it.
            let control = "pkce_control\(UUID().uuidString.prefix(8).lowercased())"
            #expect(try waitUntil {
                _ = try stack.authctl(["open-url", "myapp://confirm?token_hash=\(control)&type=magiclink"])
                return ((try? String(contentsOfFile: seen, encoding: .utf8)) ?? "").contains(control)
            }, "the watcher never caught an open-url command line")
            watcher.stop()
            let lines = ((try? String(contentsOfFile: seen, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            // The watcher saw the user's processes at all (no hidepid): the waiting sign-ins.
            try #require(lines.contains { $0.contains("login --otp --link --email \(email)") }, "the watcher saw none of the sign-ins: \(lines.count) lines")
            let credentials = messages.flatMap { message in
                [message["token_hash"] as? String, (message["token_hash"] as? String)?.replacingOccurrences(of: "pkce_", with: ""),
                 message["code"] as? String].compactMap { $0 }.filter { !$0.isEmpty }
            }
            #expect(credentials.count == 9)
            // The watcher sees the whole computer, other tests too (one hands a template's token
            // hash to open-url on purpose): what counts is this test's flows' credentials.
            SecretScan.record(secrets: credentials)
            for line in lines {
                let arguments = line.split(separator: " ").map(String.init)
                for credential in credentials {
                    #expect(!line.contains(credential) || (credential.count < 8 && !arguments.contains(credential)),
                            "a credential from an email is on a command line another user read (\(arguments.first ?? "?"))")
                }
            }
        }
    }
}
