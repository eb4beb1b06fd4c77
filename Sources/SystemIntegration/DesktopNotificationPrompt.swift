import AuthCore
import CAuthdSystem
import FoundationEssentials
import Glibc
import FoundationGaps
import Logging

/// Asks the user about an app through a desktop notification with Allow and Deny buttons
/// (`org.freedesktop.Notifications` on the session bus). Where no notification service runs,
/// the question is only logged and `authctl apps allow|deny` decides, as it always can.
public struct DesktopNotificationPrompt: ApprovalPrompt {
    private let busAddress: String?
    private let logger: Logger

    /// Creates a prompt on the bus at `busAddress`, or on the user's session bus when nil.
    public init(busAddress: String? = nil, logger: Logger) {
        self.busAddress = busAddress
        self.logger = logger
    }

    /// Shows the question and waits for a button; nil when the notification is dismissed, cannot
    /// be shown, or the task is cancelled (the notification is then withdrawn).
    public func ask(app: String, executable: String, profile: String) async -> AppDecision? {
        let question = Self.question(app: app, executable: executable, profile: profile)
        let address = busAddress
        let answer = await BlockingWatch.run(name: "authd.notification") { stop in
            authd_ask_by_notification(address, stop, question.summary, question.body)
        }
        switch answer {
        case Int32(AUTHD_ANSWER_ALLOW): return .allowed
        case Int32(AUTHD_ANSWER_DENY): return .denied
        case let failure where failure < 0:
            logger.info("no desktop notification for an app waiting for access (no notification service on the session bus); authctl apps allow|deny decides",
                        metadata: ["client.app": "\(app)", "session.profile": "\(profile)", "error": "\(String(cString: strerror(-failure)))"])
            return nil
        default:
            return nil
        }
    }

    /// The notification's text. The body escapes markup, which servers may render: an
    /// executable's path is chosen by whoever installed it.
    static func question(app: String, executable: String, profile: String) -> (summary: String, body: String) {
        let name = app.pathLastComponent
        let origin = app == executable ? executable : "\(app) (\(executable))"
        let command = "authctl apps allow \(app) --profile \(profile)"
        return (summary: "Allow \(name) to sign in as you?",
                body: escapeMarkup("\(origin) asks authd for the tokens of profile '\(profile)'. Or decide in a terminal: \(command)"))
    }

    /// `text` with the characters of the notification body's markup escaped.
    static func escapeMarkup(_ text: String) -> String {
        text.escapingMarkup
    }
}
