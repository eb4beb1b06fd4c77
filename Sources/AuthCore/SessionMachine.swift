import FoundationEssentials
import FoundationGaps

/// The session rules of one profile, as a value type.
///
/// No I/O and no clock: every input carries `now` (and, where randomness is needed, a number in
/// 0..<1) and returns the actions its owner must carry out, in order. Results of I/O come back
/// tagged with the generation they were started in; a result from an earlier generation (a
/// refresh that finishes after a sign-out or a new sign-in) is dropped.
public struct SessionMachine: Sendable {
    /// The coarse phase.
    public internal(set) var phase: SessionPhase = .loading
    /// The session being served, if any. During `.persisting` this is still the previous one.
    public internal(set) var session: Session?
    /// Bumped on every sign-in and sign-out; I/O results from older generations are ignored.
    public internal(set) var generation: UInt64 = 0
    /// Set while refreshing fails transiently.
    public internal(set) var degraded: (reason: DegradedReason, detail: String, retryAt: Date)?
    /// Set while the keyring cannot be written; the session lives in memory only.
    public var keyringFailure: StoreFailure? { keyring.failure }
    /// When the timer should next refresh (or retry).
    public internal(set) var nextRefreshAt: Date?
    /// When a failed keyring write is retried.
    public var storeRetryAt: Date? { keyring.storeRetryAt }

    let policy: RefreshPolicy
    var budget: RefreshBudget
    var waiting: [(id: RequestID, minimum: TimeInterval)] = []
    var pending: (session: Session, event: SessionEvent)?
    var failures = 0
    var lastFailureAt: Date?
    /// Reading and writing the keyring: what is out, what failed, when to try again.
    var keyring = KeyringRetryState()
    /// Whether refreshes are held back for a verification (`holdRefreshes`), and how.
    public internal(set) var hold: RefreshHold = .none
    /// Whether refreshes are held back now.
    public var refreshesHeld: Bool { hold != .none }
    /// The hold a verification took over, restored when it is refused.
    var holdBefore: RefreshHold = .none
    /// Whether the token's claims are stale after a change at the server, and who waits.
    var claims = ClaimsRefresh()
    /// A refresh was asked for (`refreshRequested`: a take-over's second exchange, a factor
    /// removed) and has not started: the breaker held it back. It starts once the breaker has
    /// room, not at the next scheduled refresh, which may be an hour away.
    var refreshOwed = false

    /// Creates a machine in the `loading` phase.
    public init(policy: RefreshPolicy = RefreshPolicy()) {
        self.policy = policy
        self.budget = RefreshBudget(limit: policy.refreshLimit, window: policy.refreshLimitWindow)
    }

    /// The number of requests waiting for a refresh or a load.
    public var waitingCount: Int { waiting.count }

    // MARK: Inputs

    /// The store was read (at start, or again after it had been unreadable). `stored` is nil when
    /// nothing was stored.
    public mutating func storedSessionLoaded(_ stored: Session?, now: Date, random: Double = 0.5) -> [SessionAction] {
        let wasUnavailable = isStoreUnavailable
        guard phase == .loading || (wasUnavailable && keyring.loadInFlight) else { return [] }
        keyring.loadSucceeded()
        // A keyring that was locked at start and is now open: say so before the session it held.
        let prelude: [SessionAction] = wasUnavailable ? [.cancelTimer, .emit(.keyringAvailable)] : []
        guard let stored else {
            phase = .signedOut(nil)
            return prelude + [.emit(.initialSession(expired: false))] + failWaiting(.notSignedIn(nil))
        }
        let served = stored.plausible(at: now)
        session = served
        phase = .signedIn
        // A change of the claims stored before a restart and not yet refreshed: refresh at once.
        if ClaimsRefresh.isStale(served) { claims.markStale() }
        let expired = served.remaining(at: now) <= 0
        nextRefreshAt = policy.refreshDeadline(for: served, random: random)
        return prelude + [.emit(.initialSession(expired: expired))] + evaluate(now: now)
    }

