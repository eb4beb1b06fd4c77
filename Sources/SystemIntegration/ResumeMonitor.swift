import AuthCore
import CAuthdSystem
import FoundationEssentials
import Glibc
import Logging

/// Tells the daemon when the machine wakes from suspend: logind's `PrepareForSleep(false)` on
/// the system bus, from the connection that owns `org.freedesktop.login1` and no other. Where
/// there is no system bus or no logind (containers, minimal systems), the daemon still notices a
/// resume: its wall-clock timer fires at once for a deadline that passed during sleep.
public struct ResumeMonitor: WakeSignalSource {
    private let logger: Logger
    private let busAddress: String?

    /// Creates a monitor that logs through `logger`, on the system bus, or on the bus at
    /// `busAddress` when given (a test's private one).
    public init(logger: Logger, busAddress: String? = nil) {
        self.logger = logger
        self.busAddress = busAddress
    }

    /// Delivers `.resumed` until cancelled.
    public func run(_ deliver: @escaping @Sendable (WakeSignal) -> Void) async {
        let address = busAddress
        let result = await BlockingWatch.run(name: "authd.logind", { stop, callback, context in
            authd_watch_resume(address, stop, callback, context)
        }) { deliver(.resumed) }
        if result < 0 {
            logger.info("not listening for logind's resume signal (no system bus, or it went away); deadlines that pass during sleep still fire on waking",
                        metadata: ["error": "\(String(cString: strerror(-result)))"])
        }
    }
}
