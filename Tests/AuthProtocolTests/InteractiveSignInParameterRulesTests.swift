import AuthProtocol
import Testing

/// The rules of the sign-in page's methods: the forms a page opens on, the address it fills in,
/// the page an app names.
@Suite struct InteractiveSignInParameterRulesTests {
    @Test func eachTypeLetsAGoodValueThroughAndNamesTheRuleABadOneBreaks() {
        let forms = "password, email_code, phone_code, sign_up, forgot_password, sso"
        let cases: [(any ValidatedParameters, String?)] = [
            (Methods.BeginInteractiveSignIn.Parameters(), nil),
            (Methods.BeginInteractiveSignIn.Parameters(method: "sign_up", email: "  a@example.com "), nil),
            (Methods.BeginInteractiveSignIn.Parameters(email: " "), nil),
            (Methods.BeginInteractiveSignIn.Parameters(aal: "aal2"), nil),
            (Methods.BeginInteractiveSignIn.Parameters(aal: "aal3"), "invalid params: 'aal' must be aal1 or aal2"),
            (Methods.BeginInteractiveSignIn.Parameters(method: "github"), "invalid params: 'method' must be one of \(forms)"),
            (Methods.BeginInteractiveSignIn.Parameters(method: "anonymous"), "invalid params: 'method' must be one of \(forms)"),
            (Methods.BeginInteractiveSignIn.Parameters(email: "not an address"),
             "invalid params: 'email' must be an email address of at most 254 characters"),
            (Methods.BeginInteractiveSignIn.Parameters(email: "a@example.com\u{1B}[2J"),
             "invalid params: 'email' must be an email address of at most 254 characters"),
            (Methods.BeginInteractiveSignIn.Parameters(email: String(repeating: "a", count: 250) + "@example.com"),
             "invalid params: 'email' must be an email address of at most 254 characters"),
            (InteractiveSignInParameters(flowID: "Pg4Xq2sL9aWmZt7c"), nil),
            (InteractiveSignInParameters(flowID: ""), "invalid params: 'flow_id' must be the flow_id session.beginInteractiveSignIn answered"),
            (InteractiveSignInParameters(flowID: "../../x"), "invalid params: 'flow_id' must be the flow_id session.beginInteractiveSignIn answered"),
            (InteractiveSignInParameters(flowID: String(repeating: "A", count: 65)),
             "invalid params: 'flow_id' must be the flow_id session.beginInteractiveSignIn answered"),
        ]
        for (parameters, expected) in cases { #expect(validationMessage(parameters) == expected, "\(parameters)") }
    }
}
