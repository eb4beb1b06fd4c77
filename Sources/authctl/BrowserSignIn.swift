import AuthdClient
import AuthProtocol
import Foundation

/// A browser sign-in with PKCE, driven from the terminal. authd keeps the code verifier; this side
/// opens the browser and brings the redirect back, either through its own loopback listener or,
/// for an app's custom scheme, by waiting while `authctl open-url` hands the redirect to authd.
struct BrowserSignIn {
    let connection: AuthdConnection
    let profile: String?
    let provider: String
    let scopes: String?
    let redirectURL: String?
    let openBrowser: Bool
    let timeout: TimeInterval

    func run() throws -> SessionStatus {
        let listener = redirectURL == nil ? try LoopbackRedirectListener() : nil
        let redirect = redirectURL ?? listener!.redirectURL
        let flow = try connection.call(Methods.OAuthBegin.self,
                                       .init(profile: profile, provider: provider, redirectTo: redirect, scopes: scopes))
        let deadline = Date().addingTimeInterval(min(timeout, TimeInterval(flow.expiresIn)))
        if openBrowser, BrowserLauncher.open(flow.url) {
            note("Opened your browser to sign in with \(provider). If it did not open, visit:\n  \(flow.url)")
        } else {
            note("Open this URL in a browser to sign in with \(provider):\n  \(flow.url)")
        }
        note("Waiting for the sign-in to finish (up to \(Int(deadline.timeIntervalSinceNow.rounded())) s; Ctrl-C to cancel)…")

        guard let listener else {
            // A custom scheme: the desktop's URL handler runs `authctl open-url`, which completes
            // the flow in authd; this call returns when it has.
            let waited = Result { () throws(AuthdClientError) in
                try connection.call(Methods.OAuthWait.self, .init(profile: profile, flowID: flow.flowID),
                                    timeout: deadline.timeIntervalSinceNow + 5)
            }
            if case .failure(.timedOut) = waited {
                throw Failure("timed out waiting for the browser to come back to \(redirect)", .browserSignInFailed)
            }
            return try waited.get()
        }
        guard let callback = listener.waitForCallback(until: deadline) else {
            throw Failure("timed out waiting for the browser sign-in; run the command again (with --no-browser to copy the URL by hand)", .browserSignInFailed)
        }
        let completed = Result { () throws(AuthdClientError) in
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

    private static func html(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}

/// Opens a URL the way desktop tools do: each command in `$BROWSER` (colon-separated, `%s` for
/// the URL), else `xdg-open`.
enum BrowserLauncher {
    /// Starts the browser without waiting for it; false when no command could be started.
    static func open(_ url: String) -> Bool {
        let browser = ProcessInfo.processInfo.environment["BROWSER"].map { $0.split(separator: ":").map(String.init) } ?? []
        for command in browser + ["xdg-open"] where !command.isEmpty {
            let line = command.contains("%s") ? command.replacingOccurrences(of: "%s", with: "\"$1\"") : "\(command) \"$1\""
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "command -v \(command.split(separator: " ").first ?? "") >/dev/null 2>&1 || exit 127; \(line) >/dev/null 2>&1 &", "sh", url]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { continue }
            process.waitUntilExit()
            if process.terminationStatus == 0 { return true }
        }
        return false
    }
}
