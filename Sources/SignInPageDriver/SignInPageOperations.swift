import AuthCore
import SignInPage

/// The GoTrue calls a sign-in page's flow hands out, carried out for one page: the port by which
/// `SignInPageVisit` reaches the server and the profile's session. The daemon's implementation
/// takes sessions as `authctl login` takes them; a fake in tests.
public protocol SignInPageOperations: Sendable {
    /// Carries out `operation` and says what came of it. A browser sign-in is started with
    /// `returnURL` as its redirect; `returned` is the query the browser came back with
    /// (`completeBrowserSignIn` only). Every call ends, with an outcome, in a bounded time: the
    /// flow waits for it before anything else.
    func perform(_ operation: SignInPageOperation, returnURL: String, returned: SignInPageForm?) async -> SignInPageOutcome
}
