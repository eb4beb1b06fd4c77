import AuthProtocol
import Testing

/// The rules of the account methods' parameters.
@Suite struct AccountParameterRulesTests {
    @Test func eachTypeLetsAGoodValueThroughAndNamesTheFirstRuleABadOneBreaks() {
        let cases: [(any ValidatedParameters, String?)] = [
            (Methods.SignUp.Parameters(email: " a@example.com ", password: "pw", redirectTo: "http://127.0.0.1:9/cb"), nil),
            (Methods.SignUp.Parameters(email: "a@example.com", phone: "+15551234567", password: "pw"), "invalid params: give either 'email' or 'phone'"),
            (Methods.SignUp.Parameters(email: "   ", password: "pw"), "invalid params: give either 'email' or 'phone'"),
            // Two rules broken: the password's is named first, as the handler did.
            (Methods.SignUp.Parameters(phone: "+15551234567", password: "", redirectTo: "app://cb"), "invalid params: 'password' must not be empty"),
            (Methods.SignUp.Parameters(phone: "+15551234567", password: "pw", redirectTo: "app://cb"),
             "invalid params: 'redirect_to' is for an email's link; a text message carries only the code"),
            (Methods.SendCode.Parameters(email: "a@example.com", purpose: "recovery"), nil),
            (Methods.SendCode.Parameters(phone: "+15551234567", purpose: "recovery"), "invalid params: password recovery needs an 'email'"),
            (Methods.SendCode.Parameters(email: "a@example.com", purpose: "login"), "invalid params: 'purpose' must be sign_in or recovery"),
            (Methods.SendCode.Parameters(email: "a@example.com", redirectTo: "http://evil.example/cb"),
             "invalid params: an http:// 'redirect_to' must be a loopback address such as http://127.0.0.1:PORT/callback"),
            (Methods.VerifyCode.Parameters(phone: "+15551234567", code: " 123456 ", type: "phone_change"), nil),
            (Methods.VerifyCode.Parameters(email: "a@example.com", code: "  "), "invalid params: 'code' must be the code that was sent"),
            (Methods.VerifyCode.Parameters(email: "a@example.com", code: "1", type: "otp"),
             "invalid params: 'type' must be one of email, sms, signup, magiclink, recovery, email_change, phone_change"),
            (Methods.SignInWithIdToken.Parameters(provider: "apple", idToken: "eyJ.x.y"), nil),
            (Methods.SignInWithIdToken.Parameters(provider: "g/oogle", idToken: "eyJ.x.y"),
             "invalid params: 'provider' must be a provider name such as google or apple"),
            (Methods.SignInWithIdToken.Parameters(provider: "apple", idToken: ""), "invalid params: 'id_token' must not be empty"),
            (Methods.OAuthBegin.Parameters(provider: "github", redirectTo: "com.example.app://cb"), nil),
            (Methods.OAuthBegin.Parameters(provider: "git hub", redirectTo: "app://cb"),
             "invalid params: 'provider' must be a provider name such as google or github"),
            (Methods.OAuthComplete.Parameters(callbackURL: "http://127.0.0.1:9/cb?code=x"), nil),
            (Methods.OAuthComplete.Parameters(callbackURL: "/cb?code=x"), "invalid params: 'callback_url' must be the full URL the browser was sent to"),
            (Methods.UpdateUser.Parameters(password: "new", nonce: " 123456 "), nil),
            (Methods.UpdateUser.Parameters(nonce: "123456"), "invalid params: nothing to change: give 'email', 'phone', 'password' or 'data'"),
            (Methods.UpdateUser.Parameters(password: ""), "invalid params: 'password' must not be empty"),
            (Methods.UpdateUser.Parameters(email: "b@example.com", nonce: "123456"),
             "invalid params: 'nonce' goes with 'password': it confirms a password change"),
            (Methods.UpdateUser.Parameters(password: "new", nonce: " "), "invalid params: 'nonce' must be the code user.reauthenticate had sent"),
        ]
        for (parameters, expected) in cases { #expect(validationMessage(parameters) == expected, "\(parameters)") }
    }
}
