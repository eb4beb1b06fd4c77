import AuthTestSupport
import Foundation
import Testing

/// The loopback listener of a browser sign-in against login CSRF: its port and the authorize URL
/// (with the PKCE challenge) are in the browser's command line, which every user can read.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct BrowserCallbackTests {
    /// Starts `authctl login --provider github --no-browser` and returns it with the authorize
    /// URL it printed and the `redirect_to` inside that URL.
    private func startLogin(_ stack: Stack, name: String) throws -> (login: Spawned, authorize: String, redirect: URLComponents) {
        let login = try Spawned(Binaries.path("authctl"), ["login", "--provider", "github", "--no-browser", "--timeout", "60"],
                                environment: stack.environment, in: stack.directory, name: name)
        guard login.waitForOutput(timeout: 30, { _ in login.stderr.contains("/authorize?") }) else {
            throw StackError("no authorize URL: \(login.stderr)")
        }
        let authorize = try #require(login.stderr.split(whereSeparator: \.isWhitespace).first { $0.contains("/authorize?") }.map(String.init))
        let redirect = try #require(URLComponents(string: authorize)?.queryItems?.first { $0.name == "redirect_to" }?.value)
        return (login, authorize, try #require(URLComponents(string: redirect)))
    }

    private func curl(_ url: String, asNobody: Bool = false, follow: Bool = true) throws -> Completed {
        let arguments = ["-sS", "-o", "/dev/null", "-w", "%{http_code}"] + (follow ? ["-L"] : []) + [url]
        if asNobody {
            return try runCommand("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/curl"] + arguments,
                                  environment: ["PATH": "/usr/bin:/bin"], timeout: 30)
        }
        return try runCommand("/usr/bin/curl", arguments, environment: ["PATH": "/usr/bin:/bin"], timeout: 30)
    }

    @Test(.enabled(if: getuid() == 0, "needs root to send a callback as another user"))
    func anotherUsersCallbackAndJunkAreRefusedAndTheSignInCompletes() async throws {
        try await Stack.running("csrf", lifetime: 3600) { stack in
            try stack.startDaemon()
            let (login, authorize, redirect) = try startLogin(stack, name: "victim-login")
            defer { login.stop() }
            let flow = try #require(redirect.queryItems?.first { $0.name == "authd_flow" }?.value, "redirect_to carries no binding: \(redirect)")

            // Another user reads the authorize URL from the browser's command line and completes it
            // with an account of theirs: the code is valid for this flow's PKCE challenge. The
            // listener closes that user's connection unread: no HTTP answer at all (curl: an empty
            // reply, or a reset; the last code it prints is the server's redirect to the listener).
            try stack.devPOST("/auth/v1/admin/dev/oauth", #"{"email":"attacker@example.com"}"#)
            let refused = try curl(authorize, asNobody: true)
            #expect([52, 56].contains(refused.status) && refused.stdout.hasPrefix("30"), "\(refused.status) \(refused.stdout) \(refused.stderr)")
            // A junk callback from the user's own processes, without the binding, and an error that
            // names another flow: refused too.
            var junk = redirect
            junk.queryItems = [URLQueryItem(name: "error", value: "access_denied")]
            #expect(try curl(junk.string!).stdout == "403")
            junk.queryItems = [URLQueryItem(name: "error", value: "access_denied"), URLQueryItem(name: "authd_flow", value: "another-flow")]
            #expect(try curl(junk.string!).stdout == "403")
            #expect(login.process.isRunning, "the sign-in ended: \(login.stderr)")

            // The user's own browser completes it, as the user.
            try stack.devPOST("/auth/v1/admin/dev/oauth", #"{"email":"victim@example.com"}"#)
            let completed = try curl(authorize)
            #expect(completed.stdout == "200", "\(completed.stdout) \(completed.stderr) \(login.stderr)")
            #expect(login.waitForExit(timeout: 30) == 0, "\(login.stderr)")
            #expect(login.stderr.contains("Signed in as victim@example.com"), "\(login.stderr)")
            #expect((try stack.statusJSON()["user"] as? [String: Any])?["email"] as? String == "victim@example.com")
            #expect(!flow.isEmpty)
        }
    }

    /// Connects to 127.0.0.1:`argv[1]` and sends a byte every half second for a minute, saying
    /// `connected`, then `closed` when the listener closes the connection.
    private static let trickle = """
        import socket, sys
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
        print("connected", flush=True)
        s.settimeout(0.5)
        try:
            for _ in range(120):
                s.send(b"G")
                try:
                    if s.recv(1) == b"":
                        break
                except socket.timeout:
                    pass
        except OSError:
            pass
        print("closed", flush=True)
        """

    @Test(.enabled(if: getuid() == 0, "needs root to connect as another user"))
    func connectionsThatTrickleHoldUpNoSignIn() async throws {
        try await Stack.running("trickle", lifetime: 3600) { stack in
            try stack.startDaemon()
            let (login, authorize, redirect) = try startLogin(stack, name: "trickled-login")
            defer { login.stop() }
            let port = String(try #require(redirect.port))
            func trickler(_ name: String, asNobody: Bool = false) throws -> Spawned {
                let python = ["/usr/bin/python3", "-c", Self.trickle, port]
                let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
                let command = asNobody ? nobody + python : python
                let spawned = try Spawned(command[0], Array(command.dropFirst()), environment: ["PATH": "/usr/bin:/bin"], in: stack.directory, name: name)
                #expect(spawned.waitForOutput { $0.contains("connected") }, "\(name) did not connect")
                return spawned
            }

            // The listener has waited longer than a connection's deadline before anyone connects,
            // as it does while the user signs in at the provider: the scenario, not a wait for
            // something to happen. A connection's 5 s count from its own accept, not from then.
            Thread.sleep(forTimeInterval: 6)
            // A connection of our own that sends a byte now and then, never a whole request line,
            // has 5 s for it in all, however it trickles; the sign-in waits on.
            let first = try trickler("trickle-own")
            defer { first.stop() }
            let connected = Date()
            #expect(first.waitForOutput(timeout: 15) { $0.contains("closed") }, "a trickling connection is held past its deadline")
            #expect(Date().timeIntervalSince(connected) >= 3, "a connection was closed long before its 5 s were up")
            #expect(login.process.isRunning, "the sign-in ended: \(login.stderr)")

            // Another user's, the same way: closed unread at once. And with another slow one of our
            // own still open, the browser's callback is answered at once.
            let theirs = try trickler("trickle-nobody", asNobody: true)
            defer { theirs.stop() }
            let second = try trickler("trickle-own-again")
            defer { second.stop() }
            #expect(theirs.waitForOutput(timeout: 3) { $0.contains("closed") }, "another user's connection is still open")
            try stack.devPOST("/auth/v1/admin/dev/oauth", #"{"email":"patient@example.com"}"#)
            let started = Date()
            let completed = try runCommand("/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-L", "--max-time", "20", authorize],
                                           environment: ["PATH": "/usr/bin:/bin"], timeout: 30)
            let took = Date().timeIntervalSince(started)
            #expect(completed.stdout == "200", "\(completed.stdout) \(completed.stderr) \(login.stderr)")
            // Well under a trickler's 5 s, and the trickler sends for a minute: the callback was
            // not held up by it (a margin for a loaded machine; about 0.1 s when idle).
            #expect(took < 4, "the callback took \(took) s")
            #expect(login.waitForExit(timeout: 30) == 0, "\(login.stderr)")
            #expect(login.stderr.contains("Signed in as patient@example.com"), "\(login.stderr)")
        }
    }

    @Test func twoConcurrentSignInsNeverTakeEachOthersRedirect() async throws {
        try await Stack.running("crossing", lifetime: 3600) { stack in
            try stack.startDaemon()
            let first = try startLogin(stack, name: "first-login")
            defer { first.login.stop() }
            let second = try startLogin(stack, name: "second-login")
            defer { second.login.stop() }
            #expect(first.redirect.port != second.redirect.port)

            // The second flow's redirect, sent to the first listener: refused there, both wait on.
            try stack.devPOST("/auth/v1/admin/dev/oauth", #"{"email":"second@example.com"}"#)
            let location = try runCommand("/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{redirect_url}", second.authorize],
                                          environment: ["PATH": "/usr/bin:/bin"], timeout: 30).stdout
            var crossed = try #require(URLComponents(string: location))
            crossed.port = first.redirect.port
            #expect(try curl(crossed.string!, follow: false).stdout == "403")
            #expect(first.login.process.isRunning && second.login.process.isRunning)

            // Each completes with its own.
            #expect(try curl(location, follow: false).stdout == "200")
            #expect(second.login.waitForExit(timeout: 30) == 0, "\(second.login.stderr)")
            #expect(second.login.stderr.contains("Signed in as second@example.com"))
            #expect(first.login.process.isRunning)
            try stack.devPOST("/auth/v1/admin/dev/oauth", #"{"email":"first@example.com"}"#)
            #expect(try curl(first.authorize).stdout == "200")
            #expect(first.login.waitForExit(timeout: 30) == 0, "\(first.login.stderr)")
            #expect(first.login.stderr.contains("Signed in as first@example.com"))
        }
    }
}
