import AuthCore
import FoundationEssentials

/// New sessions adopted, the user's record updated and sign-outs: the requests that change which
/// session the driver holds, each fed to the machine, which decides.
extension SessionDriver {
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
            logger.info(failure == .stopping ? "sign-in not adopted: authd is stopping" : "sign-in overtaken by another sign-in or a sign-out")
            return .failure(failure)
        }
    }

    /// Adopts the session a take-over's exchange of an app's refresh token granted, as `adopt`
    /// does (announced as `SIGNED_IN`), then has the machine refresh it once more at once and
    /// returns when that refresh is stored or has failed: `SessionTakeOver` says why, and what the
    /// outcome means (`interrupted` when authd stopped before that refresh was done). Fails, as
    /// `adopt`, when another sign-in or a sign-out overtook the adoption, or authd stopped before
    /// it, or before that refresh with the session held in memory only (the keyring refused it).
    public func adoptTakenOver(_ grant: SessionGrant) async -> Result<SessionTakeOver.Outcome, TokenFailure> {
        if stopped { return .failure(.stopping) }
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
            logger.info(failure == .stopping ? "take-over not adopted: authd is stopping" : "take-over overtaken by another sign-in or a sign-out")
            return .failure(failure)
        }
        logger.info("signed in with a session taken over; refreshing it once more", metadata: ["user.id": "\(grant.user.id)"])
        if SessionTakeOver.needsSecondExchange(machine, adoptedRefreshToken: grant.refreshToken, generation: generation) {
            apply(machine.refreshRequested(now: clock.now()))
        }
        await settled()
        // Let go by the stop, not settled: the refresh asked for may have been made at the server
        // and its answer not kept, so the machine's session says nothing about the app's copy
        // (the stored token, its parent, is still answered by GoTrue).
        if stopped, !machine.isSettled {
            logger.info("take-over not refreshed once more: authd is stopping")
            if machine.generation != generation { return .success(.overtaken) }
            // Served from memory only, the keyring having refused it: nothing is left once authd
            // has ended. The app's token is the parent of the lost grant unless the refresh was
            // made, and asking again is then the way to keep the session.
            if machine.keyringFailure != nil { return .failure(.stopping) }
            return .success(.interrupted)
        }
        return .success(SessionTakeOver.outcome(of: machine, adoptedRefreshToken: grant.refreshToken, generation: generation))
    }

    /// Signs out with `scope`, as `SessionMachine.signOutRequested` and `SignOutRules` decide, and
    /// tells the server with the credential they chose.
    public func signOut(scope: SignOutScope) async -> SignOutOutcome {
        let (actions, credential) = machine.signOutRequested(scope: scope, now: clock.now())
        guard let credential else { return .confirmed }
        apply(actions)
        await makeOwedDelete()
        if SignOutRules.endsHere(scope) { logger.info("signed out", metadata: ["sign_out.scope": "\(scope.rawValue)"]) }
        let accessToken: String
        switch credential {
        case .accessToken(let token):
            accessToken = token
        case .refreshFirst(let refreshToken, let fallback):
            accessToken = (try? await api.refresh(refreshToken: refreshToken))?.accessToken ?? fallback
        case .validToken:
            switch await token(validFor: ServerCallToken.minimumValidity) {
            case .success(let token): accessToken = token.accessToken
            case .failure(.stopping): return SignOutOutcome(confirmed: false, detail: "authd is stopping; sign out again once it is back")
            case .failure: return SignOutRules.noValidToken
            }
        }
        var failure: ServerFailure?
        do { try await api.signOut(accessToken: accessToken, scope: scope) } catch { failure = error }
        let outcome = SignOutRules.outcome(failure)
        if !outcome.confirmed { logger.notice("server did not confirm sign-out", metadata: ["error": "\(outcome.detail ?? "")"]) }
        return outcome
    }
}
