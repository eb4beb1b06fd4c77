/// The service manager's notification channel (`sd_notify` under systemd), behind a port so the
/// supervisor can be tested without one.
public protocol ServiceNotifier: Sendable {
    /// Sends newline-separated `KEY=value` assignments (`READY=1`, `STATUS=…`, `WATCHDOG=1`, `STOPPING=1`).
    func notify(_ assignments: String)
    /// How often the service manager expects `WATCHDOG=1`, or nil when it does not watch.
    var watchdogInterval: Duration? { get }
    /// Whether anyone listens; when not, the supervisor does not wake up to compute status lines.
    var isListening: Bool { get }
}

/// A notifier for a daemon started by hand: says nothing to anyone.
public struct NoServiceNotifier: ServiceNotifier {
    /// Creates the notifier.
    public init() {}
    /// Does nothing.
    public func notify(_ assignments: String) {}
    /// Nil: nobody watches.
    public var watchdogInterval: Duration? { nil }
    /// False.
    public var isListening: Bool { false }
}
