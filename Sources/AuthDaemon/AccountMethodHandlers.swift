import AuthCore
import AuthProtocol
import FoundationEssentials
import FoundationGaps

/// Handlers of the sign-in methods beyond the password and of the user's record (`AccountMethods`).
extension DaemonMethods {
    static func registerAccountMethods(_ table: inout MethodTable, registry: ProfileRegistry) {
        table.register(Methods.SignUp.self, for: .profileUsers) { parameters, connection throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            let address = contactAddress(email: parameters.email, phone: parameters.phone)
            let request = SignUpRequest(address: address, password: parameters.password, metadata: try encodeMetadata(parameters.data))
            let captcha = parameters.captchaToken
            let outcome: Result<(flow: OAuthFlow?, outcome: SignUpOutcome), SignInFailure>
            if let redirectTo = parameters.redirectTo {
                let bind = ParameterRules.isLoopbackRedirect(redirectTo)
                outcome = await profile.browser.beginEmailLink(to: address.value, recovery: false, redirectTo: redirectTo, owner: connection.client.app,
                                                               bind: bind) { link in
                    var linked = request
                    linked.link = link
                    return await profile.accounts.signUp(linked, captchaToken: captcha)
                }.map { ($0.flow, $0.sent) }
            } else {
                outcome = await profile.accounts.signUp(request, captchaToken: captcha).map { (nil, $0) }
            }
            switch outcome {
            case .success((let flow, .confirmationSent)):
                return .init(status: await profile.session.status(), confirmationSent: true, sentTo: address.value, flowID: flow?.id)
            case .success((let flow, .signedIn)):
                // Confirmed at once: no link will come.
                if let flow { await profile.browser.cancel(flow.id) }
                return .init(status: await profile.session.status(), confirmationSent: false)
            case .failure(let failure):
                throw SignInErrorText.error(failure, method: .signUp)
            }
        }

        table.register(Methods.SendCode.self, for: .profileUsers) { parameters, connection throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            let address = contactAddress(email: parameters.email, phone: parameters.phone)
            // `validate()` has let through only sign_in and recovery, and recovery only to an email.
            let recovery = parameters.purpose == "recovery"
            let request: CodeRequest = recovery ? .recovery(email: address.value) : .signIn(address, createUser: parameters.createUser ?? false)
            return try await sendMessage(profile, to: address, redirectTo: parameters.redirectTo, recovery: recovery,
                                         owner: connection.client.app) { link in
                await profile.accounts.sendCode(request, captchaToken: parameters.captchaToken, link: link)
            }
        }

        table.register(Methods.VerifyCode.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            let address = contactAddress(email: parameters.email, phone: parameters.phone)
            let code = parameters.code.trimmingWhitespace()
            // `validate()` has let through only the types there are.
            let type = parameters.type.flatMap(OTPType.init(rawValue:)) ?? (address.field == "email" ? .email : .sms)
            let event: SessionEvent = type == .recovery ? .passwordRecovery : .signedIn
            switch await profile.accounts.signIn(.oneTimeCode(address, code: code, type: type), announcing: event) {
            case .success: return await profile.session.status()
            case .failure(let failure): throw SignInErrorText.error(failure, method: .code)
            }
        }

        table.register(Methods.SignInWithIdToken.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            let credential = SignInCredential.idToken(provider: parameters.provider, idToken: parameters.idToken,
                                                      accessToken: parameters.accessToken, nonce: parameters.nonce)
            switch await profile.accounts.signIn(credential) {
            case .success: return await profile.session.status()
            case .failure(let failure): throw SignInErrorText.error(failure, method: .idToken)
            }
        }

        table.register(Methods.MakeNonce.self, for: .everyone) { _, _ in
            let nonce = PKCE.makeNonce()
            return .init(nonce: nonce.raw, nonceSHA256: nonce.sha256Hex)
        }

        table.register(Methods.OAuthBegin.self, for: .profileUsers) { parameters, connection throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            return try await beginBrowserFlow(profile, .provider(parameters.provider, scopes: parameters.scopes), redirectTo: parameters.redirectTo,
                                              owner: connection.client.app)
        }

        table.register(Methods.OAuthComplete.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            // `validate()` has let through only an absolute URL: this reads it, and cannot fail.
            guard let callback = URL(string: parameters.callbackURL) else { throw ParameterRules.invalid("'callback_url' must be the full URL the browser was sent to") }
            switch await profile.browser.complete(callback: callback, flowID: parameters.flowID) {
            case .success: return await profile.session.status()
            case .failure(let failure): throw SignInErrorText.error(failure, method: .browser)
            }
        }

        table.register(Methods.OAuthWait.self, for: .profileUsers) { parameters, connection throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            // A client that hangs up stops waiting, and gives its connection's slot back.
            let browser = profile.browser
            switch await connection.hangUp.cancellingOnEnd({ await browser.wait(for: parameters.flowID) }) {
            case .success: return await profile.session.status()
            case .failure(let failure): throw SignInErrorText.error(failure, method: .browser)
            }
        }

        table.register(Methods.GetUser.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            switch await profile.accounts.user() {
            case .success(let record): return UserResult(profile: profile.profile, user: try userJSON(record))
            case .failure(let failure): throw SignInErrorText.error(failure)
            }
        }

        table.register(Methods.UpdateUser.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            let nonce = parameters.nonce?.trimmingWhitespace()
            let changes = UserChanges(email: parameters.email, phone: parameters.phone, password: parameters.password,
                                      metadata: try encodeMetadata(parameters.data), nonce: nonce)
            switch await profile.accounts.updateUser(changes) {
            case .success(let record): return UserResult(profile: profile.profile, user: try userJSON(record))
            case .failure(let failure): throw SignInErrorText.error(failure)
            }
        }
    }

