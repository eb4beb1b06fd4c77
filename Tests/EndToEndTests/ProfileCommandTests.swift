import AuthTestSupport
import Foundation
import Testing

/// `authctl profile` writes config.toml, and authd serves what it wrote.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct ProfileCommandTests {
    @Test func profilesAddedWithAuthctlAreServedByTheDaemon() async throws {
        try await Stack.running("profiles", lifetime: 3600) { stack in
            let empty = try stack.authctl(["profile", "list"])
            #expect(empty.status == 0)
            #expect(empty.stderr.contains("authctl profile add"))

            let work = "work-\(stack.profile)", home = "home-\(stack.profile)"
            let added = try stack.authctl(["profile", "add", work, "--url", stack.serverURL, "--anon-key", "e2e-anon-key"])
            #expect(added.status == 0, "\(added.stderr)")
            #expect(added.stderr.contains("systemctl --user restart authd"))
            #expect(try stack.authctl(["profile", "add", home, "--url", stack.serverURL, "--anon-key", "e2e-anon-key", "--default"]).status == 0)

            let duplicate = try stack.authctl(["profile", "add", work, "--url", stack.serverURL, "--anon-key", "k"])
            #expect(duplicate.status == 1)
            #expect(duplicate.stderr.contains("already exists"))
            let secret = try stack.authctl(["profile", "add", "x", "--url", stack.serverURL, "--anon-key", "sb_secret_abc"])
            #expect(secret.status == 1)
            #expect(secret.stderr.contains("secret"), "\(secret.stderr)")

            let listed = try stack.authctl(["profile", "list", "--json"]).stdout.split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
            }
            #expect(listed.count == 2)
            #expect(listed.first { $0["name"] as? String == home }?["default"] as? Bool == true)

            // authd with no flags: everything comes from the file authctl wrote.
            let daemon = try Spawned(Binaries.path("authd"), [], environment: stack.environment, in: stack.directory, name: "authd-from-config")
            defer { daemon.stop() }
            var status: [String: Any] = [:]
            for _ in 0..<100 where status.isEmpty {
                status = (try? stack.statusJSON()) ?? [:]
                usleep(100_000)
            }
            #expect(status["profile"] as? String == home, "\(status) \(daemon.stderr)")
            let other = try stack.authctl(["status", "--json", "--profile", work])
            #expect(other.stdout.contains("\"profile\":\"\(work)\""), "\(other.stdout) \(other.stderr)")

            // The running daemon switches at once: no restart.
            let switched = try stack.authctl(["profile", "default", work])
            #expect(switched.status == 0 && switched.stderr.contains("authd now uses \(work) when no profile is named (it was \(home))"),
                    "\(switched.stderr)")
            #expect(try stack.statusJSON()["profile"] as? String == work)
            #expect(daemon.process.isRunning)
            let later = try stack.authctl(["profile", "add", "later-\(stack.profile)", "--url", stack.serverURL, "--anon-key", "e2e-anon-key"])
            #expect(later.status == 0)
            let notYet = try stack.authctl(["profile", "default", "later-\(stack.profile)"])
            #expect(notYet.status == 0 && notYet.stderr.contains("does not serve later-\(stack.profile) yet"), "\(notYet.stderr)")
            #expect(try stack.statusJSON()["profile"] as? String == work, "an unknown profile left the default alone")
            #expect(try stack.authctl(["profile", "default", work]).status == 0)
            #expect(try stack.authctl(["profile", "remove", "later-\(stack.profile)"]).status == 0)
            #expect(try stack.authctl(["profile", "remove", home]).status == 0)
            let after = try stack.authctl(["profile", "list"]).stdout
            #expect(after.contains("* \(work)"))
            #expect(!after.contains(home))
            #expect(try stack.authctl(["profile", "remove", home]).status == 1)
        }
    }
}
