import ArgumentParser
import AuthdClient
import AuthProtocol
import FoundationEssentials
import Glibc
import FoundationGaps

/// `authctl mfa`: the signed-in user's second factors, and raising the session to `aal2`.
struct MFA: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mfa",
        abstract: "Second factors (an authenticator app or a phone): list, enroll, verify, remove.",
        discussion: """
        A session signed in with one factor is aal1; verifying a second factor raises it to aal2, which apps can \
        require ('authctl token --aal aal2' exits 9 until then). 'authctl login' asks for the second factor when \
        the account has one. Verifying a factor in any app ends the account's other aal1 sessions: sign in there again.
        """,
        subcommands: [List.self, Enroll.self, Verify.self, Unenroll.self],
        defaultSubcommand: List.self)

    /// `authctl mfa [list]`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the account's factors and the session's assurance level.")

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Print the factors and levels as one JSON object.")
        var json = false

        func run() throws {
            try runReporting {
                try printAnswer(try global.call(Methods.ListFactors.self, timeout: 60), json: json, lines: SecondFactorText.lines)
            }
        }
    }

    /// `authctl mfa enroll`.
    struct Enroll: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an authenticator app (TOTP; the default) or, with --phone, a phone, and verify it.",
            discussion: """
            For an authenticator app, a QR code, the secret and the otpauth:// URI are printed once: scan the code (or type \
            the secret), then enter the code the app shows. A phone gets a text message with the code. Without a terminal, \
            give the code with --code-stdin, or finish later with 'authctl mfa verify --factor ID' (the server drops \
            factors left unverified for a few minutes). The secret is shown only here, and only to you: authd keeps no copy.
            """)

        @OptionGroup var global: GlobalOptions

        @Option(help: "Enroll this phone number (E.164, +15551234567) instead of an authenticator app.")
        var phone: String?

        @Option(help: "A name to tell the factor apart from others (e.g. 'work phone').")
        var name: String?

        @Option(help: "With an authenticator app: the issuer it shows (default: the project's host).")
        var issuer: String?

        @Flag(name: .customLong("no-verify"), help: "Enroll only; verify later with 'authctl mfa verify --factor ID'.")
        var noVerify = false

        @Flag(name: .customLong("code-stdin"), help: "Read the code from standard input instead of the terminal.")
        var codeStdin = false

        @Flag(help: "Print the new factor (secret and URI included) as one JSON object instead of the QR code.")
        var json = false

        func validate() throws {
            if noVerify, codeStdin { throw ValidationError("--code-stdin gives the code --no-verify skips") }
            if phone != nil, issuer != nil { throw ValidationError("--issuer is for authenticator apps, not --phone") }
        }

        func run() throws {
            try runReporting {
                let connection = try global.connect()
                let factor = try connection.call(Methods.EnrollFactor.self,
                                                 .init(profile: global.profile, factorType: phone == nil ? "totp" : "phone", friendlyName: name,
                                                       issuer: issuer, phone: phone), timeout: 60)
                if json { try printJSON(factor) } else if let totp = factor.totp { SecondFactorText.showSetup(totp) }
                let id = factor.factorID.escapedForTerminal
                guard !noVerify, codeStdin || SecretReader.hasTerminal else {
                    note("Enrolled factor \(id) (\(factor.type.escapedForTerminal)), not verified yet. Finish with: authctl mfa verify --factor \(id)")
                    return
                }
                let listed = Methods.ListFactors.Factor(id: factor.factorID, type: factor.type, friendlyName: factor.friendlyName, status: "unverified",
                                                        phone: factor.phone)
                let status = try SecondFactorPrompt.verify(listed, connection: connection, profile: global.profile, codeFromStandardInput: codeStdin)
                note("Factor \(id) verified: profile \(status.profile.escapedForTerminal) is now \((status.aal ?? "aal2").escapedForTerminal).")
            }
        }
    }

    /// `authctl mfa verify`.
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Verify a second factor, raising the session to aal2 (MFA_CHALLENGE_VERIFIED).",
            discussion: "Without --factor: the account's verified factor (an authenticator app before a phone), or the one factor waiting to be verified.")

        @OptionGroup var global: GlobalOptions

        @Option(help: "The factor's id, as 'authctl mfa list' shows it.")
        var factor: String?

        @Option(help: "For a phone: sms (the default) or whatsapp.")
        var channel: String?

        @Flag(name: .customLong("code-stdin"), help: "Read the code from standard input instead of the terminal.")
        var codeStdin = false

        @Flag(help: "Print the resulting status as one JSON object.")
        var json = false

        func validate() throws {
            if let channel, !["sms", "whatsapp"].contains(channel) { throw ValidationError("--channel must be sms or whatsapp") }
        }

        func run() throws {
            try runReporting {
                let connection = try global.connect()
                let listed = try connection.call(Methods.ListFactors.self, ProfileParameters(profile: global.profile), timeout: 60)
                let chosen = try SecondFactorPrompt.choose(from: listed.factors, requested: factor)
                let status = try SecondFactorPrompt.verify(chosen, connection: connection, profile: global.profile,
                                                           codeFromStandardInput: codeStdin, channel: channel)
                if json { try printJSON(status) }
                note("Verified: profile \(status.profile.escapedForTerminal) is now \((status.aal ?? "aal2").escapedForTerminal).")
            }
        }
    }

    /// `authctl mfa unenroll`.
    struct Unenroll: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a factor (a verified one only from an aal2 session; 'authctl mfa verify' first).")

        @OptionGroup var global: GlobalOptions

        @Argument(help: "The factor's id, as 'authctl mfa list' shows it.")
        var factor: String

        @Flag(help: "Print what was removed as one JSON object.")
        var json = false

        func run() throws {
            try runReporting {
                let removed = try global.connect().call(Methods.UnenrollFactor.self, .init(profile: global.profile, factorID: factor), timeout: 60)
                if json { try printJSON(removed) }
                note("Removed factor \(removed.factorID.escapedForTerminal) from profile \(removed.profile.escapedForTerminal).")
            }
        }
    }
}

