import AuthTestSupport
import Foundation
import Testing

/// `authctl token`'s lean path (plain `token` and `token --profile NAME`) against the ordinary
/// one (any other option, here `--min-valid 0`): the same token, and for every refusal the same
/// message and exit code.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct TokenCommandTests {
    @Test func theLeanPathAnswersAsTheOrdinaryOne() async throws {
        try await Stack.running("token", lifetime: 3600) { stack in
            try stack.signUp(email: "token@example.com", password: "token-password")
            try stack.startDaemon()

            // Signed out: exit 4 and the same words both ways.
            let leanSignedOut = try stack.authctl(["token"])
            let ordinarySignedOut = try stack.authctl(["token", "--min-valid", "0"])
            #expect(leanSignedOut.status == 4 && ordinarySignedOut.status == 4)
            #expect(leanSignedOut.stderr == ordinarySignedOut.stderr && leanSignedOut.stderr.contains("authctl login"), "\(leanSignedOut.stderr)")
            #expect(leanSignedOut.stdout.isEmpty)

            let login = try stack.authctl(["login", "--email", "token@example.com", "--password-stdin"], input: "token-password\n")
            #expect(login.status == 0, "\(login.stderr)")
            let lean = try stack.authctl(["token"])
            let named = try stack.authctl(["token", "--profile", stack.profile])
            let ordinary = try stack.authctl(["token", "--min-valid", "0"])
            #expect(lean.status == 0 && named.status == 0 && ordinary.status == 0)
            #expect(lean.stdout == ordinary.stdout && named.stdout == ordinary.stdout)
            #expect(lean.stdout.split(separator: ".").count == 3 && lean.stdout.hasSuffix("\n"))

            // An unknown profile: the same refusal both ways.
            let leanUnknown = try stack.authctl(["token", "--profile", "nope"])
            let ordinaryUnknown = try stack.authctl(["token", "--profile", "nope", "--min-valid", "0"])
            #expect(leanUnknown.status != 0 && leanUnknown.status == ordinaryUnknown.status)
            #expect(leanUnknown.stderr == ordinaryUnknown.stderr && leanUnknown.stderr.contains("no profile named 'nope'"), "\(leanUnknown.stderr)")
        }
    }

    @Test func withoutADaemonTheLeanPathSaysWhatTheOrdinaryOneSays() async throws {
        try await Stack.running("token-nodaemon", lifetime: 3600) { stack in
            let lean = try stack.authctl(["token"])
            let ordinary = try stack.authctl(["token", "--min-valid", "0"])
            #expect(lean.status == 3 && ordinary.status == 3)
            #expect(lean.stderr == ordinary.stderr && lean.stderr.contains("authd is not running"), "\(lean.stderr)")
        }
    }
}
