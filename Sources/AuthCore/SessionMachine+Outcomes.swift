import FoundationEssentials
import FoundationGaps

/// The outcomes of the I/O the machine asked for: a refresh answered or failed, a keyring write finished.
extension SessionMachine {
    /// A refresh started in `generation` returned `grant`.
    public mutating func refreshSucceeded(_ grant: SessionGrant, generation: UInt64, now: Date) -> [SessionAction] {
        guard generation == self.generation, phase == .refreshing else { return [] }
        clearFailures()
        pending = (Session(grant: grant, receivedAt: now), .tokenRefreshed)
        phase = .persisting
        return [write(pending!.session, adopting: true)]
    }

    /// A refresh started in `generation` failed.
    public mutating func refreshFailed(_ failure: ServerFailure, generation: UInt64, now: Date, random: Double = 0.5) -> [SessionAction] {
        guard generation == self.generation, phase == .refreshing else { return [] }
        switch failure.refreshClass {
        case .fatal(let code):
            return end(.serverEnded(code: code, failure: failure, session: session))
        case .transient(let reason, let retryAfter):
            failures += 1
            lastFailureAt = now
            let retryAt = now.addingTimeInterval(policy.backoff(attempt: failures, retryAfter: retryAfter, random: random))
            let detail = failure.readableDescription
            degraded = (reason, detail, retryAt)
            nextRefreshAt = retryAt
            phase = .signedIn
            return [.emit(.refreshFailing(reason, detail: detail, retryAt: retryAt)), .armTimer(retryAt)]
                + answerWaitingAfterFailure(reason, detail: detail, now: now)
        }
    }

    /// The store finished writing the session of `generation`; `failure` is nil on success.
    /// A failed write leaves the session served from memory and schedules a retry.
    public mutating func storeFinished(generation: UInt64, failure: StoreFailure?, now: Date, random: Double = 0.5) -> [SessionAction] {
        guard let finished = keyring.takeFinishedWrite() else { return [] }
        guard generation == self.generation, finished.generation == generation else { return [] }
        var actions: [SessionAction] = []
        var adopted: Session?
        if finished.adopts, phase == .persisting, let pending {
            self.pending = nil
            session = pending.session
            adopted = pending.session
            phase = .signedIn
            nextRefreshAt = policy.refreshDeadline(for: pending.session, random: random)
            actions.append(.emit(pending.event))
            // The refresh a change of the user's claims waited for: the change is told now.
            if claims.refreshStored() { actions.append(.emit(.userUpdated)) }
        } else if !finished.adopts, keyring.storeRetryInFlight {
            keyring.storeRetryInFlight = false
        } else {
            return []
        }
        let changedMeanwhile = keyring.storeAgainAfterWrite
        actions += keyringOutcome(failure, now: now, random: random)
        if let adopted, !claims.isStale {
            // Everyone waiting gets the new token, even one that still falls short of what was
            // asked (a minimum near the lifetime, less the request's latency and GoTrue's whole
            // seconds): no request ever causes more than one refresh grant, so no client can
            // start a loop of them. The answer carries the token's real expiry. (A session
            // refreshed before the user's claims changed serves nobody: `evaluate` refreshes again.)
            actions += answerWaiting(with: adopted)
        }
        if changedMeanwhile, failure == nil {
            // The session changed while that write was out: write the newer one too. (After a
            // failed write the scheduled retry writes the current session anyway.)
            keyring.storeAgainAfterWrite = false
            actions += storeAgainIfIdle()
        }
        return actions + evaluate(now: now)
    }

    /// Records how a keyring write went: the first failure is announced and retries are scheduled
    /// with the refresh backoff; the first success after failures is announced too.
    private mutating func keyringOutcome(_ failure: StoreFailure?, now: Date, random: Double) -> [SessionAction] {
        defer { keyring.failure = failure }
        guard let failure else {
            let recovered = keyring.failure != nil
            keyring.clearStoreRetry()
            return recovered ? [.emit(.keyringAvailable)] : []
        }
        keyring.storeFailures += 1
        keyring.storeRetryAt = now.addingTimeInterval(policy.backoff(attempt: keyring.storeFailures, retryAfter: nil, random: random))
        return keyring.failure == nil ? [.emit(.keyringUnavailable(failure))] : []
    }

    /// Writes the served session again after it changed in place (dates shifted, user updated).
    /// A refresh or a failing keyring will write it anyway, so only an idle signed-in session needs it.
    mutating func storeAgainIfIdle() -> [SessionAction] {
        if keyring.storeRetryInFlight { keyring.storeAgainAfterWrite = true }
        guard phase == .signedIn, let session, !keyring.storeRetryInFlight, keyring.storeRetryAt == nil else { return [] }
        keyring.storeRetryInFlight = true
        return [write(session, adopting: false)]
    }
}
