import FoundationEssentials

/// A form the user posted on the sign-in page, as the driver read it. Passwords and codes pass
/// through the flow into the operation it hands out and are kept nowhere; the description and
/// the mirror name the action only.
public enum SignInPageAction: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    /// Show the form of `method` (a method with a form; buttons have actions of their own).
    case choose(SignInPageMethod)
    /// Back to the first page, which lists every way the project offers ("Sign in another way").
    case chooseAnother
    /// Sign in with email and password.
    case signInWithPassword(email: String, password: String)
    /// Send a one-time code to this address (email or phone, as the step asks).
    case requestCode(address: String)
    /// The one-time code that was sent.
    case submitCode(String)
    /// Send the code again (the step's address and purpose).
    case sendCodeAgain
    /// Create an account.
    case signUp(email: String, password: String)
    /// Send a password recovery code to this address.
    case forgotPassword(email: String)
    /// The new password, after a recovery code signed in.
    case setNewPassword(String)
    /// Sign in at this OAuth provider in the browser.
    case continueWithProvider(String)
    /// Sign in through the single sign-on of this email domain (or of an address's domain).
    case continueWithSingleSignOn(domain: String)
    /// Sign in as a new anonymous user.
    case signInAnonymously
    /// Use the second factor with this id: from the list, or from a factor's code field (to
    /// use another one, or to have an SMS factor's code sent again).
    case chooseFactor(id: String)
    /// The code of the second factor.
    case submitSecondFactorCode(String)
    /// Add a second factor: an authenticator app (`totp`), or a phone (`phone` with `number`).
    case enrol(FactorKind, phone: String?)
    /// From the offer to add a second factor: ask for the phone number to add.
    case addPhoneFactor
    /// From a second factor's code: back to the list of the user's factors, to use another.
    case chooseAnotherFactor
    /// Go on without adding a second factor.
    case skipEnrolment
    /// Stop here.
    case cancel

    /// The action's name, never what was typed into it.
    public var description: String {
        switch self {
        case .choose(let method): return "choose(\(method))"
        case .chooseAnother: return "chooseAnother"
        case .signInWithPassword: return "signInWithPassword"
        case .requestCode: return "requestCode"
        case .submitCode: return "submitCode"
        case .sendCodeAgain: return "sendCodeAgain"
        case .signUp: return "signUp"
        case .forgotPassword: return "forgotPassword"
        case .setNewPassword: return "setNewPassword"
        case .continueWithProvider(let provider): return "continueWithProvider(\(provider.prefix(64)))"
        case .continueWithSingleSignOn: return "continueWithSingleSignOn"
        case .signInAnonymously: return "signInAnonymously"
        case .chooseFactor: return "chooseFactor"
        case .submitSecondFactorCode: return "submitSecondFactorCode"
        case .enrol(let kind, _): return "enrol(\(kind.rawValue))"
        case .addPhoneFactor: return "addPhoneFactor"
        case .chooseAnotherFactor: return "chooseAnotherFactor"
        case .skipEnrolment: return "skipEnrolment"
        case .cancel: return "cancel"
        }
    }

    /// No children: `dump` shows the description only.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
