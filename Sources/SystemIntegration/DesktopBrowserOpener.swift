import AuthCore
import FoundationEssentials

/// Opens the sign-in page in the user's browser from the daemon, as desktop tools do
/// (`BrowserCommand`: `$BROWSER`, else `xdg-open`), with the daemon's environment: under a
/// desktop session the service manager's, which holds the session's display.
public struct DesktopBrowserOpener: BrowserOpener {
    private let environment: [String: String]

    /// An opener with `environment` (the daemon's own).
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    /// Whether the daemon's environment has a display or a `$BROWSER`.
    public var canOpen: Bool { BrowserCommand.hasBrowser(environment: environment) }

    /// Tries each way in turn; true once one has started a browser. Each shell exits as soon
    /// as it has left the browser running, so this waits only for that.
    public func open(_ url: String) async -> Bool {
        guard canOpen else { return false }
        for command in BrowserCommand.candidates(for: url, environment: environment) {
            guard let shell = SpawnedProcess(command, environment: environment) else { continue }
            if await shell.exitStatus() == 0 { return true }
        }
        return false
    }
}
