import AuthCore
import AuthProtocol
import FoundationEssentials
import FoundationGaps

/// Turns the machine's state and events into wire types. The one place that decides what a
/// client may see of a session: user and expiry, never a token.
enum StatusMapper {
    /// The status of `machine`; `assurance` reads the served token's claims (`TokenAssuranceMemo`).
    static func status(of machine: SessionMachine, profile: String, server: String,
                       assurance: (String) -> TokenAssurance? = { TokenAssurance(accessToken: $0) }) -> SessionStatus {
        let state: SessionState
        switch machine.phase {
        case .loading: state = .loading
        case .signedOut: state = .signedOut
        case .storeUnavailable: state = .keyringUnavailable
        case .signedIn: state = .signedIn
        case .refreshing: state = .refreshing
        case .persisting: state = machine.session == nil ? .signingIn : .refreshing
        }
        var status = SessionStatus(profile: profile, state: state, server: server)
        if case .signedOut(let reason?) = machine.phase { status.signOutReason = reason.code }
        if let session = machine.session {
            status.user = SessionStatus.User(id: session.user.id, email: session.user.email, phone: session.user.phone,
                                              isAnonymous: session.user.isAnonymous ? true : nil)
            status.expiresAt = Int64(saturating: session.expiresAt.timeIntervalSince1970, rounding: .down)
            if let assurance = assurance(session.accessToken) {
                status.aal = assurance.level.rawValue
                status.nextAal = assurance.nextLevel(for: session.user).rawValue
                status.amr = assurance.methods
            }
        }
        if let degraded = machine.degraded {
            status.degraded = SessionStatus.Degraded(reason: degraded.reason.rawValue, detail: degraded.detail,
                                                     retryAt: Int64(saturating: degraded.retryAt.timeIntervalSince1970, rounding: .up))
        }
        switch (machine.phase, machine.keyringFailure) {
        case (.storeUnavailable(let failure), _), (_, let failure?):
            status.keyring = "unavailable"
            status.keyringDetail = failure.readableDescription
        default:
            break
        }
        return status
    }

    /// The message for `event`, with the status of `machine` as `status(of:)` makes it.
    static func event(_ event: SessionEvent, machine: SessionMachine, profile: String, server: String,
                      assurance: (String) -> TokenAssurance? = { TokenAssurance(accessToken: $0) }) -> AuthEventMessage {
        let status = status(of: machine, profile: profile, server: server, assurance: assurance)
        switch event {
        case .initialSession(let expired):
            return AuthEventMessage(event: .initialSession, profile: profile, status: status, expired: expired)
        case .signedIn:
            return AuthEventMessage(event: .signedIn, profile: profile, status: status)
        case .passwordRecovery:
            return AuthEventMessage(event: .passwordRecovery, profile: profile, status: status)
        case .userUpdated:
            return AuthEventMessage(event: .userUpdated, profile: profile, status: status)
        case .mfaChallengeVerified:
            return AuthEventMessage(event: .mfaChallengeVerified, profile: profile, status: status)
        case .signedOut(let reason):
            return AuthEventMessage(event: .signedOut, profile: profile, status: status, reason: reason.code)
        case .tokenRefreshed:
            return AuthEventMessage(event: .tokenRefreshed, profile: profile, status: status)
        case .refreshing:
            return AuthEventMessage(event: .refreshing, profile: profile, status: status)
        case .refreshFailing(let reason, _, _):
            return AuthEventMessage(event: .refreshFailing, profile: profile, status: status, reason: reason.rawValue)
        case .keyringUnavailable:
            return AuthEventMessage(event: .keyringUnavailable, profile: profile, status: status, reason: ErrorReason.keyringUnavailable.rawValue)
        case .keyringAvailable:
            return AuthEventMessage(event: .keyringAvailable, profile: profile, status: status)
        }
    }

    /// The error for a token of level `level` when `required` was asked for; nil when it is met.
    /// A token whose level cannot be read (not a JWT) meets only `aal1`.
    static func assuranceError(token: String, required: String?) -> RPCErrorObject? {
        guard let required, case let wanted = AssuranceLevel(rawValue: required), wanted > .aal1 else { return nil }
        let level = TokenAssurance(accessToken: token)?.level
        if let level, level >= wanted { return nil }
        return .application(.mfaRequired, "this needs a session verified with a second factor (\(wanted)) and this one is \(level?.rawValue ?? "not"): run 'authctl mfa verify' (mfa.verify in the API), then ask again")
    }

    /// The JSON-RPC error for a failed token request.
    static func error(_ failure: TokenFailure) -> RPCErrorObject {
        switch failure {
        case .notSignedIn(let reason):
            let why = reason.map { " (session ended: \($0.code))" } ?? ""
            return .application(.notSignedIn, "not signed in\(why): run 'authctl login'")
        case .refreshFailing(let reason, let detail):
            let wire: ErrorReason = switch reason {
            case .offline: .offline
            case .rateLimited, .refreshLimited: .rateLimited
            case .serverError, .verificationUncertain: .serverError
            }
            return .application(wire, "the token has expired and cannot be refreshed right now (\(detail)); the session is kept and retried")
        case .storeUnavailable(let failure):
            return .application(.keyringUnavailable, failure.readableDescription)
        case .minimumValidityTooLong(let requested, let lifetime):
            return .application(.minValidityTooLong, "tokens of this project live \(Int64(saturating: lifetime)) s; a minimum validity of \(Int64(saturating: requested)) s can never be met")
        case .stopping:
            return .application(.serverError, "authd is stopping and did not finish this: ask again once it is back (under systemd, the next request starts it)")
        }
    }
}
