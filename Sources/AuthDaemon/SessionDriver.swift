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
///
/// This file holds the state, the loop and `apply`; the rest is by concern: new sessions and
/// sign-outs (`+Sessions`), MFA verifications (`+Elevation`), the calls actions ask for
/// (`+Calls`), the clock watch (`+Clock`). The "sign in again" notices run beside it
/// (`SignInAgainNotices`).
public actor SessionDriver: Service {
    /// The profile this driver serves.
    public nonisolated let profile: String
    /// The project URL, for status.
    public nonisolated let server: String
    var machine: SessionMachine {
        didSet {
            publish()
            // Kept only for a notice, and only until the sign-out that needs it.
            if notices != nil, let session = machine.session { lastSession = session }
        }
    }
    let store: any SessionStore
    /// The server; the profile's other services call it too (`ProfileServices`).
    nonisolated let api: any GoTrueAPI
    /// The clocks; the profile's other services read the same ones.
    nonisolated let clock: any WallClock
    nonisolated let monotonic: any MonotonicClock
    /// The machine as of its last change, with both clocks then: `tokenAtOnce` asks it without
    /// waiting for this actor.
    nonisolated let published = Mutex<(machine: SessionMachine, at: ClockReading)?>(nil)
    var lastClockCheck: ClockReading
    private let timer: any RefreshTimer
    /// Tells the user outside any app when the server ended the session, offering to sign in again.
    private let notices: SignInAgainNotices?
    /// The session as last held, kept past its end: the notice's sign-in is chosen from its
    /// token's claims (how the user signed in) and its user's factors.
    private var lastSession: Session?
    let random: @Sendable () -> Double
    /// Logs with the profile named; the profile's other services log with it too.
    nonisolated let logger: Logger

    var answers: [RequestID: CheckedContinuation<Result<IssuedToken, TokenFailure>, Never>] = [:]
    private var nextRequest: UInt64 = 0
    private var subscribers: [UInt64: @Sendable (PublishedEvent) -> Void] = [:]
    /// The served token's claims, decoded once per token for every status and event.
    var assurances = TokenAssuranceMemo()
    var loadWaiters: [CheckedContinuation<Void, Never>] = []
    /// Whether an `elevate` call is out, and the ones waiting for it to finish.
    var elevating = false
    var elevationWaiters: [CheckedContinuation<Void, Never>] = []
    /// Callers waiting for the machine to settle (`SessionMachine.isSettled`).
    var settleWaiters: [CheckedContinuation<Void, Never>] = []
    /// Set once the job loop has ended (shutdown or cancellation): nothing would carry out the
    /// actions a request needs any more, so every waiter is let go and new requests fail at once
    /// rather than wait forever, which would keep the socket's connections, and so the service
    /// group, from ever ending.
    var stopped = false
    /// A delete the machine asked for after the keyring loop ended (`makeOwedDelete`).
    var deleteOwed = false

    private enum Job: Sendable {
        case refresh(refreshToken: String, generation: UInt64)
        case timerFired
        case loadStore
    }
    enum KeyringJob: Sendable {
        case store(Session, generation: UInt64)
        case delete
    }
    private let jobs: AsyncStream<Job>
    private let jobSink: AsyncStream<Job>.Continuation
    let keyringJobs: AsyncStream<KeyringJob>
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
        self.notices = notice.map { SignInAgainNotices(notice: $0, starter: signInStarter, profile: profile) }
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
        stopServing()
        await makeOwedDelete()
    }

    private func serve() async {
        await loadStoredSession()
        await withDiscardingTaskGroup { group in
            group.addTask { await self.runKeyringJobs() }
            group.addTask { await self.watchClock() }
            if let notices { group.addTask { await notices.run() } }
            for await job in jobs {
                switch job {
                case .timerFired:
                    apply(machine.timerFired(now: clock.now()))
                case .refresh(let refreshToken, let generation):
                    group.addTask { await self.refresh(refreshToken, generation: generation) }
                case .loadStore:
                    group.addTask { await self.loadStoredSession() }
                }
            }
            keyringSink.finish()
            notices?.finish()
        }
    }

    /// Returns once the stored session has been read (at most the keyring's timeout after start),
    /// so that nobody is told "signed out" or "loading" about a session that is merely being read.
    private func awaitLoaded() async {
        if machine.phase != .loading || stopped { return }
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
    func publish() {
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
    /// that answer; fails as `stopping` once the driver has stopped.
    func answered(_ input: (inout SessionMachine, RequestID) -> [SessionAction]) async -> Result<IssuedToken, TokenFailure> {
        if stopped { return .failure(.stopping) }
        let id = makeRequestID()
        return await withCheckedContinuation { continuation in
            answers[id] = continuation
            apply(input(&machine, id))
        }
    }

    /// Returns once the machine has no refresh, write of a new session or store read in flight.
    func settled() async {
        if machine.isSettled || stopped { return }
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

    /// The current status, without tokens, once the stored session has been read.
    public func status() async -> SessionStatus {
        await awaitLoaded()
        return StatusMapper.status(of: machine, profile: profile, server: server) { self.assurances.assurance(of: $0) }
    }

    /// Registers `send` for this profile's events. `acknowledge` runs first, then `send` gets an
    /// `INITIAL_SESSION` snapshot (once the stored session has been read), then every change, all in order.
    public func subscribe(_ subscriber: UInt64, acknowledge: @Sendable () -> Void, send: @escaping @Sendable (PublishedEvent) -> Void) async {
        await awaitLoaded()
        acknowledge()
        let expired = machine.session.map { $0.remaining(at: clock.now()) <= 0 } ?? false
        send(PublishedEvent(StatusMapper.event(.initialSession(expired: expired), machine: machine, profile: profile, server: server) {
            self.assurances.assurance(of: $0)
        }))
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

    func apply(_ actions: [SessionAction]) {
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
                // The keyring loop ends just before the driver stops: a sign-out in between is
                // owed its delete, made once the loop has ended.
                if case .terminated = keyringSink.yield(.delete) { deleteOwed = true }
            case .loadStore:
                jobSink.yield(.loadStore)
            case .emit(let event):
                // Signed in again (any event with a session says so): the notices are moot.
                if machine.session != nil { notices?.tell(.signedIn) }
                if case .refreshFailing(.refreshLimited, let detail, _) = event {
                    // Failed refreshes are logged where they fail; a held-back one never leaves.
                    logger.notice("refresh held back", metadata: ["refresh.detail": "\(detail)"])
                }
                if case .signedOut(let reason) = event {
                    // The session that ended, as it was when it did (a later sign-in and sign-out
                    // must not change what this notice offers); kept no longer.
                    let ended = lastSession
                    lastSession = nil
                    if DesktopNoticeRule.notifies(reason) { notices?.tell(.sessionEnded(reason, ended: ended)) }
                }
                let message = StatusMapper.event(event, machine: machine, profile: profile, server: server) { self.assurances.assurance(of: $0) }
                publishToSubscribers(message)
            case .answer(let id, let result):
                answers.removeValue(forKey: id)?.resume(returning: result)
            case .armTimer(let deadline):
                // Stopped, nothing would act on the timer: the next authd arms its own.
                guard !stopped else { continue }
                let sink = jobSink
                timer.arm(at: deadline) { sink.yield(.timerFired) }
            case .cancelTimer:
                timer.cancel()
            }
        }
    }

    /// Sends `message` to every subscriber, encoded once for all.
    func publishToSubscribers(_ message: AuthEventMessage) {
        logger.debug("event", metadata: ["event.name": "\(message.event)"])
        guard !subscribers.isEmpty else { return }
        let published = PublishedEvent(message)
        for send in subscribers.values { send(published) }
    }

    func makeRequestID() -> RequestID {
        nextRequest += 1
        return RequestID(nextRequest)
    }
}
