import FoundationEssentials

/// Taking over a session an app held (`authctl login --with-session`): how far the app's copy of
/// the refresh token must be left behind, and what a take-over achieved.
///
/// GoTrue answers the *immediate parent* of a session's current refresh token with the current
/// token, however late it is presented (GOTRUE.md, "Refresh-token rotation"): it takes it for a
/// client that refreshed but could not save the answer. After one exchange the app's token is
/// that parent, so an app that kept its copy would go on getting authd's current token: a second
/// refresh owner, the race authd exists to end. So the session is refreshed once more at once,
/// which leaves the app's token two steps behind: GoTrue then answers it only within its reuse
/// interval of the session's last refresh, and otherwise takes it for a stolen token and ends the
/// whole session, for authd and every app.
///
/// The first exchange's session is adopted (stored in the keyring) before the second exchange,
/// and the second exchange is an ordinary refresh of the `SessionMachine`:
/// - a crash between the two loses nothing: the stored token is the parent of whatever the
///   server issued meanwhile, which GoTrue answers with the current token;
/// - a refresh that fails transiently keeps the session, served as any session is, and the
///   machine retries it with its backoff; the take-over is complete with the first refresh of the
///   session that succeeds (that retry, or any later one). Until then the app's copy still
///   reaches the session, which the caller reports (`Outcome.pending`).
public enum SessionTakeOver {
    /// What a take-over achieved once the refresh after the adoption was done, not started, or
    /// cut short by authd's stop.
    public enum Outcome: Sendable, Equatable {
        /// The session was refreshed since its adoption: the app's token is at least two steps
        /// behind the current one and no longer leads to it.
        case complete
        /// The session is held and served but was not refreshed since its adoption, so the app's
        /// token is still the parent of the current one. `retry` is the refresh trouble and when
        /// the machine tries again; nil when no refresh could start now (refreshes held back for
        /// a second-factor verification): the next scheduled refresh completes the take-over.
        case pending(retry: Retry?)
        /// The server ended the session before it could be refreshed again (`reason`): with the
        /// app still running, it may have presented its token in between.
        case ended(SignOutReason)
        /// Another sign-in or a sign-out replaced the adopted session.
        case overtaken
        /// authd stopped while the refresh after the adoption was out: the adopted session is
        /// stored, but whether the server made that refresh is unknown, so the app's token may be
        /// the parent of the current one or already two steps behind. The take-over is done all
        /// the same (taking it over again could present a spent token and end the session): the
        /// next authd goes on with the stored session, the parent of whatever the server issued.
        case interrupted
    }

    /// Transient refresh trouble, as the machine reports it.
    public struct Retry: Sendable, Equatable {
        /// Why the refresh failed.
        public var reason: DegradedReason
        /// A one-line explanation.
        public var detail: String
        /// When the machine tries again.
        public var retryAt: Date
        /// Creates a description of refresh trouble.
        public init(reason: DegradedReason, detail: String, retryAt: Date) {
            self.reason = reason
            self.detail = detail
            self.retryAt = retryAt
        }
    }

    /// Whether the session adopted in `generation` with `adoptedRefreshToken` still waits for the
    /// refresh that completes the take-over: the machine still serves it, unrefreshed, and no
    /// refresh is out. The driver then asks for one (`SessionMachine.refreshRequested`).
    public static func needsSecondExchange(_ machine: SessionMachine, adoptedRefreshToken: String, generation: UInt64) -> Bool {
        machine.generation == generation && machine.phase == .signedIn && machine.session?.refreshToken == adoptedRefreshToken
    }

    /// What the take-over achieved, judged from `machine` once it settled after the refresh was
    /// asked for. `adoptedRefreshToken` is the first exchange's token, `generation` the machine's
    /// generation right after that session was handed to it.
    public static func outcome(of machine: SessionMachine, adoptedRefreshToken: String, generation: UInt64) -> Outcome {
        if machine.generation == generation, let session = machine.session {
            // Only a refresh replaces the token within a generation.
            if session.refreshToken != adoptedRefreshToken { return .complete }
            return .pending(retry: machine.degraded.map { Retry(reason: $0.reason, detail: $0.detail, retryAt: $0.retryAt) })
        }
        // Ending a session moves the generation on by one; so does a sign-in or a sign-out, and
        // only the server's reasons say that the refresh itself was refused.
        if machine.generation == generation &+ 1, case .signedOut(let reason?) = machine.phase, Self.endedByServer(reason) {
            return .ended(reason)
        }
        return .overtaken
    }

    /// Whether `reason` is the server's, not the user's or another sign-in's.
    private static func endedByServer(_ reason: SignOutReason) -> Bool {
        switch reason {
        case .sessionEnded, .secondFactorRequired, .endedWithoutSecondFactor: return true
        case .userRequested, .replaced: return false
        }
    }
}
