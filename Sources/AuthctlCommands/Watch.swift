import ArgumentParser
import AuthdClient
import AuthProtocol
import FoundationEssentials
import FoundationGaps

/// `authctl watch`: follow auth-state events until interrupted.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print auth-state events as they happen (INITIAL_SESSION first). No tokens are shown.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print each event as one JSON object per line.")
    var json = false

    func run() throws {
        try runReporting {
            let connection = try global.connect()
            try connection.subscribe(profile: global.profile)
            while let event = try connection.nextEvent() {
                // Written straight to the fd: a pipe reader sees each event at once, not when a buffer fills.
                if json { try printJSON(event) } else { StandardStreams.writeOutput((line(for: event).escapedForTerminal + "\n").utf8) }
            }
            throw Failure("authd closed the connection", .daemonNotRunning)
        }
    }

    private func line(for event: AuthEventMessage) -> String {
        let time = Date().formatted(.iso8601)
        let who = event.status.user?.email ?? event.status.user?.id ?? "-"
        var text = "\(time) \(event.event) profile=\(event.profile) user=\(who) state=\(event.status.state)"
        if let reason = event.reason { text += " reason=\(reason)" }
        if let expiresAt = event.status.expiresAt { text += " token=\"\(StatusText.validity(until: expiresAt, now: Date()))\"" }
        return text
    }
}
