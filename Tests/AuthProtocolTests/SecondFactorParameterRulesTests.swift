import AuthProtocol
import Testing

/// The rules of the second-factor methods' parameters.
@Suite struct SecondFactorParameterRulesTests {
    static let uuid = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"

    @Test func eachTypeLetsAGoodValueThroughAndNamesTheFirstRuleABadOneBreaks() {
        let long = String(repeating: "x", count: 257)
        let cases: [(any ValidatedParameters, String?)] = [
            (Methods.EnrollFactor.Parameters(factorType: "totp", friendlyName: "Laptop", issuer: "Example", phone: "  "), nil),
            (Methods.EnrollFactor.Parameters(factorType: "phone", phone: "+15551234567"), nil),
            (Methods.EnrollFactor.Parameters(factorType: "webauthn"), "invalid params: 'factor_type' must be totp or phone"),
            (Methods.EnrollFactor.Parameters(factorType: "totp", friendlyName: long, issuer: long),
             "invalid params: 'friendly_name' must be at most 256 characters"),
            (Methods.EnrollFactor.Parameters(factorType: "totp", issuer: long), "invalid params: 'issuer' must be at most 256 characters"),
            (Methods.EnrollFactor.Parameters(factorType: "phone", phone: long), "invalid params: 'phone' must be at most 256 characters"),
            (Methods.EnrollFactor.Parameters(factorType: "phone", issuer: "Example"),
             "invalid params: a phone factor needs 'phone', the number in E.164 form (+15551234567)"),
            (Methods.EnrollFactor.Parameters(factorType: "totp", phone: "+15551234567"), "invalid params: 'phone' is for phone factors"),
            (Methods.EnrollFactor.Parameters(factorType: "phone", issuer: "Example", phone: "+15551234567"), "invalid params: 'issuer' is for TOTP factors"),
            (Methods.ChallengeFactor.Parameters(factorID: " \(Self.uuid) ", channel: "whatsapp"), nil),
            (Methods.ChallengeFactor.Parameters(factorID: "../x", channel: "fax"),
             "invalid params: 'factor_id' must be a factor's id as 'authctl mfa list' shows it (a UUID)"),
            (Methods.ChallengeFactor.Parameters(factorID: Self.uuid, channel: "fax"), "invalid params: 'channel' must be sms or whatsapp"),
            (Methods.VerifyFactor.Parameters(factorID: Self.uuid, challengeID: Self.uuid, code: "123456"), nil),
            (Methods.VerifyFactor.Parameters(factorID: Self.uuid, code: String(repeating: "1", count: 65)),
             "invalid params: 'code' must be the factor's current code"),
            (Methods.VerifyFactor.Parameters(factorID: Self.uuid, challengeID: "x", code: "123456"),
             "invalid params: 'challenge_id' must be a factor's id as 'authctl mfa list' shows it (a UUID)"),
            (Methods.UnenrollFactor.Parameters(factorID: Self.uuid), nil),
            (Methods.UnenrollFactor.Parameters(factorID: ""), "invalid params: 'factor_id' must be a factor's id as 'authctl mfa list' shows it (a UUID)"),
        ]
        for (parameters, expected) in cases { #expect(validationMessage(parameters) == expected, "\(parameters)") }
    }
}
