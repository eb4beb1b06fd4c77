import AuthCore
import Synchronization

/// Starts the sign-in chosen on a "sign in again" notice. One that asks the user for something
/// (a password, a code, a second factor, or a way to sign in when nothing tells) opens authd's
/// sign-in page in the user's browser, on the form the account used and with its address filled
/// in, rather than a terminal window; a browser sign-in alone (a provider, SSO) is started by
/// `browserSignIn` (`authctl login --provider`, straight to the provider).
public final class SignInAgainStarter: SignInStarter {
    private let browserSignIn: (any SignInStarter)?
    private let opener: (any BrowserOpener)?
    /// The profile's pages, given by `ProfileServices` once they exist (the session driver,
    /// which holds the notices, is made before them).
    private let pages = Mutex<InteractiveSignIns?>(nil)

    /// A starter opening pages with `opener`, and starting a browser sign-in alone with `browserSignIn`.
    public init(browserSignIn: (any SignInStarter)?, opener: (any BrowserOpener)?) {
        self.browserSignIn = browserSignIn
        self.opener = opener
    }

    /// Opens the sign-ins of the notice on `pages` from now on.
    func serve(_ pages: InteractiveSignIns) {
        self.pages.withLock { $0 = pages }
    }

    /// Whether the page can be opened (a browser to open it in), or the browser sign-in started.
    public func canStart(_ plan: SignInAgainPlan, inTerminal: Bool) -> Bool {
        if plan.opensSignInPage(asks: inTerminal) { return pages.withLock { $0 } != nil && opener?.canOpen == true }
        return browserSignIn?.canStart(plan, inTerminal: inTerminal) ?? false
    }

    /// Opens the page (or starts the browser sign-in) and returns once it has ended.
    public func startSignIn(profile: String, plan: SignInAgainPlan, inTerminal: Bool) async {
        guard plan.opensSignInPage(asks: inTerminal) else {
            await browserSignIn?.startSignIn(profile: profile, plan: plan, inTerminal: inTerminal)
            return
        }
        guard let pages = pages.withLock({ $0 }),
              case .success(let begun) = await pages.begin(plan.signInPageOptions, owner: Self.owner, openBrowser: true) else { return }
        // No browser came up: nobody would see the page.
        guard begun.browserOpened else {
            _ = await pages.cancel(begun.flowID, owner: Self.owner)
            return
        }
        _ = await pages.wait(for: begun.flowID)
    }

    /// The owner of the pages the notice opens, among the profile's.
    static let owner = "sign-in again notice"
}