    /// The store could not be read (locked or no Secret Service), at start or on a retry. Not a
    /// sign-out: the read is retried with backoff (capped at `RefreshPolicy.storeReloadCap`), at
    /// once on a resume, and on a token request.
    public mutating func storedSessionUnavailable(_ failure: StoreFailure, now: Date, random: Double = 0.5) -> [SessionAction] {
        let previous: StoreFailure?
        switch phase {
        case .loading: previous = nil
        case .storeUnavailable(let earlier) where keyring.loadInFlight: previous = earlier
        default: return []
        }
        let attempt = keyring.loadFailed()
        phase = .storeUnavailable(failure)
        let delay = min(policy.backoff(attempt: attempt, retryAfter: nil, random: random), policy.storeReloadCap)
        let announce: [SessionAction] = previous == failure ? [] : [.emit(.keyringUnavailable(failure))]
        return announce + failWaiting(.storeUnavailable(failure)) + [.armTimer(now.addingTimeInterval(delay))]
    }

    /// A sign-in produced `newSession`; `request` is answered once it is stored, and then
    /// subscribers are told `event` (`signedIn`, or `passwordRecovery` after a recovery code).
    public mutating func signedIn(_ newSession: Session, request: RequestID?, now: Date,
                                  announcing event: SessionEvent = .signedIn) -> [SessionAction] {
        var actions: [SessionAction] = [.cancelTimer]
        if session != nil || pending != nil {
            actions += failWaiting(.notSignedIn(.replaced))
        }
        return actions + adopt(newSession, request: request, announcing: event)
    }

    /// The server changed what the session's tokens state (a factor was removed, lowering the
    /// level): refresh now, within the breaker's limit. A refresh already out (or a verification)
    /// may predate the change: this one is owed, and starts once that one ends.
    public mutating func refreshRequested(now: Date) -> [SessionAction] {
        guard session != nil else { return [] }
        refreshOwed = true
        guard phase == .signedIn, hold != .verifying else { return [] }
        return beginRefresh(now: now)
    }

    /// How long before the token expires a refresh held back by an unknown verification is tried.
    public static let uncertainMargin: TimeInterval = 60

    /// Why refreshing waits after a verification whose outcome is unknown.
    public static let uncertainDetail = "the server may have verified a second factor without authd hearing its answer; verify it again ('authctl mfa verify') to keep the session, before refreshing is tried anyway"

    /// The token a request for at least `minimum` seconds of validity gets at once, without
    /// changing anything: the current session's while it is signed in, refreshing or persisting
    /// (a successor is never visible before it is stored), when it is still valid for what is
    /// asked and its claims are not stale (`ClaimsRefresh`). Nil when the request needs the
    /// machine (`tokenRequested`). A driver asks this of a published copy of the machine to
    /// answer undemanding requests without queueing them.
    public func answer(validFor minimum: TimeInterval, now: Date) -> IssuedToken? {
        switch phase {
        case .signedIn, .refreshing, .persisting:
            guard let session, !claims.isStale, session.remaining(at: now) >= minimum else { return nil }
            return token(session)
        case .loading, .signedOut, .storeUnavailable:
            return nil
        }
    }

    /// A client wants a token valid for at least `minimum` seconds.
    public mutating func tokenRequested(_ request: RequestID, validFor minimum: TimeInterval, now: Date) -> [SessionAction] {
        if let token = answer(validFor: minimum, now: now) { return [.answer(request, .success(token))] }
        switch phase {
        case .signedOut(let reason):
            return [.answer(request, .failure(.notSignedIn(reason)))]
        case .storeUnavailable(let failure):
            if keyring.loadInFlight {
                waiting.append((request, minimum))
                return []
            }
            if let lastLoadAt = keyring.lastLoadAt, now.timeIntervalSince(lastLoadAt) < policy.minimumRetryGap {
                return [.answer(request, .failure(.storeUnavailable(failure)))]
            }
            // The user may have just unlocked the keyring: look again before saying no.
            waiting.append((request, minimum))
            return beginLoad(now: now)
        case .loading:
            waiting.append((request, minimum))
            return []
        case .refreshing, .persisting:
            // Too demanding for the current token: wait for its successor.
            waiting.append((request, minimum))
            return []
        case .signedIn:
            guard let session else { return [.answer(request, .failure(.notSignedIn(nil)))] }
            if minimum > session.lifetime {
                // No refresh can produce a token that lives this long.
                return [.answer(request, .failure(.minimumValidityTooLong(requested: minimum, lifetime: session.lifetime)))]
            }
            if let degraded, claims.isStale, now < degraded.retryAt, session.remaining(at: now) >= minimum {
                // Only the claims are out of date and the token still serves: the backoff's
                // retry refreshes, not every request of a busy client while the server is away.
                // This request only: the change's callers wait for that retry.
                return [.answer(request, .success(token(session)))]
            }
            waiting.append((request, minimum))
            if let degraded, let lastFailureAt, now.timeIntervalSince(lastFailureAt) < policy.minimumRetryGap {
                // Just failed: do not hammer the server on behalf of a busy client.
                return answerWaitingAfterFailure(degraded.reason, detail: degraded.detail, now: now)
            }
            return beginRefresh(now: now)
        }
    }

