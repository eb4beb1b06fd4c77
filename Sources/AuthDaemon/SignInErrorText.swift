import AuthCore
import AuthProtocol
import FoundationEssentials
import FoundationGaps

/// Turns GoTrue's refusals into errors that say what happened and what to do, by sign-in method.
/// Messages quote the server's text and the user's own address, never a password, code or token.
enum SignInErrorText {
    /// How the user tried to sign in, which decides how a refusal reads.
    enum Method {
        case password, signUp, code, idToken, browser, anonymous, takeOver
    }

    static func error(_ failure: SignInFailure, method: Method) -> RPCErrorObject {
        switch failure {
        case .server(let failure): return error(failure, method: method)
        case .replaced(let failure): return StatusMapper.error(failure)
        case .flow(let failure): return error(failure)
        }
    }

    static func error(_ failure: AccountFailure) -> RPCErrorObject {
        switch failure {
        case .session(let failure): return StatusMapper.error(failure)
        case .sessionBusy:
            return .application(.serverError, "the session kept refreshing while this waited for it; try again")
        case .changedWithoutNewToken(let failure):
            // The reason is the session's (offline, rate_limited, not_signed_in…); the words say
            // the change itself is done, so that nobody makes it twice.
            var error = StatusMapper.error(failure)
            switch failure {
            case .refreshFailing(_, let detail):
                error.message = "the server made the change, but authd could not yet refresh the session for a token that states it (\(detail)): it keeps the session and retries, and until then apps get the earlier token"
            case .notSignedIn(let reason):
                error.message = "the server made the change, but the session \(reason == .replaced ? "was replaced by another sign-in" : "ended") meanwhile\(reason.map { " (\($0.code))" } ?? ""): run 'authctl login'"
            case .stopping:
                error.message = "the server made the change, but authd stopped before it could refresh the session for a token that states it: apps get the earlier token until its next refresh"
            case .storeUnavailable, .minimumValidityTooLong:
                error.message = "the server made the change, but: \(error.message)"
            }
            return error
        case .verificationUncertain(let failure):
            return .application(.serverError, "no answer from the server to the verification (\(failure.readableDescription)): it may have verified the factor all the same, which authd cannot know, so refreshing waits; verify again now ('authctl mfa verify', a new code) to keep the session")
        case .server(let failure):
            if case .http(429, "over_email_send_rate_limit", let message, _) = failure {
                return projectCannotSend(message, channel: "emails") ?? codeSentMomentsAgo(message)
            }
            if let common = transportError(failure) { return common }
            guard case .http(_, let code, let message, _) = failure else { return .application(.serverError, failure.readableDescription) }
            switch code {
            case "validation_failed" where message.contains("anonymous user"):
                return .application(.requestRejected, "an anonymous user gets a password together with an email address or phone number: give --email (or --phone) with --password ('email' or 'phone' with 'password' in the API)")
            case "weak_password": return .application(.requestRejected, "the new password is too weak: \(message)")
            case "same_password": return .application(.requestRejected, "the new password must differ from the current one")
            case "email_exists": return .application(.requestRejected, "another account already uses that email address")
            case "phone_exists": return .application(.requestRejected, "another account already uses that phone number")
            case "reauthentication_needed":
                return .application(.reauthenticationNeeded, "the project asks for a code before the password changes: 'authctl user update --password' asks for it (in the API: user.reauthenticate, then user.update with the code as 'nonce')")
            case "reauthentication_not_valid", "otp_expired":
                return .application(.codeRejected, "the code is wrong, has expired or was already used: ask for a new one with 'authctl user reauthenticate' (user.reauthenticate) and use it within its lifetime")
            default: return .application(.requestRejected, "the server refused the change: \(message)\(inParentheses(code))")
            }
        }
    }

