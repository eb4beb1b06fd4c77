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
    var isListening: Bool { true }
    private let sent = Mutex<[String]>([])

    init(watchdog: Duration?) { watchdogInterval = watchdog }

    func notify(_ assignments: String) { sent.withLock { $0.append(assignments) } }

    /// Every assignment sent so far, one per line of each notification.
    var assignments: [String] { sent.withLock { $0.flatMap { $0.split(separator: "\n").map(String.init) } } }

    /// The text of the last `STATUS=` sent.
    var lastStatus: String? { assignments.last { $0.hasPrefix("STATUS=") }.map { String($0.dropFirst("STATUS=".count)) } }

    /// Waits up to `timeout` for an assignment that satisfies `predicate`.
    func waitFor(_ timeout: Duration = .seconds(5), _ predicate: (String) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if assignments.contains(where: predicate) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return assignments.contains(where: predicate)
    }
}

/// A store whose first read waits until the test opens it: a driver that has not answered yet.
final class GatedSessionStore: SessionStore {
    private let inner = InMemorySessionStore()
    private let opened: AsyncStream<Void>
    private let opener: AsyncStream<Void>.Continuation

    init() { (opened, opener) = AsyncStream.makeStream() }

    /// Lets the read through.
    func open() { opener.finish() }

    func load(profile: String) async throws(StoreFailure) -> Session? {
        for await _ in opened {}
        return try await inner.load(profile: profile)
    }
    func save(_ session: Session, profile: String) async throws(StoreFailure) { try await inner.save(session, profile: profile) }
    func delete(profile: String) async throws(StoreFailure) { try await inner.delete(profile: profile) }
}

/// The supervisor against a real session driver: the `STATUS=` line follows every state change
/// at once, not at its next tick, and the watchdog is only fed once the drivers answer.
@Suite struct ServiceSupervisorTests {
    let logger = Logger(label: "authd-test")

    /// Runs a driver and a supervisor in a service group, the socket already listening, until `body` returns.
    private func supervising(store: any SessionStore = InMemorySessionStore(), notifier: RecordingNotifier, statusInterval: Duration,
                             _ body: @Sendable (SessionDriver) async throws -> Void) async throws {
        let driver = SessionDriver(profile: "default", server: "https://example.test", store: store, api: FakeGoTrue(),
                                   policy: RefreshPolicy(jitterFraction: 0), logger: logger)
        let (listening, listened) = AsyncStream.makeStream(of: Void.self)
        let supervisor = ServiceSupervisor(drivers: [driver], notifier: notifier, listening: listening,
                                           statusInterval: statusInterval, logger: logger)
        let services = ServiceGroup(configuration: .init(services: [.init(service: driver), .init(service: supervisor)],
                                                         gracefulShutdownSignals: [], logger: logger))
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
        // A tick of a minute: any line seen within ten seconds (room for a loaded CI machine; a
        // whole suite runs beside this on two cores) was sent because the state changed.
        let notifier = RecordingNotifier(watchdog: .seconds(120))
        try await supervising(notifier: notifier, statusInterval: .seconds(60)) { driver in
            #expect(await notifier.waitFor(.seconds(30)) { $0 == "READY=1" })
            #expect(notifier.assignments.contains("STATUS=sign-in needed: authctl login"), "\(notifier.assignments)")

            let signedIn = await ProfileServices(session: driver).accounts.signIn(.password(.email("a@example.com"), password: "correct horse"))
            #expect((try? signedIn.get()) != nil)
            #expect(await notifier.waitFor(.seconds(10)) { $0.hasPrefix("STATUS=signed in as a@example.com, token valid") },
                    "\(notifier.assignments)")

            _ = await driver.signOut(scope: .local)
            #expect(await notifier.waitFor(.seconds(10)) { _ in notifier.lastStatus?.hasPrefix("sign-in needed") == true },
                    "\(notifier.assignments)")
            // Nothing but the state changes was sent: no tick came, so no watchdog ping either.
            #expect(!notifier.assignments.contains("WATCHDOG=1"), "\(notifier.assignments)")
        }
        #expect(notifier.assignments.suffix(2) == ["STOPPING=1", "STATUS=stopping"], "\(notifier.assignments)")
    }

    @Test func theWatchdogIsFedOnlyOnceTheDriversAnswer() async throws {
        let store = GatedSessionStore()
        let notifier = RecordingNotifier(watchdog: .milliseconds(200))
        try await supervising(store: store, notifier: notifier, statusInterval: .seconds(60)) { _ in
            // The driver is still reading its stored session: no READY, and no ping however long.
            try await Task.sleep(for: .milliseconds(500))
            #expect(notifier.assignments.isEmpty, "\(notifier.assignments)")

            store.open()
            #expect(await notifier.waitFor(.seconds(30)) { $0 == "READY=1" })
            // Half the watchdog period: several pings within a second (a few, on a loaded machine).
            #expect(await notifier.waitFor(.seconds(10)) { _ in notifier.assignments.filter { $0 == "WATCHDOG=1" }.count >= 3 },
                    "\(notifier.assignments)")
        }
    }
}
