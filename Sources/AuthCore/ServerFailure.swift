import FoundationEssentials

/// How a call to GoTrue failed, as the HTTP adapter observed it. Carries no tokens.
public enum ServerFailure: Error, Sendable, Equatable {
    /// The request did not reach the server: the name did not resolve, the connection was
    /// refused or timed out, the TLS handshake failed, or a proxy setting cannot be used. Nothing
    /// was sent, so the server did nothing.
    case notSent(url: String, detail: String)
    /// The connection broke or went quiet after the request may have been sent (a reset, a read
    /// timeout, the deadline): the server may have carried it out.
    case unreachable(url: String, detail: String)
    /// The server was reached but its TLS certificate was refused; `problem` completes the
    /// sentence "the TLS certificate of `host` …" with why (not trusted, another name, expired)
    /// and what to do. During a refresh this is transient like any network trouble: a captive
    /// portal's certificate goes away when the portal does.
    case untrustedCertificate(host: String, problem: String)
    /// The server answered with an error status. `code` is GoTrue's `error_code` when present.
    case http(status: Int, code: String?, message: String, retryAfter: TimeInterval?)
    /// The server answered 2xx with a body that is not what the protocol says.
    case invalidResponse(detail: String)
}

extension ServerFailure: LocalizedError {
    /// A one-line explanation for people.
    public var errorDescription: String? {
        switch self {
        case .notSent(let url, let detail), .unreachable(let url, let detail): return "cannot reach \(url): \(detail)"
        case .untrustedCertificate(let host, let problem): return "the TLS certificate of \(host) \(problem)"
        case .http(let status, let code, let message, _):
            return "server said \(message) (HTTP \(status)\(code.map { ", \($0)" } ?? ""))"
        case .invalidResponse(let detail): return "unexpected answer from the server: \(detail)"
        }
    }
}

/// Whether a failed refresh ends the session or is worth retrying.
public enum RefreshOutcomeClass: Sendable, Equatable {
    /// The server says the session is over: clear it and tell subscribers `code`.
    case fatal(code: String)
    /// Keep the session and retry later.
    case transient(DegradedReason, retryAfter: TimeInterval?)
}

/// Why the session is degraded (refreshing fails but the session is kept).
public enum DegradedReason: String, Sendable, Equatable, Codable {
    /// The server could not be reached.
    case offline
    /// The server answered with a 5xx, 408, 409 or a body we could not read.
    case serverError = "server_error"
    /// The server rate-limited us (429).
    case rateLimited = "rate_limited"
    /// authd itself held a refresh back: its per-session limit of refresh grants a minute was
    /// reached (`RefreshBudget`).
    case refreshLimited = "refresh_limited"
    /// authd holds refreshes back because an MFA verification's outcome is unknown: the server
    /// may have moved the refresh token on (`SessionMachine.verificationUncertain`).
    case verificationUncertain = "mfa_verification_uncertain"
}

extension ServerFailure {
    /// GoTrue's `error_code`, when the server answered with one.
    public var errorCode: String? {
        if case .http(_, let code, _, _) = self { return code }
        return nil
    }

    /// Whether the server may have carried out the request although this failure came back: no
    /// answer, or one that could not be read (a proxy's 5xx after the server committed, a body
    /// cut short). A 4xx from GoTrue is a refusal, certain.
    public var leavesOutcomeUnknown: Bool {
        switch self {
        case .unreachable, .invalidResponse: return true
        case .notSent, .untrustedCertificate: return false // nothing left this machine
        case .http(let status, _, _, _): return status >= 500 || status == 408
        }
    }
}

extension ServerFailure {
    /// GoTrue error codes that end a session on refresh (see shared/reference/GOTRUE.md).
    /// Everything not on this list is transient: losing a session on a hiccup is the bug
    /// the official clients have, and the reason this list is explicit.
    public static let fatalRefreshCodes: Set<String> = [
        "refresh_token_not_found", "refresh_token_already_used", "session_expired",
        "session_not_found", "user_banned", "validation_failed", "user_not_found",
    ]

    /// Classifies a failed refresh: fatal only for a 4xx carrying a code from the fatal list.
    public var refreshClass: RefreshOutcomeClass {
        switch self {
        case .notSent, .unreachable, .untrustedCertificate: return .transient(.offline, retryAfter: nil)
        case .invalidResponse: return .transient(.serverError, retryAfter: nil)
        case .http(let status, let code, _, let retryAfter):
            if status == 429 { return .transient(.rateLimited, retryAfter: retryAfter) }
            if (400..<500).contains(status), status != 408, status != 409,
               let code, Self.fatalRefreshCodes.contains(code) {
                return .fatal(code: code)
            }
            return .transient(.serverError, retryAfter: retryAfter)
        }
    }
}

extension SignOutReason {
    /// Why the server ended `session` when its refresh failed for good with `code`.
    ///
    /// Two of GoTrue's ways of ending a session are about a missing second factor, and they read
    /// like any other end unless recognised: a project's low-AAL limit answers `session_expired`
    /// with "Session Expired (Low AAL: User Needs MFA Verification)", which says so for certain;
    /// and a factor verified in any other app deletes the user's `aal1` sessions
    /// (`InvalidateSessionsWithAALLessThan`), whose refresh tokens then go unfound, as after a
    /// sign-out elsewhere. The second is only likely, and only when the user is known to have a
    /// verified factor while this session lacks it: it keeps the server's code on the wire.
    public static func serverEnded(code: String, failure: ServerFailure, session: Session?) -> SignOutReason {
        if code == "session_expired", case .http(_, _, let message, _) = failure, message.contains("Low AAL") {
            return .secondFactorRequired(serverCode: code)
        }
        if ["refresh_token_not_found", "session_not_found"].contains(code), let session,
           let assurance = TokenAssurance(accessToken: session.accessToken),
           assurance.level < assurance.nextLevel(for: session.user) {
            return .endedWithoutSecondFactor(serverCode: code)
        }
        return .sessionEnded(code: code)
    }
}
