import FoundationEssentials
import FoundationGaps

/// MFA verifications: refreshes held back while one is at the server, its outcome (new tokens, a refusal, none known) and the sign-out a refused one may bring.
extension SessionMachine {
    /// Holds refreshes back for a server call that replaces the session's tokens in place (an MFA
    /// verification), so that no refresh is out while it is: GoTrue's verification moves the
    /// session's refresh token on by two steps, and a refresh presenting the old one afterwards
    /// would count as reuse and end the session. True when the hold is taken: a session is held,
    /// no refresh or write of a new one is out, and no other verification is. A hold left by a
    /// verification whose outcome is unknown (`verificationUncertain`) is taken over: a new
    /// verification is what mends it. Otherwise nothing changes, and the caller waits for the
    /// session to settle (`isSettled`) and asks again.
    public mutating func holdRefreshes() -> Bool {
        guard phase == .signedIn, session != nil, hold != .verifying else { return false }
        holdBefore = hold
        hold = .verifying
        return true
    }

    /// Whether nothing is in flight that a hold must wait for: no refresh, no write of a new
    /// session, no read of the store.
    public var isSettled: Bool {
        switch phase {
        case .refreshing, .persisting, .loading: return false
        case .signedIn, .signedOut, .storeUnavailable: return true
        }
    }

    /// The held call was refused for certain, or was never sent: refreshes may start again, and
    /// any that came due meanwhile starts now; unless an earlier verification's outcome is still
    /// unknown, whose wait then goes on (a refused retry says nothing about the first).
    public mutating func releaseRefreshes(now: Date) -> [SessionAction] {
        guard hold == .verifying else { return [] }
        hold = holdBefore
        holdBefore = .none
        return evaluate(now: now)
    }

    /// The held call failed in a way that leaves its outcome unknown (no answer, a broken one): the
    /// server may have verified and moved the refresh token on, and then a refresh with the
    /// stored one would end the session as reuse. Refreshes stay held back while the access token
    /// lasts (until `uncertainMargin` before it expires), so that a new verification can bring the
    /// new tokens (it works on the same session with the still-valid access token); requests are
    /// served the current token meanwhile, and subscribers are told why refreshing waits. Then
    /// the refresh is tried anyway: it may succeed (the first verification never reached the
    /// server), or the server says the session is over.
    public mutating func verificationUncertain(now: Date) -> [SessionAction] {
        guard hold == .verifying, let session else { return [] }
        // A minute before the token expires: room for the refresh to be tried while it serves.
        let until = max(now, session.expiresAt.addingTimeInterval(-Self.uncertainMargin))
        hold = .uncertain(until: until)
        holdBefore = .none
        degraded = (.verificationUncertain, Self.uncertainDetail, until)
        return [.emit(.refreshFailing(.verificationUncertain, detail: Self.uncertainDetail, retryAt: until))] + evaluate(now: now)
    }

    /// The held call (taken in `generation`) produced `newSession`, the same session raised to
    /// `aal2`: it is stored and served like a sign-in's, announced as `MFA_CHALLENGE_VERIFIED`,
    /// and `request` is answered once it is stored. Requests waiting for a fresher token keep
    /// waiting and get the new one. A sign-out or sign-in since the hold wins: `request` is told
    /// so and `newSession` is dropped.
    public mutating func elevated(_ newSession: Session, request: RequestID, generation: UInt64, now: Date) -> [SessionAction] {
        guard generation == self.generation, hold == .verifying else {
            let reason: SignOutReason
            if case .signedOut(let ended?) = phase { reason = ended } else { reason = .replaced }
            return [.answer(request, .failure(.notSignedIn(reason)))]
        }
        // A refresh asked for while the verification was out (a factor removed meanwhile) is
        // still owed: the verification's tokens may have been issued before that change.
        let owed = refreshOwed
        let actions = [.cancelTimer] + adopt(newSession, request: request, announcing: .mfaChallengeVerified)
        refreshOwed = owed
        return actions
    }

    /// The server ended the session of `generation` outside a refresh, saying so with `code` (it
    /// signed every session of the user out when the project's hook refused a verification). A
    /// session signed in since is another one, and stays.
    public mutating func serverEndedSession(code: String, generation: UInt64, now: Date) -> [SessionAction] {
        guard generation == self.generation, session != nil || pending != nil else { return [] }
        return end(.sessionEnded(code: code))
    }
}
