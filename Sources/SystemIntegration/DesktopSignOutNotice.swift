import AuthCore
import CAuthdSystem
import FoundationEssentials
import Glibc
import Logging

/// Tells the user by a desktop notification (`org.freedesktop.Notifications`) that the server
/// ended a session, why, and how to sign in again, with a "Sign in" action that starts it. The
/// notification stays until the user acts on it or the profile is signed in again (then it is
/// withdrawn). Where no notification service runs, the log says it instead (the status and the
/// event stream always do).
public struct DesktopSignOutNotice: SignOutNotice {
    private let busAddress: String?
    private let logger: Logger

    /// The action's key on the bus.
    static let actionKey = "sign-in"

    /// Creates a notice on the bus at `busAddress`, or on the user's session bus when nil.
    public init(busAddress: String? = nil, logger: Logger) {
        self.busAddress = busAddress
        self.logger = logger
    }

    /// Shows the notice for a sign-out the server decided, offering `plan`'s sign-in when there
    /// is one, and waits for the user: true when "Sign in" was chosen.
    public func sessionEnded(profile: String, reason: SignOutReason, plan: SignInAgainPlan, offersSignIn: Bool) async -> Bool {
        guard let text = Self.text(profile: profile, reason: reason, plan: plan, offersSignIn: offersSignIn) else { return false }
        let address = busAddress
        let action: String? = offersSignIn ? Self.actionKey : nil
        let result = await BlockingWatch.run(name: "authd.notice") { stop in
            authd_offer_by_notification(address, stop, text.summary, text.body, action, "Sign in")
        }
        if result < 0 {
            logger.info("no desktop notification for a session the server ended (no notification service on the session bus)",
                        metadata: ["session.profile": "\(profile)", "sign_out.reason": "\(reason.code)", "error": "\(String(cString: strerror(-result)))"])
        }
        return result == 1
    }

    /// The notice's text for `reason`, nil for a sign-out that gets none. The body escapes
    /// markup, which servers may render: a profile's name and address are the user's own, but
    /// escaped all the same. The command in it is quoted for a shell (`ShellWord`), as people
    /// copy it into one.
    static func text(profile: String, reason: SignOutReason, plan: SignInAgainPlan, offersSignIn: Bool) -> (summary: String, body: String)? {
        guard DesktopNoticeRule.notifies(reason) else { return nil }
        let command = plan.commandLine(profile: profile)
        let again = plan == .anonymous ? "" : offersSignIn ? " Choose Sign in, or run: \(command)." : " Sign in again: \(command)."
        let body: String
        let summary: String
        switch reason {
        case .secondFactorRequired(let serverCode):
            summary = "Sign in again with your second factor"
            body = "The server ended the session of profile '\(profile)' because it was not verified with the account's second factor (\(serverCode)). "
                + "Sign in again and verify it (authctl asks for the code)." + again
        case .endedWithoutSecondFactor(let serverCode):
            // Only likely: a sign-out elsewhere reads the same, and the text says so.
            summary = "Sign in again with your second factor"
            body = "The server no longer knows the session of profile '\(profile)' (\(serverCode)), which had not verified the account's second factor. "
                + "Verifying a second factor in another app ends such sessions (a sign-out elsewhere would too)." + again
        case .sessionEnded(let code) where plan == .anonymous:
            summary = "Anonymous session of '\(profile)' ended"
            body = "The server ended the anonymous session of profile '\(profile)': \(explanation(code)) (\(code)). "
                + "An anonymous user cannot sign in again; the next sign-in starts a new user."
        case .sessionEnded(let code):
            summary = "Sign in again to '\(profile)'"
            body = "The server ended the session of profile '\(profile)': \(explanation(code)) (\(code))." + again
        case .userRequested, .replaced:
            return nil
        }
        // The summary is plain text by the specification; only the body may be read as markup.
        return (summary: summary, body: DesktopNotificationPrompt.escapeMarkup(body))
    }

    /// What a fatal refresh code means to the user.
    static func explanation(_ code: String) -> String {
        switch code {
        case "refresh_token_not_found", "session_not_found": return "it was signed out elsewhere or revoked"
        case "refresh_token_already_used": return "its refresh token was used twice, which the server treats as a stolen token"
        case "session_expired": return "the project's time limit for sessions ran out"
        case "user_banned": return "the account is banned"
        case "user_not_found": return "the account no longer exists"
        default: return "the server refused to refresh it"
        }
    }
}
