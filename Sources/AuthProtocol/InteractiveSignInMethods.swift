import FoundationEssentials

/// authd's own sign-in page: an app that has no sign-in forms of its own asks authd to open one
/// in the user's browser, and learns how it ended. The page offers every way the project allows;
/// its session becomes the profile's, announced as any sign-in is (`SIGNED_IN`), and every end of
/// a page is announced too (`INTERACTIVE_SIGN_IN_ENDED`).
extension Methods {
    /// `session.beginInteractiveSignIn`: serve a sign-in page on 127.0.0.1 and open it in the
    /// user's browser. The answer names the page (`flow_id`) for `session.waitForInteractiveSignIn`
    /// and `session.cancelInteractiveSignIn`.
    public enum BeginInteractiveSignIn: RPCMethod {
        public static let name = "session.beginInteractiveSignIn"
        /// What the page opens with.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// The form to show first, when the project offers it (`InteractiveSignInMethod`);
            /// else the page's own first form.
            public var method: String?
            /// The email address to fill in (the account signing in again); never required.
            public var email: String?
            /// Whether authd opens the browser (the default). `false`: the caller opens `url`
            /// itself (a sandboxed app through its portal, a terminal that prints it).
            public var openBrowser: Bool?
            /// `aal2` for an app that needs a session raised with a second factor: the page then
            /// offers to add one to an account that has none (an account that has one is always
            /// asked for it). `aal1`, or absent, offers nothing more.
            public var aal: String?
            /// Creates parameters.
            public init(profile: String? = nil, method: String? = nil, email: String? = nil, openBrowser: Bool? = nil, aal: String? = nil) {
                self.profile = profile
                self.method = method
                self.email = email
                self.openBrowser = openBrowser
                self.aal = aal
            }
            enum CodingKeys: String, CodingKey { case profile, method, email, openBrowser = "open_browser", aal }
        }
        /// The page.
        public struct Result: Codable, Sendable, Equatable {
            /// Names the page in `session.waitForInteractiveSignIn` and `session.cancelInteractiveSignIn`,
            /// and in its `INTERACTIVE_SIGN_IN_ENDED` event. Not a secret.
            public var flowID: String
            /// The address that opens the page: good once, in one browser. Hand it to nobody
            /// but the user's browser.
            public var url: String
            /// Seconds the page stays open unless it ends first.
            public var expiresIn: Int
            /// Whether authd started the user's browser on `url` (false when asked not to, or
            /// when no browser could be started: then show or open the address yourself).
            public var browserOpened: Bool
            /// Creates a result.
            public init(flowID: String, url: String, expiresIn: Int, browserOpened: Bool) {
                self.flowID = flowID
                self.url = url
                self.expiresIn = expiresIn
                self.browserOpened = browserOpened
            }
            enum CodingKeys: String, CodingKey { case flowID = "flow_id", url, expiresIn = "expires_in", browserOpened = "browser_opened" }
        }
    }

    /// `session.waitForInteractiveSignIn`: wait until the page's sign-in ends. Answers the
    /// status once signed in; an error once it failed (`sign_in_failed`), was cancelled
    /// (`sign_in_cancelled`) or was left open too long (`flow_expired`). Answers at once when it
    /// has ended already.
    public enum WaitForInteractiveSignIn: RPCMethod {
        public static let name = "session.waitForInteractiveSignIn"
        public typealias Parameters = InteractiveSignInParameters
        public typealias Result = SessionStatus
    }

    /// `session.cancelInteractiveSignIn`: close the page (what its "Cancel" does). A sign-in
    /// call already out is waited for first; a session it signed in stays. Only the app that
    /// opened the page may close it.
    public enum CancelInteractiveSignIn: RPCMethod {
        public static let name = "session.cancelInteractiveSignIn"
        public typealias Parameters = InteractiveSignInParameters
        /// Whether a page was open to cancel.
        public struct Result: Codable, Sendable, Equatable {
            /// False when the page had ended already, was another app's, or never was.
            public var cancelled: Bool
            /// Creates a result.
            public init(cancelled: Bool) { self.cancelled = cancelled }
        }
    }
}

/// The parameters naming one sign-in page.
public struct InteractiveSignInParameters: Codable, Sendable, Equatable {
    /// The profile; the default one when absent.
    public var profile: String?
    /// The page, as `session.beginInteractiveSignIn` answered.
    public var flowID: String
    /// Creates parameters.
    public init(profile: String? = nil, flowID: String) {
        self.profile = profile
        self.flowID = flowID
    }
    enum CodingKeys: String, CodingKey { case profile, flowID = "flow_id" }
}

/// The forms `session.beginInteractiveSignIn` can open the page on (`method`), by their wire
/// names: AuthCore's `SignInPageMethod` names them the same (a test keeps the two equal).
public enum InteractiveSignInMethod {
    /// Every name `method` takes.
    public static let names = ["password", "email_code", "phone_code", "sign_up", "forgot_password", "sso"]
}

/// How a sign-in page ended, as `INTERACTIVE_SIGN_IN_ENDED` says in its `reason`.
public enum InteractiveSignInEnd {
    /// Signed in (`SIGNED_IN` came first).
    public static let signedIn = "signed_in"
    /// The user cancelled on the page, or an app did (`session.cancelInteractiveSignIn`).
    public static let cancelled = "cancelled"
    /// Left open longer than the page lives.
    public static let expired = "expired"
    /// It could not go on; `message` says why, in plain words.
    public static let failed = "failed"
}

extension AuthEventName {
    /// A sign-in page ended: `flow_id` names it, `reason` says how (`InteractiveSignInEnd`), and
    /// `message` why it failed.
    public static let interactiveSignInEnded: AuthEventName = "INTERACTIVE_SIGN_IN_ENDED"
}
