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

    @Test func allowAndDenyButtonsAreTheAnswer() async throws {
        let bus = try PrivateBus()
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
        let bus = try PrivateBus()
        let dismissing = try FakeNotificationService(address: bus.address, reaction: .dismiss)
        #expect(await ask(on: bus) == nil)
        #expect(dismissing.shown.count == 1)
        dismissing.stop()

        // A click on the notification's body ("default") chooses nothing; the close that follows ends it.
        let clicking = try FakeNotificationService(address: bus.address, reaction: .invoke("default"))
        #expect(await ask(on: bus) == nil)
        #expect(clicking.shown.count == 1)
    }

    @Test func cancellingWithdrawsTheNotification() async throws {
        let bus = try PrivateBus()
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
        let bus = try PrivateBus()
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
