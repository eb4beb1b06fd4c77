import AuthCore
import Foundation
import Logging
import ServiceLifecycle

/// One profile's browser sign-ins (OAuth with PKCE): the flows under way, as `OAuthFlowBook`
/// rules them, and the requests waiting for one to finish. The code a redirect brings is
/// exchanged through `AccountOperations`, like any other sign-in.
///
/// A flow's expiry is timed by `run()`, so the timers end with the daemon.
public actor BrowserSignIns: Service {
    private let accounts: AccountOperations
    private let api: any GoTrueAPI
    private let clock: any WallClock
    private let monotonic: any MonotonicClock
    private let logger: Logger
    private var flows = OAuthFlowBook()
    private var waiters: [String: [CheckedContinuation<Result<Void, SignInFailure>, Never>]] = [:]
    private let expiries: AsyncStream<(flowID: String, after: TimeInterval)>
    private let expirySink: AsyncStream<(flowID: String, after: TimeInterval)>.Continuation

    /// Creates the browser sign-ins of the profile `accounts` serves.
    public init(accounts: AccountOperations, api: any GoTrueAPI, clock: any WallClock, monotonic: any MonotonicClock, profile: String,
                logger: Logger) {
        self.accounts = accounts
        self.api = api
        self.clock = clock
        self.monotonic = monotonic
        var logger = logger
        logger[metadataKey: "session.profile"] = "\(profile)"
        self.logger = logger
        (expiries, expirySink) = AsyncStream.makeStream()
    }

    /// Times the expiry of flows that someone waits for, until cancelled or a graceful shutdown;
    /// then every waiter is told its flow expired.
    public func run() async {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for await expiry in self.expiries {
                    let monotonic = self.monotonic
                    group.addTask {
                        // Cancelled at shutdown: the flow ends now rather than never.
                        try? await monotonic.sleep(for: expiry.after)
                        await self.expire(expiry.flowID)
                    }
                }
            }
        }
    }

    /// Starts a browser sign-in for `owner` (the client's app name): keeps a new code verifier
    /// and answers the URL to open. With `bind` (a loopback redirect) the flow's id is added to
    /// `redirect_to`, and only a redirect carrying it completes or ends the flow.
    public func begin(provider: String, redirectTo: String, scopes: String?, owner: String,
                      bind: Bool) -> Result<(flow: OAuthFlow, url: URL), OAuthFlowFailure> {
        let now = clock.now()
        let id = PKCE.makeFlowID()
        let flow = OAuthFlow(id: id, provider: provider, redirectTo: bind ? OAuthFlow.bound(redirectTo, to: id) : redirectTo,
                             codeVerifier: PKCE.makeVerifier(), startedAt: now, owner: owner, isBound: bind)
        switch flows.start(flow, now: now) {
        case .failure(let failure):
            logger.notice("browser sign-in refused: too many waiting", metadata: ["oauth.provider": "\(provider)", "client.app": "\(owner)"])
            return .failure(failure)
        case .success(let displaced):
            for old in displaced {
                logger.info("browser sign-in replaced by a newer one", metadata: ["oauth.flow": "\(old.id)"])
                finish(old.id, with: .failure(.flow(.replaced)))
            }
        }
        logger.info("browser sign-in started", metadata: ["oauth.provider": "\(provider)", "oauth.flow": "\(flow.id)"])
        let url = api.authorizeURL(provider: provider, redirectTo: flow.redirectTo,
                                   codeChallenge: PKCE.challenge(for: flow.codeVerifier), scopes: scopes)
        return .success((flow, url))
    }

    /// Completes a browser sign-in with the URL the browser was sent back to, and answers
    /// whoever waits for that flow (`wait`) the same way.
    public func complete(callback: URL, flowID: String?) async -> Result<Void, SignInFailure> {
        let flow: OAuthFlow
        switch flows.take(callback: callback, flowID: flowID) {
        case .success(let taken): flow = taken
        case .failure(let failure):
            // The flow itself (if any) goes on waiting for its own redirect.
            logger.info("a browser redirect matched no sign-in", metadata: ["error": "\(failure)"])
            return .failure(.flow(failure))
        }
        let result: Result<Void, SignInFailure>
        switch OAuthFlowBook.outcome(of: callback, for: flow, now: clock.now()) {
        case .failure(let failure):
            logger.info("browser sign-in failed", metadata: ["oauth.flow": "\(flow.id)", "error": "\(failure)"])
            result = .failure(.flow(failure))
        case .success(let code):
            result = await accounts.signIn(.authorizationCode(code: code, codeVerifier: flow.codeVerifier))
        }
        // Whoever waits for this flow (`authctl login --redirect-url`) learns the outcome too.
        finish(flow.id, with: result)
        return result
    }

    /// Waits until the flow is completed through `complete` (an `authctl open-url` for a
    /// custom-scheme redirect), or until it expires.
    public func wait(for flowID: String) async -> Result<Void, SignInFailure> {
        let now = clock.now()
        guard let flow = flows.pending(now: now).first(where: { $0.id == flowID }) else {
            return .failure(.flow(.noPendingFlow(flowID)))
        }
        expirySink.yield((flowID, OAuthFlowBook.lifetime - now.timeIntervalSince(flow.startedAt)))
        return await withCheckedContinuation { waiters[flowID, default: []].append($0) }
    }

    /// Ends a flow whose time is up; a flow completed meanwhile has no waiters left, so this is then a no-op.
    private func expire(_ flowID: String) {
        guard waiters[flowID] != nil else { return }
        flows.cancel(flowID)
        finish(flowID, with: .failure(.flow(.expired)))
    }

    private func finish(_ flowID: String, with result: Result<Void, SignInFailure>) {
        for waiter in waiters.removeValue(forKey: flowID) ?? [] { waiter.resume(returning: result) }
    }
}
