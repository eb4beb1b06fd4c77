import AuthCore
import FoundationEssentials
import Logging
import ServiceLifecycle
import Synchronization

/// What a browser flow starts at.
public enum BrowserFlowStart: Sendable, Equatable {
    /// A sign-in at an OAuth provider (`GET /authorize`).
    case provider(String, scopes: String?)
    /// Linking an OAuth provider's identity to the signed-in user.
    case linkIdentity(provider: String, scopes: String?)
    /// A sign-in through the project's enterprise SSO (SAML) provider.
    case singleSignOn(SingleSignOnTarget)

    var kind: OAuthFlowKind {
        if case .linkIdentity = self { return .linkIdentity }
        return .signIn
    }

    /// How the flow is named in the log.
    var name: String {
        switch self {
        case .provider(let provider, _): return provider
        case .linkIdentity(let provider, _): return "link:\(provider)"
        case .singleSignOn(.domain(let domain)): return "sso:\(domain)"
        case .singleSignOn(.provider(let id)): return "sso:\(id)"
        }
    }
}

/// One profile's browser sign-ins (OAuth with PKCE): the flows under way, as `OAuthFlowBook`
/// rules them, and the requests waiting for one to finish. The code a redirect brings is
/// exchanged through `AccountOperations`, like any other sign-in.
///
/// A flow's expiry is timed by the requests that wait for it, each for as long as it waits, so
/// that a wait that ends first (its flow finished, or its client hung up) takes its timer with it.
public actor BrowserSignIns: Service {
    private let accounts: AccountOperations
    private let api: any GoTrueAPI
    private let clock: any WallClock
    private let monotonic: any MonotonicClock
    private let logger: Logger
    private var flows = OAuthFlowBook()
    /// The requests waiting for a flow to finish. Behind a lock rather than the actor, so that a
    /// cancelled request (its client went away, or the daemon stops) is answered at once from
    /// its cancellation handler.
    private nonisolated let waiters = Mutex(FlowWaiters<Result<Void, SignInFailure>>())
    /// Set once authd stops: a wait asked for later is answered at once.
    private var stopped = false

    /// Creates the browser sign-ins of the profile `accounts` serves, logging with `logger` (which
    /// names the profile: `ProfileServices` hands over the session's).
    public init(accounts: AccountOperations, api: any GoTrueAPI, clock: any WallClock, monotonic: any MonotonicClock, logger: Logger) {
        self.accounts = accounts
        self.api = api
        self.clock = clock
        self.monotonic = monotonic
        self.logger = logger
    }

    /// Waits for a graceful shutdown (or cancellation); then every waiter is told its flow
    /// expired, now rather than at the end of its time. In authd the socket stops first and
    /// cancels its connections' waits, which answers them the same way: this answers whoever
    /// else waits.
    public func run() async {
        try? await gracefulShutdown()
        stopped = true
        for waiter in waiters.withLock({ $0.takeAll() }) { waiter.resume(returning: .failure(.flow(.expired))) }
    }

    /// Starts a browser flow for `owner` (the client's app name): keeps a new code verifier and
    /// answers the URL to open, which GoTrue builds (linking, SSO) or authd does (a provider's
    /// sign-in). With `bind` (a loopback redirect) the flow's id is added to `redirect_to`, and
    /// only a redirect carrying it completes or ends the flow.
    public func begin(_ start: BrowserFlowStart, redirectTo: String, owner: String, bind: Bool) async -> Result<(flow: OAuthFlow, url: URL), SignInFailure> {
        let flow: OAuthFlow
        switch record(start.kind, name: start.name, redirectTo: redirectTo, owner: owner, bind: bind) {
        case .success(let recorded): flow = recorded
        case .failure(let failure): return .failure(.flow(failure))
        }
        let challenge = PKCE.challenge(for: flow.codeVerifier)
        let url: URL
        switch start {
        case .provider(let provider, let scopes):
            url = api.authorizeURL(provider: provider, redirectTo: flow.redirectTo, codeChallenge: challenge, scopes: scopes)
        case .linkIdentity(let provider, let scopes):
            let answer = await accounts.withServerCallToken { token throws(ServerFailure) in
                try await api.identityLinkURL(accessToken: token, provider: provider, redirectTo: flow.redirectTo, codeChallenge: challenge, scopes: scopes)
            }
            switch answer {
            case .success(let answered): url = answered
            case .failure(let failure): return .failure(abandon(flow, failure))
            }
        case .singleSignOn(let target):
            do { url = try await api.singleSignOnURL(target, redirectTo: flow.redirectTo, codeChallenge: challenge) } catch {
                return .failure(abandon(flow, .server(error)))
            }
        }
        // A newer flow (the same client's, or to the same app address) may have displaced this
        // one while the server was asked; its waiters were told, and so is this caller.
        guard flows.pending(now: clock.now()).contains(where: { $0.id == flow.id }) else { return .failure(.flow(.replaced)) }
        return .success((flow, url))
    }

    /// Sends an email whose link leads back to `redirectTo` and completes a new flow for `owner`
    /// (as `begin` binds and limits it): `send` is the request that sends it, given the link's
    /// target. The code in the same email still signs in through `session.verifyCode`.
    public func beginEmailLink<Sent: Sendable>(to email: String, recovery: Bool, redirectTo: String, owner: String, bind: Bool,
                                               send: @Sendable (EmailLink) async -> Result<Sent, SignInFailure>) async -> Result<(flow: OAuthFlow, sent: Sent), SignInFailure> {
        let flow: OAuthFlow
        switch record(recovery ? .recoveryLink : .emailLink, name: "email", redirectTo: redirectTo, owner: owner, bind: bind, emailAddress: email) {
        case .success(let recorded): flow = recorded
        case .failure(let failure): return .failure(.flow(failure))
        }
        switch await send(EmailLink(redirectTo: flow.redirectTo, codeChallenge: PKCE.challenge(for: flow.codeVerifier))) {
        case .success(let sent):
            // Displaced while the email went out: its waiters were told, and so is this caller.
            guard flows.pending(now: clock.now()).contains(where: { $0.id == flow.id }) else { return .failure(.flow(.replaced)) }
            return .success((flow, sent))
        case .failure(let failure):
            flows.cancel(flow.id)
            return .failure(failure)
        }
    }

    /// Forgets a flow nobody will complete (a sign-up the project confirmed at once).
    public func cancel(_ flowID: String) {
        flows.cancel(flowID)
    }

    /// Keeps a new flow, telling the waiters of the flows it displaces.
    private func record(_ kind: OAuthFlowKind, name: String, redirectTo: String, owner: String, bind: Bool,
                        emailAddress: String? = nil) -> Result<OAuthFlow, OAuthFlowFailure> {
        let now = clock.now()
        let id = PKCE.makeFlowID()
        var flow = OAuthFlow(id: id, provider: name, redirectTo: bind ? OAuthFlow.bound(redirectTo, to: id) : redirectTo,
                             codeVerifier: PKCE.makeVerifier(), startedAt: now, owner: owner, isBound: bind)
        flow.kind = kind
        flow.emailAddress = emailAddress
        switch flows.start(flow, now: now) {
        case .failure(let failure):
            logger.notice("browser sign-in refused: too many waiting", metadata: ["oauth.provider": "\(name)", "client.app": "\(owner)"])
            return .failure(failure)
        case .success(let displaced):
            for old in displaced {
                logger.info("browser sign-in replaced by a newer one", metadata: ["oauth.flow": "\(old.id)"])
                finish(old.id, with: .failure(.flow(.replaced)))
            }
        }
        logger.info("browser sign-in started", metadata: ["oauth.provider": "\(name)", "oauth.flow": "\(flow.id)"])
        return .success(flow)
    }

    /// Forgets a flow whose start failed at the server, and says why as a sign-in failure.
    private func abandon(_ flow: OAuthFlow, _ failure: AccountFailure) -> SignInFailure {
        flows.cancel(flow.id)
        logger.info("browser flow refused by the server", metadata: ["oauth.flow": "\(flow.id)", "error": "\(failure)"])
        switch failure {
        case .server(let server): return .server(server)
        case .session(let session), .changedWithoutNewToken(let session): return .replaced(session)
        case .sessionBusy, .verificationUncertain: return .server(.notSent(url: "", detail: "the session is busy; try again"))
        }
    }

    /// Completes a browser sign-in with the URL the browser was sent back to (the user signed in,
    /// once its session is stored), and answers
    /// whoever waits for that flow (`wait`) the same way. `flowID` is given by a loopback
    /// listener and absent for `authctl open-url`, which decides what the URL may carry
    /// (`RedirectRules`); a refused redirect leaves its flow waiting.
    public func complete(callback: URL, flowID: String?) async -> Result<UserSummary, SignInFailure> {
        let channel = RedirectChannel(namesFlow: flowID != nil)
        if let refusal = RedirectRules.screen(callback, channel: channel) {
            // Checked before any flow is looked for: such a URL is answered the same whether or
            // not a sign-in waits, and nothing of it reaches the server.
            logger.notice("a redirect handed over on a command line carried a credential; refused unused", metadata: ["error": "\(refusal)"])
            return .failure(.flow(refusal))
        }
        let flow: OAuthFlow
        switch flows.match(callback: callback, flowID: flowID) {
        case .success(let matched): flow = matched
        case .failure(let failure):
            // The flow itself (if any) goes on waiting for its own redirect.
            logger.info("a browser redirect matched no sign-in", metadata: ["error": "\(failure)"])
            return .failure(.flow(failure))
        }
        let credential: SignInCredential
        let event: SessionEvent
        var expected: ExpectedAccount?
        switch RedirectRules.disposition(of: callback, for: flow, channel: channel, now: clock.now()) {
        case .refuse(let failure):
            logger.info("a browser redirect was refused; its sign-in goes on waiting", metadata: ["oauth.flow": "\(flow.id)", "error": "\(failure)"])
            return .failure(.flow(failure))
        case .end(let failure):
            flows.cancel(flow.id)
            logger.info("browser sign-in failed", metadata: ["oauth.flow": "\(flow.id)", "error": "\(failure)"])
            finish(flow.id, with: .failure(.flow(failure)))
            return .failure(.flow(failure))
        case .exchangeCode(let code):
            credential = .authorizationCode(code: code, codeVerifier: flow.codeVerifier)
            event = Self.event(for: flow)
        case .verifyTokenHash(let hash, let type):
            // A project whose email template links with the token hash: verified as such, and
            // kept only when it signs in the account the link was sent to.
            credential = .tokenHash(hash, type: type)
            event = type == .recovery ? .passwordRecovery : Self.event(for: flow)
            // An email change's link signs in the user who asked for it, under the new address.
            // Fails closed: a flow without its address takes only the user signed in now.
            expected = type == .emailChange ? .signedInUser : flow.emailAddress.map(ExpectedAccount.email) ?? .signedInUser
        }
        let bound = RedirectRules.isBound(callback, to: flow)
        // Used once: a bound flow is taken before the server is asked, so that a second redirect
        // finds nothing. An unbound one stays until the server has taken the code: any web page
        // can open the app's address with a junk code, which must not end the user's sign-in.
        if bound { flows.cancel(flow.id) }
        let result = await accounts.signIn(credential, announcing: event, expecting: expected)
        if case .failure(.server(.http(_, let code, _, _))) = result, RedirectRules.keepsWaiting(afterRefusal: code, bound: bound) {
            logger.info("the server refused a code handed to an app's address; its sign-in goes on waiting",
                        metadata: ["oauth.flow": "\(flow.id)", "error": "\(code ?? "")"])
            return result
        }
        flows.cancel(flow.id)
        // Whoever waits for this flow (`authctl login --redirect-url`) learns the outcome too.
        finish(flow.id, with: result.map { _ in () })
        return result
    }

    /// What a completed flow is announced as.
    private static func event(for flow: OAuthFlow) -> SessionEvent {
        flow.kind == .recoveryLink ? .passwordRecovery : .signedIn
    }

    /// Waits until the flow is completed through `complete` (an `authctl open-url` for a
    /// custom-scheme redirect), or until it expires. A cancelled wait, and one that authd's stop
    /// ends, is answered as expired.
    public func wait(for flowID: String) async -> Result<Void, SignInFailure> {
        guard !stopped else { return .failure(.flow(.expired)) }
        let now = clock.now()
        guard let flow = flows.pending(now: now).first(where: { $0.id == flowID }) else {
            return .failure(.flow(.noPendingFlow(flowID)))
        }
        // At most the lifetime: a wall clock stepped back since the flow began does not lengthen it.
        let remaining = min(max(0, OAuthFlowBook.lifetime - now.timeIntervalSince(flow.startedAt)), OAuthFlowBook.lifetime)
        let id = waiters.withLock { $0.register(flowID) }
        let monotonic = self.monotonic
        return await withTaskGroup(of: Void.self) { timer in
            // The flow's time, kept for as long as this wait waits: cancelled when it ends first,
            // so that a client that begins waits and hangs up in a loop leaves no sleeper behind.
            timer.addTask {
                guard (try? await monotonic.sleep(for: remaining)) != nil else { return }
                await self.expire(flowID)
            }
            let answer = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    if waiters.withLock({ $0.attach(continuation, to: id) }) { continuation.resume(returning: .failure(.flow(.expired))) }
                }
            } onCancel: {
                self.waiters.withLock { $0.cancel(id) }?.resume(returning: .failure(.flow(.expired)))
            }
            timer.cancelAll()
            return answer
        }
    }

    /// Ends a flow whose time is up; a flow completed meanwhile has no waiters left, so this is then a no-op.
    private func expire(_ flowID: String) {
        guard waiters.withLock({ $0.hasWaiters(for: flowID) }) else { return }
        flows.cancel(flowID)
        finish(flowID, with: .failure(.flow(.expired)))
    }

    private func finish(_ flowID: String, with result: Result<Void, SignInFailure>) {
        for waiter in waiters.withLock({ $0.take(flowID) }) { waiter.resume(returning: result) }
    }
}
