import AuthCore
import AuthTestSupport
import Foundation
import Logging
@testable import SystemIntegration
import Testing

/// The "sign in again" notice over a real D-Bus (a private dbus-daemon) to a stand-in for the
/// desktop's notification server, and the sign-in it starts, with real processes.
@Suite struct DesktopSignOutNoticeTests {
    private let logger = Logger(label: "test")

    @Test func aSessionTheServerEndedIsShownWithASignInActionThatIsReportedWhenChosen() async throws {
        let bus = try await PrivateBus.start()
        let service = try FakeNotificationService(address: bus.address, reaction: .invoke(DesktopSignOutNotice.actionKey))
        let notice = DesktopSignOutNotice(busAddress: bus.address, logger: logger)
        let chosen = await notice.sessionEnded(profile: "work<b>", reason: .sessionEnded(code: "refresh_token_already_used"),
                                               plan: .password(.email("a@example.com")), offersSignIn: true)
        #expect(chosen)
        let shown = try #require(service.shown.first)
        #expect(shown.appName == "authd" && shown.actions == ["sign-in", "Sign in"])
        #expect(shown.summary == "Sign in again to 'work<b>'", "a summary is plain text")
        #expect(shown.body.contains("profile 'work&lt;b&gt;'") && shown.body.contains("used twice") && shown.body.contains("(refresh_token_already_used)"))
        // The command is quoted for the shell it is pasted into, then escaped as markup.
        #expect(shown.body.contains("authctl login --profile 'work&lt;b&gt;' --email a@example.com"))
        service.stop()
    }

