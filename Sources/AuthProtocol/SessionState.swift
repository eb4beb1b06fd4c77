/// A string on the wire that names one of a known set of values and may name a newer one: held
/// as its raw string, so that a client keeps a value it does not know instead of failing to
/// decode the line.
public protocol WireName: RawRepresentable<String>, Hashable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The value with wire string `rawValue`.
    init(rawValue: String)
}

extension WireName {
    /// The value with wire string `value`.
    public init(stringLiteral value: String) { self.init(rawValue: value) }
    /// The wire string.
    public var description: String { rawValue }
    /// Decodes the wire string.
    public init(from decoder: Decoder) throws { self.init(rawValue: try decoder.singleValueContainer().decode(String.self)) }
    /// Encodes the wire string.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// A session's state as clients see it (`SessionStatus.state`). A string on the wire; a client
/// must treat a value it does not know as "not signed in, for a reason it cannot explain".
public struct SessionState: WireName {
    /// The wire value.
    public var rawValue: String

    /// The state with wire value `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The daemon is still reading the keyring (at most its timeout after start).
    public static let loading: SessionState = "loading"
    /// No session.
    public static let signedOut: SessionState = "signed_out"
    /// A session with a token; `expires_at` says until when.
    public static let signedIn: SessionState = "signed_in"
    /// A session whose token is being refreshed; its current token is still served.
    public static let refreshing: SessionState = "refreshing"
    /// A sign-in was accepted by the server and its session is being written to the keyring;
    /// it is served once stored (no token yet).
    public static let signingIn: SessionState = "signing_in"
    /// The keyring is locked or unreachable; the daemon reads it again by itself.
    public static let keyringUnavailable: SessionState = "keyring_unavailable"

    /// Whether a session is held (its token is served).
    public var isSignedIn: Bool { self == .signedIn || self == .refreshing }
}

/// The name of an auth-state event (`AuthEventMessage.event`). A string on the wire; clients
/// must ignore names they do not know.
public struct AuthEventName: WireName {
    /// The wire value.
    public var rawValue: String

    /// The event with wire value `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The first event of every subscription: the session as it is.
    public static let initialSession: AuthEventName = "INITIAL_SESSION"
    /// A new session was stored.
    public static let signedIn: AuthEventName = "SIGNED_IN"
    /// The session ended; `reason` says why.
    public static let signedOut: AuthEventName = "SIGNED_OUT"
    /// A refreshed token was stored.
    public static let tokenRefreshed: AuthEventName = "TOKEN_REFRESHED"
    /// The user's details changed.
    public static let userUpdated: AuthEventName = "USER_UPDATED"
    /// A password-recovery code signed the user in; the app should ask for a new password.
    public static let passwordRecovery: AuthEventName = "PASSWORD_RECOVERY"
    /// A multi-factor challenge was verified and the session raised to aal2.
    public static let mfaChallengeVerified: AuthEventName = "MFA_CHALLENGE_VERIFIED"
    /// A refresh started.
    public static let refreshing: AuthEventName = "REFRESHING"
    /// Refreshing fails transiently; `reason` says why, and the session is kept.
    public static let refreshFailing: AuthEventName = "REFRESH_FAILING"
    /// The keyring became locked or unreachable.
    public static let keyringUnavailable: AuthEventName = "KEYRING_UNAVAILABLE"
    /// The keyring can be used again.
    public static let keyringAvailable: AuthEventName = "KEYRING_AVAILABLE"
}
