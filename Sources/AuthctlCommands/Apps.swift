import ArgumentParser
import AuthdClient
import AuthProtocol
import FoundationEssentials
import FoundationGaps

/// `authctl apps`: which apps asked for tokens, and the user's say over them.
struct Apps: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the apps that asked for tokens; allow or deny them under access = \"ask\".",
        discussion: """
        authd knows each client by what the kernel says about its process: its executable (or, for \
        a Flatpak or Snap app, its app id), never by a name the client sends. Under a profile with \
        access = "ask" (authd.conf(5)) an app's first token request waits until it is allowed here; \
        decisions are kept in $XDG_STATE_HOME/authd/apps.json.
        """,
        subcommands: [List.self, Allow.self, Deny.self],
        defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the apps: waiting ones first, then by profile (exit 0).")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print the list as one JSON object.")
        var json = false

        func run() throws {
            try runReporting {
                let result = try global.call(Methods.ListApps.self)
                if json { return try printJSON(result) }
                for (profile, policy) in result.policies.sorted(by: { $0.key < $1.key }) where policy == Methods.ListApps.Result.asking {
                    StandardStreams.writeError("Profile \(profile.escapedForTerminal) asks before an app gets tokens.\n")
                }
                if result.apps.isEmpty {
                    StandardStreams.writeError("No app has asked for a token since authd started, and none was allowed or denied.\n")
                    return
                }
                print(AppsText.table(result.apps, now: Date()))
                if result.apps.contains(where: { $0.access == "pending" }) {
                    StandardStreams.writeError("Decide with: authctl apps allow APP (or deny APP)\n")
                }
            }
        }
    }

    struct Allow: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Let an app take the profile's tokens; its waiting requests are answered at once.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The app: an executable path, a command name on $PATH, or a Flatpak or Snap app id, as 'authctl apps' shows it.")
        var app: String

        func run() throws { try decide(app, "allow", global: global) }
    }

    struct Deny: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Refuse an app the profile's tokens; its requests get an app_denied error.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The app: an executable path, a command name on $PATH, or a Flatpak or Snap app id, as 'authctl apps' shows it.")
        var app: String

        func run() throws { try decide(app, "deny", global: global) }
    }
}

private func decide(_ app: String, _ decision: String, global: GlobalOptions) throws {
    try runReporting {
        let connection = try global.connect()
        let known = try connection.call(Methods.ListApps.self, ProfileParameters(profile: global.profile)).apps.map(\.app)
        let name = try AppsText.resolve(app, known: known)
        let record = try connection.call(Methods.DecideApp.self, .init(profile: global.profile, app: name, decision: decision))
        StandardStreams.writeError("\(record.app.escapedForTerminal) is now \(record.access.escapedForTerminal) for profile \(record.profile.escapedForTerminal).\n")
    }
}

/// How apps are named on the command line and shown.
enum AppsText {
    /// The name authd knows for what the user typed: an app it already lists, an existing file
    /// (symlinks resolved, as the kernel reports executables), or a bare command name that means
    /// exactly one program: the apps listed under that name and the command on $PATH must all be
    /// the same file, or the user is asked for the full path (a decision about one program must
    /// never land on another that happens to share its name). Else the text as is (an app id).
    static func resolve(_ typed: String, known: [String], path: String? = ProcessInfo.processInfo.environment["PATH"]) throws -> String {
        if known.contains(typed) { return typed }
        if typed.contains("/") {
            let absolute = URL(fileURLWithPath: typed).standardizedFileURL.resolvingSymlinksInPath().path
            return FileManager.default.fileExists(atPath: absolute) ? absolute : typed
        }
        var candidates = known.filter { $0.hasPrefix("/") && $0.pathLastComponent == typed }
        for directory in (path ?? "").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(typed)
            if FileManager.default.isExecutableFile(atPath: candidate.path) {
                candidates.append(candidate.resolvingSymlinksInPath().path)
                break
            }
        }
        let distinct = Array(Set(candidates)).sorted()
        if distinct.count > 1 {
            throw ValidationError("'\(typed)' could mean \(distinct.joined(separator: " or ")): give the full path of the one you mean")
        }
        return distinct.first ?? typed
    }

    /// The human table: profile, access, tokens handed out, last use and the app.
    static func table(_ apps: [AppRecord], now: Date) -> String {
        var lines = ["PROFILE   ACCESS    TOKENS  LAST USED  APP"]
        for app in apps {
            let profile = app.profile.padded(to: max(9, app.profile.count))
            let access = app.access.padded(to: 9)
            let tokens = String(app.requests).padded(to: 7)
            let used = (app.lastUsed.map { ago(Date(timeIntervalSince1970: TimeInterval($0)), now: now) } ?? "never").padded(to: 10)
            let name = app.appID == nil ? app.app : "\(app.app) (\(app.executable))"
            // Executable paths are chosen by whoever named the file: never raw on a terminal.
            lines.append(TerminalText.escaped("\(profile) \(access) \(tokens) \(used) \(name)"))
        }
        return lines.joined(separator: "\n")
    }

    /// "5 s ago", "3 min ago", "2 h ago".
    static func ago(_ date: Date, now: Date) -> String {
        let seconds = max(0, Int(now.timeIntervalSince(date)))
        if seconds < 120 { return "\(seconds) s ago" }
        if seconds < 7200 { return "\(seconds / 60) min ago" }
        return "\(seconds / 3600) h ago"
    }
}
