import AuthProtocol

/// Typed calls for signing in and for the signed-in user, so that an app moving its session into
/// authd keeps every flow it had. Each goes to `profile` (authd's default when nil). Refusals by
/// the server come as `.signInRefused` with a message that says what to do (a CAPTCHA-protected
/// project's missing token included); the rest as for `token()`.
extension AuthdClient {
    /// Email and password sign-in; `captchaToken` for a project that protects it with a CAPTCHA.
    public func signIn(email: String, password: String, captchaToken: String? = nil) async throws(AuthdError) -> SessionStatus {
        try await call(Methods.SignInWithPassword.self, .init(profile: profile, email: email, password: password, captchaToken: captchaToken))
    }

    /// Creates an account (with `email` or `phone`): signed in at once, or `confirmationSent`
    /// and then `verifyCode`.
    public func signUp(email: String? = nil, phone: String? = nil, password: String, data: [String: JSONValue]? = nil,
                       captchaToken: String? = nil) async throws(AuthdError) -> Methods.SignUp.Result {
        try await call(Methods.SignUp.self, .init(profile: profile, email: email, phone: phone, password: password, data: data,
                                                  captchaToken: captchaToken))
    }

    /// Has the server send a one-time code by email or SMS: `purpose` `sign_in` (the default) or
    /// `recovery` (email only).
    public func sendCode(email: String? = nil, phone: String? = nil, purpose: String = "sign_in", createUser: Bool = false,
                         captchaToken: String? = nil) async throws(AuthdError) -> Methods.SendCode.Result {
        try await call(Methods.SendCode.self, .init(profile: profile, email: email, phone: phone, purpose: purpose, createUser: createUser,
                                                    captchaToken: captchaToken))
    }

    /// Signs in with a code that was sent; `type` as `session.verifyCode` takes it (`email`,
    /// `sms`, `signup`, `recovery`, …; by the address when nil).
    public func verifyCode(email: String? = nil, phone: String? = nil, code: String, type: String? = nil) async throws(AuthdError) -> SessionStatus {
        try await call(Methods.VerifyCode.self, .init(profile: profile, email: email, phone: phone, code: code, type: type))
    }

    /// Signs in with an OpenID Connect ID token from Apple or Google; `nonce` is the raw one.
    public func signIn(provider: String, idToken: String, accessToken: String? = nil, nonce: String? = nil) async throws(AuthdError) -> SessionStatus {
        try await call(Methods.SignInWithIdToken.self, .init(profile: profile, provider: provider, idToken: idToken, accessToken: accessToken,
                                                             nonce: nonce))
    }

    /// Signs out: `local` (this desktop), `global` (every session of the user) or `others`.
    public func signOut(scope: String = "local") async throws(AuthdError) -> Methods.SignOut.Result {
        try await call(Methods.SignOut.self, .init(profile: profile, scope: scope))
    }

    /// The signed-in user as the server describes it.
    public func user() async throws(AuthdError) -> UserResult {
        try await call(Methods.GetUser.self, ProfileParameters(profile: profile))
    }

    /// Changes the signed-in user; `nonce` is the code `reauthenticate()` had sent, for a
    /// project with secure password change (the error's reason says when it is wanted:
    /// `reauthentication_needed`).
    public func updateUser(email: String? = nil, phone: String? = nil, password: String? = nil, data: [String: JSONValue]? = nil,
                           nonce: String? = nil) async throws(AuthdError) -> UserResult {
        try await call(Methods.UpdateUser.self, .init(profile: profile, email: email, phone: phone, password: password, data: data, nonce: nonce))
    }

    /// Has the server send the code a password change needs on a project with secure password change.
    public func reauthenticate() async throws(AuthdError) -> Methods.Reauthenticate.Result {
        try await call(Methods.Reauthenticate.self, ProfileParameters(profile: profile))
    }

    /// The access token's claims and whether authd verified them with the project's published
    /// keys; never the token itself.
    public func claims() async throws(AuthdError) -> Methods.Claims.Result {
        try await call(Methods.Claims.self, ProfileParameters(profile: profile))
    }

    /// The account's second factors and the session's assurance level (`aal`, `next_aal`).
    public func listFactors() async throws(AuthdError) -> Methods.ListFactors.Result {
        try await call(Methods.ListFactors.self, ProfileParameters(profile: profile))
    }

    /// Enrolls a second factor: `totp` (the answer carries the secret and `otpauth://` URI, once)
    /// or `phone` with `phone`. It raises nothing until `verifyFactor` verifies a code of it.
    public func enrollFactor(type: String = "totp", friendlyName: String? = nil, issuer: String? = nil,
                             phone: String? = nil) async throws(AuthdError) -> Methods.EnrollFactor.Result {
        try await call(Methods.EnrollFactor.self, .init(profile: profile, factorType: type, friendlyName: friendlyName, issuer: issuer, phone: phone))
    }

    /// Starts a verification of a factor; for a phone factor the server sends the code now.
    public func challengeFactor(id: String, channel: String? = nil) async throws(AuthdError) -> Methods.ChallengeFactor.Result {
        try await call(Methods.ChallengeFactor.self, .init(profile: profile, factorID: id, channel: channel))
    }

    /// Verifies a factor's code and raises the session to `aal2` (`MFA_CHALLENGE_VERIFIED`).
    /// A TOTP code needs no `challengeID`; a phone's belongs to the challenge that sent it.
    /// A wrong code is `.signInRefused`.
    public func verifyFactor(id: String, code: String, challengeID: String? = nil) async throws(AuthdError) -> SessionStatus {
        try await call(Methods.VerifyFactor.self, .init(profile: profile, factorID: id, challengeID: challengeID, code: code))
    }

    /// Removes a factor (a verified one only from an `aal2` session: `.mfaRequired` otherwise).
    public func unenrollFactor(id: String) async throws(AuthdError) -> Methods.UnenrollFactor.Result {
        try await call(Methods.UnenrollFactor.self, .init(profile: profile, factorID: id))
    }

    /// Signs in as a new anonymous user (the project must allow anonymous sign-ins); give it an
    /// email address later with `updateUser(email:)` to keep it.
    public func signInAnonymously(data: [String: JSONValue]? = nil, captchaToken: String? = nil) async throws(AuthdError) -> SessionStatus {
        try await call(Methods.SignInAnonymously.self, .init(profile: profile, data: data, captchaToken: captchaToken))
    }

    /// Moves a session this app kept in its own storage into authd: authd exchanges the refresh
    /// token at once and refreshes the session from then on. Delete the app's copy of the
    /// tokens afterwards, whatever the outcome: it is spent once authd has exchanged it. Read a
    /// stored session with `StoredSession.refreshToken(in:)`.
    public func signIn(refreshToken: String) async throws(AuthdError) -> SessionStatus {
        try await call(Methods.SignInWithRefreshToken.self, .init(profile: profile, refreshToken: refreshToken))
    }

    /// One request on the client's connection; a minute covers the server's own timeout.
    private func call<M: RPCMethod>(_ method: M.Type, _ parameters: M.Parameters) async throws(AuthdError) -> M.Result {
        let link = self.link
        return try await lane.run { () throws(AuthdError) in try link.call(method, parameters, timeout: 120) }
    }
}