    // MARK: Rules

    var isStoreUnavailable: Bool {
        if case .storeUnavailable = phase { return true }
        return false
    }

    mutating func reloadStoreIfIdle(now: Date) -> [SessionAction] {
        keyring.loadInFlight ? [] : beginLoad(now: now)
    }

    private mutating func beginLoad(now: Date) -> [SessionAction] {
        keyring.startLoad(now: now)
        return [.cancelTimer, .loadStore]
    }

    /// Answers what can be answered, starts a refresh when the deadline passed or a waiting
    /// request needs a fresher token, and re-arms the timer.
    mutating func evaluate(now: Date) -> [SessionAction] {
        guard phase == .signedIn, let session, let deadline = nextRefreshAt else { return [] }
        if let held = degraded, held.reason == .refreshLimited, now >= held.retryAt {
            degraded = nil // the breaker has room again
        }
        var actions: [SessionAction] = []
        var stillWaiting: [(id: RequestID, minimum: TimeInterval)] = []
        for waiter in waiting {
            if !claims.isStale, session.remaining(at: now) >= waiter.minimum {
                actions.append(.answer(waiter.id, .success(token(session))))
            } else if waiter.minimum > session.lifetime {
                // No refresh can produce a token that lives this long.
                actions.append(.answer(waiter.id, .failure(.minimumValidityTooLong(requested: waiter.minimum, lifetime: session.lifetime))))
            } else {
                stillWaiting.append(waiter)
            }
        }
        waiting = stillWaiting
        if let retryAt = keyring.storeRetryAt, now >= retryAt {
            keyring.storeRetryAt = nil
            keyring.storeRetryInFlight = true
            actions.append(write(session, adopting: false))
        }
        switch hold {
        case .verifying:
            // No refresh and no timer for one (a passed deadline would fire at once, again and
            // again); the verification's end evaluates anew.
            return actions
        case .uncertain(let until) where now < until:
            // Waiting for a new verification: the current token serves, and the timer ends the wait.
            return actions + answerWaitingAfterFailure(.verificationUncertain, detail: Self.uncertainDetail, now: now)
                + [.armTimer(min(until, keyring.storeRetryAt ?? until))]
        case .uncertain:
            hold = .none
            if degraded?.reason == .verificationUncertain { degraded = nil }
        case .none:
            break
        }
        // Stale claims and an owed refresh are refreshed at once, unless refreshing fails (or the
        // breaker holds it back): then the backoff's deadline, or the breaker's.
        if now >= deadline || !waiting.isEmpty || ((claims.isStale || refreshOwed) && degraded == nil) {
            return actions + beginRefresh(now: now)
        }
        // While the breaker holds a refresh back, wake when it has room again, to end that state.
        let heldUntil = degraded.flatMap { $0.reason == .refreshLimited ? $0.retryAt : nil }
        return actions + [.armTimer(min(deadline, keyring.storeRetryAt ?? deadline, heldUntil ?? deadline))]
    }

    /// Starts a refresh, unless the breaker (`RefreshBudget`) is full: then the refresh is held
    /// back until the window has room, waiting requests get the current token while it is valid
    /// (an error saying so once it is not), and subscribers are told once.
    mutating func beginRefresh(now: Date) -> [SessionAction] {
        guard let session else { return [] }
        switch hold {
        case .verifying:
            // The requests wait, and the verification's end looks again.
            return []
        case .uncertain(let until) where now < until:
            // Waiting for a new verification: the current token serves while it is valid.
            return answerWaitingAfterFailure(.verificationUncertain, detail: Self.uncertainDetail, now: now)
        case .uncertain:
            // The wait is over (a timer that fired late): the refresh is tried.
            hold = .none
            if degraded?.reason == .verificationUncertain { degraded = nil }
        case .none:
            break
        }
        guard budget.take(now: now) else { return holdBackRefresh(now: now) }
        refreshOwed = false
        phase = .refreshing
        claims.refreshStarted()
        return [.emit(.refreshing), .refresh(refreshToken: session.refreshToken, generation: generation)]
    }

