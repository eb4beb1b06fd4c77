import AuthCore
import AuthDaemon
import AuthProtocol
import AuthSocketServer
import AuthTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// The gate in front of token requests: waiting, deciding, remembering, refusing.
@Suite struct AppAccessGateTests {
    private let app = ClientIdentity(executable: "/usr/bin/some-app", appID: nil)
    private let authctl = ClientIdentity(executable: "/opt/authd/bin/authctl", appID: nil)

    /// The gate's wall clock: its times are what `apps.list` reports as last used.
    private let wall = ManualWallClock(Date(timeIntervalSince1970: 1_800_000_000))

    private func gate(_ policy: AppAccessPolicy, file: AppDecisionFile? = nil, timeout: Duration = .seconds(30)) -> AppAccessGate {
        AppAccessGate(policies: ["default": policy], file: file, prompt: nil, approvalTimeout: timeout,
                      deciders: [authctl.executable], clock: wall, logger: Logger(label: "gate-test"))
    }

    private func temporaryFile() -> AppDecisionFile {
        AppDecisionFile(path: FileManager.default.temporaryDirectory.appendingPathComponent("authd-apps-\(UUID().uuidString)/apps.json").path)
    }

    @Test func anOpenProfileAdmitsEveryAppAndCountsTheTokens() async throws {
        let gate = gate(.open)
        try await gate.admit(app, profile: "default")
        gate.noteTokenHandedOut(to: app, profile: "default")
        let records = await gate.records(profile: nil)
        #expect(records == [AppRecord(app: app.app, executable: app.executable, appID: nil, profile: "default", access: "open",
                                      requests: 1, lastUsed: 1_800_000_000)])
    }

    @Test func underAskARequestWaitsUntilAuthctlAllowsTheAppAndTheDecisionIsRemembered() async throws {
        let file = temporaryFile()
        let gate = gate(.ask, file: file)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await gate.admit(app, profile: "default") }
            // Wait until the request is listed as pending, then decide.
            try #require(await eventually(every: .milliseconds(5)) { await gate.records(profile: "default").first?.access == "pending" })
            // Another program of the user cannot approve itself.
            await #expect(throws: RPCErrorObject.self) {
                try await gate.decide(app: app.app, profile: "default", decision: .allowed, caller: app)
            }
            let record = try await gate.decide(app: app.app, profile: "default", decision: .allowed, caller: authctl)
            #expect(record.access == "allowed")
            try await group.waitForAll()
        }
        // A new daemon reads the decision back: no waiting this time.
        let restarted = self.gate(.ask, file: file, timeout: .milliseconds(1))
        try await restarted.admit(app, profile: "default")
        let saved = try String(contentsOfFile: file.path, encoding: .utf8)
        #expect(saved.contains("/usr/bin/some-app") && saved.contains("allowed"))
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func aDeniedAppGetsAClearErrorEvenUnderAnOpenProfile() async throws {
        let gate = gate(.open)
        _ = try await gate.decide(app: app.app, profile: "default", decision: .denied, caller: authctl)
        do {
            try await gate.admit(app, profile: "default")
            Issue.record("a denied app was admitted")
        } catch {
            #expect(error.reason == .appDenied)
            #expect(error.message.contains("authctl apps allow /usr/bin/some-app"))
        }
    }

    @Test func nobodyDecidingEndsTheWaitWithWhatToRun() async throws {
        let gate = gate(.ask, timeout: .milliseconds(100))
        do {
            try await gate.admit(app, profile: "default")
            Issue.record("an undecided app was admitted")
        } catch {
            #expect(error.reason == .approvalTimeout)
            #expect(error.message.contains("authctl apps allow /usr/bin/some-app"))
        }
        #expect(await gate.records(profile: "default").first?.access == "pending")
    }

    @Test func oneDecisionAnswersEveryWaitingRequestOfThatApp() async throws {
        let gate = gate(.ask)
        let admitted = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    try await gate.admit(app, profile: "default")
                    admitted.add()
                }
            }
            #expect(await eventually(within: 60, every: .milliseconds(5)) { await gate.waitingRequests(app: app.app, profile: "default") >= 5 })
            #expect(await gate.waitingRequests(app: app.app, profile: "default") == 5)
            #expect(admitted.value == 0, "a request was admitted before anyone decided")
            _ = try await gate.decide(app: app.app, profile: "default", decision: .allowed, caller: authctl)
            // A request the decision did not answer would wait out the 30 s timeout and throw here.
            try await group.waitForAll()
        }
        #expect(admitted.value == 5)
    }
}

/// A count several tasks add to.
private final class Counter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func add() { count.withLock { $0 += 1 } }
}
