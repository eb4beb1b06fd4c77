import AuthCore
import SignInPage

/// What a form posted on the sign-in page asks for, read from its path and fields and from the
/// step the page shows: the same button ("Send a new code") means another thing on another step.
public enum SignInPageFormMeaning: Sendable, Equatable {
    /// An action for the flow.
    case action(SignInPageAction)
    /// A new sign-in, from the page of one that failed ("Start again").
    case startAgain
    /// Nothing the page offers now: the page is shown again as it is.
    case nothing
}

/// Reads a posted form as the flow's action. A pure function: the gate has checked where the
/// form came from; the flow checks what it may do now and what the fields hold. A missing
/// field reads as empty, so that the flow says which one to fill in.
public enum SignInPageFormReader {
    /// What the form `form`, posted to `path` while the page showed `step`, asks for.
    public static func meaning(path: String, form: SignInPageForm, step: SignInPageStep,
                               actions: SignInPageView.FormActions) -> SignInPageFormMeaning {
        let text = { (field: SignInPageView.Field) in form[field] ?? "" }
        switch path {
        case actions.signIn: return .action(.signInWithPassword(email: text(.email), password: text(.password)))
        case actions.signUp: return .action(.signUp(email: text(.email), password: text(.newPassword)))
        case actions.requestCode: return .action(.requestCode(address: form[.email] ?? text(.phone)))
        case actions.verifyCode: return .action(.submitCode(text(.code)))
        case actions.resendCode: return sendAgain(step)
        case actions.provider: return .action(.continueWithProvider(text(.provider)))
        case actions.sso: return .action(.continueWithSingleSignOn(domain: text(.domain)))
        case actions.forgotPassword: return .action(.forgotPassword(email: text(.email)))
        case actions.resetPassword: return .action(.setNewPassword(text(.newPassword)))
        case actions.verifyFactor: return .action(.submitSecondFactorCode(text(.code)))
        case actions.anonymous: return .action(.signInAnonymously)
        case actions.chooseFactor: return .action(.chooseFactor(id: text(.factor)))
        case actions.enroll: return enrol(form)
        case actions.skipEnrolment: return .action(.skipEnrolment)
        case actions.cancel: return .action(.cancel)
        case actions.go: return go(text(.to), step: step)
        default: return .nothing
        }
    }

    /// "Send a new code": the step's code again, or, for a second factor's SMS code, a new
    /// challenge of the same factor (how the flow sends that code again).
    static func sendAgain(_ step: SignInPageStep) -> SignInPageFormMeaning {
        switch step {
        case .enterCode: return .action(.sendCodeAgain)
        case .secondFactorCode(let factor, enrolling: false): return .action(.chooseFactor(id: factor.id))
        default: return .nothing
        }
    }

    /// A factor to add: an authenticator app, or a phone with its number.
    static func enrol(_ form: SignInPageForm) -> SignInPageFormMeaning {
        switch form[.factorType] {
        case FactorKind.totp.rawValue: return .action(.enrol(.totp, phone: nil))
        case FactorKind.phone.rawValue: return .action(.enrol(.phone, phone: form[.phone] ?? ""))
        default: return .nothing
        }
    }

    /// A secondary action: another method's form, the first page, the phone field of the offer,
    /// the list of factors, or a new start.
    static func go(_ destination: String, step: SignInPageStep) -> SignInPageFormMeaning {
        switch SignInPageView.Destination(rawValue: destination) {
        case .choose?:
            if case .finished(.failed) = step { return .startAgain }
            return .action(.chooseAnother)
        case .signUp?: return .action(.choose(.signUp))
        case .emailCode?: return .action(.choose(.emailCode))
        case .smsCode?: return .action(.choose(.phoneCode))
        case .sso?: return .action(.choose(.singleSignOn))
        case .forgotPassword?: return .action(.choose(.forgotPassword))
        case .enrollPhone?: return .action(.addPhoneFactor)
        case .chooseFactor?: return .action(.chooseAnotherFactor)
        case nil: return .nothing
        }
    }
}
