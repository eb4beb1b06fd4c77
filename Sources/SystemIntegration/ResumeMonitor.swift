import AuthCore
import CAuthdSystem
import Foundation
import Logging

/// Tells the daemon when the machine wakes from suspend: logind's `PrepareForSleep(false)` on
/// the system bus. Where there is no system bus or no logind (containers, minimal systems), the
/// daemon still notices a resume: its wall-clock timer fires at once for a deadline that passed
/// during sleep.
public struct ResumeMonitor: WakeSignalSource {
    private let logger: Logger

    /// Creates a monitor that logs through `logger`.
    public init(logger: Logger) { self.logger = logger }

    /// Delivers `.resumed` until cancelled.
    public func run(_ deliver: @escaping @Sendable (WakeSignal) -> Void) async {
        let result = await BlockingWatch.run(name: "authd.logind", authd_watch_resume) { deliver(.resumed) }
        if result < 0 {
            logger.info("not listening for logind's resume signal (no system bus, or it went away); deadlines that pass during sleep still fire on waking",
                        metadata: ["error": "\(String(cString: strerror(-result)))"])
        }
    }
}
