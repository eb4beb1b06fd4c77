import FoundationGaps

// The rules of `session.resend`, `identities.unlink` and `sso.begin` parameters beyond their types
// (`identities.link` shares `oauth.begin`'s), checked by the daemon once for every way a request
// comes in, in the order its handlers ran them.

extension Methods.Resend.Parameters: ValidatedParameters {
    /// What a resend may confirm, in AuthCore's `ResendRequest.Purpose` order (a test keeps the
    /// two equal); the first and third go with an email, the others with a phone.
    public static let types = ["signup", "sms", "email_change", "phone_change"]

    /// Exactly one of `email` and `phone`; `type`, when given, one of `types` that goes with the
    /// address given; a well-formed `captcha_token`; a `redirect_to` only for an email, and a
    /// browser flow's.
    public func validate() throws(RPCErrorObject) {
        let toEmail = try ParameterRules.contactIsEmail(email: email, phone: phone)
        if let type {
            guard Self.types.contains(type) else { throw ParameterRules.invalid("'type' must be one of \(Self.types.joined(separator: ", "))") }
            let forEmail = type == "signup" || type == "email_change"
            guard forEmail == toEmail else { throw ParameterRules.invalid("'type' \(type) goes with \(forEmail ? "an 'email'" : "a 'phone'")") }
        }
        try ParameterRules.checkCaptchaToken(captchaToken)
        try ParameterRules.checkLinkRedirect(redirectTo, toEmail: toEmail)
    }
}

extension Methods.UnlinkIdentity.Parameters: ValidatedParameters {
    /// `identity_id` must be a UUID as given (untrimmed: it comes from `identities.list`).
    public func validate() throws(RPCErrorObject) {
        guard UUIDText.canonical(identityID) != nil else {
            throw ParameterRules.invalid("'identity_id' must be an identity's id as identities.list shows it (a UUID)")
        }
    }
}

extension Methods.SingleSignOnBegin.Parameters: ValidatedParameters {
    /// Exactly one of `domain` (an email domain) and `provider_id` (a UUID), each trimmed; then
    /// `redirect_to` a browser flow's.
    public func validate() throws(RPCErrorObject) {
        switch (domain?.trimmingWhitespace(), providerID?.trimmingWhitespace()) {
        case (let domain?, nil) where Self.isDomainName(domain): break
        case (nil, let id?):
            guard UUIDText.canonical(id) != nil else { throw ParameterRules.invalid("'provider_id' must be an SSO provider's id (a UUID)") }
        case (_?, nil): throw ParameterRules.invalid("'domain' must be an email domain such as example.com")
        default: throw ParameterRules.invalid("give exactly one of 'domain' and 'provider_id'")
        }
        try ParameterRules.checkRedirect(redirectTo)
    }

    /// Letters, digits, hyphens and dots, with a dot and no empty label: what an email domain is.
    static func isDomainName(_ text: String) -> Bool {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return text.utf8.count <= 253 && labels.count >= 2 && labels.allSatisfy { label in
            !label.isEmpty && label.count <= 63 && label.utf8.allSatisfy { $0 == 0x2D || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
        }
    }
}
