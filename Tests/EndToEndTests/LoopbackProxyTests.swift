import AuthTestSupport
import Foundation
import Testing

/// A plain-http loopback profile never goes through the proxy the environment names: its
/// password and refresh token would cross the network in clear text to get there.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct LoopbackProxyTests {
    @Test func aLoopbackProfileSignsInAndRefreshesWithoutAByteToTheProxy() async throws {
        try await Stack.running("loopback-proxy", lifetime: 60) { stack in
            let proxy = try stack.startRecordingProxy()
            defer { proxy.process.stop() }
            let address = "http://127.0.0.1:\(proxy.port)"
            stack.daemonEnvironmentOverrides = ["all_proxy": address, "ALL_PROXY": address, "http_proxy": address,
                                                "https_proxy": address, "HTTPS_PROXY": address, "no_proxy": "", "NO_PROXY": ""]
            try stack.startSignedIn(email: "loopback-proxy@example.com", password: "loopback-proxy-password")
            let grants = try stack.refreshGrants()
            // A token that must outlive the current one forces a refresh (a fresh one lives 60 s):
            // asked for once the current one has less than 58 s left on the clock (`expires_at` is
            // rounded down: the expiry lies within the second after it).
            let expiresAt = try #require(try stack.statusJSON()["expires_at"] as? Double, "no expiry in the status")
            #expect(waitUntil(timeout: 30) { Date().timeIntervalSince1970 > expiresAt + 1 - 58 }, "the token expires at \(expiresAt)")
            let token = try stack.authctl(["token", "--min-valid", "58"])
            #expect(token.status == 0, "\(token.stderr)")
            #expect(try stack.refreshGrants() == grants + 1)
            #expect(try stack.authctl(["status"]).status == 0)
            #expect(proxy.log() == "", "the proxy was contacted: \(proxy.log())")

            // The proxy does record what reaches it, so the empty log above means something.
            _ = try runCommand("/usr/bin/curl", ["-sS", "-o", "/dev/null", "-x", address, "http://proxy-check.invalid/"], environment: stack.environment)
            #expect(proxy.log().contains("accepted connection"), "the recording proxy recorded nothing: \(proxy.log())")
        }
    }
}

/// Tests/python/connect_proxy.py for one stack: a CONNECT proxy that logs every connection it accepts.
struct RecordingProxy {
    let process: Spawned
    let port: Int
    let logPath: String

    /// Everything the proxy has logged.
    func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
}

extension Stack {
    /// Starts a recording proxy in the stack's directory.
    func startRecordingProxy() throws -> RecordingProxy {
        let portFile = directory.appendingPathComponent("proxy-port").path
        let logPath = directory.appendingPathComponent("proxy-log").path
        let script = Binaries.repositoryRoot.appendingPathComponent("Tests/python/connect_proxy.py").path
        let process = try Spawned("/usr/bin/env", ["python3", script, portFile, logPath], environment: environment, in: directory, name: "proxy")
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let port = Int(text) {
                return RecordingProxy(process: process, port: port, logPath: logPath)
            }
            usleep(50_000)
        }
        process.stop()
        throw StackError("the recording proxy did not start: \(process.stderr)")
    }
}
