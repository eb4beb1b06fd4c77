import AuthCore
import AuthProtocol
import FoundationEssentials

/// The one-line `STATUS=` systemd shows in `systemctl --user status authd`: what state each
/// profile is in and, where something is wrong, what to do. Never a token.
public enum ServiceStatusText {
    /// The line for `statuses` at `now`. With several profiles each part is prefixed by its name.
    public static func line(for statuses: [SessionStatus], now: Date) -> String {
        let several = statuses.count > 1
        return statuses.map { status in
            let text = describe(status, now: now, profileFlag: several ? "--profile \(status.profile) " : "")
            return several ? "\(status.profile): \(text)" : text
        }.joined(separator: "; ")
    }

    private static func describe(_ status: SessionStatus, now: Date, profileFlag: String) -> String {
        let who = status.user?.displayName ?? "the user"
        if let degraded = status.degraded {
            let what = switch degraded.reason {
            case "offline": "offline"
            case "rate_limited": "rate limited by the server"
            case "refresh_limited": "holding refreshes back (\(RefreshPolicy().refreshLimit) a minute at most)"
            case DegradedReason.verificationUncertain.rawValue: "a second factor's verification went unanswered: verify it again (authctl mfa verify)"
            default: "server error"
            }
            let seconds = max(0, Int(saturating: TimeInterval(degraded.retryAt) - now.timeIntervalSince1970, rounding: .up))
            return "\(what), retrying in \(duration(seconds))"
        }
        switch status.state {
        case .signedIn:
            let left = Int(saturating: TimeInterval(status.expiresAt ?? 0) - now.timeIntervalSince1970, rounding: .down)
            let keyring = status.keyring == "unavailable" ? " (keyring unavailable: kept in memory)" : ""
            return left > 0 ? "signed in as \(who), token valid \(duration(left))\(keyring)" : "signed in as \(who), token expired\(keyring)"
        case .refreshing: return "signed in as \(who), refreshing the token"
        case .signingIn: return "signing in"
        case .loading: return "reading the keyring"
        case .keyringUnavailable: return "keyring locked or unavailable: unlock it; authd reads it again by itself"
        default:
            let ended = status.signOutReason.map { " (session ended: \($0))" } ?? ""
            return "sign-in needed\(ended): authctl \(profileFlag)login"
        }
    }

    /// "45 s" under two minutes, "54 min" under two hours, else "3 h".
    private static func duration(_ seconds: Int) -> String {
        if seconds < 120 { return "\(seconds) s" }
        if seconds < 7200 { return "\(seconds / 60) min" }
        return "\(seconds / 3600) h"
    }
}
