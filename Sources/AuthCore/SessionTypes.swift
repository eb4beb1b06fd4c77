import FoundationEssentials

/// Identifies one waiting request inside the machine (a token request or a sign-in).
public struct RequestID: Hashable, Sendable, CustomStringConvertible {
    /// The raw number, unique per driver.
    public let raw: UInt64
    /// Creates an identifier.
    public init(_ raw: UInt64) { self.raw = raw }
    /// The number as text.
    public var description: String { "#\(raw)" }
}

/// Why a session ended.
public enum SignOutReason: Sendable, Equatable {
    /// The user asked for it (`authctl logout`).
    case userRequested
    /// The server ended the session; `code` is its error code (e.g. `refresh_token_already_used`).
    case sessionEnded(code: String)
    /// A different sign-in replaced the session.
    case replaced
    /// The server ended a session that lacked a verified second factor (`aal1`) because it
    /// lacked it, with its error code `serverCode`: the project's low-AAL limit ran out. Signing
    /// in again and verifying the second factor mends it.
    case secondFactorRequired(serverCode: String)
    /// The server no longer knows an `aal1` session of a user known to have a verified second
    /// factor (`serverCode`: `refresh_token_not_found` or `session_not_found`): most likely the
    /// factor was verified in another app, which ends the user's `aal1` sessions, though a
    /// sign-out elsewhere reads the same. The wire carries the server's code.
    case endedWithoutSecondFactor(serverCode: String)

    /// A stable machine-readable code for the wire.
    public var code: String {
        switch self {
        case .userRequested: return "user_signed_out"
        case .sessionEnded(let code): return code
        case .replaced: return "replaced_by_new_sign_in"
        case .secondFactorRequired: return Self.secondFactorRequiredCode
        case .endedWithoutSecondFactor(let code): return code
        }
    }

    /// The wire code of `secondFactorRequired`.
    public static let secondFactorRequiredCode = "mfa_verification_required"
}

/// The coarse phase of a profile's session.
public enum SessionPhase: Sendable, Equatable {
    /// The stored session has not been read yet.
    case loading
    /// No session. `reason` says why, when it ended while the daemon ran.
    case signedOut(SignOutReason?)
    /// The stored session could not be read (keyring locked or absent). Not a sign-out.
    case storeUnavailable(StoreFailure)
    /// A session is held and served.
    case signedIn
    /// A refresh is in flight; the current token may still be served to undemanding requests.
    case refreshing
    /// A new session has arrived and is being written to the keyring before anyone sees it.
    case persisting
}

/// An access token handed to a client.
public struct IssuedToken: Sendable, Equatable, CustomStringConvertible {
    /// The JWT.
    public var accessToken: String
    /// When it expires, on the local wall clock.
    public var expiresAt: Date
    /// Creates an issued token.
    public init(accessToken: String, expiresAt: Date) {
        self.accessToken = accessToken
        self.expiresAt = expiresAt
    }
    /// Redacted.
    public var description: String { "IssuedToken(expiresAt: \(expiresAt), token: <redacted>)" }
}

/// Why a token request could not be answered with a token.
public enum TokenFailure: Error, Sendable, Equatable {
    /// There is no session; `reason` says why when known.
    case notSignedIn(SignOutReason?)
    /// Refreshing failed transiently and the current token has expired (or cannot meet the request).
    case refreshFailing(DegradedReason, detail: String)
    /// The session store could not be read at start, so whether there is a session is unknown.
    case storeUnavailable(StoreFailure)
    /// The requested minimum validity is longer than a fresh token lives.
    case minimumValidityTooLong(requested: TimeInterval, lifetime: TimeInterval)
    /// authd is stopping: the request came as it shut down, or was still waiting when it did.
    /// The stored session is as it was; a request to the next authd (the socket starts one) gets
    /// an answer.
    case stopping
}

/// What the machine reports to subscribers.
public enum SessionEvent: Sendable, Equatable {
    /// The state right after start (or to a new subscriber); `expired` when the stored token had expired.
    case initialSession(expired: Bool)
    /// A new session from a sign-in.
    case signedIn
    /// A new session from a password recovery code: the app should ask for a new password.
    case passwordRecovery
    /// The user's details changed (`PUT /user`).
    case userUpdated
    /// A second factor was verified: the session now holds `aal2` tokens.
    case mfaChallengeVerified
    /// The session ended.
    case signedOut(SignOutReason)
    /// The access token was rotated.
    case tokenRefreshed
    /// A refresh has started.
    case refreshing
    /// Refreshing failed transiently; the session is kept and retried at `retryAt`.
    case refreshFailing(DegradedReason, detail: String, retryAt: Date)
    /// The keyring could not be written; the session is served from memory and the write retried.
    case keyringUnavailable(StoreFailure)
    /// A retried keyring write succeeded: the session is stored again.
    case keyringAvailable
}

/// What the owner of a `SessionMachine` must do after an input.
public enum SessionAction: Sendable, Equatable {
    /// Call GoTrue's refresh grant with `refreshToken`; report back tagged with `generation`.
    case refresh(refreshToken: String, generation: UInt64)
    /// Write `session` to the store; report back tagged with `generation`.
    case store(Session, generation: UInt64)
    /// Remove the stored session.
    case delete
    /// Read the stored session again and report with `storedSessionLoaded` or `storedSessionUnavailable`.
    case loadStore
    /// Tell subscribers.
    case emit(SessionEvent)
    /// Answer a waiting request.
    case answer(RequestID, Result<IssuedToken, TokenFailure>)
    /// (Re-)arm the refresh timer for a wall-clock date.
    case armTimer(Date)
    /// Disarm the refresh timer.
    case cancelTimer
}

/// Whether a `SessionMachine` holds its refreshes back for an MFA verification.
public enum RefreshHold: Sendable, Equatable {
    /// Refreshes run as usual.
    case none
    /// A verification is at the server: no refresh may be.
    case verifying
    /// A verification's outcome is unknown: no refresh before `until`, unless a new
    /// verification brings new tokens first.
    case uncertain(until: Date)
}
