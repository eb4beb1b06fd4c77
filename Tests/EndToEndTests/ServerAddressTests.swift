import AuthTestSupport
import Foundation
import Testing

/// The address the server answers for the browser (`POST /sso`, `/user/identities/authorize`)
/// reaches `$BROWSER` only when it is https (or plain http for a project on this machine).
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct ServerAddressTests {
    @Test func aFileURLFromTheServerIsNeitherOpenedNorPrinted() async throws {
        try await Stack.running("sso-file-url", lifetime: 3600) { stack in
            let daemon = try stack.startDaemon()
            defer { daemon.stop() }
            let domain = "odd-\(UUID().uuidString.prefix(6).lowercased()).example"
            _ = try stack.devPOST("/auth/v1/admin/dev/sso",
                                  #"{"domains":["\#(domain)"],"email":"ada@\#(domain)","login_url":"file:///etc/passwd"}"#)
            let opened = stack.directory.appendingPathComponent("opened").path
            let record = try stack.script("browser-record", "printf '%s\\n' \"$1\" >> '\(opened)'")
            var environment = stack.environment
            environment["BROWSER"] = record
            for extra in [[], ["--no-browser"]] {
                let refused = try stack.authctl(["login", "--sso", domain] + extra, environment: environment)
                #expect(refused.status == 8, "\(extra): \(refused.stderr)")
                #expect(refused.stderr.contains("its scheme is 'file', and only https is opened"), "\(refused.stderr)")
                #expect(!(refused.stderr + refused.stdout).contains("/etc/passwd"))
            }
            #expect(!FileManager.default.fileExists(atPath: opened))
            #expect(try stack.statusJSON()["state"] as? String == "signed_out")
        }
    }
}
