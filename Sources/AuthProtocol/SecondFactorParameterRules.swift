import FoundationGaps

// The rules of the second-factor methods' parameters (`SecondFactorMethods`) beyond their types,
// checked by the daemon once for every way a request comes in, in the order its handlers ran them.

extension Methods.EnrollFactor.Parameters: ValidatedParameters {
    /// The kinds of factor authd enrolls, as AuthCore's `FactorKind` names them (a test keeps the
    /// two equal).
    public static let factorTypes = ["totp", "phone"]

    /// `factor_type` one of `factorTypes`; short texts of at most 256 characters; a phone factor
    /// needs `phone` and takes no `issuer`, a TOTP factor takes no `phone`.
    public func validate() throws(RPCErrorObject) {
        guard Self.factorTypes.contains(factorType) else { throw ParameterRules.invalid("'factor_type' must be totp or phone") }
        try ParameterRules.checkShortText(friendlyName, "friendly_name")
        try ParameterRules.checkShortText(issuer, "issuer")
        try ParameterRules.checkShortText(phone, "phone")
        // Empty texts count as absent, as they are sent.
        let hasPhone = ParameterRules.shortText(phone) != nil, hasIssuer = ParameterRules.shortText(issuer) != nil
        switch factorType {
        case "phone" where !hasPhone: throw ParameterRules.invalid("a phone factor needs 'phone', the number in E.164 form (+15551234567)")
        case "totp" where hasPhone: throw ParameterRules.invalid("'phone' is for phone factors")
        case "phone" where hasIssuer: throw ParameterRules.invalid("'issuer' is for TOTP factors")
        default: break
        }
    }
}

extension Methods.ChallengeFactor.Parameters: ValidatedParameters {
    /// `factor_id` a UUID; `channel`, when given, `sms` or `whatsapp`.
    public func validate() throws(RPCErrorObject) {
        try ParameterRules.checkFactorID(factorID, "factor_id")
        if let channel, !["sms", "whatsapp"].contains(channel) { throw ParameterRules.invalid("'channel' must be sms or whatsapp") }
    }
}

extension Methods.VerifyFactor.Parameters: ValidatedParameters {
    /// `factor_id` a UUID; a `code` of 1 to 64 characters once trimmed; `challenge_id`, when
    /// given, a UUID.
    public func validate() throws(RPCErrorObject) {
        try ParameterRules.checkFactorID(factorID, "factor_id")
        let code = code.trimmingWhitespace()
        guard !code.isEmpty, code.count <= 64 else { throw ParameterRules.invalid("'code' must be the factor's current code") }
        if let challengeID { try ParameterRules.checkFactorID(challengeID, "challenge_id") }
    }
}

extension Methods.UnenrollFactor.Parameters: ValidatedParameters {
    /// `factor_id` a UUID.
    public func validate() throws(RPCErrorObject) {
        try ParameterRules.checkFactorID(factorID, "factor_id")
    }
}
