import ArgumentParser
import AuthdClient
import AuthProtocol
import FoundationEssentials
import Glibc
import FoundationGaps

/// `authctl token`: print a bearer token, and nothing else, for `$(authctl token)`.
struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print an access token (only the token) for use as a bearer token.",
        discussion: "Example: curl -H \"Authorization: Bearer $(authctl token)\" https://<ref>.supabase.co/rest/v1/...")

    @OptionGroup var global: GlobalOptions

    @Option(name: .customLong("min-valid"), help: "Seconds the token must stay valid; authd refreshes first if needed.")
    var minValid: Int = 0

    @Option(help: "The assurance level the token must have: aal2 for a session verified with a second factor (exit 9 when it is not).")
    var aal: String?

    @Flag(help: "Print token, type and expiry as one JSON object.")
    var json = false

    func validate() throws {
        if minValid < 0 { throw ValidationError("--min-valid must not be negative") }
        if let aal, !Methods.Token.Parameters.requestableLevels.contains(aal) { throw ValidationError("--aal must be aal1 or aal2") }
    }

    /// The answer authctl's front already received to its own token request (request id 1),
    /// on a pipe; set by the front only.
    @Option(name: .customLong("answer-fd"), help: ArgumentHelp(visibility: .private))
    var answerFD: Int32?

    func run() throws {
        try runReporting {
            let token: Methods.Token.Result
            if let answerFD, let handedOver = try Self.interpret(answerFrom: answerFD) {
                token = handedOver
            } else {
                let connection = try global.connect()
                token = try connection.call(Methods.Token.self, .init(profile: global.profile, minValidity: minValid, aal: aal), timeout: 300)
            }
            if json { try printJSON(token) } else {
                // Printed as it is, into headers and onto terminals: like the front, only what
                // JWTs are made of. Anything else is not printed, and not quoted either.
                guard Self.isJWTText(token.accessToken) else {
                    throw Failure("authd handed out a token with characters no JWT has, so it was not printed; check 'journalctl --user -u authd'", .failure)
                }
                print(token.accessToken)
            }
        }
    }

    /// Letters, digits, `-`, `_` and `.`, and at least one of them.
    private static func isJWTText(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
    }

    /// The token in the answer the front handed over on `descriptor`; an error answer throws as
    /// the ordinary call would. Nil when the pipe holds no answer to the front's request, and
    /// this command then asks authd itself.
    private static func interpret(answerFrom descriptor: Int32) throws -> Methods.Token.Result? {
        defer { close(descriptor) }
        guard let data = StandardStreams.readToEnd(from: descriptor), let newline = data.firstIndex(of: 0x0A) else { return nil }
        switch try AuthdConnection.meaning(of: Array(data[..<newline]), answering: .number(1), Methods.Token.self) {
        case .answer(let token): return token
        case .event, .other: return nil
        }
    }
}
