import ArgumentParser
import AuthdClient
import AuthProtocol
import FoundationEssentials

/// `authctl logout`: end the session.
struct Logout: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign out.",
        discussion: """
        --scope local (the default) ends this desktop's session only; global ends every session of the \
        user on every device; others ends every session except this one (you stay signed in here).
        """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "local, global or others.")
    var scope: String = "local"

    func validate() throws {
        guard ["local", "global", "others"].contains(scope) else { throw ValidationError("--scope must be local, global or others") }
    }

    func run() throws {
        try runReporting {
            let connection = try global.connect()
            let result = try connection.call(Methods.SignOut.self, .init(profile: global.profile, scope: scope), timeout: 60)
            var message = scope == "others" ? "Signed out of every other session." : "Signed out."
            if !result.serverConfirmed {
                message += " The server could not be told (\((result.serverDetail ?? "unknown error").escapedForTerminal)); the local session is gone."
            }
            note(message)
        }
    }
}
