import AuthProtocol
import Testing

/// The rules of `session.resend`, `identities.unlink` and `sso.begin`, and of the anonymous and
/// take-over sign-ins.
@Suite struct IdentityAndSSOParameterRulesTests {
    static let uuid = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"

    @Test func eachTypeLetsAGoodValueThroughAndNamesTheFirstRuleABadOneBreaks() {
        let cases: [(any ValidatedParameters, String?)] = [
            (Methods.Resend.Parameters(email: "a@example.com", type: "email_change", redirectTo: "app://cb"), nil),
            (Methods.Resend.Parameters(email: "a@example.com", type: "email"),
             "invalid params: 'type' must be one of signup, sms, email_change, phone_change"),
            (Methods.Resend.Parameters(phone: "+15551234567", type: "signup"), "invalid params: 'type' signup goes with an 'email'"),
            (Methods.Resend.Parameters(email: "a@example.com", type: "sms"), "invalid params: 'type' sms goes with a 'phone'"),
            // Two rules broken: the captcha's is named first, as the handler did.
            (Methods.Resend.Parameters(phone: "+15551234567", redirectTo: "app://cb", captchaToken: ""),
             "invalid params: 'captcha_token' must be the token a solved CAPTCHA gave (printable ASCII without spaces, at most 8192 bytes)"),
            (Methods.Resend.Parameters(phone: "+15551234567", redirectTo: "app://cb"),
             "invalid params: 'redirect_to' is for an email's link; a text message carries only the code"),
            (Methods.UnlinkIdentity.Parameters(identityID: Self.uuid), nil),
            (Methods.UnlinkIdentity.Parameters(identityID: " \(Self.uuid)"),
             "invalid params: 'identity_id' must be an identity's id as identities.list shows it (a UUID)"),
            (Methods.SingleSignOnBegin.Parameters(domain: " Example.com ", redirectTo: "http://localhost:1/cb"), nil),
            (Methods.SingleSignOnBegin.Parameters(providerID: Self.uuid, redirectTo: "app://cb"), nil),
            (Methods.SingleSignOnBegin.Parameters(domain: "example", redirectTo: "app://cb"),
             "invalid params: 'domain' must be an email domain such as example.com"),
            (Methods.SingleSignOnBegin.Parameters(providerID: "../admin", redirectTo: "app://cb"),
             "invalid params: 'provider_id' must be an SSO provider's id (a UUID)"),
            (Methods.SingleSignOnBegin.Parameters(domain: "example.com", providerID: Self.uuid, redirectTo: "app://cb"),
             "invalid params: give exactly one of 'domain' and 'provider_id'"),
            (Methods.SingleSignOnBegin.Parameters(domain: "example.com", redirectTo: "/cb"),
             "invalid params: 'redirect_to' must be an absolute URL (http://127.0.0.1:PORT/… or an app's custom scheme)"),
            (Methods.SingleSignOnBegin.Parameters(domain: "example.com", redirectTo: "http://example.com/cb"),
             "invalid params: an http:// 'redirect_to' must be a loopback address such as http://127.0.0.1:PORT/callback"),
            (Methods.SignInAnonymously.Parameters(captchaToken: "10000000-aaaa-bbbb-cccc-000000000001"), nil),
            (Methods.SignInAnonymously.Parameters(captchaToken: "tab\there"),
             "invalid params: 'captcha_token' must be the token a solved CAPTCHA gave (printable ASCII without spaces, at most 8192 bytes)"),
            (Methods.SignInWithRefreshToken.Parameters(refreshToken: "v2-abcdEFGH1234"), nil),
            (Methods.SignInWithRefreshToken.Parameters(refreshToken: ""), "invalid params: 'refresh_token' must not be empty"),
            (Methods.SignInWithRefreshToken.Parameters(refreshToken: "has space"),
             "invalid params: 'refresh_token' must be the session's refresh token (printable ASCII without spaces, at most 2048 bytes)"),
            (Methods.SignInWithRefreshToken.Parameters(refreshToken: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln"),
             "invalid params: 'refresh_token' holds an access token (a JWT): give the session's refresh_token instead, which is the short opaque one"),
        ]
        for (parameters, expected) in cases { #expect(validationMessage(parameters) == expected, "\(parameters)") }
    }
}
