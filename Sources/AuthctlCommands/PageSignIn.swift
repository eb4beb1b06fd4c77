import AuthdClient
import AuthProtocol
import FoundationEssentials
import FoundationGaps

/// `authctl login` on authd's own sign-in page: authd serves the page on 127.0.0.1, this side
/// opens it in the browser (as `$BROWSER` or xdg-open would for any link the user clicks) and
/// waits until the user has signed in there. Ctrl-C closes the page.
struct PageSignIn {
    let connection: AuthdConnection
    let profile: String?
    let email: String?
    let method: String?
    let openBrowser: Bool

    /// Opens the page and returns the status once signed in on it.
    func run() throws -> SessionStatus {
        let page = try connection.call(Methods.BeginInteractiveSignIn.self,
                                       .init(profile: profile, method: method, email: email, openBrowser: false), timeout: 60)
        // authd's own page is on this computer, on a port it picked: anything else is not opened.
        guard page.url.hasPrefix("http://127.0.0.1:") else {
            throw Failure("authd answered a sign-in page address that is not on this computer; it was not opened", .browserSignInFailed)
        }
        let interrupt = InterruptCancels(profile: profile, flowID: page.flowID, socketPath: connection.socketPath)
        defer { interrupt.disarm() }
        if openBrowser, BrowserLauncher.open(page.url) {
            note("Opened your browser to sign in. If it did not open, visit this address on this computer:\n  \(page.url)")
        } else {
            note("To sign in, open this address in a browser on this computer:\n  \(page.url)")
        }
        note("Waiting for you to sign in in the browser (up to \(page.expiresIn / 60) minutes; Ctrl-C to cancel)…")
        do {
            return try connection.call(Methods.WaitForInteractiveSignIn.self, .init(profile: profile, flowID: page.flowID),
                                       timeout: TimeInterval(page.expiresIn) + 30)
        } catch {
            // The page was closed for Ctrl-C, which is why the wait ended: said as the shell says it.
            if interrupt.happened { throw Failure("cancelled: the sign-in page is closed", .interrupted) }
            throw error
        }
    }
}
