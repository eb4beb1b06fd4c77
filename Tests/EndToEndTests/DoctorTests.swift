import AuthTestSupport
import Foundation
import Testing

/// `authctl doctor` against a healthy stack, a stopped server and no daemon.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct DoctorTests {
    @Test func itPassesWhenAllIsWellAndSaysWhatToFixWhenNot() async throws {
        try await Stack.running("doctor", lifetime: 3600) { stack in
            let notRunning = try stack.authctl(["doctor"])
            #expect(notRunning.status == 1)
            #expect(notRunning.stdout.contains("PROBLEM socket:") || notRunning.stdout.contains("PROBLEM daemon:"), "\(notRunning.stdout)")
            #expect(notRunning.stdout.contains("systemctl --user enable --now authd.socket"))

            try stack.startSignedIn(email: "doctor@example.com", password: "doctor-password")
            let healthy = try stack.authctl(["doctor"])
            #expect(healthy.status == 0, "\(healthy.stdout) \(healthy.stderr)")
            for check in ["config", "socket", "daemon", "keyring", "session", "server"] {
                #expect(healthy.stdout.contains("ok      \(check):"), "\(check): \(healthy.stdout)")
            }
            #expect(healthy.stdout.contains("signed in as doctor@example.com"))
            #expect(healthy.stdout.contains("clock within"))

            stack.stopDevServer()
            let offline = try stack.authctl(["doctor", "--json"])
            #expect(offline.status == 1)
            let checks = offline.stdout.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
            let server = checks.first { $0["check"] as? String == "server" }
            #expect(server?["ok"] as? Bool == false, "\(offline.stdout)")
            #expect((server?["detail"] as? String)?.contains("cannot reach") == true, "\(offline.stdout)")
            #expect(checks.first { $0["check"] as? String == "session" }?["ok"] as? Bool == true, "the session outlives the server")
        }
    }
}
