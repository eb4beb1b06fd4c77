// The rules of the sign-in page's parameters beyond their types, checked by the daemon once for
// every way a request comes in.

extension Methods.BeginInteractiveSignIn.Parameters: ValidatedParameters {
    /// The longest email address taken (RFC 5321's path limit).
    public static let maximumEmailLength = 254

    /// `aal`, when given, is `aal1` or `aal2`; `method` names a form of the page
    /// (`InteractiveSignInMethod.names`); `email`
    /// is a plausible address, at most `maximumEmailLength` characters and without control
    /// characters: it is written into the page's field.
    public func validate() throws(RPCErrorObject) {
        if let aal, !["aal1", "aal2"].contains(aal) { throw ParameterRules.invalid("'aal' must be aal1 or aal2") }
        if let method, !InteractiveSignInMethod.names.contains(method) {
            throw ParameterRules.invalid("'method' must be one of \(InteractiveSignInMethod.names.joined(separator: ", "))")
        }
        guard let email = ParameterRules.shortText(email) else { return }
        guard email.count <= Self.maximumEmailLength, email.contains("@"),
              !email.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw ParameterRules.invalid("'email' must be an email address of at most \(Self.maximumEmailLength) characters")
        }
    }
}

extension InteractiveSignInParameters: ValidatedParameters {
    /// `flow_id` must be one `session.beginInteractiveSignIn` could have answered: 1 to 64
    /// letters and digits.
    public func validate() throws(RPCErrorObject) {
        guard !flowID.isEmpty, flowID.count <= 64, flowID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw ParameterRules.invalid("'flow_id' must be the flow_id session.beginInteractiveSignIn answered")
        }
    }
}
