import AuthCore
import AuthProtocol
import FoundationEssentials
import Logging
import ServiceLifecycle

/// Keeps the service manager informed: `READY=1` once the socket listens and every profile's
/// stored session has been read, a `STATUS=` line whenever it changes, `WATCHDOG=1` while the
/// drivers answer, `STOPPING=1` when a graceful stop begins.
public struct ServiceSupervisor: Service, CustomStringConvertible {
    /// The subscriber id the supervisor takes at every driver. Connection ids count up from 0,
    /// so they never reach it.
    static let subscriber = UInt64.max

    private let drivers: [SessionDriver]
    private let notifier: any ServiceNotifier
    private let listening: AsyncStream<Void>
    private let clock: any WallClock
    private let monotonic: any MonotonicClock
    private let statusInterval: Duration
    private let logger: Logger

    /// Why the supervisor looks at the drivers again.
    private enum Wake: Sendable {
        /// A driver announced an event: its state changed.
        case stateChanged
        /// The periodic tick: time-dependent text ("valid 54 min", "retrying in 30 s") and the watchdog.
        case tick
    }

    /// Creates a supervisor. `listening` yields once the socket accepts connections.
    /// The status line is recomputed on every event of a driver, and every `statusInterval` (or
    /// half the watchdog period, if shorter) for its countdowns; it is sent when its text changed.
    public init(drivers: [SessionDriver], notifier: any ServiceNotifier, listening: AsyncStream<Void>,
                clock: any WallClock = SystemClock(), monotonic: any MonotonicClock = SystemMonotonicClock(), statusInterval: Duration = .seconds(5), logger: Logger) {
        self.drivers = drivers
        self.notifier = notifier
        self.listening = listening
        self.clock = clock
        self.monotonic = monotonic
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
        // Subscribed before the first line is computed, so that no change after it goes unseen.
        // Started by hand, nobody reads status lines: no subscription, no wake-ups.
        let (wakes, wake) = AsyncStream.makeStream(of: Wake.self)
        if notifier.isListening {
            for driver in drivers {
                // Returns once the driver has read its stored session.
                await driver.subscribe(Self.subscriber, acknowledge: {}, send: { _ in wake.yield(.stateChanged) })
            }
        }
        // `status()` returns once the driver has read its stored session.
        var line = await statusLine()
        notifier.notify("READY=1\nSTATUS=\(line)")
        logger.debug("ready", metadata: ["service.status": "\(line)"])
        guard notifier.isListening else {
            // Returning would end the whole service group, so wait for the stop instead.
            try? await gracefulShutdown()
            return
        }
        // Every wake-up asks every driver actor for its status, and their answering is what a
        // watchdog ping vouches for: a wedged driver (or a starved cooperative pool) holds up
        // the loop, the pings stop and systemd restarts the daemon. Events only bring the line
        // forward; the pings keep to the tick.
        let watchdog = notifier.watchdogInterval
        let interval = watchdog.map { min(statusInterval, $0 / 2) } ?? statusInterval
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        let monotonic = self.monotonic
        await withDiscardingTaskGroup { group in
            group.addTask {
                while !Task.isCancelled {
                    try? await monotonic.sleep(for: seconds)
                    wake.yield(.tick)
                }
            }
            for await reason in wakes {
                let next = await statusLine()
                // Stopping: `STATUS=stopping` must stay the last line systemd shows.
                if Task.isCancelled { break }
                var assignments: [String] = []
                if next != line { assignments.append("STATUS=\(next)") }
                if case .tick = reason, watchdog != nil { assignments.append("WATCHDOG=1") }
                line = next
                if !assignments.isEmpty { notifier.notify(assignments.joined(separator: "\n")) }
            }
            group.cancelAll()
        }
        for driver in drivers { await driver.unsubscribe(Self.subscriber) }
    }

    private func statusLine() async -> String {
        var statuses: [SessionStatus] = []
        for driver in drivers { statuses.append(await driver.status()) }
        return ServiceStatusText.line(for: statuses, now: clock.now())
    }
}
