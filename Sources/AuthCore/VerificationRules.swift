import FoundationEssentials

/// The rules of an MFA verification, a server call that replaces the session's tokens in place:
/// how long the access token it is made with must stay valid, and what a failed try means.
public enum VerificationRules {
    /// How long a token must stay valid for a verification when nothing holds refreshes back: its
    /// two tries (the request timeout each), then the wait an unknown outcome holds refreshes
    /// back for (`uncertainMargin` before expiry), with room to spare.
    public static let validity: TimeInterval = 300

    /// GoTrue's refusals of a verification made after it checked that the challenge was not
    /// verified already: a second try refused so says the first did not go through.
    public static let refusalsAfterTheChallengeCheck: Set<String> = ["mfa_verification_failed", "mfa_challenge_expired", "mfa_verification_rejected"]

    /// The validity to ask of the token for a verification. Half the lifetime of short-lived
    /// tokens, at least `ServerCallToken.minimumValidity`; while an earlier verification's outcome
    /// is unknown (`hold` is not `.none`) no refresh may bring a fresher token, so the current one
    /// serves as long as the call needs.
    public static func tokenValidity(hold: RefreshHold, lifetime: TimeInterval?) -> TimeInterval {
        guard hold == .none else { return ServerCallToken.minimumValidity }
        return min(validity, max(ServerCallToken.minimumValidity, (lifetime ?? 0) / 2))
    }

    /// What to do after a failed try.
    public enum AfterFailure: Sendable, Equatable {
        /// Try once more: if the first never reached the server the second verifies, and if it
        /// did, the server's answer to the second says so.
        case tryAgain
        /// The verification failed; `endsSession` when the project's hook refused it, for which
        /// GoTrue signed every session of the user out.
        case fail(endsSession: Bool)
    }

    /// The decision after try number `attempt` (0 for the first) failed with `failure`. Only two
    /// tries are made; after the second a `tryAgain` means the outcome stays unknown.
    public static func afterFailure(_ failure: ServerFailure, attempt: Int) -> AfterFailure {
        if failure.leavesOutcomeUnknown { return .tryAgain }
        // A second try's refusal speaks for the first only when GoTrue gave it after checking
        // the challenge was not verified yet (a rate limit, a proxy or an expired token answer
        // before that check).
        if attempt > 0, !refusalsAfterTheChallengeCheck.contains(failure.errorCode ?? "") { return .tryAgain }
        return .fail(endsSession: failure.errorCode == "mfa_verification_rejected")
    }
}
