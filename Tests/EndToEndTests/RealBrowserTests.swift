import AuthTestSupport
import Foundation
import Testing

/// Debian's Chromium, when installed.
let chromiumPath = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }

/// The browser sign-in once with a real browser: headless Chromium from Debian's packages opens
/// the authorize URL, follows the redirect to authctl's loopback listener and renders its page.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"),
       .enabled(if: chromiumPath != nil, "Chromium is not installed: 'apt-get install chromium' (scripts/install-deps does it for the tests)"))
struct RealBrowserTests {
    @Test func headlessChromiumCompletesTheLoopbackPKCEFlow() async throws {
        try await Stack.running("chromium", lifetime: 3600) { stack in
            try stack.startDaemon()
            let watcher = try stack.watch(["--json"])
            defer { watcher.stop() }
            #expect(watcher.waitForOutput { $0.contains("INITIAL_SESSION") })
            let page = stack.directory.appendingPathComponent("page.html").path
            // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
            let browser = try stack.script("chromium", """
                "\(try #require(chromiumPath))" --headless --no-sandbox --disable-gpu --no-first-run \\
                    --user-data-dir="\(stack.directory.path)/chromium-profile" --dump-dom "$1" > "\(page).part" 2>/dev/null \\
                    && mv "\(page).part" "\(page)"
                """)
            var environment = stack.environment
            environment["BROWSER"] = browser
            try stack.devPOST("/auth/v1/admin/dev/oauth", #"{"email":"chromium-user@example.com"}"#)

            let login = try stack.authctl(["login", "--provider", "google"], timeout: 120, environment: environment)
            #expect(login.status == 0, "\(login.stderr)")
            #expect(login.stderr.contains("Signed in as chromium-user@example.com"))
            #expect(watcher.waitForOutput { $0.contains(#""event":"SIGNED_IN""#) })
            // Chromium exits once the page has loaded; what it rendered is the listener's answer.
            let deadline = Date().addingTimeInterval(30)
            while !FileManager.default.fileExists(atPath: page), Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
            let rendered = (try? String(contentsOfFile: page, encoding: .utf8)) ?? ""
            #expect(rendered.contains("You are signed in as chromium-user@example.com. You can close this tab."), "\(rendered)")
        }
    }
}
