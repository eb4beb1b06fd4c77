import FoundationEssentials

/// A field of the sign-in page's forms, which an error is shown next to.
public enum SignInPageField: String, Sendable, Equatable {
    /// An email address.
    case email
    /// A phone number.
    case phone
    /// A password (also a new account's).
    case password
    /// A one-time code or a second factor's code.
    case code
    /// The new password after a recovery code.
    case newPassword
    /// The single sign-on domain.
    case domain
}

/// An error the sign-in page shows inline, in plain words (`message(now:)`), next to the field
/// it concerns (`field`). Made from a refused form or a failed GoTrue call: it quotes the server
/// only where its words say what to change (a weak password), and never a password or code.
public enum SignInPageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The field was left empty.
    case missing(SignInPageField)
    /// The field does not hold what it asks for (not an email address, not a phone number).
    case malformed(SignInPageField)
    /// Wrong email or password.
    case wrongPassword
    /// The address has not been confirmed yet.
    case notConfirmed(SignInPageChannel)
    /// The one-time code is wrong, expired or used.
    case wrongCode
    /// The second factor's code is wrong.
    case wrongSecondFactorCode
    /// The second factor's challenge expired before the code came; a new one was made (and,
    /// for an SMS factor, a new code sent).
    case secondFactorCodeExpired
    /// Too many attempts; `retryAt` when the server said how long to wait.
    case rateLimited(retryAt: Date?)
    /// A code went to the address moments ago; another can be sent from `retryAt`.
    case codeSentRecently(retryAt: Date?)
    /// The project may send no more emails (or texts) for now, and none was sent; `retryAt`
    /// when the server said how long to wait.
    case cannotSendNow(SignInPageChannel, retryAt: Date?)
    /// The server finds the password too weak; `detail` is its explanation.
    case weakPassword(detail: String)
    /// The new password is the current one.
    case samePassword
    /// An account with that address exists already.
    case accountExists
    /// The project does not take new accounts.
    case signUpsDisabled
    /// The project does not allow this way of signing in.
    case methodDisabled
    /// The project does not allow this kind of second factor.
    case factorNotAvailable
    /// The project's email service sends only to its own team's addresses (a hosted project
    /// without its own SMTP), and this is not one.
    case addressNotAuthorized
    /// The account is blocked (banned) for now.
    case accountBlocked
    /// The account has as many second factors as the project allows (unverified ones count
    /// for a day).
    case tooManyFactors
    /// The project protects this with a CAPTCHA, which this page does not support.
    case captchaRequired
    /// No single sign-on is set up for that domain.
    case unknownSingleSignOnDomain
    /// The sign-in was cancelled or denied at the provider.
    case browserCancelled
    /// The browser sign-in failed; `detail` says how.
    case browserFailed(detail: String)
    /// The server cannot be reached.
    case unreachable
    /// The server failed, or answered something unreadable.
    case serverFailed
    /// authd did not make the call this time (the session was busy); trying again may work.
    case interrupted
    /// The server refused with words of its own (`message`, its `code`).
    case refused(message: String, code: String?)
    /// The project's check refused the second factor, and the server signed the user out everywhere.
    case secondFactorRejected
    /// The page's session was signed out or replaced meanwhile.
    case sessionEnded
    /// The project enables no sign-in method the page can offer.
    case nothingOffered

    /// The field the error belongs next to; nil for the whole form.
    public var field: SignInPageField? {
        switch self {
        case .missing(let field), .malformed(let field): return field
        case .wrongPassword, .weakPassword, .samePassword: return .password
        case .wrongCode, .wrongSecondFactorCode, .secondFactorCodeExpired: return .code
        case .unknownSingleSignOnDomain: return .domain
        case .accountExists: return .email
        default: return nil
        }
    }

    /// The error in plain words; a wait is counted from `now`.
    public func message(now: Date) -> String {
        switch self {
        case .missing(let field): return "Enter \(Self.name(of: field))."
        case .malformed(.email): return "That is not an email address."
        case .malformed(.phone): return "Enter the phone number with its country code, like +15551234567."
        case .malformed(let field): return "Check \(Self.name(of: field))."
        case .wrongPassword: return "Wrong email or password."
        case .notConfirmed(.email): return "This email address is not confirmed yet. Enter the code from the confirmation email, or send it again."
        case .notConfirmed(.phone): return "This phone number is not confirmed yet. Enter the code sent to it, or send it again."
        case .wrongCode: return "That code is wrong, has expired or was already used. Check it, or send a new one."
        case .wrongSecondFactorCode: return "That code is wrong. Enter the current code."
        case .secondFactorCodeExpired: return "That code came too late. Enter a new one."
        case .rateLimited(let retryAt): return "Too many attempts. \(Self.wait(until: retryAt, now: now))"
        case .codeSentRecently(let retryAt): return "A code was sent moments ago: use that one. \(Self.wait(until: retryAt, now: now, action: "send another"))"
        case .cannotSendNow(let channel, let retryAt):
            return "This project cannot send more \(channel == .email ? "emails" : "text messages") right now, so nothing was sent. "
                + Self.wait(until: retryAt, now: now, action: "try again") + " Or sign in another way."
        case .weakPassword(let detail): return "Choose a stronger password\(detail.isEmpty ? "." : ": \(detail.prefix(200))")"
        case .samePassword: return "The new password must differ from the old one."
        case .accountExists: return "An account with this address exists already. Sign in instead."
        case .signUpsDisabled: return "This project does not take new accounts."
        case .methodDisabled: return "This project does not allow signing in this way."
        case .factorNotAvailable: return "This project does not allow this kind of second step. Choose another, or go on without one."
        case .addressNotAuthorized:
            return "This project can send email only to its own team's addresses for now. Sign in another way, or ask the project's owner."
        case .accountBlocked: return "This account is blocked for now. Ask the project's owner."
        case .tooManyFactors:
            return "This account has as many second steps as the project allows, counting unfinished ones for a day. Remove one ('authctl mfa list', then 'authctl mfa unenroll'), or go on without."
        case .captchaRequired: return "This project protects sign-in with a CAPTCHA, which this page does not support. Sign in with a provider if one is offered, or with 'authctl login --captcha-token-file'."
        case .unknownSingleSignOnDomain: return "No single sign-on is set up for that domain. Check it: it is the part after @ in your work email."
        case .browserCancelled: return "The sign-in was cancelled at the provider."
        case .browserFailed(let detail): return "The browser sign-in failed: \(detail.prefix(300))"
        case .unreachable: return "The sign-in server cannot be reached. Check your connection and try again."
        case .serverFailed: return "The sign-in server failed. Try again in a moment."
        case .interrupted: return "That did not go through. Try again."
        case .refused(let message, _): return "The server refused: \(message.prefix(300))"
        case .secondFactorRejected: return "The second factor was refused, and you were signed out everywhere. Start again."
        case .sessionEnded: return "You were signed out, or another sign-in took your place, meanwhile. Start again."
        case .nothingOffered: return "This project offers no way of signing in that this page supports. Use 'authctl login'."
        }
    }

    /// The error's name, without the server's words.
    public var description: String {
        switch self {
        case .missing(let field): return "missing(\(field.rawValue))"
        case .malformed(let field): return "malformed(\(field.rawValue))"
        case .wrongPassword: return "wrongPassword"
        case .notConfirmed(let channel): return "notConfirmed(\(channel.rawValue))"
        case .wrongCode: return "wrongCode"
        case .wrongSecondFactorCode: return "wrongSecondFactorCode"
        case .secondFactorCodeExpired: return "secondFactorCodeExpired"
        case .rateLimited: return "rateLimited"
        case .codeSentRecently: return "codeSentRecently"
        case .cannotSendNow(let channel, _): return "cannotSendNow(\(channel.rawValue))"
        case .weakPassword: return "weakPassword"
        case .samePassword: return "samePassword"
        case .accountExists: return "accountExists"
        case .signUpsDisabled: return "signUpsDisabled"
        case .methodDisabled: return "methodDisabled"
        case .factorNotAvailable: return "factorNotAvailable"
        case .addressNotAuthorized: return "addressNotAuthorized"
        case .accountBlocked: return "accountBlocked"
        case .tooManyFactors: return "tooManyFactors"
        case .captchaRequired: return "captchaRequired"
        case .unknownSingleSignOnDomain: return "unknownSingleSignOnDomain"
        case .browserCancelled: return "browserCancelled"
        case .browserFailed: return "browserFailed"
        case .unreachable: return "unreachable"
        case .serverFailed: return "serverFailed"
        case .interrupted: return "interrupted"
        case .refused(_, let code): return "refused(\(code ?? "-"))"
        case .secondFactorRejected: return "secondFactorRejected"
        case .sessionEnded: return "sessionEnded"
        case .nothingOffered: return "nothingOffered"
        }
    }

    /// `until` as advice: "Try again in 42 seconds." (whole seconds, rounded up), or without
    /// the number when the server gave none or the time has come.
    static func wait(until: Date?, now: Date, action: String = "try again") -> String {
        guard let until, until > now else { return "Wait a little, then \(action)." }
        let seconds = Int(until.timeIntervalSince(now).rounded(.up))
        return "You can \(action) in \(seconds) second\(seconds == 1 ? "" : "s")."
    }

    private static func name(of field: SignInPageField) -> String {
        switch field {
        case .email: return "your email address"
        case .phone: return "your phone number"
        case .password: return "your password"
        case .code: return "the code"
        case .newPassword: return "a new password"
        case .domain: return "your company's domain or your work email"
        }
    }
}
