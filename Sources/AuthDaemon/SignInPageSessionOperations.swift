import AuthCore
import AuthProtocol
import FoundationEssentials
import SignInPage
import SignInPageDriver

/// The GoTrue calls of one sign-in page, made on its profile's session the way authctl's
/// sign-ins make them (`AccountOperations`, `BrowserSignIns`): a session the page signs in
/// becomes the profile's, announced as `SIGNED_IN` (or `PASSWORD_RECOVERY`) like any other.
///
/// Once the page has signed a user in, its later calls (a second factor, a new password) go to
/// that user's session only: when a sign-in elsewhere has replaced it meanwhile, nothing is sent
/// and the page's flow ends (`sessionEnded`), so that no form of this page reaches another
/// account. A provider's return is matched to the browser flow this page started, and to no other.
actor SignInPageSessionOperations: SignInPageOperations {
    private let accounts: AccountOperations
    private let browser: BrowserSignIns
    /// Names the opening app's browser flows among the profile's, so that `OAuthFlowBook`'s
    /// share of each app counts every page the app opened.
    private let owner: String
    /// The user the page signed in, once it has.
    private var user: String?
    /// The browser flow the page started last, which the browser's return completes.
    private var browserFlow: String?

    /// The operations of a page `app` opened on the profile `accounts` and `browser` serve.
    init(accounts: AccountOperations, browser: BrowserSignIns, app: String) {
        self.accounts = accounts
        self.browser = browser
        owner = "sign-in page of \(app)"
    }

    /// The page has closed: its browser flow, if one waits, is forgotten.
    func close() async {
        if let flow = browserFlow { await browser.cancel(flow) }
        browserFlow = nil
    }

    func perform(_ operation: SignInPageOperation, returnURL: String, returned: SignInPageForm?) async -> SignInPageOutcome {
        switch operation {
        case .fetchSettings:
            do { return .settings(try await accounts.api.settings()) } catch { return .failed(.server(error)) }
        case .signIn(let credential):
            return await signedIn(accounts.signIn(credential, announcing: Self.event(for: credential)))
        case .signUp(let request):
            switch await accounts.signUp(request) {
            case .success(.confirmationSent): return .confirmationSent
            case .success(.signedIn(let grant)): return await heldAccount(of: grant.user.id)
            case .failure(let failure): return .failed(Self.failure(failure))
            }
        case .sendCode(let request):
            return Self.accepted(await accounts.sendCode(request))
        case .resend(let request):
            return Self.accepted(await accounts.resend(request))
        case .startBrowserSignIn(let target):
            return await startBrowser(target, returnURL: returnURL)
        case .completeBrowserSignIn:
            return await completeBrowser(returnURL: returnURL, returned: returned)
        case .challengeFactor(let id):
            guard let user else { return .failed(.sessionEnded) }
            switch await accounts.challengeFactor(id: id, channel: nil, ofUser: user) {
            case .success(let challenge): return .challenged(challenge)
            case .failure(let failure): return .failed(Self.failure(failure))
            }
        case .verifyFactor(let id, let challengeID, let code):
            guard let user else { return .failed(.sessionEnded) }
            switch await accounts.verifyFactor(id: id, challengeID: challengeID, code: code, ofUser: user) {
            case .success: return await heldAccount(of: user)
            case .failure(let failure): return .failed(Self.failure(failure))
            }
        case .enrolFactor(let request):
            guard let user else { return .failed(.sessionEnded) }
            switch await accounts.enrollFactor(request, ofUser: user) {
            case .success(let enrollment): return .enrolled(enrollment)
            case .failure(let failure): return .failed(Self.failure(failure))
            }
        case .updatePassword(let password):
            guard let user else { return .failed(.sessionEnded) }
            switch await accounts.updateUser(UserChanges(password: password), ofUser: user) {
            // The server took the new password; only a token that states it is still to come.
            case .success, .failure(.changedWithoutNewToken): return .accepted
            case .failure(let failure): return .failed(Self.failure(failure))
            }
        }
    }

    /// A sign-in's outcome: the account it stored, or why it failed.
    private func signedIn(_ result: Result<UserSummary, SignInFailure>) async -> SignInPageOutcome {
        switch result {
        case .success(let adopted): return await heldAccount(of: adopted.id)
        case .failure(let failure): return .failed(Self.failure(failure))
        }
    }

    /// The account the page signed in, user `userID`, whose session the page's later calls go
    /// to; the flow ends when the session held is already another user's (a sign-in elsewhere
    /// replaced it between the page's sign-in being stored and now).
    private func heldAccount(of userID: String) async -> SignInPageOutcome {
        guard let account = await accounts.session.heldAccount(ofUser: userID) else { return .failed(.sessionEnded) }
        user = userID
        return .signedIn(account)
    }

    /// A browser sign-in for the page, bound to its return address: the provider's (authd makes
    /// the address) or the SSO identity provider's (the server answers it, and it is opened only
    /// if a browser may be sent there).
    private func startBrowser(_ target: SignInPageBrowserTarget, returnURL: String) async -> SignInPageOutcome {
        let start: BrowserFlowStart
        switch target {
        case .provider(let provider): start = .provider(provider, scopes: nil)
        case .singleSignOn(let domain): start = .singleSignOn(.domain(domain))
        }
        // Another provider chosen: the one before it will not come back to this page.
        await close()
        switch await browser.begin(start, redirectTo: returnURL, owner: owner, bind: true) {
        case .success(let started):
            if let refusal = BrowserURLRule.refusal(of: started.url.absoluteString, projectURL: accounts.session.server) {
                await browser.cancel(started.flow.id)
                return .failed(.server(.invalidResponse(detail: "the server answered an address to open in the browser that authd refuses: \(refusal)")))
            }
            browserFlow = started.flow.id
            return .browserURL(started.url)
        case .failure(let failure):
            return .failed(Self.failure(failure))
        }
    }

    /// The browser came back to the page with `returned` (a code, or the provider's error):
    /// completes the flow the page started, as authctl's loopback listener does.
    private func completeBrowser(returnURL: String, returned: SignInPageForm?) async -> SignInPageOutcome {
        guard let flow = browserFlow, let returned, var callback = URLComponents(string: returnURL) else {
            return .failed(.browser(.noPendingFlow("sign-in page")))
        }
        // The page's return address has no query of its own: what came back is the whole of it
        // (the flow's binding, and the code or the error).
        callback.queryItems = returned.values.keys.sorted().map { URLQueryItem(name: $0, value: returned.values[$0]) }
        guard let url = callback.url else { return .failed(.browser(.malformedCallback("the return address"))) }
        return await signedIn(browser.complete(callback: url, flowID: flow))
    }

    /// What a sign-in with `credential` is announced as: a recovery code's as `PASSWORD_RECOVERY`.
    private static func event(for credential: SignInCredential) -> SessionEvent {
        if case .oneTimeCode(_, _, .recovery) = credential { return .passwordRecovery }
        return .signedIn
    }

    /// A call that answers nothing but success.
    private static func accepted(_ result: Result<Void, ServerFailure>) -> SignInPageOutcome {
        switch result {
        case .success: return .accepted
        case .failure(let failure): return .failed(.server(failure))
        }
    }

    /// A sign-in's failure as the page's flow reads it.
    static func failure(_ failure: SignInFailure) -> SignInPageFailure {
        switch failure {
        case .server(let server): return .server(server)
        case .flow(let flow): return .browser(flow)
        // Another sign-in or a sign-out overtook this one: nothing of it was kept.
        case .replaced: return .interrupted
        }
    }

    /// A call on the page's session's failure as the page's flow reads it.
    static func failure(_ failure: AccountFailure) -> SignInPageFailure {
        switch failure {
        case .server(let server): return .server(server)
        case .session(.notSignedIn): return .sessionEnded
        case .session, .sessionBusy, .verificationUncertain, .changedWithoutNewToken: return .interrupted
        }
    }
}
