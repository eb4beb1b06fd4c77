import ArgumentParser
import AuthdClient
import AuthProtocol
import FoundationEssentials

/// `authctl user`: the signed-in user's record, and changes to it.
struct UserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Show or change the signed-in user.",
        subcommands: [Show.self, Update.self, Reauthenticate.self],
        defaultSubcommand: Show.self)

    /// `authctl user [show]`.
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the signed-in user as the server knows it.")

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Print the server's user object as JSON.")
        var json = false

        func run() throws {
            try runReporting {
                try printAnswer(try global.call(Methods.GetUser.self, timeout: 60).user, json: json, lines: UserText.lines)
            }
        }
    }

    /// `authctl user update`.
    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change the email address, password or metadata (subscribers see USER_UPDATED).",
            discussion: """
            A new email address is confirmed with the code sent to it (authctl verify --type email_change) unless the project \
            confirms automatically. A new password signs out every other session of the account. When the project asks for a \
            code before the password changes (secure password change), one is sent and asked for on the terminal; with \
            --password-stdin --code-stdin, send it first with 'authctl user reauthenticate' and give it as the second line.
            """)

        @OptionGroup var global: GlobalOptions

        @Option(help: "A new email address.")
        var email: String?

        @Flag(help: "Set a new password (asked on the terminal without echo).")
        var password = false

        @Flag(name: .customLong("password-stdin"), help: "Set a new password read from standard input.")
        var passwordStdin = false

        @Flag(name: .customLong("code-stdin"),
              help: "With --password-stdin: the second line of standard input is the code 'authctl user reauthenticate' sent.")
        var codeStdin = false

        @Option(name: .customLong("data"), help: "A user_metadata entry, KEY=VALUE (repeatable; KEY=null removes it).")
        var data: [String] = []

        @Flag(help: "Print the updated user object as JSON.")
        var json = false

        func validate() throws {
            if email == nil, !password, !passwordStdin, data.isEmpty { throw ValidationError("nothing to change: give --email, --password or --data") }
            if codeStdin, !passwordStdin { throw ValidationError("--code-stdin goes with --password-stdin") }
            _ = try UserData.parse(data)
        }

        func run() throws {
            try runReporting {
                var newPassword: String?
                if passwordStdin {
                    newPassword = try SecretReader.fromStandardInput(what: "password")
                } else if password {
                    newPassword = try SecretReader.fromTerminal(prompt: "New password: ", echo: false, otherwise: "pass it on standard input with --password-stdin")
                }
                let connection = try global.connect()
                var changes = Methods.UpdateUser.Parameters(profile: global.profile, email: email, password: newPassword, data: try UserData.parse(data))
                if codeStdin { changes.nonce = try SecretReader.fromStandardInput(what: "code") }
                let result: UserResult
                do {
                    result = try connection.call(Methods.UpdateUser.self, changes, timeout: 60)
                } catch AuthdError.rejected(reason: ErrorReason.reauthenticationNeeded.rawValue?, _) where newPassword != nil && !codeStdin {
                    // Secure password change: a code first. Asked on the terminal; a script sends
                    // it beforehand (`user reauthenticate`) and passes it with --code-stdin. No code
                    // is sent without a terminal to type it on: GoTrue sends one a minute at most,
                    // and the script's own `user reauthenticate` would then be refused.
                    guard SecretReader.hasTerminal else {
                        throw Failure("the project asks for a code before the password changes: send one with 'authctl user reauthenticate', then give the new password and the code on two lines of standard input with --password-stdin --code-stdin", .failure)
                    }
                    let sent = try connection.call(Methods.Reauthenticate.self, ProfileParameters(profile: global.profile), timeout: 60)
                    note("The project asks for a code before the password changes; one was sent to \(Reauthenticate.destination(sent)).")
                    changes.nonce = try SecretReader.fromTerminal(
                        prompt: "Code: ", echo: false,
                        otherwise: "send it with 'authctl user reauthenticate' and give it as the second line of standard input with --code-stdin")
                    result = try connection.call(Methods.UpdateUser.self, changes, timeout: 60)
                }
                if json { try printJSON(result.user) }
                if let pending = result.user["new_email"]?.stringValue?.escapedForTerminal {
                    note("A confirmation code was sent to \(pending). Finish with: authctl verify --type email_change --email \(pending) (it asks for the code)")
                } else {
                    note("Updated \((result.user["email"]?.stringValue ?? "the user").escapedForTerminal).")
                }
            }
        }
    }
}

extension UserCommand {
    /// `authctl user reauthenticate`.
    struct Reauthenticate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send the code a password change needs on a project with secure password change.",
            discussion: "The code goes to the account's email address (else its phone); pass it to 'authctl user update --password-stdin --code-stdin' as the second line of standard input.")

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Print where the code went as one JSON object.")
        var json = false

        func run() throws {
            try runReporting {
                let sent = try global.call(Methods.Reauthenticate.self, timeout: 60)
                if json { try printJSON(sent) }
                note("A code was sent to \(Self.destination(sent)). Use it with: authctl user update --password-stdin --code-stdin (new password, then the code)")
            }
        }

        /// Where the code went, for a sentence.
        static func destination(_ sent: Methods.Reauthenticate.Result) -> String {
            guard let sentTo = sent.sentTo else { return "the account's email address or phone" }
            return "\(sentTo.escapedForTerminal) (\(sent.channel ?? "email"))"
        }
    }
}

/// The user object as a few lines for people (to print with `printLines`, which escapes what
/// the server put in them).
enum UserText {
    static func lines(_ user: JSONValue) -> [String] {
        func text(_ key: String) -> String? {
            guard let value = user[key]?.stringValue, !value.isEmpty else { return nil }
            return value
        }
        var lines = ["ID:         \(text("id") ?? "?")"]
        if let email = text("email") { lines.append("Email:      \(email)\(text("email_confirmed_at") == nil ? " (not confirmed)" : "")") }
        if let pending = text("new_email") { lines.append("New email:  \(pending) (waiting for its code)") }
        if let phone = text("phone") { lines.append("Phone:      +\(phone)") }
        if case .array(let providers)? = user["app_metadata"]?["providers"] {
            lines.append("Providers:  \(providers.compactMap(\.stringValue).joined(separator: ", "))")
        }
        if let created = text("created_at") { lines.append("Created:    \(created)") }
        if let last = text("last_sign_in_at") { lines.append("Last login: \(last)") }
        if case .object(let metadata)? = user["user_metadata"] {
            let ignored: Set<String> = ["email", "email_verified", "phone_verified", "sub"]
            let entries = metadata.filter { !ignored.contains($0.key) }.sorted { $0.key < $1.key }
            if !entries.isEmpty {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                lines.append("Metadata:   " + entries.map { "\($0.key)=\((try? encoder.encode($0.value)).map { String(decoding: $0, as: UTF8.self) } ?? "?")" }
                    .joined(separator: " "))
            }
        }
        return lines
    }
}
