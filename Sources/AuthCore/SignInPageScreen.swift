import FoundationEssentials

/// What the sign-in page shows at a moment (`SignInPageFlow.view(now:)`): the step, its inline
/// error, the methods offered. The renderer's own view model is made from it, with what only
/// the page knows (the project's name, the forms' addresses).
public struct SignInPageScreen: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    /// The form (or the end) to show.
    public var step: SignInPageStep
    /// The inline error, if any.
    public var error: SignInPageError?
    /// The error in plain words, any wait counted from the time of the view.
    public var errorMessage: String?
    /// The sign-in methods the project enables, in the order to list them.
    public var methods: [SignInPageMethod]
    /// Whether an operation is still out (another tab's submit): the page says to wait.
    public var isBusy: Bool
    /// The account signed in so far (before a second factor, a new password or the offer to
    /// add a factor), if any: whom the page names, and which factors it can offer.
    public var account: SignInPageAccount?
    /// Whether to say that this project asks for a CAPTCHA, which the page does not support.
    public var captchaUnsupported: Bool
    /// When the page stops working.
    public var expiresAt: Date
    /// The project's settings once read, for what the forms may say besides (whether a new
    /// account's address is confirmed by email first: `emailAutoconfirm`).
    public var settings: ProjectSettings?

    /// A screen of `step`; what `SignInPageFlow.view(now:)` makes, and tests of what shows it.
    public init(step: SignInPageStep, error: SignInPageError? = nil, errorMessage: String? = nil, methods: [SignInPageMethod] = [],
                isBusy: Bool = false, account: SignInPageAccount? = nil, captchaUnsupported: Bool = false, expiresAt: Date,
                settings: ProjectSettings? = nil) {
        self.step = step
        self.error = error
        self.errorMessage = errorMessage
        self.methods = methods
        self.isBusy = isBusy
        self.account = account
        self.captchaUnsupported = captchaUnsupported
        self.expiresAt = expiresAt
        self.settings = settings
    }

    /// The step's name, the error's and whether an operation is out: never the TOTP setup an
    /// enrolment step shows.
    public var description: String {
        "SignInPageScreen(step: \(step), error: \(error.map(String.init(describing:)) ?? "none"), busy: \(isBusy))"
    }

    /// Only what `description` shows, so that `dump` shows no secret either.
    public var customMirror: Mirror {
        Mirror(self, children: ["step": step.description, "error": error.map(String.init(describing:)) ?? "none", "busy": isBusy])
    }
}
