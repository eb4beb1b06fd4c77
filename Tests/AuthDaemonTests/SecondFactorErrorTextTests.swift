import AuthCore
@testable import AuthDaemon
import AuthProtocol
import Foundation
import Testing

/// GoTrue's refusals of second-factor calls as the user reads them, and the refusal of a token
/// below the level asked for, as the golden fixture pins it.
@Suite struct SecondFactorErrorTextTests {
    func refusal(_ status: Int, _ code: String, _ message: String) -> RPCErrorObject {
        SecondFactorErrorText.error(.server(.http(status: status, code: code, message: message, retryAfter: nil)))
    }

    @Test func everyRefusalHasAStableReasonAndSaysWhatToDo() {
        let cases: [(RPCErrorObject, ErrorReason, String)] = [
            (refusal(422, "mfa_verification_failed", "Invalid TOTP code entered"), .codeRejected, "the code is wrong"),
            (refusal(422, "mfa_challenge_expired", "MFA challenge x has expired"), .codeRejected, "start again ('authctl mfa verify')"),
            (refusal(422, "mfa_ip_address_mismatch", "Challenge and verify IP addresses mismatch."), .codeRejected, "already used"),
            (refusal(404, "mfa_factor_not_found", "Factor not found"), .requestRejected, "'authctl mfa list'"),
            (refusal(422, "insufficient_aal", "AAL2 required to unenroll verified factor"), .mfaRequired, "run 'authctl mfa verify' first"),
            (refusal(422, "mfa_factor_name_conflict", "A factor with the friendly name \"\" for this user already exists"), .requestRejected, "--name"),
            (refusal(422, "too_many_enrolled_mfa_factors", "Maximum number of verified factors reached"), .requestRejected, "authctl mfa unenroll"),
            (refusal(429, "over_sms_send_rate_limit", "For security purposes, you can only request this after 59 seconds."), .requestRejected, "moments ago"),
            (refusal(429, "over_sms_send_rate_limit", "SMS rate limit exceeded"), .rateLimited, "cannot send more text messages right now, so nothing was sent"),
            (refusal(422, "mfa_phone_enroll_not_enabled", "MFA enroll is disabled for Phone"), .requestRejected, "does not allow it"),
            (refusal(403, "session_expired", "Session is no longer valid"), .notSignedIn, "sign in again"),
        ]
        for (error, reason, advice) in cases {
            #expect(error.reason == reason, "\(error.message)")
            #expect(error.message.contains(advice), "\(error.message)")
        }
        // Anything else reads as any account call's refusal would.
        #expect(refusal(500, "unexpected_failure", "boom").reason == .serverError)
        #expect(SecondFactorErrorText.error(.session(.notSignedIn(nil))).reason == .notSignedIn)
    }

    @Test func aTokenBelowTheLevelAskedForIsRefusedAsTheFixtureSays() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("AuthProtocolTests/Fixtures/error-mfa-required.json")
        let fixture = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let documented = (fixture["error"] as? [String: Any])?["message"] as? String
        let aal1 = "eyJhbGciOiJIUzI1NiJ9." + Data(#"{"aal":"aal1"}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "") + ".c2ln"
        let aal2 = "eyJhbGciOiJIUzI1NiJ9." + Data(#"{"aal":"aal2"}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "") + ".c2ln"
        #expect(StatusMapper.assuranceError(token: aal1, required: "aal2")?.message == documented)
        #expect(StatusMapper.assuranceError(token: aal1, required: "aal2")?.reason == .mfaRequired)
        #expect(StatusMapper.assuranceError(token: aal2, required: "aal2") == nil)
        #expect(StatusMapper.assuranceError(token: aal1, required: "aal1") == nil)
        #expect(StatusMapper.assuranceError(token: aal1, required: nil) == nil)
        #expect(StatusMapper.assuranceError(token: "opaque", required: "aal2")?.reason == .mfaRequired)
    }
}
