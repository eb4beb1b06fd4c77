import AuthCore
import AuthProtocol
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Runs one profile's `SessionMachine`: feeds it inputs stamped with the time, carries out its
/// actions (HTTP, keyring, timer, events, answers) and feeds the outcomes back. Holds no rules.
///
/// All I/O runs as child tasks of `run()`. Keyring writes and deletes go through one serial
/// loop, so a sign-out's delete can never be overtaken by an earlier store.
public actor SessionDriver: Service {
    /// The profile this driver serves.
    public nonisolated let profile: String
    private nonisolated let server: String
    private var machine: SessionMachine {
        didSet { publish() }
    }
    private let store: any SessionStore
    private let api: any GoTrueAPI
    private nonisolated let clock: any WallClock
    private nonisolated let monotonic: any MonotonicClock
    /// The machine as of its last change, with both clocks then: `tokenAtOnce` asks it without
    /// waiting for this actor.
    private nonisolated let published = Mutex<(machine: SessionMachine, at: ClockReading)?>(nil)
    private var lastClockCheck: ClockReading
    private let timer: any RefreshTimer
    private let random: @Sendable () -> Double
    private let logger: Logger

    private var answers: [RequestID: CheckedContinuation<Result<IssuedToken, TokenFailure>, Never>] = [:]
    private var nextRequest: UInt64 = 0
    private var subscribers: [UInt64: @Sendable (AuthEventMessage) -> Void] = [:]
    private var loadWaiters: [CheckedContinuation<Void, Never>] = []
    private var flows = OAuthFlowBook()
    private var flowWaiters: [String: [CheckedContinuation<Result<Void, SignInFailure>, Never>]] = [:]

    private enum Job: Sendable {
        case refresh(refreshToken: String, generation: UInt64)
        case timerFired
        case loadStore
        case expireFlow(String, after: TimeInterval)
    }
    private enum KeyringJob: Sendable {
        case store(Session, generation: UInt64)
        case delete
    }
    private let jobs: AsyncStream<Job>
    private let jobSink: AsyncStream<Job>.Continuation
    private let keyringJobs: AsyncStream<KeyringJob>
    private let keyringSink: AsyncStream<KeyringJob>.Continuation

    /// Creates a driver. `random` returns numbers in 0..<1 for jitter.
    public init(profile: String, server: String, store: any SessionStore, api: any GoTrueAPI,
                clock: any WallClock = SystemClock(), monotonic: any MonotonicClock = SystemMonotonicClock(),
                timer: any RefreshTimer = DispatchWallTimer(),
                policy: RefreshPolicy = RefreshPolicy(), logger: Logger,
                random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.profile = profile
        self.server = server
        self.machine = SessionMachine(policy: policy)
        self.store = store
        self.api = api
        self.clock = clock
        self.monotonic = monotonic
        self.lastClockCheck = ClockReading(clock, monotonic)
        self.timer = timer
        self.random = random
        var logger = logger
        logger[metadataKey: "session.profile"] = "\(profile)"
        self.logger = logger
        (jobs, jobSink) = AsyncStream.makeStream()
        (keyringJobs, keyringSink) = AsyncStream.makeStream()
    }

    /// Loads the stored session, then serves until cancelled or asked to shut down gracefully.
    public func run() async {
        await cancelWhenGracefulShutdown { await self.serve() }
        timer.cancel()
    }

    private func serve() async {
        await loadStoredSession()
        await withDiscardingTaskGroup { group in
            group.addTask { await self.runKeyringJobs() }
            group.addTask { await self.watchClock() }
            for await job in jobs {
                switch job {
                case .timerFired:
                    apply(machine.timerFired(now: clock.now()))
                case .refresh(let refreshToken, let generation):
                    group.addTask { await self.refresh(refreshToken, generation: generation) }
                case .loadStore:
                    group.addTask { await self.loadStoredSession() }
                case .expireFlow(let flowID, let delay):
                    group.addTask {
                        try? await self.monotonic.sleep(for: delay)
                        await self.expireFlow(flowID)
                    }
                }
            }
            keyringSink.finish()
        }
    }

    /// Returns once the stored session has been read (at most the keyring's timeout after start),
    /// so that nobody is told "signed out" or "loading" about a session that is merely being read.
    private func awaitLoaded() async {
        if machine.phase != .loading { return }
        await withCheckedContinuation { loadWaiters.append($0) }
    }

    // MARK: Requests

    /// The token `token(validFor:)` would answer with at once, asked of the published machine
    /// without waiting for the actor (the socket's event loop answers most requests this way);
    /// nil whenever the request needs the machine, including after a jump of the wall clock
    /// that the driver has not looked at yet.
    public nonisolated func tokenAtOnce(validFor minimum: TimeInterval) -> IssuedToken? {
        let now = ClockReading(clock, monotonic)
        return published.withLock { published in
            guard let published, !now.jump(since: published.at).isJump() else { return nil }
            return published.machine.answer(validFor: minimum, now: now.wall)
        }
    }

    private func publish() {
        let stamped = (machine: machine, at: ClockReading(clock, monotonic))
        published.withLock { $0 = stamped }
    }

    /// A token valid for at least `minimum` seconds, refreshing first when needed.
    public func token(validFor minimum: TimeInterval) async -> Result<IssuedToken, TokenFailure> {
        let id = makeRequestID()
        return await withCheckedContinuation { continuation in
            answers[id] = continuation
            apply(machine.tokenRequested(id, validFor: minimum, now: clock.now()))
        }
    }

    /// Signs in with `credential`; returns once the new session is in the keyring (or in memory,
    /// if the keyring refused it). Subscribers are told `event` (`SIGNED_IN`, or
    /// `PASSWORD_RECOVERY` for a recovery code). A refused sign-in leaves the current session alone.
    public func signIn(_ credential: SignInCredential, announcing event: SessionEvent = .signedIn) async -> Result<Void, SignInFailure> {
        let grant: SessionGrant
        do {
            grant = try await api.signIn(credential)
        } catch {
            logger.info("sign-in refused", metadata: ["sign_in.method": "\(credential)", "error": "\(error.localizedDescription)"])
            return .failure(.server(error))
        }
        return await adopt(grant, announcing: event)
    }

    /// Creates an account. When the project confirms automatically the new session is adopted
    /// as by a sign-in; otherwise nothing changes here until the emailed code is verified.
    public func signUp(_ request: SignUpRequest) async -> Result<SignUpOutcome, SignInFailure> {
        let outcome: SignUpOutcome
        do { outcome = try await api.signUp(request) } catch {
            logger.info("sign-up refused", metadata: ["error": "\(error.localizedDescription)"])
            return .failure(.server(error))
        }
        guard case .signedIn(let grant) = outcome else {
            logger.info("sign-up needs confirmation")
            return .success(outcome)
        }
        return await adopt(grant, announcing: .signedIn).map { outcome }
    }

    /// Asks the server to send a one-time code. Holds no state: the code comes back through `signIn`.
    public func sendCode(_ request: CodeRequest) async -> Result<Void, ServerFailure> {
        do {
            try await api.sendCode(request)
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// The signed-in user as the server describes it.
    public func user() async -> Result<UserRecord, AccountFailure> {
        await withFreshToken { token throws(ServerFailure) in try await self.api.user(accessToken: token) }
    }

    /// Changes the signed-in user; the summary kept with the session follows and subscribers
    /// are told `USER_UPDATED`.
    public func updateUser(_ changes: UserChanges) async -> Result<UserRecord, AccountFailure> {
        let result = await withFreshToken { token throws(ServerFailure) in try await self.api.updateUser(accessToken: token, changes) }
        if case .success(let record) = result {
            logger.info("user updated", metadata: ["user.changed": "\(changes)"])
            apply(machine.userUpdated(record.summary, now: clock.now()))
        }
        return result
    }

    // MARK: Browser sign-in (PKCE)

    /// Starts a browser sign-in for `owner` (the client's app name): keeps a new code verifier
    /// and answers the URL to open. With `bind` (a loopback redirect) the flow's id is added to
    /// `redirect_to`, and only a redirect carrying it completes or ends the flow.
    public func beginBrowserSignIn(provider: String, redirectTo: String, scopes: String?, owner: String,
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
                finishFlowWaiters(old.id, with: .failure(.flow(.replaced)))
            }
        }
        logger.info("browser sign-in started", metadata: ["oauth.provider": "\(provider)", "oauth.flow": "\(flow.id)"])
        let url = api.authorizeURL(provider: provider, redirectTo: flow.redirectTo,
                                   codeChallenge: PKCE.challenge(for: flow.codeVerifier), scopes: scopes)
        return .success((flow, url))
    }

    /// Completes a browser sign-in with the URL the browser was sent back to, and answers
    /// whoever waits for that flow (`waitForBrowserSignIn`) the same way.
    public func completeBrowserSignIn(callback: URL, flowID: String?) async -> Result<Void, SignInFailure> {
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
            result = await signIn(.authorizationCode(code: code, codeVerifier: flow.codeVerifier))
        }
        // Whoever waits for this flow (`authctl login --redirect-url`) learns the outcome too.
        finishFlowWaiters(flow.id, with: result)
        return result
    }

    /// Waits until the flow is completed through `completeBrowserSignIn` (an `authctl open-url`
    /// for a custom-scheme redirect), or until it expires.
    public func waitForBrowserSignIn(_ flowID: String) async -> Result<Void, SignInFailure> {
        guard let flow = flows.pending(now: clock.now()).first(where: { $0.id == flowID }) else {
            return .failure(.flow(.noPendingFlow(flowID)))
        }
        let remaining = OAuthFlowBook.lifetime - clock.now().timeIntervalSince(flow.startedAt)
        jobSink.yield(.expireFlow(flowID, after: remaining))
        return await withCheckedContinuation { flowWaiters[flowID, default: []].append($0) }
    }

    /// Ends a flow whose time is up; a flow completed meanwhile has no waiters left, so this is then a no-op.
    private func expireFlow(_ flowID: String) {
        guard flowWaiters[flowID] != nil else { return }
        flows.cancel(flowID)
        finishFlowWaiters(flowID, with: .failure(.flow(.expired)))
    }

    private func finishFlowWaiters(_ flowID: String, with result: Result<Void, SignInFailure>) {
        for waiter in flowWaiters.removeValue(forKey: flowID) ?? [] { waiter.resume(returning: result) }
    }

    // MARK: Sessions

    /// Feeds a new session to the machine and waits until it is stored and served.
    private func adopt(_ grant: SessionGrant, announcing event: SessionEvent) async -> Result<Void, SignInFailure> {
        let id = makeRequestID()
        let now = clock.now()
        let answer = await withCheckedContinuation { continuation in
            answers[id] = continuation
            apply(machine.signedIn(Session(grant: grant, receivedAt: now), request: id, now: now, announcing: event))
        }
        switch answer {
        case .success:
            logger.info("signed in", metadata: ["user.id": "\(grant.user.id)"])
            return .success(())
        case .failure(let failure):
            logger.info("sign-in overtaken by another sign-in or a sign-out")
            return .failure(.replaced(failure))
        }
    }

    /// Runs `call` with an access token valid for at least 30 s more.
    private func withFreshToken<T: Sendable>(_ call: @Sendable (String) async throws(ServerFailure) -> T) async -> Result<T, AccountFailure> {
        switch await token(validFor: 30) {
        case .failure(let failure): return .failure(.session(failure))
        case .success(let token):
            do { return .success(try await call(token.accessToken)) } catch { return .failure(.server(error)) }
        }
    }

    /// Signs out. `local` and `global` end the session here at once and then tell the server;
    /// `others` only asks the server to end the user's other sessions.
    public func signOut(scope: SignOutScope) async -> (confirmed: Bool, detail: String?) {
        // A session still being written to the keyring counts: a sign-out must not lose to it.
        guard let session = machine.session ?? machine.incomingSession else { return (true, nil) }
        if scope != .others {
            apply(machine.signOutRequested(now: clock.now()))
            logger.info("signed out", metadata: ["sign_out.scope": "\(scope.rawValue)"])
        }
        var accessToken = session.accessToken
        if scope == .others {
            guard case .success(let fresh) = await token(validFor: 30) else { return (false, "no valid access token to sign out with") }
            accessToken = fresh.accessToken
        } else if session.remaining(at: clock.now()) < 30 {
            // An expired access token gets `bad_jwt` from /logout and leaves the server session alive:
            // use the refresh token one last time to get a token that the server accepts.
            if let grant = try? await api.refresh(refreshToken: session.refreshToken) { accessToken = grant.accessToken }
        }
        do {
            try await api.signOut(accessToken: accessToken, scope: scope)
            return (true, nil)
        } catch .http(let status, _, _, _) where [401, 403, 404].contains(status) {
            return (true, nil) // the server no longer knows the session: it is over there too
        } catch {
            logger.notice("server did not confirm sign-out", metadata: ["error": "\(error.localizedDescription)"])
            return (false, error.localizedDescription)
        }
    }

    /// The current status, without tokens, once the stored session has been read.
    public func status() async -> SessionStatus {
        await awaitLoaded()
        return StatusMapper.status(of: machine, profile: profile, server: server)
    }

    /// Asks the server's health endpoint whether it answers, and compares its clock with ours.
    public func checkServer() async -> Methods.CheckServer.Result {
        let sent = clock.now()
        do {
            let serverTime = try await api.health()
            // The Date header has whole seconds: compare it with the middle of the round trip.
            let middle = sent.addingTimeInterval(clock.now().timeIntervalSince(sent) / 2)
            return .init(server: server, reachable: true, clockSkew: serverTime.map { (middle.timeIntervalSince($0) * 10).rounded() / 10 })
        } catch {
            return .init(server: server, reachable: false, detail: error.localizedDescription)
        }
    }

    /// Registers `send` for this profile's events. `acknowledge` runs first, then `send` gets an
    /// `INITIAL_SESSION` snapshot (once the stored session has been read), then every change, all in order.
    public func subscribe(_ subscriber: UInt64, acknowledge: @Sendable () -> Void, send: @escaping @Sendable (AuthEventMessage) -> Void) async {
        await awaitLoaded()
        acknowledge()
        let expired = machine.session.map { $0.remaining(at: clock.now()) <= 0 } ?? false
        send(StatusMapper.event(.initialSession(expired: expired), machine: machine, profile: profile, server: server))
        subscribers[subscriber] = send
    }

    /// Something outside changed in a way that may end a transient failure: the machine woke from
    /// suspend or the network came back.
    public func wake(_ signal: WakeSignal) {
        logger.debug("wake signal", metadata: ["wake.signal": "\(signal)"])
        switch signal {
        case .resumed: apply(machine.resumed(now: clock.now()))
        case .networkChanged: apply(machine.networkChanged(now: clock.now()))
        }
    }

    /// Drops a subscriber.
    public func unsubscribe(_ subscriber: UInt64) {
        subscribers[subscriber] = nil
    }

    // MARK: Carrying out actions

    private func apply(_ actions: [SessionAction]) {
        for action in actions {
            switch action {
            case .refresh(let refreshToken, let generation):
                jobSink.yield(.refresh(refreshToken: refreshToken, generation: generation))
            case .store(let session, let generation):
                keyringSink.yield(.store(session, generation: generation))
            case .delete:
                keyringSink.yield(.delete)
            case .loadStore:
                jobSink.yield(.loadStore)
            case .emit(let event):
                if case .refreshFailing(.refreshLimited, let detail, _) = event {
                    // Failed refreshes are logged where they fail; a held-back one never leaves.
                    logger.notice("refresh held back", metadata: ["refresh.detail": "\(detail)"])
                }
                let message = StatusMapper.event(event, machine: machine, profile: profile, server: server)
                logger.debug("event", metadata: ["event.name": "\(message.event)"])
                for send in subscribers.values { send(message) }
            case .answer(let id, let result):
                answers.removeValue(forKey: id)?.resume(returning: result)
            case .armTimer(let deadline):
                let sink = jobSink
                timer.arm(at: deadline) { sink.yield(.timerFired) }
            case .cancelTimer:
                timer.cancel()
            }
        }
    }

    /// Compares the wall clock with the monotonic one; after a jump (the clock was set, NTP
    /// stepped it) the machine re-evaluates at once, so a jump past expiry refreshes now rather
    /// than whenever the old timer would have fired, and a backward jump moves the session's
    /// dates with the clock. Called every few seconds by `watchClock`.
    public func checkClock() {
        let now = ClockReading(clock, monotonic)
        let jump = now.jump(since: lastClockCheck)
        lastClockCheck = now
        guard jump.isJump() else { return }
        logger.notice("the wall clock jumped; re-evaluating the session", metadata: ["clock.offset_seconds": "\(Int64(saturating: jump.offset))"])
        apply(machine.clockJumped(by: jump.offset, now: now.wall))
    }

    private func watchClock() async {
        while !Task.isCancelled {
            try? await monotonic.sleep(for: 5)
            checkClock()
        }
    }

    private func loadStoredSession() async {
        do {
            let stored = try await store.load(profile: profile)
            logger.info(stored == nil ? "no stored session" : "read the stored session")
            apply(machine.storedSessionLoaded(stored, now: clock.now(), random: random()))
        } catch {
            logger.error("cannot read the stored session", metadata: ["error": "\(error.localizedDescription)"])
            apply(machine.storedSessionUnavailable(error, now: clock.now(), random: random()))
        }
        for waiter in loadWaiters { waiter.resume() }
        loadWaiters.removeAll()
    }

    private func refresh(_ refreshToken: String, generation: UInt64) async {
        do {
            let grant = try await api.refresh(refreshToken: refreshToken)
            apply(machine.refreshSucceeded(grant, generation: generation, now: clock.now()))
        } catch {
            switch error.refreshClass {
            case .fatal(let code): logger.warning("server ended the session", metadata: ["error.code": "\(code)"])
            case .transient: logger.notice("refresh failed; keeping the session", metadata: ["error": "\(error.localizedDescription)"])
            }
            apply(machine.refreshFailed(error, generation: generation, now: clock.now(), random: random()))
        }
    }

    private func runKeyringJobs() async {
        for await job in keyringJobs {
            switch job {
            case .store(let session, let generation):
                var failure: StoreFailure?
                do { try await store.save(session, profile: profile) } catch {
                    failure = error
                    logger.error("keyring write failed; serving the session from memory", metadata: ["error": "\(error.localizedDescription)"])
                }
                apply(machine.storeFinished(generation: generation, failure: failure, now: clock.now(), random: random()))
            case .delete:
                do { try await store.delete(profile: profile) } catch {
                    logger.error("keyring delete failed", metadata: ["error": "\(error.localizedDescription)"])
                }
            }
        }
    }

    private func makeRequestID() -> RequestID {
        nextRequest += 1
        return RequestID(nextRequest)
    }
}

/// Why a sign-in did not produce a session.
public enum SignInFailure: Error, Sendable {
    /// GoTrue refused or could not be reached.
    case server(ServerFailure)
    /// Another sign-in or a sign-out overtook this one.
    case replaced(TokenFailure)
    /// A browser sign-in's redirect did not match a flow, or carried the provider's error.
    case flow(OAuthFlowFailure)
}

/// Why a call on the signed-in user's behalf failed.
public enum AccountFailure: Error, Sendable {
    /// There is no usable session (signed out, or the token could not be refreshed).
    case session(TokenFailure)
    /// The server refused or could not be reached.
    case server(ServerFailure)
}
