import AuthTestSupport
import Foundation
import Testing

/// authd closing the connection while a take-over is out (it stopped or restarted): authd may
/// have spent the app's refresh token, and the same token presented again can end the whole
/// session, so authctl says to look at the status first rather than suggest running it again.
@Suite struct TakeOverWithoutAnAnswerTests {
    @Test func authctlSaysTheTakeOverMayHaveHappenedAndToLookAtTheStatusFirst() async throws {
        try await offPool {
            let daemon = try HostileDaemon(name: "take-over")
            defer { daemon.stop() }
            let token = "app-refresh-\(UUID().uuidString.prefix(8))"
            let lost = try daemon.authctl(["login", "--with-session"], input: token + "\n")
            // 1, not 3: exit 3 tells a script that authd is not running and may be started and asked again.
            #expect(lost.status == 1, "\(lost.stderr)")
            #expect(lost.stderr.contains("no answer from authd to the take-over") && lost.stderr.contains("Run 'authctl status' first"), "\(lost.stderr)")
            #expect(!lost.stderr.contains(token) && !lost.stdout.contains(token))
        }
    }
}
