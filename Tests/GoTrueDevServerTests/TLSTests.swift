import AuthCore
import AuthTestSupport
import Foundation
@testable import GoTrue
import GoTrueDevServer
import NIOSSL
import Testing

/// The adapter against the development server over real TLS, with throw-away certificates
/// (Tests/EndToEndTests/Helpers/make-test-pki): a trusted certificate works; a refused one says
/// why, names the host, and sends nothing.
@Suite struct TLSTests {
    /// The certificates, made once for the suite.
    static let pki: URL = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("authd-pki-\(UUID().uuidString.prefix(6))")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("EndToEndTests/Helpers/make-test-pki")
        _ = try? runToEnd("/bin/sh", [script.path, directory.path])
        return directory
    }()

    static func path(_ name: String) -> String { pki.appendingPathComponent(name).path }
    static let trusting = ["SSL_CERT_FILE": path("trusted-ca.pem")]

    /// Runs `body` against a development server presenting certificate `name`.
    static func serving(_ name: String, api: DevAuthAPI = DevAuthAPI(options: DevServerOptions()),
                        _ body: (DevHTTPServer) async throws -> Void) async throws {
        let tls = DevTLSFiles(certificatePath: path("\(name).pem"), privateKeyPath: path("\(name).key"))
        let server = try await DevHTTPServer.start(port: 0, tls: tls) { _ in api }
        do { try await body(server) } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// The failure a sign-in meets, or nil when it succeeds.
    ///
    /// A generous timeout: the explanation of a refused certificate comes from a second
    /// handshake within the request's deadline, and the server here runs in the test process,
    /// which the whole suite keeps busy (in a CI run both handshakes together took over 10 s,
    /// and the inspection gave up with the generic text).
    static func signInFailure(_ url: String, environment: [String: String]) async -> ServerFailure? {
        let client = GoTrueClient(projectURL: URL(string: url)!, anonKey: "k", timeout: 60, environment: environment)
        do throws(ServerFailure) {
            _ = try await client.signUp(SignUpRequest(address: .email("tls-\(UUID().uuidString.prefix(8))@example.com"), password: "tls-password-1", metadata: nil))
            return nil
        } catch {
            return error
        }
    }

    @Test func aCertificateFromTheCANamedBySSLCertFileIsTrusted() async throws {
        try await Self.serving("good") { server in
            let failure = await Self.signInFailure("https://127.0.0.1:\(server.port)", environment: Self.trusting)
            #expect(failure == nil)
            #expect(await Self.signInFailure("https://localhost:\(server.port)", environment: Self.trusting) == nil)
        }
    }

    @Test(arguments: [
        ("wrongname", "is for other.example, www.other.example, not 127.0.0.1: check the url of the profile"),
        ("expired", "expired on 2020-01-02 00:00 UTC: the server's certificate must be renewed"),
        ("untrusted", "is not trusted: it was issued by 'Unknown Test CA', an authority not in SSL_CERT_FILE ("),
        ("selfsigned", "is not trusted: it is self-signed, and neither it nor an authority that issued it is in SSL_CERT_FILE ("),
    ])
    func aRefusedCertificateSaysWhyAndNamesTheHost(_ certificate: String, _ problem: String) async throws {
        try await Self.serving(certificate) { server in
            let failure = await Self.signInFailure("https://127.0.0.1:\(server.port)", environment: Self.trusting)
            guard case .untrustedCertificate(let host, let text) = failure else { Issue.record("wrong failure \(String(describing: failure))"); return }
            #expect(host == "127.0.0.1:\(server.port)")
            #expect(text.hasPrefix(problem), "\(text)")
            #expect(failure?.localizedDescription.hasPrefix("the TLS certificate of 127.0.0.1:\(server.port) ") == true)
            #expect(failure?.refreshClass == .transient(.offline, retryAfter: nil))
        }
    }

    @Test func aCertificateFromAPrivateCAIsNotTrustedByTheSystemStore() async throws {
        try await Self.serving("good") { server in
            let failure = await Self.signInFailure("https://127.0.0.1:\(server.port)", environment: [:])
            #expect(failure?.localizedDescription.contains("was issued by 'authd test CA', an authority not in this computer's CA store (unknown issuer)") == true,
                    "\(String(describing: failure))")
        }
    }

    @Test func anUnreadableSSLCertFileIsNamed() async throws {
        try await Self.serving("good") { server in
            let failure = await Self.signInFailure("https://127.0.0.1:\(server.port)", environment: ["SSL_CERT_FILE": "/nonexistent/ca.pem"])
            #expect(failure?.localizedDescription.contains("cannot be checked: SSL_CERT_FILE names /nonexistent/ca.pem") == true,
                    "\(String(describing: failure))")
        }
    }

    @Test func aRefreshOverARefusedCertificateSendsNothingAndPrintsNoToken() async throws {
        let api = DevAuthAPI(options: DevServerOptions())
        try await Self.serving("selfsigned", api: api) { server in
            let client = GoTrueClient(projectURL: URL(string: "https://127.0.0.1:\(server.port)")!, anonKey: "k", environment: Self.trusting)
            let secret = "refresh-token-that-must-not-leak"
            do throws(ServerFailure) {
                _ = try await client.refresh(refreshToken: secret)
                Issue.record("the refresh went through")
            } catch {
                #expect(error.refreshClass == .transient(.offline, retryAfter: nil))
                #expect(!"\(error)".contains(secret) && !error.localizedDescription.contains(secret))
            }
            let stats = api.handle(DevRequest(method: "GET", target: "/auth/v1/admin/dev/stats", headers: [:], body: Data()))
            let grants = (try JSONSerialization.jsonObject(with: stats.body) as? [String: Any])?["refresh_grants"] as? Int
            #expect(grants == 0, "the refresh reached the server")
        }
    }

    @Test func throughAProxyTheRefusalNamesTheProxy() async throws {
        try await Self.serving("selfsigned") { server in
            let proxy = try await RecordingProxy.start(upstream: "127.0.0.1:\(server.port)")
            defer { proxy.stop() }
            let environment = Self.trusting.merging(["https_proxy": "http://127.0.0.1:\(proxy.port)"]) { _, new in new }
            // A made-up name: loopback addresses never go through a proxy.
            let failure = await Self.signInFailure("https://gotrue.proxied.test:\(server.port)", environment: environment)
            let text = failure?.localizedDescription ?? ""
            #expect(text.hasPrefix("the TLS certificate of gotrue.proxied.test:\(server.port) is not trusted"), "\(text)")
            #expect(text.contains("the proxy in https_proxy"), "\(text)")
        }
        // (Not "good": NIOSSL accepts a certificate for 127.0.0.1 from a server reached through a
        // proxy on 127.0.0.1, since it compares IP names with the address it is connected to.)
        try await Self.serving("wrongname") { server in
            let proxy = try await RecordingProxy.start(upstream: "127.0.0.1:\(server.port)")
            defer { proxy.stop() }
            let environment = Self.trusting.merging(["https_proxy": "http://127.0.0.1:\(proxy.port)"]) { _, new in new }
            let failure = await Self.signInFailure("https://gotrue.proxied.test:\(server.port)", environment: environment)
            #expect(failure?.localizedDescription.contains("does not name gotrue.proxied.test: check the url of the profile") == true,
                    "\(String(describing: failure))")
        }
    }

    @Test func anHTTPServerAtAnHTTPSURLIsSaidToSpeakNoTLS() async throws {
        try await DevServerHarness.run { harness in
            let failure = await Self.signInFailure("https://127.0.0.1:\(harness.server.port)", environment: Self.trusting)
            guard case .notSent(_, let detail) = failure else { Issue.record("wrong failure \(String(describing: failure))"); return }
            #expect(detail == "the server does not speak TLS on that port (is it an http:// server?)")
        }
    }

    static func certificate(_ name: String) throws -> NIOSSLCertificate {
        try #require(try NIOSSLCertificate.fromPEMFile(path("\(name).pem")).first)
    }

    @Test func certificateFactsAreReadFromTheEncoding() throws {
        let good = try #require(CertificateFacts(try Self.certificate("good")))
        #expect(good.names == ["127.0.0.1", "localhost"])
        #expect(good.subjectCommonName == "good")
        #expect(good.issuerCommonName == "authd test CA")
        #expect(!good.isSelfIssued)
        #expect(good.notValidBefore == Date(timeIntervalSince1970: 1_577_836_800))
        #expect(good.notValidAfter == Date(timeIntervalSince1970: 4_102_358_400))
        let expired = try #require(CertificateFacts(try Self.certificate("expired")))
        #expect(expired.notValidAfter == Date(timeIntervalSince1970: 1_577_923_200))
        let selfSigned = try #require(CertificateFacts(try Self.certificate("selfsigned")))
        #expect(selfSigned.isSelfIssued)
        #expect(selfSigned.issuerCommonName == "127.0.0.1")
    }

    @Test func anyTruncationOrCorruptionOfACertificateIsReadWithoutTrapping() throws {
        let der = try Self.certificate("wrongname").toDERBytes()
        #expect(CertificateFacts(der: der) != nil)
        for length in 0..<der.count {
            #expect(CertificateFacts(der: Array(der.prefix(length))) == nil)
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5000 {
            var corrupted = der
            for _ in 0...generator.next(upperBound: UInt(3)) {
                corrupted[Int(generator.next(upperBound: UInt(der.count)))] = UInt8.random(in: 0...255, using: &generator)
            }
            _ = CertificateFacts(der: corrupted)
        }
    }

    @Test func namesFromTheServerArePrintedSafely() {
        #expect(CertificateFacts.printable("evil\u{1b}[2J\u{202e}name") == "evil?[2J?name")
        #expect(CertificateFacts.printable(String(repeating: "a", count: 200))?.count == 64)
        #expect(CertificateFacts.printable("") == nil)
    }
}
