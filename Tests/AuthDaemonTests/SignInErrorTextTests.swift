import AuthCore
@testable import AuthDaemon
import AuthProtocol
import Foundation
import Testing

/// GoTrue's refusals, by sign-in method, as the user reads them: a stable reason and a message
/// that says what to do.
@Suite struct SignInErrorTextTests {
    func http(_ status: Int, _ code: String?, _ message: String) -> ServerFailure {
        .http(status: status, code: code, message: message, retryAfter: nil)
    }

    @Test func idTokenRefusalsNameTheFix() {
        let audience = SignInErrorText.error(http(400, "invalid request", "Unacceptable audience in id_token: [ios-client]"), method: .idToken)
        #expect(audience.data?.reason == ErrorReason.idTokenRejected.rawValue)
        #expect(audience.message.contains("[ios-client]") && audience.message.contains("add that client ID to the provider's Client IDs"))
        let nonce = SignInErrorText.error(http(400, "invalid nonce", "Nonces mismatch"), method: .idToken)
        #expect(nonce.message.contains("pass the raw nonce") && nonce.message.contains("SHA-256"))
        let missing = SignInErrorText.error(http(400, "invalid request", "Passed nonce and nonce in id_token should either both exist or not."), method: .idToken)
        #expect(missing.message.contains("none was passed"))
        #expect(SignInErrorText.error(http(400, "invalid request", "Bad ID token"), method: .idToken).message.contains("get a fresh one"))
    }

    @Test func codeAndBrowserRefusalsHaveTheirOwnReasons() {
        #expect(SignInErrorText.error(http(403, "otp_expired", "Token has expired or is invalid"), method: .code).data?.reason == "code_rejected")
        #expect(SignInErrorText.error(http(403, "bad_code_verifier", "x"), method: .browser).data?.reason == "oauth_failed")
        #expect(SignInErrorText.error(http(400, "flow_state_expired", "x"), method: .browser).data?.reason == "flow_expired")
        #expect(SignInErrorText.error(OAuthFlowFailure.expired).data?.reason == "flow_expired")
        let denied = SignInErrorText.error(OAuthFlowFailure.provider(error: "access_denied", code: nil, description: "User said no"))
        #expect(denied.message == "the sign-in was cancelled or denied at the provider (User said no)")
        #expect(SignInErrorText.error(http(400, "invalid_credentials", "Invalid login credentials"), method: .password).message == "wrong email or password")
    }

    /// GoTrue answers both a code asked for again too soon and a project out of emails with the
    /// same code: only the first means that a code is on its way.
    @Test func aSendingLimitSaysWhetherACodeWasSent() {
        let tooSoon = http(429, "over_email_send_rate_limit", "For security purposes, you can only request this after 42 seconds.")
        // GoTrue before 2.160 said it another way; still a code sent moments ago.
        let older = SignInErrorText.error(http(429, "over_email_send_rate_limit", "For security purposes, you can only request this once every 60 seconds"), method: .code)
        #expect(older.message.contains("moments ago") && !older.message.contains("nothing was sent"), "\(older.message)")
        let quota = http(429, "over_email_send_rate_limit", "email rate limit exceeded")
        for method in [SignInErrorText.Method.code, .signUp, .password] {
            let soon = SignInErrorText.error(tooSoon, method: method)
            #expect(soon.message.contains("moments ago") && !soon.message.contains("nothing was sent"), "\(soon.message)")
            let out = SignInErrorText.error(quota, method: method)
            #expect(out.data?.reason == "rate_limited" && out.message.contains("cannot send more emails right now, so nothing was sent"), "\(out.message)")
            #expect(!out.message.contains("moments ago"))
        }
        let account = SignInErrorText.error(AccountFailure.server(quota))
        #expect(account.data?.reason == "rate_limited" && account.message.contains("nothing was sent"), "\(account.message)")
        let sms = SignInErrorText.error(http(429, "over_sms_send_rate_limit", "SMS rate limit exceeded"), method: .code)
        #expect(sms.message.contains("cannot send more text messages"), "\(sms.message)")
    }

    /// The message of the golden `error-captcha-required` fixture.
    static let documentedCaptchaMessage: String = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("AuthProtocolTests/Fixtures/error-captcha-required.json")
        let object = (try? JSONSerialization.jsonObject(with: Data(contentsOf: url))) as? [String: Any]
        return (object?["error"] as? [String: Any])?["message"] as? String ?? "fixture missing"
    }()

    @Test func aCaptchaRefusalSaysHowToGetATokenAndOffersTheBrowser() {
        #expect(Self.documentedCaptchaMessage.contains("--captcha-token-file FILE") && Self.documentedCaptchaMessage.contains("authctl login --provider NAME"))
        for method in [SignInErrorText.Method.password, .signUp, .code] {
            let missing = SignInErrorText.error(http(400, "captcha_failed", "captcha protection: request disallowed (no captcha_token found)"), method: method)
            #expect(missing.data?.reason == ErrorReason.captchaRequired.rawValue)
            #expect(missing.message == Self.documentedCaptchaMessage, "the protocol's fixture (and authd-protocol(7)) show another text")
            let refused = SignInErrorText.error(http(400, "captcha_failed", "captcha protection: request disallowed (invalid-input-response)"), method: method)
            #expect(refused.data?.reason == ErrorReason.captchaRequired.rawValue)
            #expect(refused.message.contains("was refused (captcha protection: request disallowed (invalid-input-response))")
                    && refused.message.contains("solve the CAPTCHA again"), "\(refused.message)")
        }
        // The verification itself failing at GoTrue is a server error, retried like any other.
        #expect(SignInErrorText.error(http(500, "unexpected_failure", "captcha verification process failed"), method: .password).data?.reason == "server_error")
    }

    @Test func aPasswordChangeThatNeedsACodeSaysHowToGetOne() {
        let needed = SignInErrorText.error(AccountFailure.server(http(400, "reauthentication_needed", "Password update requires reauthentication")))
        #expect(needed.data?.reason == ErrorReason.reauthenticationNeeded.rawValue)
        #expect(needed.message.contains("user.reauthenticate") && needed.message.contains("'nonce'"), "\(needed.message)")
        let wrong = SignInErrorText.error(AccountFailure.server(http(422, "reauthentication_not_valid", "Nonce has expired or is invalid")))
        #expect(wrong.data?.reason == ErrorReason.codeRejected.rawValue)
        #expect(wrong.message.contains("authctl user reauthenticate"), "\(wrong.message)")
    }

    @Test func transientFailuresReadTheSameForEveryMethod() {
        for method in [SignInErrorText.Method.password, .signUp, .code, .idToken, .browser] {
            #expect(SignInErrorText.error(.unreachable(url: "https://x.supabase.co/auth/v1", detail: "timed out"), method: method).data?.reason == "offline")
            #expect(SignInErrorText.error(http(429, "over_request_rate_limit", "slow down"), method: method).data?.reason == "rate_limited")
            #expect(SignInErrorText.error(http(503, nil, "service unavailable"), method: method).data?.reason == "server_error")
        }
    }
}
