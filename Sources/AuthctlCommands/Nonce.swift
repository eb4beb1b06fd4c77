import ArgumentParser
import AuthdClient
import AuthProtocol
import FoundationEssentials

/// `authctl nonce`: a nonce for an ID-token sign-in.
struct Nonce: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make a nonce for an ID-token sign-in: give the SHA-256 to Apple or Google, the raw nonce to 'authctl login --nonce'.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print {\"nonce\":…,\"nonce_sha256\":…} as one JSON object.")
    var json = false

    func run() throws {
        try runReporting {
            try printAnswer(try global.call(Methods.MakeNonce.self), json: json) { nonce in ["nonce:  \(nonce.nonce)", "sha256: \(nonce.nonceSHA256)"] }
        }
    }
}

/// `authctl open-url`: hand a browser redirect to authd (the desktop's handler for an app's scheme).
struct OpenURL: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open-url",
        abstract: "Complete a browser sign-in with the URL it was redirected to (run by the x-scheme-handler desktop entry).",
        discussion: """
        Exit 8 when no sign-in waits for that URL or the provider refused. A URL that carries a credential \
        (an email template's token_hash, or session tokens) is refused unused, with exit 8 and what to change \
        in the template: every user can read this command line. An error that nothing ties to your sign-in \
        ends nothing.
        """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The redirect URL, e.g. myapp://login-callback?code=….")
    var url: String

    func run() throws {
        try runReporting {
            try reportSignedIn(try global.connect().call(Methods.OAuthComplete.self, .init(profile: global.profile, callbackURL: url), timeout: 60),
                               json: false)
        }
    }
}
