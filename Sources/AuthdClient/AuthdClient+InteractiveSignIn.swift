import AuthProtocol
import BlockingCalls
import FoundationEssentials
import Synchronization

/// authd's own sign-in page, for an app without sign-in forms of its own: one call opens it in
/// the user's browser and returns once the user has signed in there (the page offers every way
/// the project allows, and a second factor when the account has one).
extension AuthdClient {
    /// Opens the sign-in page in the user's browser and waits until the user has signed in:
    /// the status then (the session is `SIGNED_IN` on the event stream too). `method` is the form
    /// to show first (`InteractiveSignInMethod.names`), `email` fills in the address; `aal:
    /// "aal2"` has the page offer a second factor to an account that has none. Throws
    /// `.browserSignInFailed` when the page failed, was cancelled, or was left open longer than
    /// it lives. Cancelling the task closes the page. `opened` gets the page before the wait,
    /// and must show or open its address (good once) when `browserOpened` is false: with
    /// `openBrowser: false` (authd then does not start the browser) it is required, and without
    /// it a page authd could not open in a browser is closed at once, rather than left for
    /// nobody, and the call fails.
    public func signInInteractively(method: String? = nil, email: String? = nil, aal: String? = nil, openBrowser: Bool = true,
                                    opened: (@Sendable (Methods.BeginInteractiveSignIn.Result) -> Void)? = nil) async throws(AuthdError) -> SessionStatus {
        guard openBrowser || opened != nil else {
            throw .rejected(reason: nil, message: "signInInteractively(openBrowser: false) needs opened: to show the page's address")
        }
        let page = try await beginInteractiveSignIn(method: method, email: email, aal: aal, openBrowser: openBrowser)
        guard let opened else {
            if page.browserOpened { return try await waitForPage(page) }
            _ = try? await cancelInteractiveSignIn(page.flowID)
            throw .browserSignInFailed("authd could not start a browser on its sign-in page (no display or $BROWSER in its environment): pass opened: to show the page's address, or sign in with 'authctl login --email ADDRESS'")
        }
        opened(page)
        return try await waitForPage(page)
    }

    /// Waits for `page`, and closes it when the wait is given up on.
    private func waitForPage(_ page: Methods.BeginInteractiveSignIn.Result) async throws(AuthdError) -> SessionStatus {
        do {
            return try await waitForInteractiveSignIn(page.flowID)
        } catch {
            // Given up on (the task cancelled, authd gone): the page must not stay open for nobody.
            if Task.isCancelled || error == .timedOut { _ = try? await cancelInteractiveSignIn(page.flowID) }
            throw error
        }
    }

    /// Opens a sign-in page (`session.beginInteractiveSignIn`); wait for it with
    /// `waitForInteractiveSignIn`, close it with `cancelInteractiveSignIn`.
    public func beginInteractiveSignIn(method: String? = nil, email: String? = nil, aal: String? = nil,
                                       openBrowser: Bool = true) async throws(AuthdError) -> Methods.BeginInteractiveSignIn.Result {
        try await call(Methods.BeginInteractiveSignIn.self, .init(profile: profile, method: method, email: email, openBrowser: openBrowser, aal: aal))
    }

    /// Waits until page `flowID`'s sign-in ends: the status once signed in, else the error.
    /// The wait has a connection and a thread of its own, so that the client's other calls
    /// (tokens) go on meanwhile; cancelling the task ends it at once, as `.daemonUnavailable`.
    public func waitForInteractiveSignIn(_ flowID: String) async throws(AuthdError) -> SessionStatus {
        let (greeter, parameters) = (self.greeter, InteractiveSignInParameters(profile: profile, flowID: flowID))
        let wait = InterruptibleWait()
        let lane = BlockingLane(name: "authd-sign-in")
        let result = await withTaskCancellationHandler {
            await lane.run { () -> Result<SessionStatus, AuthdError> in
                Result { () throws(AuthdError) -> SessionStatus in
                    let (connection, _) = try greeter.open()
                    defer {
                        // Ended first, so that a late cancellation shuts down no descriptor that
                        // `close` freed for reuse.
                        wait.end()
                        connection.close()
                    }
                    guard wait.begin(on: connection) else { throw .daemonUnavailable("the wait for the sign-in page was cancelled") }
                    // A page lives ten minutes; a little longer here, for authd to say it expired.
                    return try connection.call(Methods.WaitForInteractiveSignIn.self, parameters, timeout: 630)
                }
            }
        } onCancel: {
            wait.interrupt()
        }
        return try result.get()
    }

    /// Closes page `flowID`, as its "Cancel" does; false when it had ended already.
    @discardableResult
    public func cancelInteractiveSignIn(_ flowID: String) async throws(AuthdError) -> Bool {
        try await call(Methods.CancelInteractiveSignIn.self, .init(profile: profile, flowID: flowID)).cancelled
    }
}

/// A blocking wait on a connection of its own that another thread can end: `interrupt` before
/// the wait has begun makes `begin` refuse, while it waits shuts the connection down, and after
/// `end` does nothing.
private final class InterruptibleWait: Sendable {
    private enum State {
        case idle
        case waiting(AuthdConnection)
        case interrupted
        case ended
    }

    private let state = Mutex(State.idle)

    /// Records `connection` as the one to interrupt; false when interrupted already.
    func begin(on connection: AuthdConnection) -> Bool {
        state.withLock { state in
            guard case .idle = state else { return false }
            state = .waiting(connection)
            return true
        }
    }

    /// Ends the wait: now, or as soon as it begins; nothing once it has ended.
    func interrupt() {
        state.withLock { state in
            switch state {
            case .waiting(let connection):
                connection.interruptForStop()
                state = .interrupted
            case .idle:
                state = .interrupted
            case .interrupted, .ended:
                break
            }
        }
    }

    /// The wait is over, before its connection closes.
    func end() {
        state.withLock { $0 = .ended }
    }
}
