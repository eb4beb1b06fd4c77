// The rules of `session.signInWithPassword`, `session.signOut` and `apps.decide` parameters
// beyond their types, checked by the daemon once for every way a request comes in.

extension Methods.SignInWithPassword.Parameters: ValidatedParameters {
    /// `email` and `password` must not be empty; a `captcha_token` must be well formed.
    public func validate() throws(RPCErrorObject) {
        guard !email.isEmpty, !password.isEmpty else { throw ParameterRules.invalid("'email' and 'password' must not be empty") }
        try ParameterRules.checkCaptchaToken(captchaToken)
    }
}

extension Methods.SignOut.Parameters: ValidatedParameters {
    /// The scopes a sign-out takes, as AuthCore's `SignOutScope` names them (a test keeps the two
    /// equal); `local` when absent.
    public static let scopes = ["local", "global", "others"]

    /// `scope` must be one of `scopes`.
    public func validate() throws(RPCErrorObject) {
        if let scope, !Self.scopes.contains(scope) { throw ParameterRules.invalid("'scope' must be local, global or others") }
    }
}

extension Methods.DecideApp.Parameters: ValidatedParameters {
    /// `decision` must be `allow` or `deny`; `app` an executable path or an app id of at most
    /// 4096 characters.
    public func validate() throws(RPCErrorObject) {
        guard ["allow", "deny"].contains(decision) else { throw ParameterRules.invalid("'decision' must be allow or deny") }
        guard !app.isEmpty, app.count <= 4096 else { throw ParameterRules.invalid("'app' must be an executable path or an app id") }
    }
}
