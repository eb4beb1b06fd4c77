import AuthProtocol
import FoundationEssentials

/// Why an `AuthdClient` call failed. Every message is one line that says what to do next.
public enum AuthdError: Error, Sendable, Equatable {
    /// The profile has no session: the user has to sign in (`authctl login`).
    case notSignedIn(String)
    /// The token has expired and the server cannot be reached, keeps failing or rate-limits
    /// authd. Transient: the session is kept and authd keeps retrying.
    case offline(String)
    /// authd refused this client: it runs as another user, or the user denied this app the profile.
    case accessDenied(String)
    /// authd is not running, or the connection to it broke and could not be made again.
    case daemonUnavailable(String)
    /// The keyring holding the session is locked or not running.
    case keyringUnavailable(String)
    /// No profile by that name is configured.
    case unknownProfile(String)
    /// authd did not answer in time.
    case timedOut
    /// The server refused the credentials, code or ID token of a sign-in.
    case signInRefused(String)
    /// A browser sign-in failed (the provider's error, or its flow expired), or the sign-in page
    /// failed, was cancelled or was left open too long.
    case browserSignInFailed(String)
    /// The request needs a session verified with a second factor (`aal2`): a token asked for with
    /// `aal: "aal2"`, or a change to a user who has one. Send the user to `authctl mfa verify`
    /// (or verify through `verifyFactor(id:code:challengeID:)`), then ask again.
    case mfaRequired(String)
    /// authd refused the request for another reason; `reason` is its stable code when it sent one.
    case rejected(reason: String?, message: String)
    /// authd sent something this library cannot read.
    case protocolError(String)
    /// The socket is served by a process of user `uid`, not of this app's user (`expectedUID`):
    /// it is not this user's authd, and nothing was sent to it. Waiting does not mend it.
    case foreignDaemon(path: String, uid: UInt32, expectedUID: UInt32)

    /// The error for authd's error line `error`: its stable reason decides the case. `isNotice`
    /// says the line had no id: the daemon said it about the connection, not about a request.
    init(answer error: RPCErrorObject, isNotice: Bool) {
        switch error.reason {
        case .notSignedIn: self = .notSignedIn(error.message)
        case .offline, .serverError, .rateLimited: self = .offline(error.message)
        case .accessDenied, .appDenied: self = .accessDenied(error.message)
        case .keyringUnavailable: self = .keyringUnavailable(error.message)
        case .unknownProfile: self = .unknownProfile(error.message)
        case .invalidCredentials, .signInRejected, .captchaRequired, .codeRejected, .idTokenRejected: self = .signInRefused(error.message)
        case .oauthFailed, .flowExpired, .signInCancelled, .signInFailed: self = .browserSignInFailed(error.message)
        case .mfaRequired: self = .mfaRequired(error.message)
        // The daemon closed this connection (too many clients, idle, or output left unread): as
        // for any closed connection, a caller that reuses connections opens a new one and retries.
        // The same reasons in an answer to a request (too many browser sign-ins waiting) refuse
        // that request only.
        case .busy where isNotice, .idleTimeout where isNotice, .tooSlow where isNotice: self = .daemonUnavailable(error.message)
        default: self = .rejected(reason: error.data?.reason, message: error.message)
        }
    }

    /// Whether trying again later may succeed without anyone doing anything.
    public var isTransient: Bool {
        switch self {
        case .offline, .daemonUnavailable, .timedOut, .keyringUnavailable: return true
        case .notSignedIn, .accessDenied, .unknownProfile, .signInRefused, .browserSignInFailed, .mfaRequired, .rejected, .protocolError, .foreignDaemon:
            return false
        }
    }
}

extension AuthdError: LocalizedError {
    /// The message, ready to show to a person.
    public var errorDescription: String? {
        switch self {
        case .notSignedIn(let message), .offline(let message), .accessDenied(let message), .daemonUnavailable(let message),
             .keyringUnavailable(let message), .unknownProfile(let message), .signInRefused(let message),
             .browserSignInFailed(let message), .mfaRequired(let message):
            return message
        case .protocolError(let detail): return "protocol error: \(detail)"
        case .timedOut: return "authd did not answer in time; check 'journalctl --user -u authd'"
        case .rejected(_, let message): return message
        case .foreignDaemon(let path, let uid, let expectedUID):
            return IPCError.foreignServer(path: path, uid: uid, expectedUID: expectedUID).description
        }
    }
}
