import AuthCore
import FoundationEssentials

extension SessionDriver {
    /// Runs `call`, a server call that replaces the session's tokens in place (an MFA
    /// verification), with an access token valid as `VerificationRules.tokenValidity` says and
    /// with refreshes held back while it is out (`SessionMachine.holdRefreshes`); the session it
    /// answers is stored and served, and subscribers are told `MFA_CHALLENGE_VERIFIED`. One such
    /// call at a time: a second waits for the first. With `user`, only that user's session is
    /// raised: when another's is held, nothing is sent and it fails as `notSignedIn(.replaced)`.
    public func elevate(ofUser user: String? = nil,
                        _ call: @Sendable (String) async throws(ServerFailure) -> SessionGrant) async -> Result<Void, AccountFailure> {
        while elevating, !stopped { await withCheckedContinuation { elevationWaiters.append($0) } }
        elevating = true
        defer {
            elevating = false
            if !elevationWaiters.isEmpty { elevationWaiters.removeFirst().resume() }
        }
        let held: (token: String, generation: UInt64)
        switch await holdRefreshesWithToken(validFor: VerificationRules.tokenValidity(hold: machine.hold, lifetime: machine.session?.lifetime)) {
        case .success(let token): held = token
        case .failure(let failure): return .failure(failure)
        }
        if let user, machine.session?.user.id != user {
            apply(machine.releaseRefreshes(now: clock.now()))
            return .failure(.session(.notSignedIn(.replaced)))
        }
        var grant: SessionGrant?
        var lastFailure: ServerFailure?
        for attempt in 0..<2 where grant == nil {
            do {
                grant = try await call(held.token)
            } catch {
                lastFailure = error
                guard case .fail(let endsSession) = VerificationRules.afterFailure(error, attempt: attempt) else { continue }
                if endsSession {
                    logger.warning("server ended the session", metadata: ["error.code": "mfa_verification_rejected"])
                    apply(machine.serverEndedSession(code: "mfa_verification_rejected", generation: held.generation, now: clock.now()))
                    await makeOwedDelete()
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
            logger.info(failure == .stopping ? "verification not adopted: authd is stopping" : "verification overtaken by another sign-in or a sign-out")
            return .failure(.session(failure))
        }
    }

    /// A token valid for `validity`, with refreshes held back so that none replaces it while the
    /// verification is out: asks for the token, then for the hold, which waits for a refresh or
    /// a write of a new session that is out to finish (a few turns at most).
    private func holdRefreshesWithToken(validFor validity: TimeInterval) async -> Result<(token: String, generation: UInt64), AccountFailure> {
        for _ in 0..<8 {
            if case .failure(let failure) = await token(validFor: validity) { return .failure(.session(failure)) }
            if machine.holdRefreshes() {
                if let token = machine.answer(validFor: validity, now: clock.now()) {
                    return .success((token.accessToken, machine.generation))
                }
                apply(machine.releaseRefreshes(now: clock.now()))
                // Refreshing fails (offline, held back): that is why no fresh token came.
                if let degraded = machine.degraded { return .failure(.session(.refreshFailing(degraded.reason, detail: degraded.detail))) }
            } else {
                await settled()
            }
        }
        return .failure(.sessionBusy)
    }
}
