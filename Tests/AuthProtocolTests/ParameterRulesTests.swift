import AuthProtocol
import Testing

/// What a parameter type's `validate()` answers: nil when it lets the parameters through, else
/// the error's message (always a -32602, checked here once for all the tables).
func validationMessage(_ parameters: any ValidatedParameters) -> String? {
    do throws(RPCErrorObject) {
        try parameters.validate()
        return nil
    } catch {
        #expect(error.code == RPCErrorObject.invalidParamsCode)
        return error.message
    }
}

/// The rules of `session.signInWithPassword`, `session.signOut` and `apps.decide`, and those
/// several methods share.
@Suite struct ParameterRulesTests {
    @Test func sessionAndAppParameters() {
        let cases: [(any ValidatedParameters, String?)] = [
            (Methods.SignInWithPassword.Parameters(email: "a@example.com", password: "pw"), nil),
            (Methods.SignInWithPassword.Parameters(email: "", password: "pw"), "invalid params: 'email' and 'password' must not be empty"),
            (Methods.SignInWithPassword.Parameters(email: "a@example.com", password: "pw", captchaToken: "has space"),
             "invalid params: 'captcha_token' must be the token a solved CAPTCHA gave (printable ASCII without spaces, at most 8192 bytes)"),
            (Methods.SignOut.Parameters(scope: "others"), nil),
            (Methods.SignOut.Parameters(scope: "everywhere"), "invalid params: 'scope' must be local, global or others"),
            (Methods.DecideApp.Parameters(app: "/usr/bin/app", decision: "deny"), nil),
            (Methods.DecideApp.Parameters(app: "", decision: "maybe"), "invalid params: 'decision' must be allow or deny"),
            (Methods.DecideApp.Parameters(app: String(repeating: "a", count: 4097), decision: "allow"),
             "invalid params: 'app' must be an executable path or an app id"),
        ]
        for (parameters, expected) in cases { #expect(validationMessage(parameters) == expected, "\(parameters)") }
    }

    @Test func aLoopbackRedirectBindsItsFlow() {
        #expect(ParameterRules.isLoopbackRedirect("HTTP://127.0.0.1:8080/cb"))
        #expect(!ParameterRules.isLoopbackRedirect("com.example.app://cb"))
    }
}
