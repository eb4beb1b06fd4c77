import ArgumentParser
import AuthdClient
import AuthProtocol
import FoundationEssentials
import FoundationGaps

/// The documented exit codes.
enum ExitStatus: Int32 {
    case failure = 1
    case daemonNotRunning = 3
    case notSignedIn = 4
    case signInRefused = 5
    case serverUnavailable = 6
    case keyringUnavailable = 7
    case browserSignInFailed = 8
    case mfaRequired = 9
    case usage = 64
    case interrupted = 130
}

/// An error that prints one line on stderr and exits with a documented code.
struct Failure: Error {
    let message: String
    let status: ExitStatus

    init(_ message: String, _ status: ExitStatus) {
        self.message = message
        self.status = status
    }

    /// The message and exit code for `error`: the client library's classification decides the code.
    init(_ error: AuthdError) {
        let status: ExitStatus
        switch error {
        case .daemonUnavailable: status = .daemonNotRunning
        case .notSignedIn: status = .notSignedIn
        case .signInRefused: status = .signInRefused
        case .offline: status = .serverUnavailable
        case .keyringUnavailable: status = .keyringUnavailable
        case .browserSignInFailed: status = .browserSignInFailed
        case .mfaRequired: status = .mfaRequired
        // Not 3 for a foreign daemon: no authd is to be started or waited for; somebody has to
        // look at the socket.
        case .timedOut, .protocolError, .foreignDaemon, .accessDenied, .unknownProfile, .rejected: status = .failure
        }
        self.init(error.readableDescription, status)
    }
}

/// Runs a subcommand body, turning failures into a message and an exit code. The message is
/// one line with its control characters escaped: it often carries the daemon's or the server's
/// words.
func runReporting(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let failure as Failure {
        StandardStreams.writeError("authctl: \(failure.message.escapedForTerminal)\n")
        throw ExitCode(failure.status.rawValue)
    } catch let error as AuthdError {
        let failure = Failure(error)
        StandardStreams.writeError("authctl: \(failure.message.escapedForTerminal)\n")
        throw ExitCode(failure.status.rawValue)
    }
}

/// Writes a JSON value as one line on stdout, with nothing in it a terminal acts on.
func printJSON<T: Encodable>(_ value: T) throws {
    var bytes = TerminalText.escapedJSON(Array(try RPCCodec.makeEncoder().encode(value)))
    bytes.append(0x0A)
    StandardStreams.writeOutput(bytes)
}

/// Writes an answer on stdout: as one JSON object with `--json`, else as the lines `lines` makes
/// of it for people.
func printAnswer<T: Encodable>(_ value: T, json: Bool, lines: (T) -> [String]) throws {
    if json { try printJSON(value) } else { printLines(lines(value)) }
}

/// Writes lines built by authctl for people on stdout; the control characters of what they
/// quote from outside are escaped, line by line.
func printLines(_ lines: [String]) {
    print(lines.map(TerminalText.escaped).joined(separator: "\n"))
}
