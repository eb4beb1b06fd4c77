import AuthCore
import CAuthdSystem
import Foundation
import Logging

/// Tells the user by a desktop notification (`org.freedesktop.Notifications`) that the server
/// ended a session for lack of a second factor, and how to sign in again. Where no notification
/// service runs, the log says it instead (the status and the event stream always do).
public struct DesktopSignOutNotice: SignOutNotice {
    private let busAddress: String?
    private let logger: Logger

    /// Creates a notice on the bus at `busAddress`, or on the user's session bus when nil.
    public init(busAddress: String? = nil, logger: Logger) {
        self.busAddress = busAddress
        self.logger = logger
    }

    /// Shows the notice for a sign-out for lack of a second factor (`secondFactorRequired`, or
    /// likely so: `endedWithoutSecondFactor`); other reasons show nothing here.
    public func sessionEnded(profile: String, reason: SignOutReason) async {
        guard let text = Self.text(profile: profile, reason: reason) else { return }
        let address = busAddress
        let result = await BlockingWatch.run(name: "authd.notice") { _ in authd_notify(address, text.summary, text.body) }
        if result < 0 {
            logger.info("no desktop notification for a session the server ended (no notification service on the session bus)",
                        metadata: ["session.profile": "\(profile)", "sign_out.reason": "\(reason.code)", "error": "\(String(cString: strerror(-result)))"])
        }
    }

    /// The notice's text for `reason`, nil when it has none. The body escapes markup, which
    /// servers may render: a profile's name is the user's own, but escaped all the same.
    static func text(profile: String, reason: SignOutReason) -> (summary: String, body: String)? {
        let again = "Sign in again and verify it: authctl login --profile \(profile) (it asks for the code)."
        switch reason {
        case .secondFactorRequired(let serverCode):
            let body = "The server ended the session of profile '\(profile)' because it was not verified with the account's second factor (\(serverCode)). " + again
            return (summary: "Sign in again with your second factor", body: DesktopNotificationPrompt.escapeMarkup(body))
        case .endedWithoutSecondFactor(let serverCode):
            // Only likely: a sign-out elsewhere reads the same, and the text says so.
            let body = "The server no longer knows the session of profile '\(profile)' (\(serverCode)), which had not verified the account's second factor. "
                + "Verifying a second factor in another app ends such sessions (a sign-out elsewhere would too). " + again
            return (summary: "Sign in again with your second factor", body: DesktopNotificationPrompt.escapeMarkup(body))
        default:
            return nil
        }
    }
}
