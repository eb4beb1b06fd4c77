import AuthCore
import AuthTestSupport
import Foundation
import Logging
@testable import SystemIntegration
import Testing

/// The approval notification over a real D-Bus (a private dbus-daemon), answered by a stand-in
/// for the desktop's notification server.
@Suite struct DesktopNotificationPromptTests {
    private let logger = Logger(label: "test")

    private func ask(on bus: PrivateBus) async -> AppDecision? {
        await DesktopNotificationPrompt(busAddress: bus.address, logger: logger)
            .ask(app: "/usr/bin/python3.11", executable: "/usr/bin/python3.11", profile: "work")
    }

    /// How a question ended, or that it did not within the time given.
    private enum Outcome: Equatable {
        case answered(AppDecision?)
        case stillWaiting
    }

    /// The answer of `asking`, or `.stillWaiting` after `timeout` (the question is then
    /// cancelled): a lost answer fails a test instead of hanging it.
    private func outcome(of asking: Task<AppDecision?, Never>, within timeout: Duration = .seconds(60)) async -> Outcome {
        await withTaskGroup(of: Outcome.self) { group in
            group.addTask { .answered(await asking.value) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return .stillWaiting
            }
            let first = await group.next() ?? .stillWaiting
            asking.cancel()
            group.cancelAll()
            return first
        }
    }

    @Test func allowAndDenyButtonsAreTheAnswer() async throws {
        let bus = try await PrivateBus.start()
        let allowing = try FakeNotificationService(address: bus.address, reaction: .invoke("allow"))
        #expect(await ask(on: bus) == .allowed)
        let shown = try #require(allowing.shown.first)
        #expect(shown.appName == "authd")
        #expect(shown.actions == ["allow", "Allow", "deny", "Deny"])
        #expect(shown.summary == "Allow python3.11 to sign in as you?")
        #expect(shown.body.contains("/usr/bin/python3.11 asks authd for the tokens of profile 'work'"))
        #expect(shown.body.contains("authctl apps allow /usr/bin/python3.11 --profile work"))
        allowing.stop()

        let denying = try FakeNotificationService(address: bus.address, reaction: .invoke("deny"))
        #expect(await ask(on: bus) == .denied)
        #expect(denying.shown.count == 1)
    }

    @Test func dismissedOrAnUnknownActionIsNoAnswer() async throws {
        let bus = try await PrivateBus.start()
        let dismissing = try FakeNotificationService(address: bus.address, reaction: .dismiss)
        #expect(await ask(on: bus) == nil)
        #expect(dismissing.shown.count == 1)
        dismissing.stop()

        // A click on the notification's body ("default") chooses nothing; the close that follows ends it.
        let clicking = try FakeNotificationService(address: bus.address, reaction: .invoke("default"))
        #expect(await ask(on: bus) == nil)
        #expect(clicking.shown.count == 1)
    }

    @Test func aClickSentBeforeTheReplyToNotifyStillCounts() async throws {
        let bus = try await PrivateBus.start()
        let service = try FakeNotificationService(address: bus.address, reaction: .invokeBeforeReplying("allow"))
        #expect(await outcome(of: Task { await ask(on: bus) }) == .answered(.allowed))
        #expect(service.shown.count == 1)
    }

    @Test func onlyTheServerThatShowedTheNotificationDecides() async throws {
        let bus = try await PrivateBus.start()
        let service = try FakeNotificationService(address: bus.address, reaction: .ignore)
        let impostor = try BusPeer(address: bus.address, owning: nil)
        let asking = Task { await ask(on: bus) }
        #expect(await service.wait { !$0.shown.isEmpty })
        let shown = try #require(service.shown.first)

        // Another client of the bus clicks Allow and closes the notification, with the right id:
        // addressed to the prompt's connection (dbus-daemon delivers that whatever the prompt's
        // matches say) and to everyone.
        try impostor.sendActionInvoked(id: shown.id, action: "allow", to: shown.client)
        try impostor.sendNotificationClosed(id: shown.id, to: shown.client)
        try impostor.sendActionInvoked(id: shown.id, action: "allow")
        try impostor.sendNotificationClosed(id: shown.id)
        // Everything the impostor sent is on its way to the prompt before the real click below.
        try impostor.sync()

        // The user clicks Deny on the real notification: that, and only that, is the answer.
        service.click("deny", on: shown.id)
        #expect(await outcome(of: asking) == .answered(.denied))
    }

    @Test func cancellingWithdrawsTheNotification() async throws {
        let bus = try await PrivateBus.start()
        let service = try FakeNotificationService(address: bus.address, reaction: .ignore)
        let prompt = DesktopNotificationPrompt(busAddress: bus.address, logger: logger)
        let asking = Task { await prompt.ask(app: "org.example.App", executable: "/app/bin/example", profile: "default") }
        #expect(await service.wait { !$0.shown.isEmpty })
        asking.cancel()
        #expect(await asking.value == nil)
        let shown = try #require(service.shown.first)
        #expect(await service.wait { $0.withdrawn == [shown.id] })
        #expect(shown.body.contains("org.example.App (/app/bin/example)"))
    }

    @Test func withoutANotificationServiceThereIsNoAnswerAtOnce() async throws {
        let bus = try await PrivateBus.start()
        let started = ContinuousClock.now
        #expect(await ask(on: bus) == nil)
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    @Test func markupInAPathIsEscaped() {
        let question = DesktopNotificationPrompt.question(app: "/opt/<b>&x</b>", executable: "/opt/<b>&x</b>", profile: "p")
        #expect(question.body.contains("/opt/&lt;b&gt;&amp;x&lt;/b&gt;"))
        #expect(!question.body.contains("<b>"))
    }
}
