import FoundationEssentials
import FoundationGaps

/// Changes the user makes to the account through authd: a change of the user's record at the
/// server, and signing out.
extension SessionMachine {
    /// The server accepted changes to the user (`PUT /user`) and answered with `user`: the summary
    /// kept with the session is replaced and stored, subscribers are told `USER_UPDATED`, and
    /// `request` (the change's caller) is answered with the token then served. A user who is no
    /// longer anonymous makes the token stale (it still says `is_anonymous: true`, which apps'
    /// row-level security reads): the session is refreshed, and the answer and `USER_UPDATED`
    /// wait until the refreshed one is stored, as do token requests (`ClaimsRefresh`); a refresh
    /// that fails transiently or is held back is the answer's `refreshFailing`, and the usual
    /// rules go on. A change while the token is stale waits with it. For another user than the
    /// session's (it changed while the request was out) nothing changes, and `request` is told.
    public mutating func userUpdated(_ user: UserSummary, request: RequestID, now: Date) -> [SessionAction] {
        let updated = session?.user.id == user.id ? session : pending?.session.user.id == user.id ? pending?.session : nil
        guard let updated else {
            if case .signedOut(let reason) = phase { return [.answer(request, .failure(.notSignedIn(reason)))] }
            return [.answer(request, .failure(.notSignedIn(.replaced)))]
        }
        if pending?.session.user.id == user.id { pending?.session.user = user }
        if session?.user.id == user.id { session?.user = user }
        var actions: [SessionAction] = []
        if updated.user.isAnonymous, !user.isAnonymous {
            claims.changed(by: request)
            // Idle: refresh now. Otherwise whatever is out finishes first, and then `evaluate`
            // starts the refresh the change needs.
            if phase == .signedIn { actions = beginRefresh(now: now) }
        } else if claims.isStale {
            claims.join(request)
        }
        // The refresh writes the new summary with its session; otherwise it is written now.
        if phase != .refreshing { actions += storeAgainIfIdle() }
        if claims.isStale { return actions }
        if let session, session.user.id == user.id {
            return actions + [.emit(.userUpdated), .answer(request, .success(token(session)))]
        }
        // The session being written (a sign-in's) is served once stored, and `request` answered then.
        waiting.append((request, 0))
        return actions + [.emit(.userUpdated)]
    }

    /// The user asked to sign out with `scope` (`SignOutRules`). `local` and `global` end the
    /// session here at once, whatever the server later says; `others` keeps it. A session still
    /// being written to the keyring counts: a sign-out must not lose to it. Returns the actions
    /// and how to tell the server, or nil when there is no session and nothing to tell.
    public mutating func signOutRequested(scope: SignOutScope, now: Date) -> (actions: [SessionAction], tellServer: SignOutCredential?) {
        guard let current = session ?? pending?.session else { return ([], nil) }
        let credential = SignOutRules.credential(for: current, scope: scope, now: now)
        guard SignOutRules.endsHere(scope) else { return ([], credential) }
        return (end(.userRequested), credential)
    }
}
