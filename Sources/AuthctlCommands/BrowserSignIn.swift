import AuthCore
import AuthdClient
import AuthProtocol
import FoundationEssentials
import FoundationGaps
#if canImport(Glibc)
import Glibc
#endif

/// A browser sign-in with PKCE, driven from the terminal. authd keeps the code verifier; this side
/// opens the browser and brings the redirect back, either through its own loopback listener or,
/// for an app's custom scheme, by waiting while `authctl open-url` hands the redirect to authd.
/// The same drives linking an identity, enterprise SSO and an emailed link (which has no URL to
/// open: the user opens the email).
struct BrowserSignIn {
    /// A started flow: its id, the URL to open (nil for an emailed link) and its lifetime.
    struct Started {
        var flowID: String
        var url: String?
        var expiresIn: Int

        /// A flow authd started with a URL to open (`oauth.begin`, `sso.begin`, `identities.link`).
        init(_ begun: Methods.OAuthBegin.Result) {
            self.init(flowID: begun.flowID, url: begun.url, expiresIn: begun.expiresIn)
        }

        init(flowID: String, url: String?, expiresIn: Int) {
            self.flowID = flowID
            self.url = url
            self.expiresIn = expiresIn
        }
    }

    let connection: AuthdConnection
    let profile: String?
    /// What the browser does, for messages: "sign in with github", "link github", …
    let purpose: String
    let redirectURL: String?
    let openBrowser: Bool
    let timeout: TimeInterval
    /// Starts the flow in authd with the redirect address.
    let start: (String) throws -> Started

    /// A sign-in at an OAuth provider.
    static func provider(_ provider: String, scopes: String?, connection: AuthdConnection, profile: String?, redirectURL: String?,
                         openBrowser: Bool, timeout: TimeInterval) -> BrowserSignIn {
        BrowserSignIn(connection: connection, profile: profile, purpose: "sign in with \(provider)", redirectURL: redirectURL,
                      openBrowser: openBrowser, timeout: timeout) { redirect in
            Started(try connection.call(Methods.OAuthBegin.self, .init(profile: profile, provider: provider, redirectTo: redirect, scopes: scopes)))
        }
    }

    /// An emailed link: `request` (a `session.sendCode` without its redirect) sends it, `sent`
    /// says where it went, and the link, opened on this computer, completes the flow.
    static func emailLink(_ request: Methods.SendCode.Parameters, purpose: String, connection: AuthdConnection, redirectURL: String?,
                          timeout: TimeInterval, sent: @escaping (Methods.SendCode.Result) -> String) -> BrowserSignIn {
        BrowserSignIn(connection: connection, profile: request.profile, purpose: purpose, redirectURL: redirectURL, openBrowser: false,
                      timeout: timeout) { redirect in
            var linked = request
            linked.redirectTo = redirect
            let answer = try connection.call(Methods.SendCode.self, linked, timeout: 60)
            note(sent(answer))
            // authd keeps a flow five minutes, as GoTrue keeps its flow state.
            return Started(flowID: answer.flowID ?? "", url: nil, expiresIn: 300)
        }
    }

    func run() throws -> SessionStatus {
        let listener = redirectURL == nil ? try LoopbackRedirectListener() : nil
        let redirect = redirectURL ?? listener!.redirectURL
        let flow = try start(redirect)
        let deadline = Date().addingTimeInterval(min(timeout, TimeInterval(flow.expiresIn)))
        if let url = flow.url {
            try refuseUnopenable(url)
            if openBrowser, BrowserLauncher.open(url) {
                note("Opened your browser to \(purpose). If it did not open, visit:\n  \(url)")
            } else {
                note("Open this URL in a browser to \(purpose):\n  \(url)")
            }
        }
        note("Waiting for the \(flow.url == nil ? "link" : "browser") to come back (up to \(Int(deadline.timeIntervalSinceNow.rounded())) s; Ctrl-C to cancel)…")

        guard let listener else {
            // A custom scheme: the desktop's URL handler runs `authctl open-url`, which completes
            // the flow in authd; this call returns when it has.
            let waited = Result { () throws(AuthdError) in
                try connection.call(Methods.OAuthWait.self, .init(profile: profile, flowID: flow.flowID),
                                    timeout: deadline.timeIntervalSinceNow + 5)
            }
            if case .failure(.timedOut) = waited {
                throw Failure("timed out waiting for the browser to come back to \(redirect)", .browserSignInFailed)
            }
            return try waited.get()
        }
        guard let callback = listener.waitForCallback(flowID: flow.flowID, until: deadline) else {
            throw Failure("timed out waiting for the browser to \(purpose); run the command again\(flow.url == nil ? "" : " (with --no-browser to copy the URL by hand)")",
                          .browserSignInFailed)
        }
        let completed = Result { () throws(AuthdError) in
            try connection.call(Methods.OAuthComplete.self, .init(profile: profile, flowID: flow.flowID, callbackURL: callback.url), timeout: 60)
        }
        switch completed {
        case .success(let status):
            callback.respond(title: "Signed in", message: "You are signed in as \(Self.html(status.user?.displayName ?? "?")). You can close this tab.")
            return status
        case .failure(let error):
            let failure = Failure(error)
            callback.respond(title: "Sign-in failed", message: "\(Self.html(failure.message)) You can close this tab.")
            throw failure
        }
    }

    /// Throws when `url` is not one a browser may be sent to (`BrowserURLRule`), before it is
    /// opened or printed. authd refuses such an address already; this keeps a daemon that does not
    /// from having authctl hand a `file:` URL to `$BROWSER`. The project URL, which decides
    /// whether plain http is fine, is the daemon's.
    private func refuseUnopenable(_ url: String) throws {
        let project = try connection.call(Methods.Status.self, ProfileParameters(profile: profile), timeout: 60).server
        if let refusal = BrowserURLRule.refusal(of: url, projectURL: project) {
            throw Failure("the address to \(purpose) was not opened: \(refusal)", .browserSignInFailed)
        }
    }

    private static func html(_ text: String) -> String {
        text.escapingMarkup
    }
}

/// Opens a URL the way desktop tools do (`BrowserCommand`: each command in `$BROWSER`, else
/// `xdg-open`).
enum BrowserLauncher {
    /// Starts the browser without waiting for it; false when no command could be started.
    static func open(_ url: String) -> Bool {
        BrowserCommand.candidates(for: url, environment: ProcessInfo.processInfo.environment).contains { run($0) == 0 }
    }

    /// Runs `arguments` with standard streams on /dev/null and returns its exit status. Plain
    /// posix_spawn and waitpid: Foundation's Process could miss the exit of a shell whose
    /// background child lives on.
    private static func run(_ arguments: [String]) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in 0...2 { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        var argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // A clean signal state (Chromium waits forever for children whose SIGCHLD is blocked).
        var pid: pid_t = 0
        guard CleanSpawnAttributes.with({ posix_spawn(&pid, "/bin/sh", &actions, $0, &argv, environ) }) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return -1 }
        }
        // WIFEXITED / WEXITSTATUS, which Swift does not import.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : -1
    }
}
