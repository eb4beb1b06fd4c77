import FoundationEssentials

/// What a failed call of the sign-in page was, which decides how its refusal reads.
enum SignInPageCallKind: Sendable, Equatable {
    /// A password sign-in.
    case password
    /// A one-time code verified.
    case code
    /// A sign-up (also an anonymous sign-in).
    case signUp
    /// A code sent, or sent again.
    case sendCode
    /// A browser sign-in, started or completed.
    case browser
    /// A second factor challenged, verified or enrolled.
    case secondFactor
    /// The project's settings, or a new password.
    case other
}

extension SignInPageError {
    /// The error to show for `failure` of a call of `kind` at `now`: GoTrue's codes as
    /// `shared/reference/GOTRUE.md` lists them, and the same words whatever the call for the
    /// network, the server's failures and its rate limits (whose `Retry-After` sets `retryAt`).
    init(_ failure: SignInPageFailure, during kind: SignInPageCallKind, now: Date) {
        switch failure {
        case .sessionEnded: self = .sessionEnded
        case .interrupted: self = .interrupted
        case .browser(let failure): self = Self.browser(failure)
        case .server(let failure): self = Self.server(failure, during: kind, now: now)
        }
    }

    private static func browser(_ failure: OAuthFlowFailure) -> SignInPageError {
        switch failure {
        case .provider(let error, let code, let description):
            if error == "access_denied" || code == "access_denied" { return .browserCancelled }
            return .browserFailed(detail: String((description ?? error).prefix(300)))
        case .expired: return .browserFailed(detail: "it was not completed in time.")
        case .anotherAccount: return .browserFailed(detail: "it signed in another account than the one asked for.")
        case .malformedCallback, .noPendingFlow, .notThisFlow, .replaced, .tooManyFlows, .exposedCredential, .unboundError:
            return .browserFailed(detail: "the browser did not come back with a sign-in code.")
        }
    }

    private static func server(_ failure: ServerFailure, during kind: SignInPageCallKind, now: Date) -> SignInPageError {
        guard case .http(let status, let code, let message, let retryAfter) = failure else {
            if case .invalidResponse = failure { return .serverFailed }
            return .unreachable
        }
        let retryAt = retryAfter.map { now.addingTimeInterval($0) }
        switch code {
        case "over_email_send_rate_limit", "over_sms_send_rate_limit": return .codeSentRecently(retryAt: retryAt)
        case _ where status == 429: return .rateLimited(retryAt: retryAt)
        case _ where status >= 500 || status == 408: return .serverFailed
        case "captcha_failed": return .captchaRequired
        case "invalid_credentials", "invalid_grant":
            return kind == .password ? .wrongPassword : .wrongCode
        case "otp_expired": return .wrongCode
        case "email_not_confirmed": return .notConfirmed(.email)
        case "phone_not_confirmed": return .notConfirmed(.phone)
        case "user_already_exists", "email_exists", "phone_exists": return .accountExists
        case "weak_password": return .weakPassword(detail: message)
        case "same_password": return .samePassword
        case "signup_disabled": return .signUpsDisabled
        // A code for an address without an account, where sign-ups are off.
        case "otp_disabled" where message.lowercased().contains("signups not allowed"): return .signUpsDisabled
        case "email_provider_disabled", "phone_provider_disabled", "provider_disabled", "otp_disabled",
             "anonymous_provider_disabled", "sso_provider_disabled":
            return .methodDisabled
        case "sso_provider_not_found", "sso_domain_not_found": return .unknownSingleSignOnDomain
        case "mfa_verification_failed": return .wrongSecondFactorCode
        case "mfa_challenge_expired": return .secondFactorCodeExpired
        case "mfa_verification_rejected": return .secondFactorRejected
        // On the page's own session (a factor, a new password), the session is gone.
        case _ where ["session_not_found", "user_not_found", "refresh_token_not_found"].contains(code ?? "")
            && (kind == .secondFactor || kind == .other):
            return .sessionEnded
        default: return .refused(message: message, code: code)
        }
    }
}
