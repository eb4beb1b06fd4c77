import FoundationEssentials
import FoundationGaps

// The rules of the account methods' parameters (`AccountMethods`) beyond their types, checked by
// the daemon once for every way a request comes in. Checks run in the order the daemon's handlers
// ran them, so a request that breaks two rules is told of the same one.

extension Methods.SignUp.Parameters: ValidatedParameters {
    /// Exactly one of `email` and `phone`; a password; a well-formed `captcha_token`; a
    /// `redirect_to` only for an email, and a browser flow's.
    public func validate() throws(RPCErrorObject) {
        let toEmail = try ParameterRules.contactIsEmail(email: email, phone: phone)
        guard !password.isEmpty else { throw ParameterRules.invalid("'password' must not be empty") }
        try ParameterRules.checkCaptchaToken(captchaToken)
        try ParameterRules.checkLinkRedirect(redirectTo, toEmail: toEmail)
    }
}

extension Methods.SendCode.Parameters: ValidatedParameters {
    /// Exactly one of `email` and `phone`; `purpose` `sign_in` or `recovery` (email only); a
    /// well-formed `captcha_token`; a `redirect_to` only for an email, and a browser flow's.
    public func validate() throws(RPCErrorObject) {
        let toEmail = try ParameterRules.contactIsEmail(email: email, phone: phone)
        switch purpose ?? "sign_in" {
        case "sign_in": break
        case "recovery": guard toEmail else { throw ParameterRules.invalid("password recovery needs an 'email'") }
        default: throw ParameterRules.invalid("'purpose' must be sign_in or recovery")
        }
        try ParameterRules.checkCaptchaToken(captchaToken)
        try ParameterRules.checkLinkRedirect(redirectTo, toEmail: toEmail)
    }
}

extension Methods.VerifyCode.Parameters: ValidatedParameters {
    /// The types a one-time code is verified as, in AuthCore's `OTPType` order (a test keeps the
    /// two equal).
    public static let types = ["email", "sms", "signup", "magiclink", "recovery", "email_change", "phone_change"]

    /// Exactly one of `email` and `phone`; a `code` of 1 to 256 characters once trimmed; `type`
    /// one of `types`.
    public func validate() throws(RPCErrorObject) {
        try ParameterRules.contactIsEmail(email: email, phone: phone)
        let code = code.trimmingWhitespace()
        guard !code.isEmpty, code.count <= 256 else { throw ParameterRules.invalid("'code' must be the code that was sent") }
        if let type, !Self.types.contains(type) {
            throw ParameterRules.invalid("'type' must be one of \(Self.types.joined(separator: ", "))")
        }
    }
}

extension Methods.SignInWithIdToken.Parameters: ValidatedParameters {
    /// `provider` must be a provider's name and `id_token` not empty.
    public func validate() throws(RPCErrorObject) {
        guard ParameterRules.isProviderName(provider) else { throw ParameterRules.invalid("'provider' must be a provider name such as google or apple") }
        guard !idToken.isEmpty else { throw ParameterRules.invalid("'id_token' must not be empty") }
    }
}

extension Methods.OAuthBegin.Parameters: ValidatedParameters {
    /// `provider` must be a provider's name and `redirect_to` a browser flow's (`oauth.begin` and
    /// `identities.link` alike).
    public func validate() throws(RPCErrorObject) {
        guard ParameterRules.isProviderName(provider) else { throw ParameterRules.invalid("'provider' must be a provider name such as google or github") }
        try ParameterRules.checkRedirect(redirectTo)
    }
}

extension Methods.OAuthComplete.Parameters: ValidatedParameters {
    /// `callback_url` must be an absolute URL.
    public func validate() throws(RPCErrorObject) {
        guard let callback = URL(string: callbackURL), callback.scheme != nil else {
            throw ParameterRules.invalid("'callback_url' must be the full URL the browser was sent to")
        }
    }
}

extension Methods.UpdateUser.Parameters: ValidatedParameters {
    /// Something to change; a password, when given, not empty; a `nonce` only with a password,
    /// of 1 to 256 characters once trimmed.
    public func validate() throws(RPCErrorObject) {
        guard email != nil || phone != nil || password != nil || data != nil else {
            throw ParameterRules.invalid("nothing to change: give 'email', 'phone', 'password' or 'data'")
        }
        if let password, password.isEmpty { throw ParameterRules.invalid("'password' must not be empty") }
        if let nonce = nonce?.trimmingWhitespace() {
            guard password != nil else { throw ParameterRules.invalid("'nonce' goes with 'password': it confirms a password change") }
            guard !nonce.isEmpty, nonce.count <= 256 else { throw ParameterRules.invalid("'nonce' must be the code user.reauthenticate had sent") }
        }
    }
}
