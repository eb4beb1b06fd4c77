import AuthTestSupport
import Foundation
import Testing

/// Crashes at random moments while the session rotates about once a second must never lose it.
///
/// The development server runs with reuse interval 0 (any reuse of an older refresh token revokes
/// the session) and holds each refresh answer back 200 ms *after* rotating, so many kills land
/// between the server's rotation and the daemon's keyring write: the case write-ahead storage and
/// GoTrue's parent-token rule exist for. `AUTHD_CRASH_TRIALS` sets the number of trials
/// (default 100); `scripts/crash-soak` runs a longer series.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct CrashConsistencyTests {
    @Test func theSessionSurvivesSIGKILLAtRandomMomentsWhileRefreshingEverySecond() async throws {
        let trials = Int(ProcessInfo.processInfo.environment["AUTHD_CRASH_TRIALS"] ?? "") ?? 100
        try await offPool {
            let stack = try Stack(name: "crash")
            defer { stack.tearDown() }
            try stack.startDevServer(lifetime: 2, extra: ["--reuse-interval", "0", "--refresh-response-delay", "0.2"])
            let email = "crash@example.com"
            try stack.signUp(email: email, password: "crash-password")
            let daemonArguments = ["--refresh-lead", "1"]
            var daemon = try stack.startDaemon(extra: daemonArguments)
            #expect(try stack.authctl(["login", "--email", email, "--password-stdin"], input: "crash-password\n").status == 0)
            let grantsBefore = try stack.refreshGrants()

            var lost: [String] = []
            var generator = SystemRandomNumberGenerator()
            for trial in 1...trials {
                usleep(UInt32.random(in: 0...1_200_000, using: &generator))
                daemon.signal(SIGKILL)
                daemon.process.waitUntilExit()
                daemon = try stack.startDaemon(extra: daemonArguments)
                let token = try stack.authctl(["token"], timeout: 30)
                let tokenEmail = claims(of: token.stdout.trimmingCharacters(in: .whitespacesAndNewlines))["email"] as? String
                if token.status != 0 || tokenEmail != email {
                    lost.append("trial \(trial): exit \(token.status): \(token.stderr)")
                    break // a lost session stays lost; the remaining trials would say nothing new
                }
            }
            let grants = try stack.refreshGrants() - grantsBefore
            print("crash consistency: \(trials) trials, \(lost.count) sessions lost, \(grants) refresh grants answered")
            #expect(lost.isEmpty, "\(lost)")
            #expect(grants >= trials / 2, "the session should have been rotating throughout")
        }
    }
}
