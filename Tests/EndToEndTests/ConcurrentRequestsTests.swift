import AuthTestSupport
import Foundation
import Testing

/// Many clients waiting on an expired token share one refresh.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct ConcurrentRequestsTests {
    @Test func aThousandRequestsPastExpiryCauseExactlyOneRefresh() async throws {
        // Lifetime 30 s, refresh lead 1 s: the freeze begins long before the scheduled refresh at
        // 29 s, even when opening a thousand connections is slow on a loaded CI machine, and lasts
        // past expiry; the rotated token's own refresh is 29 s after the thaw, long after the
        // answers are in and the grants counted.
        try await Stack.running("herd", lifetime: 30) { stack in
            let daemon = try stack.startSignedIn(email: "herd@example.com", password: "herd-password", daemonArguments: ["--refresh-lead", "1"])
            let before = try stack.refreshGrants()
            // The herd (Benchmarks/herd.py, shared with benchmark P5) says whether it froze the
            // daemon before its scheduled refresh, which the count of grants depends on.
            let herd = Binaries.repositoryRoot.appendingPathComponent("Benchmarks/herd.py").path
            let result = try runCommand("/usr/bin/python3", [herd, stack.socketPath, "1000", String(daemon.process.processIdentifier), "1"],
                                        environment: stack.environment, timeout: 120)
            let report = try #require((try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any], "\(result.stdout) \(result.stderr)")
            let grants = try stack.refreshGrants() - before
            print("1000 concurrent token requests past expiry: \(report), refresh grants at the server: \(grants)")
            try #require(report["frozen_early"] as? Bool == true, "the daemon was frozen only after its scheduled refresh: \(report)")
            #expect(report["answered"] as? Int == 1000)
            #expect(report["error_count"] as? Int == 0, "\(report)")
            #expect(report["tokens"] as? Int == 1)
            #expect(grants == 1)
        }
    }
}