    static func error(_ failure: OAuthFlowFailure) -> RPCErrorObject {
        switch failure {
        case .noPendingFlow(let address):
            return .application(.oauthFailed, "no browser sign-in is waiting for \(address.prefix(200)): start one with 'authctl login --provider NAME'")
        case .expired:
            return .application(.flowExpired, "the browser sign-in was not completed within \(Int(OAuthFlowBook.lifetime / 60)) minutes: run the command again")
        case .provider(let error, let code, let description):
            let detail = (description ?? error).prefix(300)
            if error == "access_denied" || code == "access_denied" {
                return .application(.oauthFailed, "the sign-in was cancelled or denied at the provider (\(detail))")
            }
            return .application(.oauthFailed, "the provider refused the sign-in: \(detail) (\((code ?? error).prefix(64)))")
        case .malformedCallback(let detail):
            return .application(.oauthFailed, "the browser came back without a sign-in code: \(detail)")
        case .notThisFlow:
            return .application(.oauthFailed, "this redirect does not belong to the browser sign-in it names (it lacks the sign-in's authd_flow); the sign-in goes on waiting")
        case .replaced:
            return .application(.oauthFailed, "a newer browser sign-in to the same app address replaced this one")
        case .anotherAccount:
            return .application(.oauthFailed, "the link signs in another account than the one it was sent to, so it was refused (and that session ended): open the link from the email sent to you")
        case .tooManyFlows(let limit):
            return .application(.busy, "\(limit) browser sign-ins are waiting already: finish or cancel one, or wait \(Int(OAuthFlowBook.lifetime / 60)) minutes")
        case .exposedCredential(parameter: "token_hash"):
            return .application(.oauthFailed, "this link carries a token_hash, which signs in whoever hands it to the server first, and it came through an app's address, whose handler has it on a command line every user of this computer can read; authd did not use it (the server still takes it until it expires). Change the project's email template (Supabase dashboard, Authentication, Emails) to link with {{ .ConfirmationURL }}, which comes back with a PKCE code only authd can use, or let the link come back to this computer's loopback listener ('authctl login --otp --link' without --redirect-url). The code in the same email still signs in with 'authctl verify'; a sign-in waiting for this address goes on waiting")
        case .exposedCredential:
            return .application(.oauthFailed, "this redirect carries session tokens in the clear (a sign-in without PKCE), and it came through an app's address, whose handler has it on a command line every user of this computer can read; authd did not use them. Sign in with authctl, which asks the server for a PKCE code; a sign-in waiting for this address goes on waiting")
        case .unboundError:
            return .application(.oauthFailed, "an error came back to the app's address, but nothing ties it to a sign-in of yours (any web page can open that address), so it ended nothing and its text is not shown; a sign-in waiting there goes on waiting: if you cancelled it at the provider, press Ctrl-C where it waits and start again")
        }
    }

    static func error(_ failure: ServerFailure, method: Method) -> RPCErrorObject {
        if let common = transportError(failure) { return common }
        guard case .http(let status, let code, let message, _) = failure else {
            return .application(.serverError, failure.readableDescription)
        }
        switch (method, code) {
        case (_, "captcha_failed"):
            return captchaError(message: message)
        case (.password, "invalid_credentials"), (.password, "invalid_grant"):
            return .application(.invalidCredentials, "wrong email or password")
        case (_, "email_not_confirmed"):
            return .application(.signInRejected, "the email address is not confirmed yet: enter the code sent to it with 'authctl verify --email ADDRESS' (it asks for the code)")
        case (_, "phone_not_confirmed"):
            return .application(.signInRejected, "the phone number is not confirmed yet: enter the code sent to it with 'authctl verify --phone NUMBER' (it asks for the code)")
        case (.signUp, "user_already_exists"), (.signUp, "email_exists"), (.signUp, "phone_exists"):
            return .application(.signInRejected, "an account with this address already exists: sign in with 'authctl login'")
        case (_, "weak_password"):
            return .application(.signInRejected, "the password is too weak: \(message)")
        case (_, "signup_disabled"), (_, "email_provider_disabled"), (_, "phone_provider_disabled"), (_, "provider_disabled"), (_, "otp_disabled"):
            return .application(.signInRejected, "this project does not allow it: \(message) (\(code ?? "disabled"))")
        case (.code, "otp_expired"), (.code, "invalid_credentials"):
            return .application(.codeRejected, "the code is wrong, has expired or was already used: ask for a new one and enter it within its lifetime")
        case (_, "sso_provider_not_found"):
            return .application(.oauthFailed, "the project has no SSO provider for that domain or id: check it (the part after @ in your work email), or ask your administrator for the provider id (--sso-provider)")
        case (_, "manual_linking_disabled"):
            return .application(.oauthFailed, "this project does not allow linking identities (manual_linking_disabled)")
        case (.browser, "flow_state_not_found"):
            return .application(.oauthFailed, "the sign-in code is unknown or was already used: start the browser sign-in again")
        case (.browser, "flow_state_expired"):
            return .application(.flowExpired, "the browser sign-in took too long and the server forgot it: start again")
        case (.browser, "bad_code_verifier"):
            return .application(.oauthFailed, "the sign-in code belongs to a different sign-in (code verifier mismatch): start again")
        case (.idToken, _):
            return idTokenError(message: message, code: code)
        case (.anonymous, "anonymous_provider_disabled"):
            return .application(.signInRejected, "this project does not allow anonymous sign-ins (anonymous_provider_disabled): sign in with an account, or ask the project's owner to turn them on")
        case (.takeOver, let code?) where ServerFailure.fatalRefreshCodes.contains(code) || code == "invalid_grant":
            return .application(.signInRejected, "this refresh token does not open a session (\(code)): it was already used, revoked or has expired, or it belongs to another project. Nothing changed here; sign in with 'authctl login'")
        default:
            return .application(.signInRejected, "sign-in refused: \(message)\(inParentheses(code)) [HTTP \(status)]")
        }
    }

