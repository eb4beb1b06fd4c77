import AuthTestSupport
import Foundation
import Testing

/// authd against an HTTPS development server, through the real binaries, with throw-away
/// certificates (Helpers/make-test-pki) and the test CA trusted through `SSL_CERT_FILE`: a
/// refused certificate says why and stores nothing; during a refresh (a captive portal) it keeps
/// the session like any network trouble.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct TLSCertificateTests {
    static let refused: [(certificate: String, problem: String)] = [
        ("selfsigned", "is not trusted: it is self-signed"),
        ("wrongname", "is for other.example, www.other.example, not 127.0.0.1: check the url of the profile"),
        ("expired", "expired on 2020-01-02 00:00 UTC"),
        ("untrusted", "is not trusted: it was issued by 'Unknown Test CA', an authority not in SSL_CERT_FILE"),
    ]

    @Test func aRefusedCertificateIsExplainedAndNothingIsStoredATrustedOneSignsIn() async throws {
        try await Stack.runningOverTLS("tls-sign-in", lifetime: 3600, presenting: "selfsigned") { stack in
            let daemon = try stack.startDaemon()
            let host = "127.0.0.1:\(URL(string: stack.serverURL)?.port ?? 0)"
            for (certificate, problem) in Self.refused {
                try stack.present(certificate)
                let signup = try stack.authctl(["signup", "--email", "tls@example.com", "--password-stdin"], input: "tls-password-1\n")
                #expect(signup.status == 6, "\(certificate): \(signup.status) \(signup.stderr)")
                #expect(signup.stderr.contains("the TLS certificate of \(host) \(problem)"), "\(certificate): \(signup.stderr)")
                #expect(!signup.stderr.contains("cannot reach") && !signup.stderr.contains("NIOSSL"), "\(certificate): \(signup.stderr)")
                #expect(daemon.process.isRunning, "\(certificate): authd died: \(daemon.stderr.suffix(2000))")
                #expect(try stack.authctl(["status"]).status == 4, "\(certificate): signed in after all")
                #expect(try stack.keyringHoldsASession() == false, "\(certificate): a session was stored")
            }
            try stack.present("good")
            #expect(try stack.devStatsOverTLS()["users"] as? Int == 0, "a request went past a refused certificate")
            let signup = try stack.authctl(["signup", "--email", "tls@example.com", "--password-stdin"], input: "tls-password-1\n")
            #expect(signup.status == 0, "\(signup.stderr)")
            #expect(try stack.authctl(["status"]).status == 0)
            #expect(try stack.keyringHoldsASession())
        }
    }

    @Test func aCaptivePortalDuringARefreshKeepsTheSessionAndItRecoversWhenThePortalGoes() async throws {
        try await Stack.runningOverTLS("tls-portal", lifetime: 20, presenting: "good") { stack in
            try stack.startDaemon()
            let signup = try stack.authctl(["signup", "--email", "portal@example.com", "--password-stdin"], input: "portal-password-1\n")
            #expect(signup.status == 0, "\(signup.stderr)")
            let watcher = try stack.watch(["--json"])
            defer { watcher.stop() }
            #expect(watcher.waitForOutput { $0.contains("INITIAL_SESSION") })

            // The portal answers in the server's place with a certificate of its own.
            try stack.present("untrusted")
            let token = try stack.authctl(["token", "--min-valid", "20"])
            #expect(token.status == 0, "the still-valid token is served: \(token.stderr)")
            let status = try stack.statusJSON()
            #expect(status["state"] as? String == "signed_in", "\(status)")
            let degraded = status["degraded"] as? [String: Any] ?? [:]
            #expect(degraded["reason"] as? String == "offline", "\(status)")
            let detail = degraded["detail"] as? String ?? ""
            #expect(detail.contains("the TLS certificate of 127.0.0.1:") && detail.contains("'Unknown Test CA'"), "\(detail)")
            #expect(try stack.keyringHoldsASession())

            try stack.present("good")
            var recovered = false
            let deadline = Date().addingTimeInterval(30)
            while !recovered, Date() < deadline {
                usleep(300_000)
                recovered = try stack.statusJSON()["degraded"] == nil
            }
            #expect(recovered, "still degraded after the portal went away")
            #expect(watcher.waitForOutput { $0.contains("TOKEN_REFRESHED") })
            let names = Stack.events(watcher).compactMap { $0["event"] as? String }
            #expect(names.contains("REFRESH_FAILING"))
            #expect(!names.contains("SIGNED_OUT"))
        }
    }
}

extension Stack {
    /// Like `running`, with a development server that speaks HTTPS only and presents certificate
    /// `presenting` from a fresh set (see `present`), and `SSL_CERT_FILE` naming the test CA for authd.
    static func runningOverTLS(_ name: String, lifetime: Int, presenting certificate: String,
                               _ body: @escaping @Sendable (Stack) throws -> Void) async throws {
        try await offPool {
            let stack = try Stack(name: name)
            defer { stack.tearDown() }
            let pki = stack.directory.appendingPathComponent("pki")
            try FileManager.default.createDirectory(at: pki, withIntermediateDirectories: true)
            let made = try runCommand("/bin/sh", [Binaries.repositoryRoot.appendingPathComponent("Tests/EndToEndTests/Helpers/make-test-pki").path, pki.path],
                                      environment: stack.environment)
            guard made.status == 0 else { throw StackError("make-test-pki failed: \(made.stderr)") }
            try stack.present(certificate)
            try stack.startDevServer(lifetime: lifetime, extra: ["--tls-cert", pki.appendingPathComponent("server.pem").path,
                                                                 "--tls-key", pki.appendingPathComponent("server.key").path])
            stack.daemonEnvironmentOverrides["SSL_CERT_FILE"] = pki.appendingPathComponent("trusted-ca.pem").path
            try body(stack)
        }
    }

    /// Makes the development server present certificate `name` (of make-test-pki) from its next connection on.
    func present(_ name: String) throws {
        let pki = directory.appendingPathComponent("pki")
        for suffix in ["pem", "key"] {
            let target = pki.appendingPathComponent("server.\(suffix)")
            try? FileManager.default.removeItem(at: target)
            try FileManager.default.copyItem(at: pki.appendingPathComponent("\(name).\(suffix)"), to: target)
        }
    }

    /// `/admin/dev/stats` of an HTTPS development server (curl trusting the test CA).
    func devStatsOverTLS() throws -> [String: Any] {
        let result = try runCommand("/usr/bin/curl", ["-sS", "--cacert", directory.appendingPathComponent("pki/trusted-ca.pem").path,
                                                      "\(serverURL)/auth/v1/admin/dev/stats"], environment: environment)
        return (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    /// Whether the keyring holds a session for this stack's profile; never reads out what it holds.
    func keyringHoldsASession() throws -> Bool {
        let stored = try runCommand("/usr/bin/secret-tool", ["lookup", "xdg:schema", "dev.authd.Session", "profile", profile], environment: environment)
        return !stored.stdout.isEmpty
    }
}
