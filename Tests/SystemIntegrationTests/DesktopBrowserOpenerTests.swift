import AuthTestSupport
import Foundation
import Logging
@testable import SystemIntegration
import Testing

/// How the daemon opens its sign-in page, over a real D-Bus (a private dbus-daemon): through the
/// desktop portal when one answers, so that the browser starts in the user's session rather than
/// inside authd's sandbox; else as desktop tools do, with `$BROWSER`.
@Suite struct DesktopBrowserOpenerTests {
    private let logger = Logger(label: "test")
    private let url = "http://127.0.0.1:41553/sign-in/open/0123abcd"

    @Test func thePortalOpensThePageAndNothingIsStartedFromAuthd() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let portal = try FakeOpenURIPortal(address: bus.address)
        defer { portal.stop() }
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("authd-browser-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: marker) }
        let opener = DesktopBrowserOpener(environment: ["BROWSER": "touch \(marker)", "PATH": "/usr/bin:/bin"], busAddress: bus.address, logger: logger)
        #expect(opener.canOpen)
        #expect(await opener.open(url))
        #expect(portal.opened == [url])
        #expect(!FileManager.default.fileExists(atPath: marker), "a browser was started from authd as well")
    }

    @Test func withoutAPortalTheBrowserIsStartedAsDesktopToolsDo() async throws {
        let bus = try await PrivateBus.start()
        defer { bus.stop() }
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("authd-browser-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: marker) }
        // `%s` in $BROWSER is the address, as the shell's $1: the command sees it whole.
        let opener = DesktopBrowserOpener(environment: ["BROWSER": "sh -c 'echo -n \"$0\" > \(marker)' '%s'", "PATH": "/usr/bin:/bin"],
                                          busAddress: bus.address, logger: logger)
        #expect(await opener.open(url))
        #expect(await eventually { (try? String(contentsOfFile: marker, encoding: .utf8)) == self.url })

        let nothing = DesktopBrowserOpener(environment: ["PATH": "/usr/bin:/bin"], busAddress: bus.address, logger: logger)
        #expect(await !nothing.open(url), "no portal, no display, no $BROWSER: nothing was opened")
    }
}
