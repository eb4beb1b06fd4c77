import ArgumentParser
import AuthdClient
import AuthProtocol
import FoundationEssentials

/// `authctl reset-password`: recover an account whose password is lost.
struct ResetPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset-password",
        abstract: "Reset a forgotten password: a code is emailed, then a new password is set.",
        discussion: """
        Sends a recovery code to --email, signs in with it (subscribers see PASSWORD_RECOVERY) and sets the new \
        password (USER_UPDATED). With --stdin, standard input gives the code on its first line and the new \
        password on its second. --send-only sends the code and exits. With --link the email's link, opened on \
        this computer, signs in instead of the code (then --stdin gives only the new password).
        """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "The account's email address.")
    var email: String

    @Flag(name: .customLong("stdin"), help: "Read the code, then the new password, from standard input.")
    var readStandardInput = false

    @Flag(name: .customLong("send-only"), help: "Only send the recovery code.")
    var sendOnly = false

    @Flag(help: "Sign in by opening the emailed link on this computer instead of typing the code.")
    var link = false

    @OptionGroup var browser: BrowserFlowOptions

    @OptionGroup var captcha: CaptchaTokenOption

    func validate() throws {
        if captcha.readsStandardInput, readStandardInput {
            throw ValidationError("only one of --captcha-token-file and --stdin can read standard input")
        }
        if !link, browser.areSet { throw ValidationError("--redirect-url and --timeout go with --link") }
        if link, sendOnly { throw ValidationError("--link waits for the link: no --send-only") }
    }

    func run() throws {
        try runReporting {
            let connection = try global.connect()
            let captchaToken = try captcha.token(for: connection)
            let status: SessionStatus
            if link {
                let request = Methods.SendCode.Parameters(profile: global.profile, email: email, purpose: "recovery", captchaToken: captchaToken)
                status = try BrowserSignIn.emailLink(request, purpose: "reset the password", connection: connection, redirectURL: browser.redirectURL,
                                                     timeout: TimeInterval(browser.timeout)) { sent in
                    "If \(sent.sentTo.escapedForTerminal) has an account, a recovery link was sent to it. Open it on this computer."
                }.run()
                note("Link accepted; signed in as \((status.user?.displayName ?? "?").escapedForTerminal).")
            } else {
                let sent = try connection.call(Methods.SendCode.self, .init(profile: global.profile, email: email, purpose: "recovery",
                                                                            captchaToken: captchaToken), timeout: 60)
                note("If \(sent.sentTo.escapedForTerminal) has an account, a recovery code was sent to it.")
                if sendOnly { return }
                let code = try SecretReader.secret("code", prompt: "Code: ", fromStandardInput: readStandardInput, standardInputFlag: "--stdin")
                status = try connection.call(Methods.VerifyCode.self, .init(profile: global.profile, email: email, code: code, type: "recovery"),
                                             timeout: 60)
                note("Code accepted; signed in as \((status.user?.displayName ?? "?").escapedForTerminal).")
            }
            let password = try SecretReader.secret("new password", prompt: "New password: ", fromStandardInput: readStandardInput,
                                                   standardInputFlag: "--stdin")
            guard !password.isEmpty else {
                throw Failure("the new password is empty; set one later with 'authctl user update --password'", .failure)
            }
            _ = try connection.call(Methods.UpdateUser.self, .init(profile: global.profile, password: password), timeout: 60)
            note("Password changed. Other sessions of this account were signed out.")
        }
    }
}