    @Test func theCommandInTheTextIsQuotedForTheShell() throws {
        let text = try #require(DesktopSignOutNotice.text(profile: "work", reason: .sessionEnded(code: "session_expired"),
                                                           plan: .password(.email("x@y.z; touch /tmp/p")), offersSignIn: false))
        #expect(text.body.contains("Sign in again: authctl login --profile work --email 'x@y.z; touch /tmp/p'."))
        let token = Fixtures.accessToken(aal: "aal1", extraClaims: #""email":"x@y.z; touch /tmp/p""#)
        let unplanned = try #require(DesktopSignOutNotice.text(profile: "work", reason: .sessionEnded(code: "session_expired"),
                                                                plan: SignInAgainPlan(accessToken: token), offersSignIn: false))
        #expect(unplanned.body.contains("Sign in again: authctl login --profile work --email ADDRESS.") && !unplanned.body.contains("touch"))
    }

    @Test func aNoticeIsWithdrawnWhenItsTaskIsCancelled() async throws {
        let bus = try await PrivateBus.start()
        let service = try FakeNotificationService(address: bus.address, reaction: .ignore)
        let notice = DesktopSignOutNotice(busAddress: bus.address, logger: logger)
        let waiting = Task { await notice.sessionEnded(profile: "work", reason: .secondFactorRequired(serverCode: "session_expired"), plan: .browser(provider: "github"), offersSignIn: true) }
        #expect(await service.wait { $0.shown.count == 1 })
        waiting.cancel()
        #expect(await waiting.value == false)
        let shown = try #require(service.shown.first)
        #expect(await service.wait { $0.withdrawn == [shown.id] })
        #expect(shown.summary == "Sign in again with your second factor" && shown.body.contains("authctl login --profile work --provider github"))
        service.stop()
    }

    @Test func whatCannotBeSignedInAgainHasNoActionAndOtherSignOutsShowNothing() async throws {
        let bus = try await PrivateBus.start()
        let service = try FakeNotificationService(address: bus.address, reaction: .dismiss)
        let notice = DesktopSignOutNotice(busAddress: bus.address, logger: logger)
        #expect(await notice.sessionEnded(profile: "work", reason: .sessionEnded(code: "session_expired"), plan: .anonymous, offersSignIn: false) == false)
        let anonymous = try #require(service.shown.first)
        #expect(anonymous.actions.isEmpty && anonymous.body.contains("anonymous user cannot sign in again"))
        _ = await notice.sessionEnded(profile: "work", reason: .sessionEnded(code: "user_banned"), plan: .unknown, offersSignIn: false)
        #expect(service.shown.count == 2 && service.shown[1].actions.isEmpty && service.shown[1].body.contains("Sign in again: authctl login --profile work --email ADDRESS"))
        #expect(!service.shown[1].body.contains("Choose Sign in"), "no action, no word of one")
        #expect(await notice.sessionEnded(profile: "work", reason: .userRequested, plan: .password(.email("a@example.com")), offersSignIn: true) == false)
        #expect(await notice.sessionEnded(profile: "work", reason: .replaced, plan: .password(.email("a@example.com")), offersSignIn: true) == false)
        #expect(service.shown.count == 2)
        service.stop()
    }

    @Test func withoutANotificationServiceNothingIsChosen() async throws {
        let bus = try await PrivateBus.start()
        let notice = DesktopSignOutNotice(busAddress: bus.address, logger: logger)
        #expect(await notice.sessionEnded(profile: "work", reason: .sessionEnded(code: "session_expired"), plan: .browser(provider: "github"), offersSignIn: true) == false)
    }

    @Test func aBrowserSignInRunsAuthctlItselfAndAPasswordOneRunsItInATerminal() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("authd-starter-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func script(_ name: String, _ body: String) throws -> String {
            let path = directory.appendingPathComponent(name).path
            // O_CLOEXEC, as Stack.file does: a process another test spawns meanwhile must not keep
            // the script open for writing, or running it fails with ETXTBSY (seen once in a full run).
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
            try #require(fd >= 0, "cannot write \(path)")
            defer { close(fd) }
            let bytes = Array("#!/bin/sh\n\(body)\n".utf8)
            try #require(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
            chmod(path, 0o755)
            return path
        }
        let record = directory.appendingPathComponent("ran").path
        let authctl = try script("authctl", "printf '%s|' \"$@\" >> '\(record)'; echo >> '\(record)'")
        // The terminal stand-in runs what follows -e, as x-terminal-emulator does, and says it ran.
        _ = try script("x-terminal-emulator", "echo terminal >> '\(record)'; [ \"$1\" = -e ] && shift; exec \"$@\" < /dev/null")
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = directory.path + ":/usr/bin:/bin"
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = nil
        // Without a display nothing could open a window or a browser.
        #expect(!AuthctlSignInStarter(authctl: authctl, environment: environment, logger: logger).canStart(.browser(provider: "github"), inTerminal: false))
        environment["DISPLAY"] = ":99"
        let starter = AuthctlSignInStarter(authctl: authctl, environment: environment, logger: logger)

        #expect(starter.canStart(.browser(provider: "github"), inTerminal: false) && starter.canStart(.password(.email("a@example.com")), inTerminal: true))
        #expect(!starter.canStart(.anonymous, inTerminal: true))
        await starter.startSignIn(profile: "work", plan: .browser(provider: "github"), inTerminal: false)
        await starter.startSignIn(profile: "work", plan: .password(.email("a@example.com")), inTerminal: true)
        await starter.startSignIn(profile: "work", plan: .anonymous, inTerminal: true)
        let ran = try String(contentsOfFile: record, encoding: .utf8)
        #expect(ran == "login|--profile|work|--provider|github|\nterminal\nlogin|--profile|work|--email|a@example.com|\n")

        // No terminal program: nothing runs.
        environment["PATH"] = "/nonexistent"
        #expect(AuthctlSignInStarter.command(authctl: authctl, arguments: ["login"], inTerminal: true, environment: environment) == nil)
        #expect(AuthctlSignInStarter.command(authctl: authctl, arguments: ["login"], inTerminal: false, environment: environment) == [authctl, "login"])
    }
}