    static func registerClaims(_ table: inout MethodTable, registry: ProfileRegistry) {
        table.register(Methods.Claims.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            switch await profile.session.token(validFor: 0) {
            case .failure(let failure): throw StatusMapper.error(failure)
            case .success(let issued):
                guard let report = await profile.claims.report(for: issued.accessToken),
                      let claims = try? JSONDecoder().decode(JSONValue.self, from: report.claims) else {
                    throw .application(.serverError, "the server's access token is not a JWT: its claims cannot be read")
                }
                return .init(profile: profile.profile, claims: claims, algorithm: report.algorithm, keyID: report.keyID,
                             verified: report.verified, detail: report.detail)
            }
        }
    }

    static func registerReauthenticate(_ table: inout MethodTable, registry: ProfileRegistry) {
        table.register(Methods.Reauthenticate.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            switch await profile.accounts.reauthenticate() {
            case .success:
                // GoTrue sends to the email address when the user has one, else to the phone.
                let user = await profile.session.status().user
                if let email = user?.email, !email.isEmpty { return .init(sentTo: email, channel: "email") }
                if let phone = user?.phone, !phone.isEmpty { return .init(sentTo: phone, channel: "sms") }
                return .init(sentTo: nil, channel: nil)
            case .failure(let failure): throw SignInErrorText.error(failure)
            }
        }
    }

    /// The address of parameters whose `validate()` has checked that exactly one of `email` and
    /// `phone` is given (`ParameterRules.contactIsEmail`), trimmed.
    static func contactAddress(email: String?, phone: String?) -> ContactAddress {
        if let email = email?.trimmingWhitespace(), !email.isEmpty { return .email(email) }
        return .phone(phone?.trimmingWhitespace() ?? "")
    }

    /// Starts a browser flow with a redirect its parameters' `validate()` has checked: a loopback
    /// `http://` one binds the flow (only a redirect carrying its id completes it), an app's
    /// custom scheme does not. The address to open, which the server chose for linking and SSO,
    /// is handed out only when `BrowserURLRule` lets a browser open it; otherwise the flow is
    /// forgotten.
    static func beginBrowserFlow(_ profile: ProfileServices, _ start: BrowserFlowStart, redirectTo: String,
                                 owner: String) async throws(RPCErrorObject) -> Methods.OAuthBegin.Result {
        let loopback = ParameterRules.isLoopbackRedirect(redirectTo)
        switch await profile.browser.begin(start, redirectTo: redirectTo, owner: owner, bind: loopback) {
        case .success(let started):
            let url = started.url.absoluteString
            if let refusal = BrowserURLRule.refusal(of: url, projectURL: profile.session.server) {
                await profile.browser.cancel(started.flow.id)
                throw .application(.oauthFailed, "the server answered an address to open in the browser that authd refuses: \(refusal)")
            }
            return .init(flowID: started.flow.id, url: url, expiresIn: Int(OAuthFlowBook.lifetime))
        case .failure(let failure):
            throw SignInErrorText.error(failure, method: .browser)
        }
    }

    /// Has a code or link sent to `address` by `send` (given the link's target, nil for none).
    /// With `redirectTo` (an email's link, checked by the parameters' `validate()`) a PKCE flow is
    /// started first, which the link completes; the answer names it.
    static func sendMessage(_ profile: ProfileServices, to address: ContactAddress, redirectTo: String?, recovery: Bool, owner: String,
                            send: @Sendable (EmailLink?) async -> Result<Void, ServerFailure>) async throws(RPCErrorObject) -> Methods.SendCode.Result {
        let channel = address.field == "email" ? "email" : "sms"
        guard let redirectTo else {
            switch await send(nil) {
            case .success: return .init(sentTo: address.value, channel: channel)
            case .failure(let failure): throw SignInErrorText.error(failure, method: .code)
            }
        }
        let bind = ParameterRules.isLoopbackRedirect(redirectTo)
        let started = await profile.browser.beginEmailLink(to: address.value, recovery: recovery, redirectTo: redirectTo, owner: owner, bind: bind) { link in
            await send(link).mapError { .server($0) }
        }
        switch started {
        case .success(let sent): return .init(sentTo: address.value, channel: channel, flowID: sent.flow.id)
        case .failure(let failure): throw SignInErrorText.error(failure, method: .code)
        }
    }

    /// `user_metadata` as JSON, for the server.
    static func encodeMetadata(_ data: [String: JSONValue]?) throws(RPCErrorObject) -> Data? {
        guard let data else { return nil }
        do { return try JSONEncoder().encode(data) } catch { throw ParameterRules.invalid("'data' could not be encoded") }
    }

    private static func userJSON(_ record: UserRecord) throws(RPCErrorObject) -> JSONValue {
        do { return try JSONDecoder().decode(JSONValue.self, from: record.json) } catch {
            throw .application(.serverError, "the server's user object is not JSON")
        }
    }
}
