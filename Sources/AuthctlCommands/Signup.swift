import ArgumentParser
import AuthdClient
import AuthProtocol
import FoundationEssentials
import Glibc

/// `authctl signup`: create an account.
struct Signup: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signup",
        abstract: "Create an account (signed in at once, or after 'authctl verify' when the project confirms addresses).")

    @OptionGroup var global: GlobalOptions

    @Option(help: "The new account's email address.")
    var email: String?

    @Option(help: "The new account's phone number (+15551234567); confirmed by SMS.")
    var phone: String?

    @Flag(name: .customLong("password-stdin"), help: "Read the password from standard input (first line).")
    var passwordStdin = false

    @Option(name: .customLong("data"), help: "A user_metadata entry, KEY=VALUE (repeatable).")
    var data: [String] = []

    @OptionGroup var captcha: CaptchaTokenOption

    @Flag(help: "Print the outcome as one JSON object.")
    var json = false

    func validate() throws {
        if (email == nil) == (phone == nil) { throw ValidationError("give either --email or --phone") }
        if captcha.readsStandardInput, passwordStdin {
            throw ValidationError("only one of --captcha-token-file and --password-stdin can read standard input")
        }
        _ = try UserData.parse(data)
    }

    func run() throws {
        try runReporting {
            let connection = try global.connect()
            let captchaToken = try captcha.token(for: connection)
            let password = try SecretReader.secret("password", prompt: "New password: ", fromStandardInput: passwordStdin,
                                                   standardInputFlag: "--password-stdin")
            guard !password.isEmpty else { throw Failure("the password is empty", .signInRefused) }
            let result = try connection.call(Methods.SignUp.self, .init(profile: global.profile, email: email, phone: phone,
                                                                        password: password, data: try UserData.parse(data),
                                                                        captchaToken: captchaToken), timeout: 60)
            if json { try printJSON(result) }
            if result.confirmationSent {
                let flag = email != nil ? "--email" : "--phone"
                let sentTo = result.sentTo?.escapedForTerminal
                note("Check your \(email != nil ? "inbox" : "messages"): a confirmation code was sent to \(sentTo ?? "you"). Finish with: authctl verify \(flag) \(sentTo ?? "ADDRESS") (it asks for the code)")
            } else {
                note("Account created; signed in as \((result.status.user?.displayName ?? "?").escapedForTerminal) (profile \(result.status.profile.escapedForTerminal)).")
            }
        }
    }
}

/// `authctl verify`: finish a sign-up, a code sign-in or an email change with the code that was sent.
/// The code is never an argument: a command line can be read by every user of the computer
/// (`/proc/PID/cmdline`), and a code is as good as a password until it is used or expires.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign in with a code sent by email or SMS (sign-up confirmation, one-time code, email change).",
        discussion: """
        The code is asked on the terminal without echo, or read from the first line of standard input when that \
        is not a terminal (echo "$CODE" | authctl verify --email E). It is never taken on the command line, where \
        other users can read it. Exit 5 when the code is wrong, expired or already used.
        """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "The email address the code was sent to.")
    var email: String?

    @Option(help: "The phone number the code was sent to.")
    var phone: String?

    @Option(help: "What the code is for: email (the default for --email), sms (the default for --phone), signup, magiclink, recovery, email_change.")
    var type: String?

    /// Only `-` (standard input) is accepted, for scripts written when the code was an argument.
    @Argument(help: ArgumentHelp(visibility: .private))
    var code: String?

    @Flag(help: "Print the resulting status as one JSON object.")
    var json = false

    func validate() throws {
        if (email == nil) == (phone == nil) { throw ValidationError("give either --email or --phone") }
        let types = ["email", "sms", "signup", "magiclink", "recovery", "email_change", "phone_change"]
        if let type, !types.contains(type) { throw ValidationError("--type must be one of \(types.joined(separator: ", "))") }
        if let code, code != "-" {
            // The code is not repeated here: this message may end up in a log.
            throw ValidationError("""
                a code on the command line can be read by every user of this computer (/proc/PID/cmdline): \
                run 'authctl verify \(email != nil ? "--email" : "--phone") \(email ?? phone ?? "")' and type the code when asked, \
                or give it on standard input
                """)
        }
    }

    func run() throws {
        try runReporting {
            let code = try code == nil && isatty(STDIN_FILENO) == 1
                ? SecretReader.fromTerminal(prompt: "Code: ", echo: false, otherwise: "give the code on standard input")
                : SecretReader.fromStandardInput(what: "code")
            guard !code.isEmpty else { throw Failure("the code is empty: type the code that was sent, or give it on standard input", .failure) }
            let connection = try global.connect()
            let status = try connection.call(Methods.VerifyCode.self, .init(profile: global.profile, email: email, phone: phone,
                                                                            code: code, type: type), timeout: 60)
            try reportSignedIn(status, json: json)
        }
    }
}

/// `KEY=VALUE` pairs for `user_metadata`. Values that read as JSON (numbers, true, null, objects)
/// are taken as JSON; anything else is a string.
enum UserData {
    static func parse(_ pairs: [String]) throws -> [String: JSONValue]? {
        guard !pairs.isEmpty else { return nil }
        var data: [String: JSONValue] = [:]
        for pair in pairs {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw ValidationError("--data takes KEY=VALUE, not '\(pair)'")
            }
            let key = String(pair[..<equals])
            let text = String(pair[pair.index(after: equals)...])
            data[key] = (try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))) ?? .string(text)
        }
        return data
    }
}

/// `authctl resend`: send a sign-up's (or an address change's) confirmation again.
struct Resend: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a confirmation again: a sign-up's (the default) or a new address's.",
        discussion: """
        For a sign-up whose email or text message went missing, or a changed email or phone (--type email_change, \
        phone_change). Finish with 'authctl verify'. The server sends at most one every minute or so.
        """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "The email address to send it to.")
    var email: String?

    @Option(help: "The phone number to send it to.")
    var phone: String?

    @Option(help: "What it confirms: signup (the default for --email), sms (the default for --phone), email_change, phone_change.")
    var type: String?

    @OptionGroup var captcha: CaptchaTokenOption

    @Flag(help: "Print where it went as one JSON object.")
    var json = false

    func validate() throws {
        if (email == nil) == (phone == nil) { throw ValidationError("give either --email or --phone") }
        let types = email != nil ? ["signup", "email_change"] : ["sms", "phone_change"]
        if let type, !types.contains(type) { throw ValidationError("--type must be one of \(types.joined(separator: ", ")) for --\(email != nil ? "email" : "phone")") }
    }

    func run() throws {
        try runReporting {
            let connection = try global.connect()
            let sent = try connection.call(Methods.Resend.self, .init(profile: global.profile, email: email, phone: phone, type: type,
                                                                      captchaToken: try captcha.token(for: connection)), timeout: 60)
            if json { return try printJSON(sent) }
            let flag = email != nil ? "--email" : "--phone"
            let typeFlag = type.map { $0 == "signup" || $0 == "sms" ? "" : " --type \($0)" } ?? ""
            note("Sent again by \(sent.channel.escapedForTerminal) to \(sent.sentTo.escapedForTerminal). Finish with: authctl verify \(flag) \(sent.sentTo.escapedForTerminal)\(typeFlag)")
        }
    }
}
