import AuthProtocol
import FoundationEssentials

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
    /// With `redirectTo` (an email only) the emailed link leads back there and signs in through
    /// `completeBrowserFlow` or `waitForBrowserFlow` with the result's `flowID`.
    public func sendCode(email: String? = nil, phone: String? = nil, purpose: String = "sign_in", createUser: Bool = false,
                         captchaToken: String? = nil, redirectTo: String? = nil) async throws(AuthdError) -> Methods.SendCode.Result {
        try await call(Methods.SendCode.self, .init(profile: profile, email: email, phone: phone, purpose: purpose, createUser: createUser,
                                                    captchaToken: captchaToken, redirectTo: redirectTo))
    }

    /// Sends a confirmation again: `type` `signup`, `sms`, `email_change` or `phone_change` (by
    /// the address when nil).
    public func resend(email: String? = nil, phone: String? = nil, type: String? = nil, redirectTo: String? = nil,
                       captchaToken: String? = nil) async throws(AuthdError) -> Methods.Resend.Result {
        try await call(Methods.Resend.self, .init(profile: profile, email: email, phone: phone, type: type, redirectTo: redirectTo, captchaToken: captchaToken))
    }

    /// Starts a browser sign-in with `provider` (PKCE); open the result's `url`, then complete it.
    public func beginBrowserSignIn(provider: String, redirectTo: String, scopes: String? = nil) async throws(AuthdError) -> Methods.OAuthBegin.Result {
        try await call(Methods.OAuthBegin.self, .init(profile: profile, provider: provider, redirectTo: redirectTo, scopes: scopes))
    }

    /// Starts an enterprise SSO sign-in for an email `domain` (or an SSO `providerID`); open the
    /// result's `url`, then complete it.
    public func beginSingleSignOn(domain: String? = nil, providerID: String? = nil, redirectTo: String) async throws(AuthdError) -> Methods.OAuthBegin.Result {
        try await call(Methods.SingleSignOnBegin.self, .init(profile: profile, domain: domain, providerID: providerID, redirectTo: redirectTo))
    }

    /// Hands over the URL the browser (or an emailed link) came back to, completing that flow.
    public func completeBrowserFlow(callbackURL: String, flowID: String? = nil) async throws(AuthdError) -> SessionStatus {
        try await call(Methods.OAuthComplete.self, .init(profile: profile, flowID: flowID, callbackURL: callbackURL))
    }

    /// Waits until someone else (`authctl open-url`) completes the flow.
    public func waitForBrowserFlow(_ flowID: String) async throws(AuthdError) -> SessionStatus {
        // A flow waits five minutes at most; a little longer here, for authd to say it expired.
        try await call(Methods.OAuthWait.self, .init(profile: profile, flowID: flowID), timeout: 310)
    }

    /// The identities linked to the user.
    public func listIdentities() async throws(AuthdError) -> Methods.ListIdentities.Result {
        try await call(Methods.ListIdentities.self, ProfileParameters(profile: profile))
    }

    /// Starts linking `provider`'s identity in a browser; open the result's `url`, then complete it.
    public func beginLinkingIdentity(provider: String, redirectTo: String, scopes: String? = nil) async throws(AuthdError) -> Methods.LinkIdentity.Result {
        try await call(Methods.LinkIdentity.self, .init(profile: profile, provider: provider, redirectTo: redirectTo, scopes: scopes))
    }

    /// Unlinks an identity (not the last one).
    public func unlinkIdentity(id: String) async throws(AuthdError) -> Methods.UnlinkIdentity.Result {
        try await call(Methods.UnlinkIdentity.self, .init(profile: profile, identityID: id))
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
    /// token, refreshes the session once more at once and from then on. Stop refreshing before,
    /// and delete the app's copy of the tokens afterwards, whatever the outcome: presenting it
    /// again makes the server end the whole session, authd's included. A status with
    /// `degraded` set says the second refresh is still to be retried (until then the copy still
    /// reaches the session). Read a stored session with `StoredSession.refreshToken(in:)`.
    /// The call is never sent twice: when no answer comes (`daemonUnavailable`, `timedOut`), authd
    /// may have taken the session over all the same, so read `status()` before trying again, and
    /// try only if it does not show the app's user.
    public func signIn(refreshToken: String) async throws(AuthdError) -> SessionStatus {
        try await call(Methods.SignInWithRefreshToken.self, .init(profile: profile, refreshToken: refreshToken))
    }

    /// One request on the client's connection; a minute covers the server's own timeout.
    func call<M: RPCMethod>(_ method: M.Type, _ parameters: M.Parameters, timeout: TimeInterval = 120) async throws(AuthdError) -> M.Result {
        let link = self.link
        return try await lane.run { () throws(AuthdError) in try link.call(method, parameters, timeout: timeout) }
    }
}
