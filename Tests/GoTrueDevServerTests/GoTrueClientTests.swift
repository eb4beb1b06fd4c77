import AuthCore
import AuthTestSupport
import Foundation
import GoTrue
import GoTrueDevServer
import NIOHTTP1
import Testing

/// The real HTTP adapter against the development server.
@Suite struct GoTrueClientTests {
    @Test func signInRefreshAndSignOutThroughTheAdapter() async throws {
        try await DevServerHarness.run(DevServerOptions(anonKey: "anon-key-1")) { harness in
            _ = try await harness.call("POST", "/signup", json: ["email": "adapter@example.com", "password": "password-1"], headers: ["apikey": "anon-key-1"])
            let client = GoTrueClient(projectURL: harness.base, anonKey: "anon-key-1")

            await #expect(throws: ServerFailure.http(status: 400, code: "invalid_credentials", message: "Invalid login credentials", retryAfter: nil)) {
                _ = try await client.signIn(.password(.email("adapter@example.com"), password: "nope-nope"))
            }
            let grant = try await client.signIn(.password(.email("adapter@example.com"), password: "password-1"))
            #expect(grant.user.email == "adapter@example.com")
            #expect(grant.expiresIn == 3600)
            let rotated = try await client.refresh(refreshToken: grant.refreshToken)
            #expect(rotated.refreshToken != grant.refreshToken)
            try await client.signOut(accessToken: rotated.accessToken, scope: .local)
            do {
                _ = try await client.refresh(refreshToken: rotated.refreshToken)
                Issue.record("refresh after sign-out succeeded")
            } catch let error as ServerFailure {
                #expect(error.refreshClass == .fatal(code: "refresh_token_not_found"))
            }
        }
    }

    @Test func theCaptchaTokenGoesWhereGoTrueLooksForItAndOnlyWhereItIsChecked() async throws {
        var options = DevServerOptions(anonKey: "anon-key-1")
        options.captchaToken = "solved-captcha"
        try await DevServerHarness.run(options) { harness in
            let client = GoTrueClient(projectURL: harness.base, anonKey: "anon-key-1")
            let missing = ServerFailure.http(status: 400, code: "captcha_failed",
                                             message: "captcha protection: request disallowed (no captcha_token found)", retryAfter: nil)
            let signUp = SignUpRequest(address: .email("captcha@example.com"), password: "password-1")
            await #expect(throws: missing) { _ = try await client.signUp(signUp) }
            guard case .signedIn = try await client.signUp(signUp, captchaToken: "solved-captcha") else {
                Issue.record("the sign-up did not sign in")
                return
            }
            let password = SignInCredential.password(.email("captcha@example.com"), password: "password-1")
            await #expect(throws: missing) { _ = try await client.signIn(password) }
            let refused = ServerFailure.http(status: 400, code: "captcha_failed",
                                             message: "captcha protection: request disallowed (invalid-input-response)", retryAfter: nil)
            await #expect(throws: refused) { _ = try await client.signIn(password, captchaToken: "guessed") }
            let grant = try await client.signIn(password, captchaToken: "solved-captcha")
            await #expect(throws: missing) { try await client.sendCode(.signIn(.email("captcha@example.com"), createUser: false)) }
            try await client.sendCode(.signIn(.email("captcha@example.com"), createUser: false), captchaToken: "solved-captcha")
            await #expect(throws: missing) { try await client.sendCode(.recovery(email: "captcha@example.com")) }
            try await client.sendCode(.recovery(email: "captcha@example.com"), captchaToken: "solved-captcha")
            // The refresh grant is exempt: a session signed in once keeps refreshing.
            let rotated = try await client.refresh(refreshToken: grant.refreshToken)
            #expect(rotated.refreshToken != grant.refreshToken)
        }
    }

    @Test func requestsGoThroughTheProxyTheEnvironmentNames() async throws {
        try await DevServerHarness.run(DevServerOptions(anonKey: "anon-key-1")) { harness in
            // A made-up host that only the proxy can reach (it sends every tunnel to the server):
            // loopback addresses never go through a proxy.
            let proxy = try await RecordingProxy.start(upstream: "127.0.0.1:\(harness.server.port)")
            defer { proxy.stop() }
            _ = try await harness.call("POST", "/signup", json: ["email": "proxied@example.com", "password": "password-1"], headers: ["apikey": "anon-key-1"])
            let remote = URL(string: "http://gotrue.proxied.test:\(harness.server.port)")!
            let client = GoTrueClient(projectURL: remote, anonKey: "anon-key-1", environment: ["http_proxy": "http://127.0.0.1:\(proxy.port)"])
            let grant = try await client.signIn(.password(.email("proxied@example.com"), password: "password-1"))
            #expect(grant.user.email == "proxied@example.com")
            // authd tunnels through an HTTP proxy with CONNECT, for http as for https.
            #expect(proxy.log.contains("tunnelled CONNECT gotrue.proxied.test:\(harness.server.port)"), "\(proxy.log)")
        }
    }

    @Test func requestsGoThroughASOCKS5ProxyWhichResolvesTheName() async throws {
        try await DevServerHarness.run(DevServerOptions(anonKey: "anon-key-1")) { harness in
            let proxy = try await RecordingProxy.start(upstream: "127.0.0.1:\(harness.server.port)")
            defer { proxy.stop() }
            _ = try await harness.call("POST", "/signup", json: ["email": "socks@example.com", "password": "password-1"], headers: ["apikey": "anon-key-1"])
            let remote = URL(string: "http://gotrue.proxied.test:\(harness.server.port)")!
            let client = GoTrueClient(projectURL: remote, anonKey: "anon-key-1", environment: ["all_proxy": "socks5h://127.0.0.1:\(proxy.port)"])
            let grant = try await client.signIn(.password(.email("socks@example.com"), password: "password-1"))
            #expect(grant.user.email == "socks@example.com")
            _ = try await client.refresh(refreshToken: grant.refreshToken)
            // The name goes to the proxy unresolved (this one does not exist in DNS).
            #expect(proxy.log.components(separatedBy: "socks tunnelled CONNECT gotrue.proxied.test:\(harness.server.port)").count == 3, "\(proxy.log)")
        }
    }

    @Test(arguments: ["http", "socks5"])
    func aTunnelTheProxyRefusesIsATransientFailureBeforeSending(_ scheme: String) async throws {
        let proxy = try await RecordingProxy.start()
        defer { proxy.stop() }
        let client = GoTrueClient(projectURL: URL(string: "https://refused.proxied.test")!, anonKey: "k", timeout: 60,
                                  environment: ["https_proxy": "\(scheme)://127.0.0.1:\(proxy.port)"])
        do throws(ServerFailure) {
            _ = try await client.refresh(refreshToken: "refresh-token-that-must-not-leak")
            Issue.record("the refresh went through")
        } catch {
            guard case .notSent(_, let detail) = error else { Issue.record("wrong failure \(error)"); return }
            #expect(detail == (scheme == "http" ? "the proxy refused the connection (HTTP 403)" : "the SOCKS proxy could not connect to the server"))
            #expect(error.refreshClass == .transient(.offline, retryAfter: nil))
            #expect(proxy.log.contains("refused CONNECT refused.proxied.test:443"), "\(proxy.log)")
        }
    }

    @Test func anHTTPSServerNamedByAddressIsNotReachedThroughAProxy() async throws {
        let proxy = try await RecordingProxy.start()
        defer { proxy.stop() }
        // Its certificate would be checked against the proxy's address; refused before connecting.
        let client = GoTrueClient(projectURL: URL(string: "https://192.0.2.1")!, anonKey: "k", timeout: 60,
                                  environment: ["https_proxy": "http://127.0.0.1:\(proxy.port)"])
        do throws(ServerFailure) {
            _ = try await client.refresh(refreshToken: "whatever")
            Issue.record("the refresh went through")
        } catch {
            guard case .notSent(_, let detail) = error else { Issue.record("wrong failure \(error)"); return }
            #expect(detail.hasPrefix("an https server named by its IP address cannot be checked through a proxy"), "\(detail)")
        }
        #expect(proxy.log.isEmpty, "the proxy saw: \(proxy.log)")
    }

    /// A TCP socket listening on 127.0.0.1 at a free port, which the kernel completes connections
    /// to (a backlog of 4) whether or not anything accepts them.
    static func loopbackListener() throws -> (socket: Int32, port: Int) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                try #require(bind(listener, raw, length) == 0 && listen(listener, 4) == 0 && getsockname(listener, raw, &length) == 0)
            }
        }
        return (listener, Int(UInt16(bigEndian: address.sin_port)))
    }

    @Test func aCancelledRequestEndsAtOnceInsteadOfAtItsDeadline() async throws {
        // A server that takes connections (the kernel completes them) and never answers.
        let (listener, port) = try Self.loopbackListener()
        defer { close(listener) }
        let client = GoTrueClient(projectURL: URL(string: "http://127.0.0.1:\(port)")!, anonKey: "k", timeout: 60)
        let request = Task { () async -> ServerFailure? in
            do throws(ServerFailure) {
                _ = try await client.refresh(refreshToken: "whatever")
                return nil
            } catch {
                return error
            }
        }
        // The request has reached the server (all of it, the body too) before it is cancelled:
        // it was sent, and waits for an answer. Off the cooperative pool: accept and read block.
        let connection = try await offPool { Self.acceptRequest(on: listener, containing: "whatever") }
        defer { if connection >= 0 { close(connection) } }
        try #require(connection >= 0, "the request never reached the server")
        request.cancel()
        let failure = await request.value
        // Sent, so "unreachable" (the server may have seen it); it ends, and says why.
        switch failure {
        case .unreachable(_, let detail): #expect(detail == "cancelled")
        default: Issue.record("wrong failure \(String(describing: failure))")
        }
    }

    /// Accepts one connection on `listener` and reads from it until `text` has come; the
    /// connection (left open), or -1 when none came with it within a minute (a bound that only
    /// ends a failing test).
    static func acceptRequest(on listener: Int32, containing text: String) -> Int32 {
        let deadline = Date().addingTimeInterval(60)
        func readable(_ descriptor: Int32) -> Bool {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            return poll(&entry, 1, Int32(max(0, deadline.timeIntervalSinceNow) * 1000)) == 1
        }
        guard readable(listener) else { return -1 }
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return -1 }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: received, as: UTF8.self).contains(text) {
            let count = readable(connection) ? read(connection, &buffer, buffer.count) : -1
            guard count > 0 else {
                close(connection)
                return -1
            }
            received += buffer[0..<count]
        }
        return connection
    }

    @Test func aHeaderValueWithAControlCharacterIsRefusedBeforeConnectingAndNotEchoed() async throws {
        let (listener, port) = try Self.loopbackListener()
        defer { close(listener) }
        let client = GoTrueClient(projectURL: URL(string: "http://127.0.0.1:\(port)")!, anonKey: "anon-key\r\nX-Injected: 1", timeout: 60)
        do throws(ServerFailure) {
            _ = try await client.refresh(refreshToken: "refresh-token-that-must-not-leak")
            Issue.record("the refresh went out")
        } catch {
            guard case .notSent(_, let detail) = error else { Issue.record("wrong failure \(error)"); return }
            #expect(detail == "a header value (the anon key or the access token) holds a control character")
            #expect(!"\(error)".contains("X-Injected") && !"\(error)".contains("refresh-token-that-must-not-leak"))
        }
        // Nothing connected: a non-blocking accept finds no connection waiting.
        _ = fcntl(listener, F_SETFL, O_NONBLOCK)
        #expect(accept(listener, nil, nil) == -1)
    }

    @Test func anAnswerLargerThanAMebibyteIsRefusedAfterSending() async throws {
        // A server that answers every request with a 2 MiB body.
        let (listener, port) = try Self.loopbackListener()
        // shutdown wakes the server's accept should the request never come.
        defer { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }
        let server = Thread {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            var request = [UInt8](repeating: 0, count: 65536)
            _ = read(connection, &request, request.count)
            let body = [UInt8](repeating: UInt8(ascii: "x"), count: 2 << 20)
            let head = Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
            _ = (head + body).withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(connection)
        }
        server.start()
        // A generous timeout: the whole suite keeps this process's event loops busy.
        let client = GoTrueClient(projectURL: URL(string: "http://127.0.0.1:\(port)")!, anonKey: "k", timeout: 60)
        do throws(ServerFailure) {
            _ = try await client.refresh(refreshToken: "whatever")
            Issue.record("a 2 MiB answer was taken")
        } catch {
            guard case .unreachable(_, let detail) = error else { Issue.record("wrong failure \(error)"); return }
            #expect(detail == "the answer was too large")
        }
    }

    @Test func aLoopbackServerIsReachedDirectlyWhateverTheProxyVariablesSay() async throws {
        let proxy = try await RecordingProxy.start()
        defer { proxy.stop() }
        try await DevServerHarness.run(DevServerOptions(anonKey: "anon-key-1")) { harness in
            _ = try await harness.call("POST", "/signup", json: ["email": "direct@example.com", "password": "password-1"], headers: ["apikey": "anon-key-1"])
            let address = "http://127.0.0.1:\(proxy.port)"
            let client = GoTrueClient(projectURL: harness.base, anonKey: "anon-key-1",
                                      environment: ["http_proxy": address, "all_proxy": address, "ALL_PROXY": address, "https_proxy": address])
            let grant = try await client.signIn(.password(.email("direct@example.com"), password: "password-1"))
            _ = try await client.refresh(refreshToken: grant.refreshToken)
            #expect(proxy.log.isEmpty, "the proxy saw: \(proxy.log)")
        }
    }

    @Test func aWrongAnonKeyIsRefusedLikeTheGatewayDoes() async throws {
        try await DevServerHarness.run(DevServerOptions(anonKey: "anon-key-1")) { harness in
            let client = GoTrueClient(projectURL: harness.base, anonKey: "wrong")
            await #expect(throws: ServerFailure.self) { _ = try await client.signIn(.password(.email("a@example.com"), password: "password-1")) }
        }
    }

    @Test func anUnreachableServerIsATransientFailureThatNamesTheURL() async throws {
        let client = GoTrueClient(projectURL: URL(string: "http://127.0.0.1:1")!, anonKey: "k", timeout: 5)
        do {
            _ = try await client.refresh(refreshToken: "whatever")
            Issue.record("refresh against a closed port succeeded")
        } catch {
            guard case .notSent(let url, let detail) = error else { Issue.record("wrong failure \(error)"); return }
            #expect(url == "http://127.0.0.1:1/auth/v1")
            #expect(detail == "connection refused")
            #expect(error.refreshClass == .transient(.offline, retryAfter: nil))
            #expect(error.localizedDescription.hasPrefix("cannot reach http://127.0.0.1:1/auth/v1"))
        }
    }

    @Test(arguments: [
        (503, "<html>bad gateway</html>", ["Retry-After": "30"], ServerFailure.http(status: 503, code: nil, message: "service unavailable", retryAfter: 30)),
        (400, #"{"code":"refresh_token_already_used","message":"Invalid Refresh Token: Already Used"}"#, [:],
         .http(status: 400, code: "refresh_token_already_used", message: "Invalid Refresh Token: Already Used", retryAfter: nil)),
        (400, #"{"code":400,"error_code":"session_expired","msg":"Session Expired"}"#, [:],
         .http(status: 400, code: "session_expired", message: "Session Expired", retryAfter: nil)),
        (400, #"{"error":"invalid_grant","error_description":"Nonces mismatch"}"#, [:],
         .http(status: 400, code: "invalid_grant", message: "Nonces mismatch", retryAfter: nil)),
        (429, "{}", ["x-sb-error-code": "over_request_rate_limit"],
         .http(status: 429, code: "over_request_rate_limit", message: "too many requests", retryAfter: nil)),
    ] as [(Int, String, [String: String], ServerFailure)])
    func errorBodiesOfEveryShapeDecode(_ status: Int, _ body: String, _ headers: [String: String], _ expected: ServerFailure) {
        #expect(GoTrueErrorDecoder.failure(status: status, headers: HTTPHeaders(headers.map { ($0.key, $0.value) }), body: Data(body.utf8)) == expected)
    }
}
