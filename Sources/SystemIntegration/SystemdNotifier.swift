import AuthCore
import CSystemd
import FoundationEssentials

/// `ServiceNotifier` over `sd_notify`: talks to `$NOTIFY_SOCKET` when systemd (or a test)
/// set it, and is silent otherwise.
public struct SystemdNotifier: ServiceNotifier {
    /// The watchdog period from `$WATCHDOG_USEC` (checked against `$WATCHDOG_PID`), read at start.
    public let watchdogInterval: Duration?

    /// Whether `$NOTIFY_SOCKET` was set at start.
    public let isListening: Bool

    /// Reads the notification socket and watchdog settings from the environment.
    public init() {
        isListening = !(ProcessInfo.processInfo.environment["NOTIFY_SOCKET"] ?? "").isEmpty
        var microseconds: UInt64 = 0
        // WATCHDOG_USEC is whatever the environment says: a value past Int64 (or past a day, far
        // beyond any watchdog a service manager sets) means no usable watchdog, not a trap.
        let enabled = sd_watchdog_enabled(0, &microseconds) > 0
        watchdogInterval = enabled && microseconds <= 86_400_000_000 ? .microseconds(Int64(microseconds)) : nil
    }

    /// Sends `assignments`; failures are ignored, as sd_notify's callers are meant to.
    public func notify(_ assignments: String) {
        _ = sd_notify(0, assignments)
    }
}
