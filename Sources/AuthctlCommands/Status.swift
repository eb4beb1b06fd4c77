import ArgumentParser
import AuthdClient
import AuthProtocol
import FoundationEssentials

/// `authctl status`: who is signed in and how long the token lasts. Never prints a token.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the session state (exit 0 when signed in, 4 when not, 7 when the keyring cannot be read).")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print the status as one JSON object.")
    var json = false

    func run() throws {
        try runReporting {
            let connection = try global.connect()
            let status = try connection.call(Methods.Status.self, ProfileParameters(profile: global.profile))
            // Which apps used the profile; a daemon older than apps.list simply shows none.
            let apps = (try? connection.call(Methods.ListApps.self, ProfileParameters(profile: status.profile)))?.apps ?? []
            if json { try printJSON(StatusWithApps(status: status, apps: apps)) } else {
                var lines = StatusText.lines(status, now: Date())
                for app in apps where app.requests > 0 || app.access != "open" {
                    let used = app.lastUsed.map { "last token \(AppsText.ago(Date(timeIntervalSince1970: TimeInterval($0)), now: Date()))" } ?? "no token yet"
                    lines.append("App:      \(app.app): \(app.requests) token\(app.requests == 1 ? "" : "s"), \(used)\(app.access == "open" ? "" : " (\(app.access))")")
                }
                printLines(lines)
            }
            if status.state == .keyringUnavailable { throw ExitCode(ExitStatus.keyringUnavailable.rawValue) }
            if !status.isSignedIn { throw ExitCode(ExitStatus.notSignedIn.rawValue) }
        }
    }
}

/// `status --json`: the session status with an `apps` member added.
struct StatusWithApps: Encodable {
    let status: SessionStatus
    let apps: [AppRecord]

    func encode(to encoder: Encoder) throws {
        try status.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(apps, forKey: Key(stringValue: "apps"))
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

/// Human-readable status lines (to print with `printLines`, which escapes what the daemon and the
/// server put in them: the user's name, the server's address, problem details).
enum StatusText {
    static func lines(_ status: SessionStatus, now: Date) -> [String] {
        var lines = ["Profile:  \(status.profile) (\(status.server))"]
        switch status.state {
        case .signedIn, .refreshing:
            lines.append("State:    signed in as \(status.user?.displayName ?? "?")")
            if let user = status.user { lines.append("User ID:  \(user.id)") }
            if let expiresAt = status.expiresAt {
                lines.append("Token:    \(validity(until: expiresAt, now: now))\(status.state == .refreshing ? " (refreshing)" : "")")
            }
            if let aal = status.aal {
                let methods = (status.amr ?? []).isEmpty ? "" : " (\((status.amr ?? []).joined(separator: ", ")))"
                let next = status.needsSecondFactor ? "; verify a second factor for \(status.nextAal ?? "aal2"): authctl mfa verify" : ""
                lines.append("Level:    \(aal)\(methods)\(next)")
            }
        case .signedOut where status.signOutReason == "mfa_verification_required":
            lines.append("State:    signed out (mfa_verification_required): the server ended a session that lacked the account's second factor.")
            lines.append("          Sign in again and verify it: authctl login --email you@example.com (it asks for the code)")
        case .signedOut:
            let reason = status.signOutReason.map { " (\($0))" } ?? ""
            lines.append("State:    signed out\(reason). Sign in with: authctl login --email you@example.com")
        case .keyringUnavailable:
            lines.append("State:    unknown: the keyring could not be read")
        default:
            lines.append("State:    \(status.state.rawValue.replacing("_", with: " "))")
        }
        if let degraded = status.degraded {
            let retry = max(0, degraded.retryAt - Int64(now.timeIntervalSince1970))
            lines.append("Problem:  \(degraded.reason.replacing("_", with: " ")): \(degraded.detail); retrying in \(retry) s")
        }
        lines.append("Keyring:  \(status.keyring)\(status.keyringDetail.map { " (\($0))" } ?? "")")
        return lines
    }

    static func validity(until expiresAt: Int64, now: Date) -> String {
        let left = expiresAt - Int64(now.timeIntervalSince1970)
        if left <= 0 { return "expired" }
        if left < 120 { return "valid for \(left) s" }
        return "valid for \(left / 60) min"
    }
}
