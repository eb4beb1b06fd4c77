import AuthdClient
import AuthProtocol
import FoundationEssentials
import FoundationGaps

/// `authctl login` with nothing to say how, where no browser can be shown (an SSH session, a
/// console): asks on the terminal, as `ssh` or `gh auth login` would. The email first, then the
/// password, or, when the password is left empty, a one-time code sent to that address.
struct TerminalSignIn {
    let connection: AuthdConnection
    let profile: String?
    let captchaToken: String?

    /// Asks and signs in; the status.
    func run() throws -> SessionStatus {
        let otherwise = "give --email ADDRESS (the password then comes on standard input with --password-stdin), or sign in in a browser with --web"
        let email = try SecretReader.fromTerminal(prompt: "Email: ", echo: true, otherwise: otherwise).trimmingWhitespace()
        guard !email.isEmpty else { throw Failure("no email address was given", .signInRefused) }
        let password = try SecretReader.fromTerminal(prompt: "Password for \(email) (or Enter alone to get a code by email): ",
                                                     echo: false, otherwise: otherwise)
        guard password.isEmpty else {
            return try connection.call(Methods.SignInWithPassword.self,
                                       .init(profile: profile, email: email, password: password, captchaToken: captchaToken), timeout: 60)
        }
        let sent = try connection.call(Methods.SendCode.self, .init(profile: profile, email: email, purpose: "sign_in", captchaToken: captchaToken),
                                       timeout: 60)
        note("A code was sent by \(sent.channel.escapedForTerminal) to \(sent.sentTo.escapedForTerminal).")
        let code = try SecretReader.fromTerminal(prompt: "Code: ", echo: false, otherwise: otherwise).trimmingWhitespace()
        guard !code.isEmpty else { throw Failure("no code was given", .signInRefused) }
        return try connection.call(Methods.VerifyCode.self, .init(profile: profile, email: email, code: code), timeout: 60)
    }
}
