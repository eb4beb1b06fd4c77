import AuthProtocol
import FoundationEssentials

/// One auth-state change of a profile, as `AuthdClient.events()` delivers it. Holds no token.
public struct AuthEvent: Sendable, Equatable {
    /// The kinds of event authd sends; names this library does not know arrive as `.other`.
    public enum Kind: Sendable, Equatable {
        /// The current state, sent first on every subscription (and again after a reconnect).
        case initialSession
        /// A user signed in.
        case signedIn
        /// The session ended; `AuthEvent.reason` says why.
        case signedOut
        /// A new access token is in place.
        case tokenRefreshed
        /// The user's email, phone or metadata changed.
        case userUpdated
        /// The user signed in with a recovery code and should now set a new password.
        case passwordRecovery
        /// An MFA challenge was verified and the session upgraded.
        case mfaChallengeVerified
        /// A refresh has started.
        case refreshing
        /// Refreshing fails transiently (offline, server error, rate limit); the session is kept.
        case refreshFailing
        /// The keyring cannot be used.
        case keyringUnavailable
        /// The keyring can be used again.
        case keyringAvailable
        /// A name newer than this library.
        case other(String)

        /// The kind for a wire name.
        init(name: AuthEventName) {
            switch name {
            case .initialSession: self = .initialSession
            case .signedIn: self = .signedIn
            case .signedOut: self = .signedOut
            case .tokenRefreshed: self = .tokenRefreshed
            case .userUpdated: self = .userUpdated
            case .passwordRecovery: self = .passwordRecovery
            case .mfaChallengeVerified: self = .mfaChallengeVerified
            case .refreshing: self = .refreshing
            case .refreshFailing: self = .refreshFailing
            case .keyringUnavailable: self = .keyringUnavailable
            case .keyringAvailable: self = .keyringAvailable
            default: self = .other(name.rawValue)
            }
        }
    }

    /// What happened.
    public let kind: Kind
    /// The event's wire name, e.g. `TOKEN_REFRESHED`.
    public let name: String
    /// The profile it concerns.
    public let profile: String
    /// The profile's state after the change.
    public let status: SessionStatus
    /// For `.signedOut`, why (e.g. `user_signed_out`, `refresh_token_revoked`); for `.refreshFailing`, the trouble.
    public let reason: String?
    /// True for the `.initialSession` that follows a reconnect: events may have been missed
    /// while authd was away, and this snapshot is the state now.
    public let afterReconnect: Bool

    /// Wraps a wire event.
    init(_ message: AuthEventMessage, afterReconnect: Bool) {
        kind = Kind(name: message.event)
        name = message.event.rawValue
        profile = message.profile
        status = message.status
        reason = message.reason
        self.afterReconnect = afterReconnect
    }
}