    private mutating func holdBackRefresh(now: Date) -> [SessionAction] {
        let retryAt = budget.nextAllowed(now: now)
        let detail = "authd held back a refresh: \(budget.limit) refresh grants in \(Int(budget.window)) s is its limit"
        let announce = degraded?.reason != .refreshLimited || degraded?.retryAt != retryAt
        degraded = (.refreshLimited, detail, retryAt)
        nextRefreshAt = max(nextRefreshAt ?? retryAt, retryAt)
        let event: [SessionAction] = announce ? [.emit(.refreshFailing(.refreshLimited, detail: detail, retryAt: retryAt))] : []
        // Woken when the window has room: the refresh is then due, or the held-back state ends.
        return event + [.armTimer(min(retryAt, keyring.storeRetryAt ?? retryAt))]
            + answerWaitingAfterFailure(.refreshLimited, detail: detail, now: now)
    }

    mutating func end(_ reason: SignOutReason) -> [SessionAction] {
        generation &+= 1
        hold = .none
        holdBefore = .none
        refreshOwed = false
        keyring.abandonLoad()
        session = nil
        pending = nil
        nextRefreshAt = nil
        keyring.failure = nil
        clearFailures()
        keyring.clearStoreRetry()
        phase = .signedOut(reason)
        let failed = failWaiting(.notSignedIn(reason))
        claims = ClaimsRefresh()
        return [.cancelTimer, .delete, .emit(.signedOut(reason))] + failed
    }

    mutating func answerWaitingAfterFailure(_ reason: DegradedReason, detail: String, now: Date) -> [SessionAction] {
        guard let session else { return failWaiting(.notSignedIn(nil)) }
        let answers: [SessionAction] = waiting.map { waiter in
            // A still-valid token is better than none while the server is away; the client
            // sees its expiry and the degraded state.
            session.remaining(at: now) > 0
                ? .answer(waiter.id, .success(token(session)))
                : .answer(waiter.id, .failure(.refreshFailing(reason, detail: detail)))
        }
        waiting.removeAll()
        // The caller of a change of the claims is promised a token that states it: not this one.
        return answers + claims.takeWaiters().map { SessionAction.answer($0, .failure(.refreshFailing(reason, detail: detail))) }
    }

    /// Makes `newSession` the pending one, to be served once written; `request` is answered then.
    mutating func adopt(_ newSession: Session, request: RequestID?, announcing event: SessionEvent) -> [SessionAction] {
        generation &+= 1
        // A hold belongs to the session it was taken on; its call's answer is dropped now.
        hold = .none
        holdBefore = .none
        clearFailures()
        keyring.clearStoreRetry()
        if let request { waiting.append((request, 0)) }
        // A new session's tokens state the user as the server now has it: the callers of a
        // change of the claims get them.
        waiting += claims.takeWaiters().map { (id: $0, minimum: 0) }
        claims = ClaimsRefresh()
        refreshOwed = false
        keyring.abandonLoad()
        pending = (newSession, event)
        phase = .persisting
        return [write(newSession, adopting: true)]
    }

    /// The action that writes `session`, noted with the keyring state.
    mutating func write(_ session: Session, adopting adopts: Bool) -> SessionAction {
        keyring.noteWrite(generation: generation, adopts: adopts)
        return .store(session, generation: generation)
    }

    mutating func answerWaiting(with session: Session) -> [SessionAction] {
        let answers = (waiting.map(\.id) + claims.takeWaiters()).map { SessionAction.answer($0, .success(token(session))) }
        waiting.removeAll()
        return answers
    }

    private mutating func failWaiting(_ failure: TokenFailure) -> [SessionAction] {
        let answers = (waiting.map(\.id) + claims.takeWaiters()).map { SessionAction.answer($0, .failure(failure)) }
        waiting.removeAll()
        return answers
    }

    mutating func clearFailures() {
        failures = 0
        lastFailureAt = nil
        degraded = nil
    }

    func token(_ session: Session) -> IssuedToken {
        IssuedToken(accessToken: session.accessToken, expiresAt: session.expiresAt)
    }
}
