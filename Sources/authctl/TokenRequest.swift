import AuthSocket
#if canImport(Glibc)
import Glibc
#endif

/// An `authctl token` command line the front sends itself: every option `token` takes
/// (`--profile`, `--socket`, `--min-valid`, `--json`), each at most once. Anything else
/// (`--help`, a typo, a value authctl-full would reject) is left to authctl-full, which reports it
/// before it connects.
struct TokenRequest {
    /// The request's id; authctl-full interprets a handed-over answer with this id.
    static let id = 1

    private var profile: String?
    private var socket: String?
    private var minValid: Int?
    /// `--json`: the answer is always handed to authctl-full, which formats it.
    private var json = false

    /// Parses the arguments after the program name; nil when they are not a `token` command
    /// line this front understands.
    init?(arguments: [String]) {
        guard arguments.first == "token" else { return nil }
        var rest = arguments.dropFirst()
        while let argument = rest.popFirst() {
            var name = argument
            var value: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            }
            if name == "--json" {
                guard value == nil, !json else { return nil }
                json = true
                continue
            }
            guard let given = value ?? rest.popFirst(), !given.isEmpty, !given.hasPrefix("-") else { return nil }
            switch name {
            case "--profile" where profile == nil: profile = given
            case "--socket" where socket == nil: socket = given
            case "--min-valid" where minValid == nil:
                guard let seconds = Int(given), seconds >= 0 else { return nil }
                minValid = seconds
            default:
                // Unknown, or given twice: authctl-full decides what that means.
                return nil
            }
        }
    }

    /// The JSON-RPC request line, newline included, by the protocol's one codec for it.
    var line: [UInt8] {
        TokenRequestLine(id: .number(Int64(Self.id)), parameters: TokenParameters(profile: profile, minValidity: minValid)).encoded
    }

    /// What sending it came to.
    enum Outcome {
        /// The token was printed.
        case printed
        /// authd answered, but with something to interpret or format (an error, `--json`).
        case answered([UInt8])
        /// No socket path, no daemon, or no answer: authctl-full runs the whole command and
        /// says what went wrong.
        case noAnswer
    }

    /// How long the front waits for its answer: authd may hold a token request while the user
    /// decides about the app (two minutes by default) or while a refresh is out.
    static let answerTimeout: Double = 300

    /// The answer handed to authctl-full when authd took the request but did not answer within
    /// `answerTimeout`: authctl-full reports it instead of asking again, which would come from
    /// another executable, a new app to a profile that asks.
    static let noAnswerInTime = Array(#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"authd took the token request but did not answer within 300 s (an app decision or a refresh may still be pending): run the command again","data":{"reason":"timed_out"}}}"#.utf8)

    /// Sends the request and prints a plain token, or says what else came back.
    func send() -> Outcome {
        guard let path = socket ?? (try? SocketPath.resolve()),
              let connection = try? LineConnection.connect(path: path) else { return .noAnswer }
        defer { connection.close() }
        connection.setReadTimeout(Self.answerTimeout)
        guard (try? connection.write(line)) != nil else { return .noAnswer }
        let answer: [UInt8]
        do throws(IPCError) {
            // Nil: authd went away; authctl-full asks again and says why.
            guard let line = try connection.readLine() else { return .noAnswer }
            answer = line
        } catch .timedOut {
            return .answered(Self.noAnswerInTime)
        } catch {
            return .noAnswer
        }
        guard !json, let result = TokenAnswerLine.decode(answer, answering: .number(Int64(Self.id))),
              result.accessToken.utf8.allSatisfy(Self.isTokenCharacter) else { return .answered(answer) }
        var token = Array(result.accessToken.utf8)
        token.append(0x0A)
        let written = token.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        // A short or failed write (a closed pipe) is left to authctl-full to report.
        return written == token.count ? .printed : .answered(answer)
    }

    /// Letters, digits, `-`, `_` and `.`: what JWTs are made of. Anything else is printed by
    /// authctl-full, which says what is odd about it.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
    }
}
