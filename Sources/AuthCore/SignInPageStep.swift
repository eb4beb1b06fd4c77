import FoundationEssentials

/// What a one-time code on the sign-in page is for, which decides how it is verified and sent again.
public enum SignInPageCodePurpose: Sendable, Equatable {
    /// Signing in (`POST /otp`, verified as `email` or `sms`).
    case signIn
    /// Confirming a new account's email address (sent again with `POST /resend`, verified as `signup`).
    case confirmSignUp
    /// Recovering a password (`POST /recover`, verified as `recovery`); a new password follows.
    case recovery
}

/// What the sign-in page shows: one question per screen. Fields are pre-filled with what the
/// user typed before (addresses and domains, never a password or a code).
public enum SignInPageStep: Sendable, Equatable, CustomStringConvertible {
    /// The project's settings are being read.
    case loading
    /// The first page where there is no password form: the buttons (providers, single sign-on,
    /// anonymous sign-in) and the links to the other forms (a code by SMS).
    case methods
    /// Email and password.
    case password(email: String)
    /// The address a one-time code goes to.
    case requestCode(SignInPageChannel, address: String)
    /// The code sent to `address`, with a way to send it again.
    case enterCode(SignInPageChannel, address: String, purpose: SignInPageCodePurpose)
    /// A new account's email and password.
    case signUp(email: String)
    /// The email address a recovery code goes to.
    case forgotPassword(email: String)
    /// The email domain (or address) whose single sign-on to use.
    case singleSignOn(domain: String)
    /// The browser was sent to `url` (the provider, or the SSO identity provider) and the page
    /// waits for it to come back; the page links there in case it did not go.
    case atProvider(SignInPageBrowserTarget, url: URL)
    /// Signed in with a recovery code: the new password.
    case newPassword(SignInPageAccount)
    /// Which of the user's second factors to use.
    case chooseSecondFactor([FactorSummary])
    /// The code of a second factor: from the authenticator app (TOTP) or sent by SMS. While
    /// `enrolling`, the factor is new and is verified for the first time.
    case secondFactorCode(FactorSummary, enrolling: Bool)
    /// An offer to add a second factor: an authenticator app, or a phone number.
    case offerEnrolment
    /// The phone number a new SMS factor sends its codes to (from the offer), pre-filled with
    /// what was typed.
    case enrolPhone(number: String)
    /// A new TOTP factor: what the authenticator app must read (the QR code, the secret), and
    /// its first code. The setup is the one secret the page keeps, because it must show it
    /// until the user has it; it is dropped when the flow leaves this step.
    case enrolTOTP(FactorSummary, setup: TOTPSetup)
    /// The flow has ended.
    case finished(SignInPageEnd)

    /// The step's name and pre-filled fields, never a secret.
    public var description: String {
        switch self {
        case .loading: return "loading"
        case .methods: return "methods"
        case .password: return "password"
        case .requestCode(let channel, _): return "requestCode(\(channel.rawValue))"
        case .enterCode(let channel, _, let purpose): return "enterCode(\(channel.rawValue), \(purpose))"
        case .signUp: return "signUp"
        case .forgotPassword: return "forgotPassword"
        case .singleSignOn: return "singleSignOn"
        case .atProvider(let target, _): return "atProvider(\(target))"
        case .newPassword: return "newPassword"
        case .chooseSecondFactor(let factors): return "chooseSecondFactor(\(factors.count))"
        case .secondFactorCode(let factor, let enrolling): return "secondFactorCode(\(factor.type)\(enrolling ? ", enrolling" : ""))"
        case .offerEnrolment: return "offerEnrolment"
        case .enrolPhone: return "enrolPhone"
        case .enrolTOTP: return "enrolTOTP"
        case .finished(let end): return "finished(\(end))"
        }
    }
}

/// How a sign-in page's flow ended.
public enum SignInPageEnd: Sendable, Equatable, CustomStringConvertible {
    /// Signed in ("Signed in as …; you can close this tab").
    case signedIn(SignInPageAccount)
    /// It cannot go on: the settings could not be read, nothing is offered, or the server ended
    /// the sign-in.
    case failed(SignInPageError)
    /// The user cancelled; `signedInAs` when a session was already signed in (a second factor
    /// or a new password was still to come), which stays as it is.
    case cancelled(signedInAs: SignInPageAccount?)
    /// The page was left longer than `SignInPageFlow.lifetime`.
    case expired

    /// The end's name.
    public var description: String {
        switch self {
        case .signedIn(let account): return "signedIn(\(account.level))"
        case .failed(let error): return "failed(\(error))"
        case .cancelled(let account): return account == nil ? "cancelled" : "cancelled(signedIn)"
        case .expired: return "expired"
        }
    }
}
