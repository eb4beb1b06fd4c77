import AuthCore
import AuthTestSupport
import Foundation
import Logging
import Synchronization
import SystemIntegration
import Testing

/// logind's resume signal over a real D-Bus (a private dbus-daemon standing in for the system
/// bus), sent by a stand-in logind and by impostors.
@Suite struct ResumeMonitorTests {
    /// Counts the resumes a monitor delivers.
    private final class Resumes: Sendable {
        private let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        func add() { count.withLock { $0 += 1 } }

        /// Waits up to 30 s (the whole suite runs beside this on two cores) until `expected`
        /// resumes were delivered; true when they were.
        func wait(for expected: Int) async -> Bool {
            await eventually(every: .milliseconds(20)) { value >= expected }
        }
    }

    private let logind = "org.freedesktop.login1"

    /// The monitor's connection: it runs in this process, so it is the one here that `peer` and
    /// `excluded` are not. Waits up to 30 s for it (the whole suite runs beside this on two cores).
    private func monitorConnection(seenBy peer: BusPeer, excluding excluded: Set<String> = []) async -> String? {
        var name: String?
        _ = await eventually(every: .milliseconds(20)) {
            name = peer.connection(ofProcess: getpid(), excluding: excluded)
            return name != nil
        }
        return name
    }

    @Test func onlyTheConnectionThatOwnsLogindsNameIsHeard() async throws {
        let bus = try await PrivateBus.start()
        let logind = try BusPeer(address: bus.address, owning: self.logind)
        let impostor = try BusPeer(address: bus.address, owning: nil)
        let resumes = Resumes()
        let watching = Task {
            await ResumeMonitor(logger: Logger(label: "test"), busAddress: bus.address).run { _ in resumes.add() }
        }
        defer { watching.cancel() }
        let monitor = try #require(await monitorConnection(seenBy: impostor, excluding: [logind.uniqueName]))

        // The real logind is heard. Addressed to the monitor, so that it cannot be lost before the
        // monitor's matches are in place (it is read only after); once heard, they are.
        try logind.sendPrepareForSleep(true, to: monitor)
        try logind.sendPrepareForSleep(false, to: monitor)
        #expect(await resumes.wait(for: 1))

        // Another connection sends the same signal: to everyone, straight to the monitor's
        // connection (dbus-daemon delivers that whatever the monitor's matches say), and after a
        // forged NameOwnerChanged that hands it the name.
        try impostor.sendPrepareForSleep(false)
        try impostor.sendPrepareForSleep(false, to: monitor)
        try impostor.sendNameOwnerChanged(name: self.logind, oldOwner: logind.uniqueName, newOwner: impostor.uniqueName, to: monitor)
        try impostor.sendPrepareForSleep(false, to: monitor)
        // The monitor answers a ping only once it has handled all the impostor sent before it
        // (one sender's messages arrive in order, and are handled in order): nothing more was
        // delivered by then.
        try impostor.ping(monitor)
        #expect(resumes.value == 1, "a signal from a connection that does not own \(self.logind) was taken for a resume")
        // The real logind is still heard (the forged NameOwnerChanged did not take its name), and only it.
        try logind.sendPrepareForSleep(false)
        #expect(await resumes.wait(for: 2))
        try logind.ping(monitor)
        #expect(resumes.value == 2, "one signal from logind was taken for more than one resume")

        // logind restarts: its successor is heard, the connection that gave up the name is not.
        try logind.releaseName(self.logind)
        let successor = try BusPeer(address: bus.address, owning: self.logind)
        try logind.sendPrepareForSleep(false, to: monitor)
        try logind.ping(monitor)
        #expect(resumes.value == 2, "a signal from the name's former owner was taken for a resume")
        try successor.sendPrepareForSleep(false)
        #expect(await resumes.wait(for: 3))
        try successor.ping(monitor)
        #expect(resumes.value == 3, "one signal from the successor was taken for more than one resume")

        watching.cancel()
        await watching.value
    }

    @Test func aMonitorStartedBeforeLogindHearsItOnceItComes() async throws {
        let bus = try await PrivateBus.start()
        let impostor = try BusPeer(address: bus.address, owning: nil)
        let resumes = Resumes()
        let watching = Task {
            await ResumeMonitor(logger: Logger(label: "test"), busAddress: bus.address).run { _ in resumes.add() }
        }
        defer { watching.cancel() }
        let monitor = try #require(await monitorConnection(seenBy: impostor))
        // With nobody owning the name, nobody is heard.
        try impostor.sendPrepareForSleep(false, to: monitor)
        try impostor.ping(monitor)
        #expect(resumes.value == 0, "a signal was taken for a resume while nobody owned \(self.logind)")

        let logind = try BusPeer(address: bus.address, owning: self.logind)
        try logind.sendPrepareForSleep(false, to: monitor)
        #expect(await resumes.wait(for: 1))
        try logind.ping(monitor)
        #expect(resumes.value == 1)

        watching.cancel()
        await watching.value
    }
}
