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
            // with an account of theirs: the code is valid for this flow's PKCE challenge.
            try stack.devPOST("/auth/v1/admin/dev/oauth", #"{"email":"attacker@example.com"}"#)
            #expect(try curl(authorize, asNobody: true).stdout == "403")
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
