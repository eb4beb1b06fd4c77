import FoundationEssentials
import FoundationGaps

/// How long an access token handed to the server on the user's behalf (`GET`/`PUT /user`,
/// `POST /logout`) must still be valid: the request's latency plus the clock skew GoTrue allows
/// itself, so that the server does not answer `bad_jwt` to a token that expired on the way.
public enum ServerCallToken {
    /// Seconds of validity a token needs before it goes to the server.
    public static let minimumValidity: TimeInterval = 30
}

/// Which access token a sign-out presents to `POST /logout`.
public enum SignOutCredential: Sendable, Equatable {
    /// The session's own access token, valid long enough.
    case accessToken(String)
    /// The session's access token has expired or is about to: `/logout` would answer `bad_jwt`
    /// and leave the server's session alive. Refresh once with `refreshToken` and present the new
    /// access token; if that fails, present `fallback` anyway.
    case refreshFirst(refreshToken: String, fallback: String)
    /// A token valid for `ServerCallToken.minimumValidity`, asked of the session the usual way
    /// (scope `others`, which keeps this session signed in).
    case validToken
}

/// What the server said to a sign-out, as the caller is told.
public struct SignOutOutcome: Sendable, Equatable {
    /// Whether the server ended the session(s) too, or no longer knew them.
    public var confirmed: Bool
    /// Why not, when not confirmed.
    public var detail: String?

    /// Creates an outcome.
    public init(confirmed: Bool, detail: String? = nil) {
        self.confirmed = confirmed
        self.detail = detail
    }

    /// Confirmed.
    public static let confirmed = SignOutOutcome(confirmed: true)
}

/// The rules of a sign-out: whether it ends the session here, which token tells the server, and
/// which of the server's answers count as confirmation.
public enum SignOutRules {
    /// Whether `scope` ends this session here, at once and whatever the server says (`local` and
    /// `global`), or only asks the server to end the user's other sessions (`others`).
    public static func endsHere(_ scope: SignOutScope) -> Bool { scope != .others }

    /// The credential for telling the server about a sign-out of `session` with `scope` at `now`.
    public static func credential(for session: Session, scope: SignOutScope, now: Date) -> SignOutCredential {
        if !endsHere(scope) { return .validToken }
        if session.remaining(at: now) < ServerCallToken.minimumValidity {
            return .refreshFirst(refreshToken: session.refreshToken, fallback: session.accessToken)
        }
        return .accessToken(session.accessToken)
    }

    /// The outcome for the server's answer to `POST /logout`: nil (success), or the failure.
    /// 401, 403 and 404 mean the server no longer knows the session: it is over there too.
    public static func outcome(_ failure: ServerFailure?) -> SignOutOutcome {
        guard let failure else { return .confirmed }
        if case .http(let status, _, _, _) = failure, [401, 403, 404].contains(status) { return .confirmed }
        return SignOutOutcome(confirmed: false, detail: failure.readableDescription)
    }

    /// The outcome when no valid token could be had for a sign-out of `others`.
    public static let noValidToken = SignOutOutcome(confirmed: false, detail: "no valid access token to sign out with")
}

/// Which sign-outs the user is told about outside any app (`SignOutNotice`): the ones the
/// server decided (a refresh refused for good, a second factor missing), which only signing in
/// again mends. Never a network problem (that keeps the session), the user's own sign-out or a
/// new sign-in.
public enum DesktopNoticeRule {
    /// Whether a sign-out for `reason` gets a notice.
    public static func notifies(_ reason: SignOutReason) -> Bool {
        switch reason {
        case .sessionEnded, .secondFactorRequired, .endedWithoutSecondFactor: return true
        case .userRequested, .replaced: return false
        }
    }

    /// Whether the sign-out was for lack of a second factor: signing in again asks for it.
    public static func isAboutSecondFactor(_ reason: SignOutReason) -> Bool {
        switch reason {
        case .secondFactorRequired, .endedWithoutSecondFactor: return true
        case .sessionEnded, .userRequested, .replaced: return false
        }
    }
}
