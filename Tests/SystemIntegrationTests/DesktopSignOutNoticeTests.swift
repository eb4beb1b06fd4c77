import AuthCore
import AuthTestSupport
import Foundation
import Logging
@testable import SystemIntegration
import Testing

/// The notice of a session the server ended for lack of a second factor, over a real D-Bus (a
/// private dbus-daemon) to a stand-in for the desktop's notification server.
@Suite struct DesktopSignOutNoticeTests {
    private let logger = Logger(label: "test")

    @Test func aSessionEndedForLackOfASecondFactorIsShownWithHowToSignInAgain() async throws {
        let bus = try PrivateBus()
        let service = try FakeNotificationService(address: bus.address, reaction: .dismiss)
        let notice = DesktopSignOutNotice(busAddress: bus.address, logger: logger)
        await notice.sessionEnded(profile: "work<b>", reason: .secondFactorRequired(serverCode: "session_expired"))
        #expect(await service.wait { $0.shown.count == 1 })
        let shown = try #require(service.shown.first)
        #expect(shown.appName == "authd" && shown.actions.isEmpty)
        #expect(shown.summary == "Sign in again with your second factor")
        #expect(shown.body.contains("profile 'work&lt;b&gt;'") && shown.body.contains("authctl login --profile work&lt;b&gt;"))
        #expect(shown.body.contains("(session_expired)"))
        // Other sign-outs are told by the status and the event stream only.
        await notice.sessionEnded(profile: "work", reason: .sessionEnded(code: "refresh_token_not_found"))
        await notice.sessionEnded(profile: "work", reason: .userRequested)
        #expect(service.shown.count == 1)
        service.stop()
    }
}
