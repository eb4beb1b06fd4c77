import AuthCore
import AuthProtocol
import FoundationEssentials
import FoundationGaps

/// Handlers of the sign-in methods beyond the password and of the user's record (`AccountMethods`).
extension DaemonMethods {
    static func registerAccountMethods(_ table: inout MethodTable, registry: ProfileRegistry) {
        table.register(Methods.SignUp.self, for: .profileUsers) { parameters, connection throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            let address = try contactAddress(email: parameters.email, phone: parameters.phone)
            guard !parameters.password.isEmpty else { throw invalidParams("'password' must not be empty") }
            let request = SignUpRequest(address: address, password: parameters.password, metadata: try encodeMetadata(parameters.data))
            let captcha = try captchaToken(parameters.captchaToken)
            let outcome: Result<(flow: OAuthFlow?, outcome: SignUpOutcome), SignInFailure>
            if let redirectTo = parameters.redirectTo {
                let bind = try linkRedirect(redirectTo, address: address)
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
            let address = try contactAddress(email: parameters.email, phone: parameters.phone)
            let request: CodeRequest
            switch parameters.purpose ?? "sign_in" {
            case "sign_in": request = .signIn(address, createUser: parameters.createUser ?? false)
            case "recovery":
                guard case .email(let email) = address else { throw invalidParams("password recovery needs an 'email'") }
                request = .recovery(email: email)
            default: throw invalidParams("'purpose' must be sign_in or recovery")
            }
            let captcha = try captchaToken(parameters.captchaToken)
            return try await sendMessage(profile, to: address, redirectTo: parameters.redirectTo, recovery: parameters.purpose == "recovery",
                                         owner: connection.client.app) { link in
                await profile.accounts.sendCode(request, captchaToken: captcha, link: link)
            }
        }

        table.register(Methods.VerifyCode.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            let address = try contactAddress(email: parameters.email, phone: parameters.phone)
            let code = parameters.code.trimmingWhitespace()
            guard !code.isEmpty, code.count <= 256 else { throw invalidParams("'code' must be the code that was sent") }
            let defaultType: OTPType = address.field == "email" ? .email : .sms
            guard let type = parameters.type.map(OTPType.init(rawValue:)) ?? defaultType else {
                throw invalidParams("'type' must be one of \(OTPType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let event: SessionEvent = type == .recovery ? .passwordRecovery : .signedIn
            switch await profile.accounts.signIn(.oneTimeCode(address, code: code, type: type), announcing: event) {
            case .success: return await profile.session.status()
            case .failure(let failure): throw SignInErrorText.error(failure, method: .code)
            }
        }

        table.register(Methods.SignInWithIdToken.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            guard isProviderName(parameters.provider) else { throw invalidParams("'provider' must be a provider name such as google or apple") }
            guard !parameters.idToken.isEmpty else { throw invalidParams("'id_token' must not be empty") }
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
            guard isProviderName(parameters.provider) else { throw invalidParams("'provider' must be a provider name such as google or github") }
            return try await beginBrowserFlow(profile, .provider(parameters.provider, scopes: parameters.scopes), redirectTo: parameters.redirectTo,
                                              owner: connection.client.app)
        }

        table.register(Methods.OAuthComplete.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            guard let callback = URL(string: parameters.callbackURL), callback.scheme != nil else {
                throw invalidParams("'callback_url' must be the full URL the browser was sent to")
            }
            switch await profile.browser.complete(callback: callback, flowID: parameters.flowID) {
            case .success: return await profile.session.status()
            case .failure(let failure): throw SignInErrorText.error(failure, method: .browser)
            }
        }

        table.register(Methods.OAuthWait.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            switch await profile.browser.wait(for: parameters.flowID) {
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
            guard !changes.isEmpty else { throw invalidParams("nothing to change: give 'email', 'phone', 'password' or 'data'") }
            if let password = changes.password, password.isEmpty { throw invalidParams("'password' must not be empty") }
            if let nonce {
                guard changes.password != nil else { throw invalidParams("'nonce' goes with 'password': it confirms a password change") }
                guard !nonce.isEmpty, nonce.count <= 256 else { throw invalidParams("'nonce' must be the code user.reauthenticate had sent") }
            }
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

    /// The -32602 error for parameters that break a rule beyond their types.
    static func invalidParams(_ detail: String) -> RPCErrorObject {
        RPCErrorObject(code: RPCErrorObject.invalidParamsCode, message: "invalid params: \(detail)")
    }

    /// Exactly one of `email` and `phone`.
    static func contactAddress(email: String?, phone: String?) throws(RPCErrorObject) -> ContactAddress {
        switch (email?.trimmingWhitespace(), phone?.trimmingWhitespace()) {
        case (let email?, nil) where !email.isEmpty: return .email(email)
        case (nil, let phone?) where !phone.isEmpty: return .phone(phone)
        default: throw invalidParams("give either 'email' or 'phone'")
        }
    }

    /// Starts a browser flow after checking its redirect: a loopback `http://` one binds the flow
    /// (only a redirect carrying its id completes it), an app's custom scheme does not. The
    /// address to open, which the server chose for linking and SSO, is handed out only when
    /// `BrowserURLRule` lets a browser open it; otherwise the flow is forgotten.
    static func beginBrowserFlow(_ profile: ProfileServices, _ start: BrowserFlowStart, redirectTo: String,
                                 owner: String) async throws(RPCErrorObject) -> Methods.OAuthBegin.Result {
        let loopback = try checkedRedirect(redirectTo)
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
    /// With `redirectTo` (an email's link) a PKCE flow is started first, which the link
    /// completes; the answer names it.
    static func sendMessage(_ profile: ProfileServices, to address: ContactAddress, redirectTo: String?, recovery: Bool, owner: String,
                            send: @Sendable (EmailLink?) async -> Result<Void, ServerFailure>) async throws(RPCErrorObject) -> Methods.SendCode.Result {
        let channel = address.field == "email" ? "email" : "sms"
        guard let redirectTo else {
            switch await send(nil) {
            case .success: return .init(sentTo: address.value, channel: channel)
            case .failure(let failure): throw SignInErrorText.error(failure, method: .code)
            }
        }
        let bind = try linkRedirect(redirectTo, address: address)
        let started = await profile.browser.beginEmailLink(to: address.value, recovery: recovery, redirectTo: redirectTo, owner: owner, bind: bind) { link in
            await send(link).mapError { .server($0) }
        }
        switch started {
        case .success(let sent): return .init(sentTo: address.value, channel: channel, flowID: sent.flow.id)
        case .failure(let failure): throw SignInErrorText.error(failure, method: .code)
        }
    }

    /// Whether `redirectTo` is a loopback `http://` address (else an app's custom scheme); throws
    /// for anything else.
    static func checkedRedirect(_ redirectTo: String) throws(RPCErrorObject) -> Bool {
        guard let redirect = URL(string: redirectTo), let scheme = redirect.scheme, !scheme.isEmpty else {
            throw invalidParams("'redirect_to' must be an absolute URL (http://127.0.0.1:PORT/… or an app's custom scheme)")
        }
        let loopback = scheme.lowercased() == "http"
        if loopback, !LoopbackHost.contains(redirect.host ?? "") {
            throw invalidParams("an http:// 'redirect_to' must be a loopback address such as http://127.0.0.1:PORT/callback")
        }
        return loopback
    }

    /// The redirect of an emailed link, which only an email carries.
    static func linkRedirect(_ redirectTo: String, address: ContactAddress) throws(RPCErrorObject) -> Bool {
        guard case .email = address else { throw invalidParams("'redirect_to' is for an email's link; a text message carries only the code") }
        return try checkedRedirect(redirectTo)
    }

    /// `user_metadata` as JSON, for the server.
    static func encodeMetadata(_ data: [String: JSONValue]?) throws(RPCErrorObject) -> Data? {
        guard let data else { return nil }
        do { return try JSONEncoder().encode(data) } catch { throw invalidParams("'data' could not be encoded") }
    }

    private static func userJSON(_ record: UserRecord) throws(RPCErrorObject) -> JSONValue {
        do { return try JSONDecoder().decode(JSONValue.self, from: record.json) } catch {
            throw .application(.serverError, "the server's user object is not JSON")
        }
    }

    /// A CAPTCHA token as given, or nil when none was; one that cannot be a provider's token
    /// (`CaptchaTokenRule`) is refused here rather than sent.
    static func captchaToken(_ token: String?) throws(RPCErrorObject) -> String? {
        guard let token else { return nil }
        guard CaptchaTokenRule.isWellFormed(token) else {
            throw invalidParams("'captcha_token' must be the token a solved CAPTCHA gave (printable ASCII without spaces, at most \(CaptchaTokenRule.maximumBytes) bytes)")
        }
        return token
    }

    static func isProviderName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
    }
}
