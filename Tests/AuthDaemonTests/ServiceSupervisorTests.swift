import AuthCore
import AuthDaemon
import AuthTestSupport
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Testing

/// A `ServiceNotifier` that records what it is sent, for a supervisor that believes systemd listens.
final class RecordingNotifier: ServiceNotifier {
    let watchdogInterval: Duration?
    /// Whether systemd listens: always. Asked for the first time just before the supervisor
    /// subscribes to the drivers, so the test can tell that it has got that far.
    var isListening: Bool {
        asked.withLock { $0 = true }
        return true
    }
    private let sent = Mutex<[String]>([])
    private let asked = Mutex(false)

    /// Whether the supervisor has asked `isListening`.
    var wasAskedWhetherListening: Bool { asked.withLock { $0 } }

    init(watchdog: Duration?) { watchdogInterval = watchdog }

    func notify(_ assignments: String) { sent.withLock { $0.append(assignments) } }

    /// Every assignment sent so far, one per line of each notification.
    var assignments: [String] { sent.withLock { $0.flatMap { $0.split(separator: "\n").map(String.init) } } }

    /// How many `WATCHDOG=1` were sent.
    var pings: Int { assignments.filter { $0 == "WATCHDOG=1" }.count }

    /// The text of the last `STATUS=` sent.
    var lastStatus: String? { assignments.last { $0.hasPrefix("STATUS=") }.map { String($0.dropFirst("STATUS=".count)) } }

    /// Waits up to 30 s (a bound only a failing test reaches) for an assignment that satisfies `predicate`.
    func waitFor(_ predicate: (String) -> Bool) async -> Bool {
        await eventually(every: .milliseconds(5)) { assignments.contains(where: predicate) }
    }
}

/// A store whose first read waits until the test opens it: a driver that has not answered yet.
final class GatedSessionStore: SessionStore {
    private let inner = InMemorySessionStore()
    private let opened: AsyncStream<Void>
    private let opener: AsyncStream<Void>.Continuation
    private let reading = Mutex(false)

    init() { (opened, opener) = AsyncStream.makeStream() }

    /// Lets the read through.
    func open() { opener.finish() }

    /// Whether a read has begun (and waits, until `open`).
    var isReading: Bool { reading.withLock { $0 } }

    func load(profile: String) async throws(StoreFailure) -> Session? {
        reading.withLock { $0 = true }
        for await _ in opened {}
        return try await inner.load(profile: profile)
    }
    func save(_ session: Session, profile: String) async throws(StoreFailure) { try await inner.save(session, profile: profile) }
    func delete(profile: String) async throws(StoreFailure) { try await inner.delete(profile: profile) }
}

/// A monotonic clock that moves only when the test moves it: a sleep ends once `advance` has
/// brought the clock to its end (or its task is cancelled), so the supervisor ticks exactly when
/// the test says.
final class SteppedClock: MonotonicClock {
    private struct Sleeper {
        let until: TimeInterval
        let wake: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var now: TimeInterval = 0
        var sleepers: [UInt64: Sleeper] = [:]
        var nextSleeper: UInt64 = 0
    }
    private let state = Mutex(State())

    func seconds() -> TimeInterval { state.withLock { $0.now } }