    /// GoTrue's `captcha_failed`: no token came with the request ("no captcha_token found"), or
    /// the CAPTCHA provider refused the one that did (its error codes in parentheses). Either way
    /// the way out is a fresh token, or a sign-in the CAPTCHA does not cover.
    private static func captchaError(message: String) -> RPCErrorObject {
        let browser = "a browser sign-in ('authctl login --provider NAME'), where the project offers one, needs none"
        if message.contains("no captcha_token") {
            return .application(.captchaRequired, "this project protects this with a CAPTCHA: solve it on the project's page and pass its token with --captcha-token-file FILE (captcha_token in the API); \(browser)")
        }
        return .application(.captchaRequired, "the CAPTCHA token was refused (\(message.prefix(200))): a token works once and only for minutes, so solve the CAPTCHA again and pass the new one at once; \(browser)")
    }

    /// GoTrue's `id_token` grant answers in the OAuth style (`error` / `error_description`);
    /// these are its texts, explained.
    private static func idTokenError(message: String, code: String?) -> RPCErrorObject {
        if message.contains("Unacceptable audience") {
            return .application(.idTokenRejected, "the ID token was issued to a client ID this project does not accept (\(message.prefix(200))): add that client ID to the provider's Client IDs in the Supabase dashboard (Authentication → Sign In / Providers)")
        }
        if message.contains("Nonces mismatch") {
            return .application(.idTokenRejected, "the nonce does not match the ID token: pass the raw nonce to authd (--nonce) and only its SHA-256 hex to Apple or Google")
        }
        if message.contains("nonce") {
            return .application(.idTokenRejected, "the ID token carries a nonce but none was passed, or the other way round: pass the raw nonce with --nonce (see 'authctl nonce')")
        }
        if message.contains("Bad ID token") {
            return .application(.idTokenRejected, "the ID token is not valid (signature, issuer or expiry): get a fresh one from the provider")
        }
        return .application(.idTokenRejected, "the ID token was refused: \(message.prefix(200))\(inParentheses(code))")
    }

    /// GoTrue answers `over_email_send_rate_limit` (`over_sms_send_rate_limit`) for two things.
    /// "email rate limit exceeded" ("SMS rate limit exceeded") means that the project may send no
    /// more `channel` for now, and that nothing was sent: that error. Anything else ("For security
    /// purposes, you can only request this after N seconds.", or "…once every 60 seconds." from
    /// GoTrue before 2.160) means that a code went to this address moments ago, and that one
    /// still works: nil here, and each caller says so in its own words.
    static func projectCannotSend(_ message: String, channel: String) -> RPCErrorObject? {
        guard message.lowercased().contains("rate limit exceeded") else { return nil }
        return .application(.rateLimited, "the project cannot send more \(channel) right now, so nothing was sent; try again later, or sign in another way (\(message.prefix(200)))")
    }

    /// The server's refusal to send another code so soon (`over_email_send_rate_limit`,
    /// `over_sms_send_rate_limit`) where the request, not the session, is at fault: the code it
    /// sent moments ago still works.
    static func codeSentMomentsAgo(_ message: String) -> RPCErrorObject {
        .application(.requestRejected, "a code was sent moments ago; use that one, or ask again later (\(message.prefix(200)))")
    }

    /// The server's error code as it ends a message, ` (code)`, or nothing when it gave none.
    private static func inParentheses(_ code: String?) -> String {
        code.map { " (\($0))" } ?? ""
    }

    /// Failures that read the same whatever was attempted.
    private static func transportError(_ failure: ServerFailure) -> RPCErrorObject? {
        switch failure {
        case .notSent(let url, let detail), .unreachable(let url, let detail):
            return .application(.offline, "cannot reach \(url) (\(detail)); check the network and the profile's url")
        case .untrustedCertificate:
            return .application(.offline, failure.readableDescription)
        case .invalidResponse(let detail):
            return .application(.serverError, "unexpected answer from the server: \(detail)")
        case .http(let status, _, let message, _):
            if status == 429, case .http(_, let code?, _, _) = failure, code == "over_email_send_rate_limit" || code == "over_sms_send_rate_limit" {
                if let limit = projectCannotSend(message, channel: code == "over_sms_send_rate_limit" ? "text messages" : "emails") { return limit }
                // GoTrue says how long to wait; the message sent moments ago still works.
                return .application(.rateLimited, "a message went to that address moments ago: use it, or ask again later (\(message.prefix(200)))")
            }
            if status == 429 { return .application(.rateLimited, "too many attempts; wait a little and try again") }
            if status >= 500 { return .application(.serverError, "the server failed (\(message)); try again later") }
            return nil
        }
    }
}
