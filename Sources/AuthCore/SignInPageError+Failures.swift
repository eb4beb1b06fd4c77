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
    /// A second factor verified or enrolled.
    case secondFactor
    /// A second factor challenged: for an SMS factor, a code sent. Held back on its own, so that
    /// a limit on sending a new code never holds back verifying the one the user has.
    case challenge
    /// The project's settings, or a new password.
    case other
}

extension SignInPageError {
    /// The error to show for `failure` of a call of `kind` at `now`: GoTrue's codes as
    /// `shared/reference/GOTRUE.md` lists them, and the same words whatever the call for the
    /// network, the server's failures and its rate limits. When to retry comes from
    /// `Retry-After` (a proxy's), else from GoTrue's words ("…after 42 seconds"), which is all
    /// GoTrue itself says.
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
        let retryAt = (retryAfter ?? secondsToWait(in: message)).map { now.addingTimeInterval($0) }
        switch code {
        // One code for two things: the project may send no more emails or texts for now ("email
        // rate limit exceeded"), when nothing was sent at all; or this address had a code moments
        // ago ("For security purposes, you can only request this after N seconds.", "…once every
        // 60 seconds." before GoTrue 2.160), which still works; anything else reads as a wait.
        case "over_email_send_rate_limit", "over_sms_send_rate_limit":
            let words = message.lowercased()
            if words.contains("rate limit exceeded") { return .cannotSendNow(code == "over_sms_send_rate_limit" ? .phone : .email, retryAt: retryAt) }
            if words.contains("only request this") { return .codeSentRecently(retryAt: retryAt) }
            return .rateLimited(retryAt: retryAt)
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
             "anonymous_provider_disabled", "sso_provider_disabled", "saml_provider_disabled":
            return .methodDisabled
        case "mfa_totp_enroll_not_enabled", "mfa_phone_enroll_not_enabled", "mfa_totp_verify_not_enabled",
             "mfa_phone_verify_not_enabled", "mfa_webauthn_enroll_not_enabled", "mfa_webauthn_verify_not_enabled":
            return .factorNotAvailable
        case "email_address_not_authorized": return .addressNotAuthorized
        // Each factor the page adds has a name of its own; these mean the user has too many.
        case "too_many_enrolled_mfa_factors", "mfa_factor_name_conflict": return .tooManyFactors
        case "user_banned": return .accountBlocked
        // The browser's sign-in was started again, or came back too late, or elsewhere.
        case "flow_state_expired", "flow_state_not_found", "flow_state_already_used", "bad_code_verifier":
            return .browserFailed(detail: "it expired before the browser came back. Start again.")
        case "sso_provider_not_found", "sso_domain_not_found": return .unknownSingleSignOnDomain
        case "mfa_verification_failed": return .wrongSecondFactorCode
        case "mfa_challenge_expired": return .secondFactorCodeExpired
        case "mfa_verification_rejected": return .secondFactorRejected
        // On the page's own session (a factor, a new password), the session is gone.
        case _ where ["session_not_found", "user_not_found", "refresh_token_not_found"].contains(code ?? "")
            && (kind == .secondFactor || kind == .challenge || kind == .other):
            return .sessionEnded
        default: return .refused(message: message, code: code)
        }
    }

    /// The wait GoTrue names in a rate limit's message ("…after 42 seconds."), at most an hour;
    /// nil when it names none.
    static func secondsToWait(in message: String) -> TimeInterval? {
        let words = message.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber })
        for (index, word) in words.enumerated().dropFirst() where word.hasPrefix("second") {
            guard words[index - 1].allSatisfy({ $0.isASCII && $0.isNumber }), let seconds = Int(words[index - 1].prefix(6)) else { continue }
            return TimeInterval(min(seconds, 3600))
        }
        return nil
    }
}
