// The rules of `session.signInAnonymously` and `session.signInWithRefreshToken` parameters beyond
// their types, checked by the daemon once for every way a request comes in.

extension Methods.SignInAnonymously.Parameters: ValidatedParameters {
    /// A `captcha_token`, when given, must be well formed.
    public func validate() throws(RPCErrorObject) {
        try ParameterRules.checkCaptchaToken(captchaToken)
    }
}

extension Methods.SignInWithRefreshToken.Parameters: ValidatedParameters {
    /// The longest refresh token taken. GoTrue's are a dozen characters (v1) or a few dozen (v2);
    /// the bound keeps a wrong file's content from being sent.
    public static let maximumRefreshTokenBytes = 2048

    /// Refuses, before anything is sent, what cannot be a refresh token: empty, too long, with
    /// spaces or control characters, or an access token (a JWT) given by mistake. The message
    /// never quotes the input: it may be a secret all the same.
    public func validate() throws(RPCErrorObject) {
        let bytes = Array(refreshToken.utf8)
        guard !bytes.isEmpty else { throw ParameterRules.invalid("'refresh_token' must not be empty") }
        guard bytes.count <= Self.maximumRefreshTokenBytes, bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw ParameterRules.invalid("'refresh_token' must be the session's refresh token (printable ASCII without spaces, at most \(Self.maximumRefreshTokenBytes) bytes)")
        }
        if refreshToken.hasPrefix("eyJ"), refreshToken.split(separator: ".", omittingEmptySubsequences: false).count == 3 {
            throw ParameterRules.invalid("'refresh_token' holds an access token (a JWT): give the session's refresh_token instead, which is the short opaque one")
        }
    }
}
