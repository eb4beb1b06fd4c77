import AuthTestSupport
import Foundation
import Testing

/// What the daemon logs about its own parts at the most verbose level: names, never a proxy
/// password or the project's key. ServiceLifecycle logs every service it starts by interpolating
/// it, which printed a profile's server client field by field, proxy credentials included.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct LogRedactionTests {
    @Test func aTraceLogNamesTheProxyButNotItsPasswordNorTheAnonKey() async throws {
        try await offPool {
            let stack = try Stack(name: "redaction")
            defer { stack.tearDown() }
            let password = "proxy-password-\(UUID().uuidString.prefix(8))"
            let anonKey = "anon-key-\(UUID().uuidString.prefix(8))"
            var environment = stack.environment
            // A server that is not on this machine, so the proxy applies; nothing is sent to it.
            environment["https_proxy"] = "http://proxy-user:\(password)@127.0.0.1:9"
            let daemon = try Spawned(Binaries.path("authd"), ["--profile", "redaction", "--url", "https://auth.example.invalid",
                                                              "--anon-key", anonKey, "--log-level", "trace"],
                                     environment: environment, in: stack.directory, name: "authd-redaction")
            #expect(waitUntil(timeout: 60) { daemon.stderr.contains("Starting service") }, "\(daemon.stderr)")
            _ = try stack.authctl(["status"])
            daemon.stop()
            let log = daemon.stderr
            // The check below would pass on an empty log; the services' names show it is not one.
            #expect(log.contains("ProfileServices(redaction)"), "\(log)")
            #expect(!log.contains(password), "the proxy password is in the log")
            #expect(!log.contains(anonKey), "the anon key is in the log")
        }
    }
}
