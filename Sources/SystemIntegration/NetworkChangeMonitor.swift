import AuthCore
import CAuthdSystem
import FoundationEssentials
import Glibc
import Logging

/// Tells the daemon when the network may be back, from rtnetlink: a link that came up, an
/// address or a route that was added. Needs no privileges and no D-Bus service (NetworkManager
/// or systemd-networkd need not be running), so it works the same on every desktop.
public struct NetworkChangeMonitor: WakeSignalSource {
    private let logger: Logger

    /// Creates a monitor that logs through `logger`.
    public init(logger: Logger) { self.logger = logger }

    /// Delivers `.networkChanged` until cancelled.
    public func run(_ deliver: @escaping @Sendable (WakeSignal) -> Void) async {
        let result = await BlockingWatch.run(name: "authd.netlink", authd_watch_network) { deliver(.networkChanged) }
        if result < 0 {
            logger.notice("cannot watch the network; offline retries wait out their backoff",
                          metadata: ["error": "\(String(cString: strerror(-result)))"])
        }
    }
}
