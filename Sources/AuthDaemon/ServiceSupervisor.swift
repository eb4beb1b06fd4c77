import AuthProtocol
import Foundation
import Logging
import ServiceLifecycle

/// Keeps the service manager informed: `READY=1` once the socket listens and every profile's
/// stored session has been read, a `STATUS=` line whenever it changes, `WATCHDOG=1` while the
/// drivers answer, `STOPPING=1` when a graceful stop begins.
public struct ServiceSupervisor: Service, CustomStringConvertible {
    private let drivers: [SessionDriver]
    private let notifier: any ServiceNotifier
    private let listening: AsyncStream<Void>
    private let clock: any WallClock
    private let statusInterval: Duration
    private let logger: Logger

    /// Creates a supervisor. `listening` yields once the socket accepts connections.
    /// The status line is recomputed every `statusInterval` (or half the watchdog period, if
    /// shorter) and sent when its text changed.
    public init(drivers: [SessionDriver], notifier: any ServiceNotifier, listening: AsyncStream<Void>,
                clock: any WallClock = SystemClock(), statusInterval: Duration = .seconds(5), logger: Logger) {
        self.drivers = drivers
        self.notifier = notifier
        self.listening = listening
        self.clock = clock
        self.statusInterval = statusInterval
        self.logger = logger
    }

    /// The name service-lifecycle logs.
    public var description: String { "ServiceSupervisor" }

    /// Reports until cancelled or a graceful stop begins.
    public func run() async {
        let notifier = self.notifier
        await withGracefulShutdownHandler {
            await cancelWhenGracefulShutdown {
                await supervise()
            }
        } onGracefulShutdown: {
            notifier.notify("STOPPING=1\nSTATUS=stopping")
        }
    }

    private func supervise() async {
        for await _ in listening { break }
        guard !Task.isCancelled else { return }
        // `status()` returns once the driver has read its stored session.
        var line = await statusLine()
        notifier.notify("READY=1\nSTATUS=\(line)")
        logger.debug("ready", metadata: ["service.status": "\(line)"])
        // Started by hand: nobody reads status lines, so do not wake up every few seconds for
        // them. Returning would end the whole service group, so wait for the stop instead.
        guard notifier.isListening else {
            try? await gracefulShutdown()
            return
        }
        // One loop for both: computing the line asks every driver actor, and their answering is
        // what a watchdog ping vouches for, so a wedged driver (or a starved cooperative pool)
        // stops the pings and systemd restarts the daemon.
        let watchdog = notifier.watchdogInterval
        let tick = watchdog.map { min(statusInterval, $0 / 2) } ?? statusInterval
        while !Task.isCancelled {
            try? await Task.sleep(for: tick)
            let next = await statusLine()
            var assignments: [String] = []
            if next != line { assignments.append("STATUS=\(next)") }
            if watchdog != nil { assignments.append("WATCHDOG=1") }
            line = next
            if !assignments.isEmpty { notifier.notify(assignments.joined(separator: "\n")) }
        }
    }

    private func statusLine() async -> String {
        var statuses: [SessionStatus] = []
        for driver in drivers { statuses.append(await driver.status()) }
        return ServiceStatusText.line(for: statuses, now: clock.now())
    }
}
