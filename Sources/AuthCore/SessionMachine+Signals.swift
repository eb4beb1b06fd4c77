import FoundationEssentials
import FoundationGaps

/// Signals from outside the session: the refresh timer, a resume from suspend, a network change, a step of the wall clock.
extension SessionMachine {
    /// The timer fired: refresh, retry, or read an unreadable store again, whichever is due.
    public mutating func timerFired(now: Date) -> [SessionAction] {
        if isStoreUnavailable { return reloadStoreIfIdle(now: now) }
        return evaluate(now: now)
    }

    /// The machine woke from suspend. Deadlines that passed while asleep are acted on now, and a
    /// transient failure that is likely to be over (the network or the server, not a rate limit)
    /// is retried without waiting out its backoff; a keyring unlocked on the lock screen is read.
    public mutating func resumed(now: Date) -> [SessionAction] {
        if isStoreUnavailable { return reloadStoreIfIdle(now: now) }
        return retrySooner(ifFailingWith: [.offline, .serverError], now: now)
    }

    /// The network configuration changed (a link came up, an address was added or removed). A
    /// refresh that failed because the server was unreachable is retried now.
    public mutating func networkChanged(now: Date) -> [SessionAction] {
        retrySooner(ifFailingWith: [.offline], now: now)
    }

    /// The wall clock was set by `offset` seconds (positive: forward), as measured against a
    /// monotonic clock.
    ///
    /// Forward, the wall-clock deadlines are kept: time may really have passed unseen (a paused
    /// VM), so a token that now looks expired is refreshed at once. Backward, no time passed that
    /// the monotonic clock did not see, so every wall-clock date is moved by the same offset and
    /// the token keeps exactly the real validity it had; otherwise the refresh would come up to
    /// `offset` late, after the server had let the token expire. The shifted session is stored
    /// again so that a restart does not bring back the unshifted expiry.
    public mutating func clockJumped(by offset: TimeInterval, now: Date) -> [SessionAction] {
        var actions: [SessionAction] = []
        // The breaker counts in real time either way: a clock set forward must not empty it.
        budget.shift(by: offset)
        if offset < 0 {
            session?.shift(by: offset)
            pending?.session.shift(by: offset)
            nextRefreshAt = nextRefreshAt?.addingTimeInterval(offset)
            keyring.shift(by: offset)
            lastFailureAt = lastFailureAt?.addingTimeInterval(offset)
            degraded?.retryAt.addTimeInterval(offset)
            if case .uncertain(let until) = hold { hold = .uncertain(until: until.addingTimeInterval(offset)) }
            actions += storeAgainIfIdle()
        }
        return actions + evaluate(now: now)
    }

    /// Brings a backed-off retry forward to now (or to the end of the minimum gap after the last
    /// failure, so that a flapping signal cannot hammer the server) when the failure's reason is
    /// one of `reasons`; otherwise just re-checks the deadlines.
    private mutating func retrySooner(ifFailingWith reasons: Set<DegradedReason>, now: Date) -> [SessionAction] {
        if phase == .signedIn, let failing = degraded, reasons.contains(failing.reason) {
            let earliest = lastFailureAt.map { $0.addingTimeInterval(policy.minimumRetryGap) } ?? now
            let retryAt = max(now, earliest)
            if retryAt < failing.retryAt {
                nextRefreshAt = retryAt
                degraded?.retryAt = retryAt
            }
        }
        return evaluate(now: now)
    }
}
