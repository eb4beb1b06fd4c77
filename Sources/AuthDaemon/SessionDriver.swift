import AuthCore
import AuthProtocol
import FoundationEssentials
import FoundationGaps
import Logging
import ServiceLifecycle
import Synchronization

/// Runs one profile's `SessionMachine`, the session's life: feeds it inputs stamped with the
/// time, carries out its actions (refresh and sign-out calls, keyring, timer, events, answers)
/// and feeds the outcomes back. Holds no rules. Sign-ins and account calls (`AccountOperations`)
/// and browser sign-ins (`BrowserSignIns`) come to it with a new session to adopt.
///
/// All I/O runs as child tasks of `run()`. Keyring writes and deletes go through one serial
/// loop, so a sign-out's delete can never be overtaken by an earlier store.
public actor SessionDriver: Service {
    /// The profile this driver serves.
    public nonisolated let profile: String
    /// The project URL, for status.
    public nonisolated let server: String
    private var machine: SessionMachine {
        didSet {
            publish()
            // Kept only for a notice, and only until the sign-out that needs it.
            if notice != nil, let session = machine.session { lastSession = session }
        }
    }
    private let store: any SessionStore
    /// The server; the profile's other services call it too (`ProfileServices`).
    nonisolated let api: any GoTrueAPI
    /// The clocks; the profile's other services read the same ones.
    nonisolated let clock: any WallClock
    nonisolated let monotonic: any MonotonicClock
    /// The machine as of its last change, with both clocks then: `tokenAtOnce` asks it without
    /// waiting for this actor.
    private nonisolated let published = Mutex<(machine: SessionMachine, at: ClockReading)?>(nil)
    private var lastClockCheck: ClockReading
    private let timer: any RefreshTimer
    /// Tells the user outside any app when the server ended the session, offering to sign in again.
    private let notice: (any SignOutNotice)?
    /// Starts the sign-in the user chose on that notice.
    private let signInStarter: (any SignInStarter)?
    /// The session as last held, kept past its end: the notice's sign-in is chosen from its
    /// token's claims (how the user signed in) and its user's factors.
    private var lastSession: Session?
    /// One per notice on screen, by number: finished when the profile signs in again, which
    /// withdraws them; removed when a notice ends otherwise.
    private var noticeWithdrawals: [UInt64: AsyncStream<Void>.Continuation] = [:]
    private var nextNotice: UInt64 = 0
    private let random: @Sendable () -> Double
    /// Logs with the profile named; the profile's other services log with it too.
    nonisolated let logger: Logger

    private var answers: [RequestID: CheckedContinuation<Result<IssuedToken, TokenFailure>, Never>] = [:]
    private var nextRequest: UInt64 = 0
    private var subscribers: [UInt64: @Sendable (AuthEventMessage) -> Void] = [:]
    private var loadWaiters: [CheckedContinuation<Void, Never>] = []
    /// Whether an `elevate` call is out, and the ones waiting for it to finish.
    private var elevating = false
    private var elevationWaiters: [CheckedContinuation<Void, Never>] = []
    /// Callers waiting for the machine to settle (`SessionMachine.isSettled`).
    private var settleWaiters: [CheckedContinuation<Void, Never>] = []

    private enum Job: Sendable {
        case refresh(refreshToken: String, generation: UInt64)
        case timerFired
        case loadStore
        /// A sign-out the user is told about, with the session that ended.
        case notice(SignOutReason, ended: Session?)
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
                timer: any RefreshTimer = DispatchWallTimer(), notice: (any SignOutNotice)? = nil,
                signInStarter: (any SignInStarter)? = nil, policy: RefreshPolicy = RefreshPolicy(), logger: Logger,
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
        self.notice = notice
        self.signInStarter = signInStarter
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
                case .notice(let reason, let ended):
                    // Signed in again before the notice came up: nothing to tell.
                    guard let notice, machine.session == nil else { break }
                    let plan = SignInAgainPlan(accessToken: ended?.accessToken ?? "")
                    let secondFactor = DesktopNoticeRule.isAboutSecondFactor(reason) || !(ended?.user.verifiedFactors.isEmpty ?? true)
                    let offer = SignInOffer(plan: plan, inTerminal: plan.needsTerminal(secondFactor: secondFactor))
                    let (signedInAgain, withdrawal) = AsyncStream<Void>.makeStream()
                    nextNotice += 1
                    let number = nextNotice
                    noticeWithdrawals[number] = withdrawal
                    let profile = profile, starter = plan.authctlArguments(profile: profile) == nil ? nil : signInStarter
                    group.addTask {
                        await Self.offerSignIn(notice, starter: starter, profile: profile, reason: reason, offer: offer, until: signedInAgain)
                        await self.noticeEnded(number)
                    }
                }
            }
            keyringSink.finish()
        }
    }

    /// A sign-in to offer, and where it runs.
    private struct SignInOffer: Sendable {
        var plan: SignInAgainPlan
        var inTerminal: Bool
    }

    /// Forgets a notice that ended (closed, chosen, withdrawn).
    private func noticeEnded(_ number: UInt64) {
        noticeWithdrawals.removeValue(forKey: number)?.finish()
    }

    /// Shows the notice until the user chooses to sign in (then starts that sign-in), closes it,
    /// or the profile signs in again some other way (then it is withdrawn). Off the actor: the
    /// starter looks at the file system to tell whether it can start anything.
    private static func offerSignIn(_ notice: any SignOutNotice, starter: (any SignInStarter)?, profile: String, reason: SignOutReason,
                                    offer: SignInOffer, until signedInAgain: AsyncStream<Void>) async {
        let starter = starter.flatMap { $0.canStart(offer.plan, inTerminal: offer.inTerminal) ? $0 : nil }
        let chosen = await withTaskGroup(of: Bool.self) { race in
            race.addTask { await notice.sessionEnded(profile: profile, reason: reason, plan: offer.plan, offersSignIn: starter != nil) }
            race.addTask {
                for await _ in signedInAgain {}
                return false
            }
            let first = await race.next() ?? false
            race.cancelAll()
            return first
        }
        // Chosen just as the daemon stops: no window that would outlive it.
        guard chosen, !Task.isCancelled, let starter else { return }
        await starter.startSignIn(profile: profile, plan: offer.plan, inTerminal: offer.inTerminal)
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

    /// Publishes the machine stamped with the reading of the last clock check, not a fresh one:
    /// a jump since that check, which the machine has not seen, then keeps `tokenAtOnce` out.
    private func publish() {
        let stamped = (machine: machine, at: lastClockCheck)
        published.withLock { $0 = stamped }
    }

    /// A token valid for at least `minimum` seconds, refreshing first when needed.
    public func token(validFor minimum: TimeInterval) async -> Result<IssuedToken, TokenFailure> {
        // A jump of the wall clock since the last look is acted on before the answer: a clock set
        // back would otherwise make a token look valid longer than it is.
        checkClock()
        return await answered { $0.tokenRequested($1, validFor: minimum, now: clock.now()) }
    }

    /// Feeds the machine an input that answers a new request (at once or later), and waits for
    /// that answer.
    private func answered(_ input: (inout SessionMachine, RequestID) -> [SessionAction]) async -> Result<IssuedToken, TokenFailure> {
        let id = makeRequestID()
        return await withCheckedContinuation { continuation in
            answers[id] = continuation
            apply(input(&machine, id))
        }
    }

    // MARK: Sessions

    /// Feeds a session the server granted to the machine and waits until it is stored and served
    /// (in memory, if the keyring refused it). Subscribers are told `event` (`SIGNED_IN`, or
    /// `PASSWORD_RECOVERY` for a recovery code). Fails when another sign-in or a sign-out
    /// overtook it.
    public func adopt(_ grant: SessionGrant, announcing event: SessionEvent) async -> Result<Void, TokenFailure> {
        let now = clock.now()
        let answer = await answered { $0.signedIn(Session(grant: grant, receivedAt: now), request: $1, now: now, announcing: event) }
        switch answer {
        case .success:
            logger.info("signed in", metadata: ["user.id": "\(grant.user.id)"])
            return .success(())
        case .failure(let failure):
            logger.info("sign-in overtaken by another sign-in or a sign-out")
            return .failure(failure)
        }
    }

    /// Adopts the session a take-over's exchange of an app's refresh token granted, as `adopt`
    /// does (announced as `SIGNED_IN`), then has the machine refresh it once more at once and
    /// returns when that refresh is stored or has failed: `SessionTakeOver` says why, and what the
    /// outcome means. Fails, as `adopt`, when another sign-in or a sign-out overtook the adoption.
    public func adoptTakenOver(_ grant: SessionGrant) async -> Result<SessionTakeOver.Outcome, TokenFailure> {
        let id = makeRequestID()
        let now = clock.now()
        // The generation the machine gives this session, read before anything else can run on
        // the actor: a later sign-in or sign-out changes it, and the outcome must see that.
        var generation: UInt64 = 0
        let answer = await withCheckedContinuation { continuation in
            answers[id] = continuation
            apply(machine.signedIn(Session(grant: grant, receivedAt: now), request: id, now: now, announcing: .signedIn))
            generation = machine.generation
        }
        if case .failure(let failure) = answer {
            logger.info("take-over overtaken by another sign-in or a sign-out")
            return .failure(failure)
        }
        logger.info("signed in with a session taken over; refreshing it once more", metadata: ["user.id": "\(grant.user.id)"])
        if SessionTakeOver.needsSecondExchange(machine, adoptedRefreshToken: grant.refreshToken, generation: generation) {
            apply(machine.refreshRequested(now: clock.now()))
        }
        await settled()
        return .success(SessionTakeOver.outcome(of: machine, adoptedRefreshToken: grant.refreshToken, generation: generation))
    }

    /// Runs `call`, a server call that replaces the session's tokens in place (an MFA
    /// verification), with an access token valid for `ServerCallToken.minimumValidity` and with
    /// refreshes held back while it is out (`SessionMachine.holdRefreshes`); the session it
    /// answers is stored and served, and subscribers are told `MFA_CHALLENGE_VERIFIED`. One such
    /// call at a time: a second waits for the first.
    public func elevate(_ call: @Sendable (String) async throws(ServerFailure) -> SessionGrant) async -> Result<Void, AccountFailure> {
        while elevating { await withCheckedContinuation { elevationWaiters.append($0) } }
        elevating = true
        defer {
            elevating = false
            if !elevationWaiters.isEmpty { elevationWaiters.removeFirst().resume() }
        }
        var held: (token: String, generation: UInt64)?
        // A token valid long enough for the calls and, should their outcome stay unknown, for the
        // wait that follows (`SessionMachine.verificationUncertain`); half the lifetime of
        // short-lived tokens. Then the hold, which waits for a refresh or a write of a new
        // session that is out to finish. While an earlier verification's outcome is unknown no
        // refresh may bring a fresher token: the current one serves as long as the call needs.
        let validity = machine.hold == .none
            ? min(Self.verificationValidity, max(ServerCallToken.minimumValidity, (machine.session?.lifetime ?? 0) / 2))
            : ServerCallToken.minimumValidity
        for _ in 0..<8 where held == nil {
            if case .failure(let failure) = await token(validFor: validity) { return .failure(.session(failure)) }
            if machine.holdRefreshes() {
                if let token = machine.answer(validFor: validity, now: clock.now()) {
                    held = (token.accessToken, machine.generation)
                } else {
                    apply(machine.releaseRefreshes(now: clock.now()))
                    // Refreshing fails (offline, held back): that is why no fresh token came.
                    if let degraded = machine.degraded { return .failure(.session(.refreshFailing(degraded.reason, detail: degraded.detail))) }
                }
            } else {
                await settled()
            }
        }
        guard let held else { return .failure(.sessionBusy) }
        var grant: SessionGrant?
        var lastFailure: ServerFailure?
        // One more try when no answer could be read: if the first never reached the server this
        // one verifies, and if it did, the server's answer to this one says so.
        for attempt in 0..<2 where grant == nil {
            do {
                grant = try await call(held.token)
            } catch {
                lastFailure = error
                if error.leavesOutcomeUnknown { continue }
                // A second try's refusal speaks for the first only when GoTrue gave it after
                // checking the challenge was not verified yet (a rate limit, a proxy or an
                // expired token answer before that check).
                if attempt > 0, !Self.refusalsAfterTheChallengeCheck.contains(error.errorCode ?? "") { continue }
                if error.errorCode == "mfa_verification_rejected" {
                    // The project's hook refused it, and GoTrue signed every session of the user out.
                    logger.warning("server ended the session", metadata: ["error.code": "mfa_verification_rejected"])
                    apply(machine.serverEndedSession(code: "mfa_verification_rejected", generation: held.generation, now: clock.now()))
                }
                apply(machine.releaseRefreshes(now: clock.now()))
                return .failure(.server(error))
            }
        }
        guard let grant else {
            let failure = lastFailure ?? .invalidResponse(detail: "no answer")
            logger.warning("verification outcome unknown; refreshes held back", metadata: ["error": "\(failure.readableDescription)"])
            apply(machine.verificationUncertain(now: clock.now()))
            return .failure(.verificationUncertain(failure))
        }
        let now = clock.now()
        let answer = await answered { $0.elevated(Session(grant: grant, receivedAt: now), request: $1, generation: held.generation, now: now) }
        switch answer {
        case .success:
            logger.info("second factor verified", metadata: ["user.id": "\(grant.user.id)"])
            return .success(())
        case .failure(let failure):
            logger.info("verification overtaken by another sign-in or a sign-out")
            return .failure(.session(failure))
        }
    }

    /// How long a token must stay valid for a verification: its two tries (the request timeout
    /// each), then the wait an unknown outcome holds refreshes back for (`uncertainMargin`
    /// before expiry), with room to spare.
    static let verificationValidity: TimeInterval = 300

    /// GoTrue's refusals of a verification made after it checked that the challenge was not
    /// verified already: a second try refused so says the first did not go through.
    static let refusalsAfterTheChallengeCheck: Set<String> = ["mfa_verification_failed", "mfa_challenge_expired", "mfa_verification_rejected"]

    /// Returns once the machine has no refresh, write of a new session or store read in flight.
    private func settled() async {
        if machine.isSettled { return }
        await withCheckedContinuation { settleWaiters.append($0) }
    }

    /// Refreshes now: the server changed what the session's tokens state (a factor removed).
    public func refreshNow() {
        apply(machine.refreshRequested(now: clock.now()))
    }

    /// The server accepted changes to the user: the summary kept with the session follows, and
    /// subscribers are told `USER_UPDATED`. Returns once the token served states the change (after
    /// a refresh, when the change altered its claims), or with why no such token could be had
    /// (`SessionMachine.userUpdated`).
    public func userUpdated(_ user: UserSummary) async -> Result<Void, TokenFailure> {
        await answered { $0.userUpdated(user, request: $1, now: clock.now()) }.map { _ in () }
    }

    /// Signs out with `scope`, as `SessionMachine.signOutRequested` and `SignOutRules` decide, and
    /// tells the server with the credential they chose.
    public func signOut(scope: SignOutScope) async -> SignOutOutcome {
        let (actions, credential) = machine.signOutRequested(scope: scope, now: clock.now())
        guard let credential else { return .confirmed }
        apply(actions)
        if SignOutRules.endsHere(scope) { logger.info("signed out", metadata: ["sign_out.scope": "\(scope.rawValue)"]) }
        let accessToken: String
        switch credential {
        case .accessToken(let token):
            accessToken = token
        case .refreshFirst(let refreshToken, let fallback):
            accessToken = (try? await api.refresh(refreshToken: refreshToken))?.accessToken ?? fallback
        case .validToken:
            guard case .success(let token) = await token(validFor: ServerCallToken.minimumValidity) else { return SignOutRules.noValidToken }
            accessToken = token.accessToken
        }
        var failure: ServerFailure?
        do { try await api.signOut(accessToken: accessToken, scope: scope) } catch { failure = error }
        let outcome = SignOutRules.outcome(failure)
        if !outcome.confirmed { logger.notice("server did not confirm sign-out", metadata: ["error": "\(outcome.detail ?? "")"]) }
        return outcome
    }

    /// The current status, without tokens, once the stored session has been read.
    public func status() async -> SessionStatus {
        await awaitLoaded()
        return StatusMapper.status(of: machine, profile: profile, server: server)
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
        defer {
            if machine.isSettled, !settleWaiters.isEmpty {
                let waiters = settleWaiters
                settleWaiters.removeAll()
                for waiter in waiters { waiter.resume() }
            }
        }
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
                if machine.session != nil, !noticeWithdrawals.isEmpty {
                    // Signed in again (any event with a session says so): the notices are moot.
                    for withdrawal in noticeWithdrawals.values { withdrawal.finish() }
                    noticeWithdrawals.removeAll()
                }
                if case .refreshFailing(.refreshLimited, let detail, _) = event {
                    // Failed refreshes are logged where they fail; a held-back one never leaves.
                    logger.notice("refresh held back", metadata: ["refresh.detail": "\(detail)"])
                }
                if case .signedOut(let reason) = event {
                    // The session that ended, as it was when it did (a later sign-in and sign-out
                    // must not change what this notice offers); kept no longer.
                    let ended = lastSession
                    lastSession = nil
                    if DesktopNoticeRule.notifies(reason) {
                        // Out of the way of the session's own work: a notification service can be slow.
                        jobSink.yield(.notice(reason, ended: ended))
                    }
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
        guard jump.isJump() else {
            // Nothing the machine must see: the published copy is good as of this check.
            published.withLock { $0?.at = now }
            return
        }
        logger.notice("the wall clock jumped; re-evaluating the session", metadata: ["clock.offset_seconds": "\(Int64(saturating: jump.offset))"])
        apply(machine.clockJumped(by: jump.offset, now: now.wall))
        // Stamped with this check, the published machine is served on the event loop again.
        publish()
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
            logger.error("cannot read the stored session", metadata: ["error": "\(error.readableDescription)"])
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
            case .transient: logger.notice("refresh failed; keeping the session", metadata: ["error": "\(error.readableDescription)"])
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
                    logger.error("keyring write failed; serving the session from memory", metadata: ["error": "\(error.readableDescription)"])
                }
                apply(machine.storeFinished(generation: generation, failure: failure, now: clock.now(), random: random()))
            case .delete:
                do { try await store.delete(profile: profile) } catch {
                    logger.error("keyring delete failed", metadata: ["error": "\(error.readableDescription)"])
                }
            }
        }
    }

    private func makeRequestID() -> RequestID {
        nextRequest += 1
        return RequestID(nextRequest)
    }
}