/// Choosing a factor, and the challenge, code and verification of one, for `mfa` and `login`.
enum SecondFactorPrompt {
    /// The factor `requested` names, or the one to use without a name: an authenticator app
    /// before a phone among the verified factors, else the single unverified one (an enrollment
    /// to finish).
    static func choose(from factors: [Methods.ListFactors.Factor], requested: String?) throws -> Methods.ListFactors.Factor {
        if let requested {
            guard let named = factors.first(where: { $0.id.lowercased() == requested.lowercased() }) else {
                throw Failure("the account has no factor \(requested): 'authctl mfa list' shows them", .failure)
            }
            return named
        }
        let verified = factors.filter { $0.status == "verified" }
        if let app = verified.first(where: { $0.type == "totp" }) ?? verified.first(where: { $0.type == "phone" }) { return app }
        let unverified = factors.filter { $0.status != "verified" && ["totp", "phone"].contains($0.type) }
        if unverified.count == 1 { return unverified[0] }
        if unverified.isEmpty { throw Failure("the account has no second factor: add one with 'authctl mfa enroll'", .failure) }
        throw Failure("several factors wait to be verified: name one with --factor ID ('authctl mfa list' shows them)", .failure)
    }

    /// Verifies `factor`: a phone's code is sent first; the code is asked on the terminal, or
    /// read from standard input. The status afterwards.
    static func verify(_ factor: Methods.ListFactors.Factor, connection: AuthdConnection, profile: String?,
                       codeFromStandardInput: Bool, channel: String? = nil) throws -> SessionStatus {
        var challengeID: String?
        let name = factor.friendlyName.map { " '\($0.escapedForTerminal)'" } ?? ""
        if factor.type == "phone" {
            let challenge = try connection.call(Methods.ChallengeFactor.self, .init(profile: profile, factorID: factor.id, channel: channel), timeout: 60)
            challengeID = challenge.challengeID
            note("A code was sent to \((factor.phone ?? "the phone").escapedForTerminal)\(name).")
        } else {
            note("Enter the code your authenticator app\(name) shows.")
        }
        let code = try SecretReader.secret("code", prompt: "Code: ", fromStandardInput: codeFromStandardInput, standardInputFlag: "--code-stdin")
        guard !code.trimmingWhitespace().isEmpty else { throw Failure("the code is empty", .signInRefused) }
        return try connection.call(Methods.VerifyFactor.self, .init(profile: profile, factorID: factor.id, challengeID: challengeID, code: code), timeout: 60)
    }
}

/// Second factors as lines for people.
enum SecondFactorText {
    /// The factor list and levels (to print with `printLines`, which escapes what the server put in them).
    static func lines(_ listed: Methods.ListFactors.Result) -> [String] {
        var lines: [String] = []
        switch (listed.aal, listed.nextAal) {
        case (let aal?, let next?) where aal != next: lines.append("Level:    \(aal) (a second factor raises it to \(next): authctl mfa verify)")
        case (let aal?, _): lines.append("Level:    \(aal)")
        default: lines.append("Level:    unknown (the token does not say)")
        }
        if listed.factors.isEmpty { lines.append("Factors:  none (add one with: authctl mfa enroll)") }
        for factor in listed.factors {
            let name = factor.friendlyName.map { " '\($0)'" } ?? ""
            let phone = factor.phone.map { " +\($0)" } ?? ""
            lines.append("Factor:   \(factor.id)  \(factor.type)\(name)\(phone)  \(factor.status)")
        }
        return lines
    }

    /// A TOTP factor's setup on stdout: the QR code (on a terminal only: it is drawn with colors),
    /// the secret and the URI.
    static func showSetup(_ totp: Methods.EnrollFactor.TOTP) {
        if isatty(STDOUT_FILENO) == 1, let code = TerminalQRCode.lines(totp.uri) {
            print(code.joined(separator: "\n"))
        }
        printLines(["Secret:   \(totp.secret)", "URI:      \(totp.uri)"])
    }
}