    func sleep(for seconds: TimeInterval) async throws {
        let id = state.withLock { state in
            defer { state.nextSleeper += 1 }
            return state.nextSleeper
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (wake: CheckedContinuation<Void, any Error>) in
                let now: Bool = state.withLock { state in
                    guard seconds > 0, !Task.isCancelled else { return true }
                    state.sleepers[id] = Sleeper(until: state.now + seconds, wake: wake)
                    return false
                }
                if now { Task.isCancelled ? wake.resume(throwing: CancellationError()) : wake.resume() }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.wake.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward and ends every sleep that is then over.
    func advance(by seconds: TimeInterval) {
        let due = state.withLock { state in
            state.now += seconds
            let due = state.sleepers.filter { $0.value.until <= state.now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.map(\.wake)
        }
        for wake in due { wake.resume() }
    }

    /// How many sleeps are waiting for the clock.
    var sleeping: Int { state.withLock { $0.sleepers.count } }

    /// Waits (in real time, up to 30 s: a bound only a failing test reaches) until some sleep waits for the clock.
    func waitForSleeper() async -> Bool {
        await eventually(every: .milliseconds(5)) { sleeping > 0 }
    }
}

/// The supervisor against a real session driver: the `STATUS=` line follows every state change
/// at once, not at its next tick, and the watchdog is only fed once the drivers answer.
@Suite struct ServiceSupervisorTests {
    let logger = Logger(label: "authd-test")

    /// Runs a driver and a supervisor in a service group, the socket already listening, until `body` returns.
    private func supervising(store: any SessionStore = InMemorySessionStore(), notifier: RecordingNotifier, ticks: SteppedClock,
                             statusInterval: Duration, _ body: @Sendable (SessionDriver) async throws -> Void) async throws {
        let driver = SessionDriver(profile: "default", server: "https://example.test", store: store, api: FakeGoTrue(),
                                   policy: RefreshPolicy(jitterFraction: 0), logger: logger)
        let (listening, listened) = AsyncStream.makeStream(of: Void.self)
        let supervisor = ServiceSupervisor(drivers: [driver], notifier: notifier, listening: listening,
                                           monotonic: ticks, statusInterval: statusInterval, logger: logger)
        var configuration = ServiceGroupConfiguration(services: [.init(service: driver), .init(service: supervisor)],
                                                      gracefulShutdownSignals: [], logger: logger)
        // As in `DaemonHarness`: a shutdown that does not end is escalated to cancellation.
        configuration.maximumGracefulShutdownDuration = .seconds(30)
        let services = ServiceGroup(configuration: configuration)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            listened.yield()
            do {
                try await body(driver)
            } catch {
                await services.triggerGracefulShutdown()
                throw error
            }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
        }
    }

    @Test func theStatusLineFollowsSignInAndSignOutAtOnceNotAtTheNextTick() async throws {
        // The supervisor's clock never moves: no tick comes, so every line was sent because the
        // state changed. The bounds below only end a failing test.
        let notifier = RecordingNotifier(watchdog: .seconds(120))
        try await supervising(notifier: notifier, ticks: SteppedClock(), statusInterval: .seconds(60)) { driver in
            #expect(await notifier.waitFor { $0 == "READY=1" })
            #expect(notifier.assignments.contains("STATUS=sign-in needed: authctl login"), "\(notifier.assignments)")

            let signedIn = await ProfileServices(session: driver).accounts.signIn(.password(.email("a@example.com"), password: "correct horse"))
            #expect((try? signedIn.get()) != nil)
            #expect(await notifier.waitFor { $0.hasPrefix("STATUS=signed in as a@example.com, token valid") },
                    "\(notifier.assignments)")

            _ = await driver.signOut(scope: .local)
            #expect(await notifier.waitFor { _ in notifier.lastStatus?.hasPrefix("sign-in needed") == true },
                    "\(notifier.assignments)")
            // Nothing but the state changes was sent: no tick came, so no watchdog ping either.
            #expect(!notifier.assignments.contains("WATCHDOG=1"), "\(notifier.assignments)")
        }
        #expect(notifier.assignments.suffix(2) == ["STOPPING=1", "STATUS=stopping"], "\(notifier.assignments)")
    }

    @Test func theWatchdogIsFedOnlyOnceTheDriversAnswer() async throws {
        let store = GatedSessionStore()
        let notifier = RecordingNotifier(watchdog: .milliseconds(200))
        let ticks = SteppedClock()
        try await supervising(store: store, notifier: notifier, ticks: ticks, statusInterval: .seconds(60)) { _ in
            // The driver is reading its stored session, and the supervisor has got as far as the
            // drivers (it asks whether systemd listens just before it subscribes to them).
            #expect(await eventually(every: .milliseconds(5)) { store.isReading && notifier.wasAskedWhetherListening })
            // No READY, and no ping however long: an hour on the supervisor's clock, and not one
            // tick waits to be due.
            ticks.advance(by: 3600)
            #expect(ticks.sleeping == 0)
            #expect(notifier.assignments.isEmpty, "\(notifier.assignments)")

            store.open()
            #expect(await notifier.waitFor { $0 == "READY=1" })
            #expect(notifier.assignments.first == "READY=1", "\(notifier.assignments)")
            // A tick every half watchdog period (0.1 s), and one ping for each tick, no more.
            for tick in 1...3 {
                #expect(await ticks.waitForSleeper(), "no tick waits for the clock")
                ticks.advance(by: 0.1)
                #expect(await notifier.waitFor { _ in notifier.pings >= tick }, "\(notifier.assignments)")
                #expect(notifier.pings == tick, "\(notifier.assignments)")
            }
        }
    }
}
