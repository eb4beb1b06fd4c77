import AuthdClient
import AuthProtocol
import Dispatch
import FoundationEssentials
import FoundationGaps
#if canImport(Glibc)
import Glibc
#endif

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
        let cancelOnInterrupt = InterruptCancels(profile: profile, flowID: page.flowID, socketPath: connection.socketPath)
        defer { cancelOnInterrupt.disarm() }
        if openBrowser, BrowserLauncher.open(page.url) {
            note("Opened your browser to sign in. If it did not open, visit this address on this computer:\n  \(page.url)")
        } else {
            note("To sign in, open this address in a browser on this computer:\n  \(page.url)")
        }
        note("Waiting for you to sign in in the browser (up to \(page.expiresIn / 60) minutes; Ctrl-C to cancel)…")
        return try connection.call(Methods.WaitForInteractiveSignIn.self, .init(profile: profile, flowID: page.flowID),
                                   timeout: TimeInterval(page.expiresIn) + 30)
    }
}

/// While a page is open, Ctrl-C (SIGINT) closes it before authctl exits, so that nothing stays
/// open for nobody; then exits 130, as the shell expects of an interrupted command.
private final class InterruptCancels {
    private let source: any DispatchSourceSignal

    init(profile: String?, flowID: String, socketPath: String) {
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler {
            // A connection of its own: the main one is blocked waiting for the page.
            if let connection = try? AuthdConnection.connect(socketPath: socketPath) {
                _ = try? connection.call(Methods.CancelInteractiveSignIn.self, .init(profile: profile, flowID: flowID), timeout: 5)
                connection.close()
            }
            note("\nCancelled: the sign-in page is closed.")
            exit(130)
        }
        source.resume()
    }

    /// Ctrl-C ends authctl as usual again.
    func disarm() {
        source.cancel()
        signal(SIGINT, SIG_DFL)
    }
}
