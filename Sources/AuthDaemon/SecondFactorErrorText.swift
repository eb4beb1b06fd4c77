import AuthCore
import AuthProtocol
import FoundationEssentials

/// Turns GoTrue's refusals of second-factor calls (`/factors…`) into errors that say what
/// happened and what to do. Messages never quote a code or a secret.
enum SecondFactorErrorText {
    static func error(_ failure: AccountFailure) -> RPCErrorObject {
        guard case .server(.http(let status, let code?, let message, _)) = failure else { return SignInErrorText.error(failure) }
        switch code {
        case "mfa_verification_failed":
            return .application(.codeRejected, "the code is wrong: enter the code your authenticator app (or the latest text message) shows now")
        case "mfa_challenge_expired":
            return .application(.codeRejected, "the challenge expired before its code came: start again ('authctl mfa verify')")
        case "mfa_ip_address_mismatch":
            return .application(.codeRejected, "that challenge was already used, or made from another network address: start again ('authctl mfa verify')")
        case "mfa_verification_rejected":
            return .application(.codeRejected, "the project refused the verification: \(message.prefix(200))")
        case "mfa_factor_not_found":
            return .application(.requestRejected, "no such factor for this account (or no such challenge): list the factors with 'authctl mfa list'")
        case "insufficient_aal":
            return .application(.mfaRequired, "the account has a verified second factor, so this needs a session verified with one: run 'authctl mfa verify' first (\(message.prefix(120)))")
        case "mfa_factor_name_conflict":
            return .application(.requestRejected, "the account already has a factor by that name: choose another one with --name")
        case "too_many_enrolled_mfa_factors":
            return .application(.requestRejected, "the account has as many factors as the project allows: remove one with 'authctl mfa unenroll ID'")
        case "mfa_verified_factor_exists":
            return .application(.requestRejected, "a verified factor with that phone number exists already")
        case "over_sms_send_rate_limit":
            return SignInErrorText.projectCannotSend(message, channel: "text messages") ?? SignInErrorText.codeSentMomentsAgo(message)
        case "sms_send_failed":
            return .application(.serverError, "the server could not send the text message: try again later")
        case "session_expired" where status == 403:
            return .application(.notSignedIn, "the server ended this session (it lacked a second factor for too long): sign in again with 'authctl login'; it asks for the second factor")
        case let disabled where disabled.hasPrefix("mfa_") && disabled.hasSuffix("_not_enabled"):
            return .application(.requestRejected, "this project does not allow it: \(message.prefix(200)) (\(code))")
        case "validation_failed":
            return .application(.requestRejected, "the server refused it: \(message.prefix(200))")
        case "no_authorization" where message.contains("Anonymous"):
            return .application(.requestRejected, "an anonymous user cannot have a second factor: give the account an email address first ('authctl user update --email ADDRESS')")
        default:
            return SignInErrorText.error(failure)
        }
    }
}
