import ArgumentParser
import AuthdClient
import AuthProtocol
import FoundationEssentials
import FoundationGaps

/// `--captcha-token-file`, for the commands a project's CAPTCHA guards (password and code
/// sign-in, sign-up, password recovery).
///
/// A file, not the token itself: a command line is readable by every user of the computer
/// (`/proc/PID/cmdline`), and a token works once, so another user could spend it first.
struct CaptchaTokenOption: ParsableArguments {
    @Option(name: .customLong("captcha-token-file"),
            help: "For a project that protects this with a CAPTCHA: a file holding the token of one solved on its page ('-' for standard input).")
    var file: String?

    /// Whether the token comes from standard input, which the caller's other secrets may also want.
    var readsStandardInput: Bool { file == "-" }

    /// The token from the file, checked; nil without the option. Refused when the daemon behind
    /// `connection` is too old to pass a token on (it would drop it, and the server's refusal
    /// would not say why).
    func token(for connection: AuthdConnection) throws -> String? {
        guard let file else { return nil }
        let token = try readTokenFile(file, what: "a CAPTCHA token")
        guard CaptchaTokenRule.isWellFormed(token) else {
            throw Failure("\(file == "-" ? "standard input" : file) does not hold a CAPTCHA token (printable ASCII without spaces, at most \(CaptchaTokenRule.maximumBytes) bytes)", .failure)
        }
        let hello = try connection.call(Methods.Hello.self, .init(client: "authctl"), timeout: 30)
        guard hello.capabilities.contains("captcha") else {
            throw Failure("this authd (\(hello.daemonVersion)) cannot pass a CAPTCHA token on: restart it on the version installed with authctl ('systemctl --user restart authd')", .failure)
        }
        return token
    }
}

/// The token in the file at `path`, or on standard input for `-`, without surrounding white space.
func readTokenFile(_ path: String, what: String) throws -> String {
    let data: Data?
    if path == "-" { data = StandardStreams.readToEnd() } else { data = FileManager.default.contents(atPath: path) }
    guard let data, let text = String(data: data, encoding: .utf8)?.trimmingWhitespace(), !text.isEmpty else {
        throw Failure("cannot read \(what) from \(path == "-" ? "standard input" : path)", .failure)
    }
    return text
}
