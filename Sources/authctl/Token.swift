import ArgumentParser
import AuthdClient
import AuthProtocol
import Foundation

/// `authctl token`: print a bearer token, and nothing else, for `$(authctl token)`.
struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print an access token (only the token) for use as a bearer token.",
        discussion: "Example: curl -H \"Authorization: Bearer $(authctl token)\" https://<ref>.supabase.co/rest/v1/...")

    @OptionGroup var global: GlobalOptions

    @Option(name: .customLong("min-valid"), help: "Seconds the token must stay valid; authd refreshes first if needed.")
    var minValid: Int = 0

    @Flag(help: "Print token, type and expiry as one JSON object.")
    var json = false

    func validate() throws {
        if minValid < 0 { throw ValidationError("--min-valid must not be negative") }
    }

    func run() throws {
        try runReporting {
            let connection = try global.connect()
            let token = try connection.call(Methods.Token.self, .init(profile: global.profile, minValidity: minValid), timeout: 60)
            if json { try printJSON(token) } else { print(token.accessToken) }
        }
    }

    /// Reports an answer the lean path received but did not print (an error, most often) as
    /// `run` would have, and exits. A line that is no answer to it runs the whole command again.
    static func finish(answer line: [UInt8]) -> Never {
        do {
            try runReporting {
                switch try AuthdConnection.meaning(of: Data(line), answering: .number(Int64(QuickToken.requestID)), Methods.Token.self) {
                case .answer(let token): print(token.accessToken)
                case .event, .other: Authctl.main(nil)
                }
            }
            Authctl.exit()
        } catch {
            Authctl.exit(withError: error)
        }
    }
}
