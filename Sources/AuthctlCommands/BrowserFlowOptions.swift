import ArgumentParser

/// The options of every flow that comes back from a browser (a provider's or SSO sign-in, an
/// emailed link, linking an identity): where it comes back and how long authctl waits.
struct BrowserFlowOptions: ParsableArguments {
    @Option(name: .customLong("redirect-url"), help: "An app's custom-scheme callback (e.g. myapp://login-callback) instead of the loopback listener.")
    var redirectURL: String?

    @Option(help: "Seconds to wait for the browser or the link (1 to 300: the server keeps a flow 5 minutes).")
    var timeout: Int = 300

    /// Whether any was given.
    var areSet: Bool { redirectURL != nil || timeout != 300 }

    func validate() throws {
        if timeout < 1 || timeout > 300 { throw ValidationError("--timeout must be between 1 and 300 seconds (the server keeps a flow 5 minutes)") }
    }
}
