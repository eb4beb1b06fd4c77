import AuthCore
import CAuthdSystem
import FoundationEssentials
import Glibc
import Logging

/// Opens the sign-in page in the user's browser from the daemon. First through the desktop
/// portal (`org.freedesktop.portal.OpenURI` on the session bus), which starts the browser in the
/// user's session: a browser that authd started itself would run inside authd's service, under
/// its sandbox (`NoNewPrivileges`, its system-call filter, no namespaces: a Snap or Flatpak
/// browser, or Chromium's own sandbox, cannot start there) and in its cgroup (a restart of
/// authd would end it). Where no portal answers, as desktop tools do without one
/// (`BrowserCommand`: `$BROWSER`, else `xdg-open`), with the daemon's environment.
public struct DesktopBrowserOpener: BrowserOpener {
    private let environment: [String: String]
    private let busAddress: String?
    private let logger: Logger

    /// An opener with `environment` (the daemon's own), asking the portal on the bus at
    /// `busAddress` (the user's session bus when nil).
    public init(environment: [String: String] = ProcessInfo.processInfo.environment, busAddress: String? = nil, logger: Logger) {
        self.environment = environment
        self.busAddress = busAddress
        self.logger = logger
    }

    /// Whether there is a session bus for the portal, a display or a `$BROWSER`.
    public var canOpen: Bool {
        busAddress != nil || !(environment["DBUS_SESSION_BUS_ADDRESS"] ?? "").isEmpty || BrowserCommand.hasBrowser(environment: environment)
    }

    /// The portal, else each way `BrowserCommand` names in turn; true once one has started (or
    /// taken) it. Each shell exits as soon as it has left the browser running, so this waits only
    /// for that.
    public func open(_ url: String) async -> Bool {
        let address = busAddress
        let portal = await BlockingWatch.run(name: "authd.portal") { _ in authd_open_uri_by_portal(address, url) }
        if portal == 0 { return true }
        logger.debug("no desktop portal opened the sign-in page; starting the browser from authd", metadata: ["error": "\(String(cString: strerror(-portal)))"])
        guard BrowserCommand.hasBrowser(environment: environment) else { return false }
        for command in BrowserCommand.candidates(for: url, environment: environment) {
            guard let shell = SpawnedProcess(command, environment: environment) else { continue }
            if await shell.exitStatus() == 0 { return true }
        }
        return false
    }
}
