import AuthProtocol
import Foundation
import Testing

/// Golden fixtures pin every message both ways: what we encode is byte-for-byte the fixture,
/// and the fixture decodes to the same value.
@Suite struct WireFormatTests {
    static func fixture(_ name: String) throws -> Data {
        guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures") else {
            throw FixtureMissing(name: name)
        }
        var data = try Data(contentsOf: url)
        while data.last == 0x0A { data.removeLast() }
        return data
    }

    static func line(_ data: Data) -> Data {
        var data = data
        while data.last == 0x0A { data.removeLast() }
        return data
    }

    let user = SessionStatus.User(id: "9b2f6c1e-0000-4000-8000-000000000001", email: "a@example.com", phone: nil)

    @Test func tokenRequestAndResult() throws {
        let request = try RPCCodec.encodeRequest(method: Methods.Token.name, params: Methods.Token.Parameters(profile: "work", minValidity: 60), id: .number(7))
        #expect(Self.line(request) == (try Self.fixture("request-token")))
        let result = Methods.Token.Result(accessToken: "eyJhbGciOiJIUzI1NiJ9.e30.sig", expiresAt: 1_800_003_600, expiresIn: 3540)
        #expect(Self.line(try RPCCodec.encodeResult(result, id: .number(7))) == (try Self.fixture("result-token")))
        let decoded = try JSONDecoder().decode(RPCResponse<Methods.Token.Result>.self, from: try Self.fixture("result-token"))
        #expect(decoded.result == result && decoded.id == .number(7))
        #expect(try RPCCodec.decodeParams(Methods.Token.Parameters.self, from: try Self.fixture("request-token"))
                == Methods.Token.Parameters(profile: "work", minValidity: 60))
    }

    @Test func checkServerBothWays() throws {
        let request = try RPCCodec.encodeRequest(method: Methods.CheckServer.name, params: ProfileParameters(profile: "work"), id: .number(9))
        #expect(Self.line(request) == (try Self.fixture("request-check-server")))
        let result = Methods.CheckServer.Result(server: "https://abcd.supabase.co", reachable: true, clockSkew: -2.5)
        #expect(Self.line(try RPCCodec.encodeResult(result, id: .number(9))) == (try Self.fixture("result-check-server")))
        #expect(try JSONDecoder().decode(RPCResponse<Methods.CheckServer.Result>.self, from: try Self.fixture("result-check-server")).result == result)
    }

    @Test func applicationAndParseErrors() throws {
        let error = RPCErrorObject.application(.notSignedIn, "not signed in: run 'authctl login'")
        #expect(Self.line(RPCCodec.encodeError(error, id: .number(7))) == (try Self.fixture("error-not-signed-in")))
        let decoded = try JSONDecoder().decode(RPCResponse<Methods.Token.Result>.self, from: try Self.fixture("error-not-signed-in"))
        #expect(decoded.error == error && decoded.error?.reason == .notSignedIn)
        let parse = RPCErrorObject(code: RPCErrorObject.parseErrorCode, message: "parse error: the line is not valid JSON")
        #expect(Self.line(RPCCodec.encodeError(parse, id: nil)) == (try Self.fixture("error-parse")))
    }

    @Test func helloBothWays() throws {
        let request = try RPCCodec.encodeRequest(method: Methods.Hello.name, params: Methods.Hello.Parameters(client: "example-app"), id: .string("a"))
        #expect(Self.line(request) == (try Self.fixture("request-hello")))
        let result = Methods.Hello.Result(protocolVersion: "1.0", daemonVersion: "0.1.0", capabilities: ["password", "events", "profiles"],
                                          profiles: ["default", "work"], defaultProfile: "default")
        #expect(Self.line(try RPCCodec.encodeResult(result, id: .string("a"))) == (try Self.fixture("result-hello")))
        #expect(try JSONDecoder().decode(RPCResponse<Methods.Hello.Result>.self, from: try Self.fixture("result-hello")).result == result)
    }

    @Test func signInSignOutAndSubscribe() throws {
        let signIn = Methods.SignInWithPassword.Parameters(email: "a@example.com", password: "hunter22")
        #expect(Self.line(try RPCCodec.encodeRequest(method: Methods.SignInWithPassword.name, params: signIn, id: .number(2)))
                == (try Self.fixture("request-sign-in")))
        #expect(Self.line(try RPCCodec.encodeRequest(method: Methods.SignOut.name, params: Methods.SignOut.Parameters(scope: "global"), id: .number(3)))
                == (try Self.fixture("request-sign-out")))
        let status = SessionStatus(profile: "default", state: "signed_out", signOutReason: "user_signed_out", server: "http://127.0.0.1:9999")
        let signOut = Methods.SignOut.Result(status: status, serverConfirmed: false,
                                             serverDetail: "cannot reach http://127.0.0.1:9999/auth/v1: connection refused")
        #expect(Self.line(try RPCCodec.encodeResult(signOut, id: .number(3))) == (try Self.fixture("result-sign-out")))
        #expect(try JSONDecoder().decode(RPCResponse<Methods.SignOut.Result>.self, from: try Self.fixture("result-sign-out")).result == signOut)
        #expect(Self.line(try RPCCodec.encodeRequest(method: Methods.Subscribe.name, params: ProfileParameters(), id: .number(4)))
                == (try Self.fixture("request-subscribe")))
        #expect(Self.line(try RPCCodec.encodeResult(Methods.Subscribe.Result(), id: .number(4))) == (try Self.fixture("result-subscribe")))
    }

    @Test func eventsBothWays() throws {
        let signedIn = SessionStatus(profile: "default", state: "signed_in", user: user, expiresAt: 1_800_003_600, server: "https://abcd.supabase.co")
        let cases: [(String, AuthEventMessage)] = [
            ("event-signed-in", AuthEventMessage(event: "SIGNED_IN", profile: "default", status: signedIn)),
            ("event-initial-session", AuthEventMessage(event: "INITIAL_SESSION", profile: "default",
                                                        status: SessionStatus(profile: "default", state: "signed_out", server: "https://abcd.supabase.co"),
                                                        expired: false)),
            ("event-refresh-failing", AuthEventMessage(event: "REFRESH_FAILING", profile: "default", status: {
                var status = signedIn
                status.degraded = .init(reason: "offline", detail: "cannot reach https://abcd.supabase.co/auth/v1: connection refused", retryAt: 1_800_003_300)
                return status
            }(), reason: "offline")),
        ]
        for (name, message) in cases {
            let encoded = try RPCCodec.encodeNotification(RPCNotification(method: AuthEventMessage.method, params: message))
            #expect(Self.line(encoded) == (try Self.fixture(name)), "\(name)")
            struct Note: Decodable { var method: String; var params: AuthEventMessage }
            #expect(try JSONDecoder().decode(Note.self, from: try Self.fixture(name)).params == message, "\(name)")
        }
    }

    @Test func unknownFieldsAreIgnoredByReaders() throws {
        let line = Data(#"{"id":1,"jsonrpc":"2.0","result":{"access_token":"t","token_type":"bearer","expires_at":1,"expires_in":0,"new_field":{"x":1}}}"#.utf8)
        #expect(try JSONDecoder().decode(RPCResponse<Methods.Token.Result>.self, from: line).result?.accessToken == "t")
    }
}

struct FixtureMissing: Error { let name: String }

/// The envelope rules: which lines are rejected with which standard error.
@Suite struct EnvelopeTests {
    static let cases: [(String, Int?)] = [
        ("not json", RPCErrorObject.parseErrorCode),
        ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":", RPCErrorObject.parseErrorCode),
        ("[1,2,3]", RPCErrorObject.invalidRequestCode),
        ("42", RPCErrorObject.invalidRequestCode),
        ("{\"id\":1,\"method\":\"hello\"}", RPCErrorObject.invalidRequestCode),
        ("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"hello\"}", RPCErrorObject.invalidRequestCode),
        ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", RPCErrorObject.invalidRequestCode),
        ("{\"jsonrpc\":\"2.0\",\"id\":{\"x\":1},\"method\":\"hello\"}", RPCErrorObject.invalidRequestCode),
        ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hello\"}", nil),
        ("{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"session.token\",\"params\":{\"min_validity\":5}}", nil),
        ("{\"jsonrpc\":\"2.0\",\"method\":\"hello\"}", nil),
    ]

    @Test(arguments: cases)
    func envelope(_ line: String, _ expectedCode: Int?) {
        switch RPCCodec.decodeEnvelope(Data(line.utf8)) {
        case .success: #expect(expectedCode == nil, "accepted \(line)")
        case .failure(let rejection): #expect(rejection.error.code == expectedCode, "\(line)")
        }
    }

    @Test func theIdOfAnInvalidRequestIsEchoedWhenReadable() throws {
        guard case .failure(let rejection) = RPCCodec.decodeEnvelope(Data(#"{"jsonrpc":"1.0","id":9,"method":"hello"}"#.utf8)) else {
            Issue.record("accepted")
            return
        }
        #expect(rejection.id == .number(9))
    }

    /// One pass reads the envelope and, for a method whose type is given, its params: what the
    /// two passes (`decodeEnvelope`, then `decodeParams`) read, and the same refusals.
    @Test func theEnvelopeAndItsParamsAreReadInOnePass() throws {
        let types: RPCCodec.ParameterTypes = [Methods.Token.name: Methods.Token.Parameters.self]
        let line = Data(#"{"jsonrpc":"2.0","id":4,"method":"session.token","params":{"profile":"work","min_validity":30,"aal":"aal2"}}"#.utf8)
        guard case .success(let envelope) = RPCCodec.decodeRequest(line, parameterTypes: types) else {
            Issue.record("refused")
            return
        }
        #expect(envelope.id == .number(4) && envelope.method == Methods.Token.name)
        let parameters = try #require(try envelope.parameters?.get() as? Methods.Token.Parameters)
        #expect(parameters == (try RPCCodec.decodeParams(Methods.Token.Parameters.self, from: line)))
        // Absent params read as {}; params of the wrong type are the envelope's error to answer.
        guard case .success(let bare) = RPCCodec.decodeRequest(Data(#"{"jsonrpc":"2.0","id":5,"method":"session.token"}"#.utf8), parameterTypes: types),
              case .success(let wrong) = RPCCodec.decodeRequest(Data(#"{"jsonrpc":"2.0","id":6,"method":"session.token","params":{"min_validity":"soon"}}"#.utf8), parameterTypes: types),
              case .success(let other) = RPCCodec.decodeRequest(Data(#"{"jsonrpc":"2.0","id":7,"method":"session.status"}"#.utf8), parameterTypes: types) else {
            Issue.record("refused")
            return
        }
        #expect(try bare.parameters?.get() as? Methods.Token.Parameters == Methods.Token.Parameters())
        #expect(throws: DecodingError.self) { try wrong.parameters?.get() }
        #expect(wrong.id == .number(6))
        // A method with no type given: the params are left on the line.
        #expect(other.parameters == nil)
        // The envelope's own refusals are unchanged.
        for (bad, code) in [("{", RPCErrorObject.parseErrorCode), (#"{"jsonrpc":"2.0","id":null,"method":"session.token"}"#, RPCErrorObject.invalidRequestCode)] {
            guard case .failure(let rejection) = RPCCodec.decodeRequest(Data(bad.utf8), parameterTypes: types) else {
                Issue.record("accepted \(bad)")
                continue
            }
            #expect(rejection.error.code == code)
        }
    }

    @Test func wrongParameterTypesFailToDecode() {
        #expect(throws: DecodingError.self) {
            try RPCCodec.decodeParams(Methods.Token.Parameters.self,
                                      from: Data(#"{"jsonrpc":"2.0","id":1,"method":"session.token","params":{"min_validity":"soon"}}"#.utf8))
        }
    }
}

/// The sign-in methods beyond the password and the user record, pinned the same way.
@Suite struct AccountWireFormatTests {
    /// Encodes `value` as a request or result with `id`, compares with the fixture, and decodes the fixture back.
    func pin<P: Codable & Equatable & Sendable>(request method: String, _ parameters: P, id: Int64, _ fixture: String) throws {
        #expect(WireFormatTests.line(try RPCCodec.encodeRequest(method: method, params: parameters, id: .number(id))) == (try WireFormatTests.fixture(fixture)))
        #expect(try RPCCodec.decodeParams(P.self, from: try WireFormatTests.fixture(fixture)) == parameters)
    }

    func pin<R: Codable & Equatable & Sendable>(result: R, id: Int64, _ fixture: String) throws {
        #expect(WireFormatTests.line(try RPCCodec.encodeResult(result, id: .number(id))) == (try WireFormatTests.fixture(fixture)))
        #expect(try JSONDecoder().decode(RPCResponse<R>.self, from: try WireFormatTests.fixture(fixture)).result == result)
    }

    @Test func theDefaultProfileSwitched() throws {
        try pin(request: Methods.SetDefaultProfile.name, ProfileParameters(profile: "work"), id: 33, "request-profiles-set-default")
        try pin(result: Methods.SetDefaultProfile.Result(defaultProfile: "work", previous: "default"), id: 33, "result-profiles-set-default")
    }

    @Test func claimsAndHowTheyWereChecked() throws {
        try pin(request: Methods.Claims.name, ProfileParameters(profile: "work"), id: 32, "request-claims")
        let claims: JSONValue = .object([
            "aal": .string("aal1"), "amr": .array([.object(["method": .string("password"), "timestamp": .integer(1_800_000_000)])]),
            "exp": .integer(1_800_003_600), "role": .string("authenticated"), "session_id": .string("5d1e0000-0000-4000-8000-000000000002"),
            "sub": .string("9b2f6c1e-0000-4000-8000-000000000001"),
        ])
        try pin(result: Methods.Claims.Result(profile: "work", claims: claims, algorithm: "ES256", keyID: "0f6b0000-0000-4000-8000-000000000003",
                                              verified: true, detail: "signature checked with the project's published key 0f6b0000-0000-4000-8000-000000000003 (ES256)"),
                id: 32, "result-claims")
    }

    @Test func aPasswordChangeConfirmedWithACode() throws {
        try pin(request: Methods.Reauthenticate.name, ProfileParameters(), id: 30, "request-user-reauthenticate")
        try pin(result: Methods.Reauthenticate.Result(sentTo: "a@example.com", channel: "email"), id: 30, "result-user-reauthenticate")
        try pin(request: Methods.UpdateUser.name, Methods.UpdateUser.Parameters(password: "new-password-1", nonce: "123456"),
                id: 31, "request-user-update-with-nonce")
    }

    @Test func aCaptchaTokenAndTheRefusalThatAsksForOne() throws {
        try pin(request: Methods.SignInWithPassword.name,
                Methods.SignInWithPassword.Parameters(email: "a@example.com", password: "hunter22", captchaToken: "10000000-aaaa-bbbb-cccc-000000000001"),
                id: 2, "request-sign-in-with-captcha")
        let fixture = try WireFormatTests.fixture("error-captcha-required")
        let decoded = try JSONDecoder().decode(RPCResponse<SessionStatus>.self, from: fixture)
        let error = try #require(decoded.error)
        #expect(error.reason == .captchaRequired && error.code == RPCErrorObject.applicationErrorCode)
        #expect(WireFormatTests.line(RPCCodec.encodeError(error, id: .number(2))) == fixture)
    }

    @Test func everyAccountMethodBothWays() throws {
        try pin(request: Methods.SignUp.name, Methods.SignUp.Parameters(email: "a@example.com", password: "hunter22", data: ["name": .string("Ada")]),
                id: 20, "request-sign-up")
        let signedOut = SessionStatus(profile: "default", state: "signed_out", server: "http://127.0.0.1:9999")
        try pin(result: Methods.SignUp.Result(status: signedOut, confirmationSent: true, sentTo: "a@example.com"), id: 20, "result-sign-up")
        try pin(request: Methods.SendCode.name, Methods.SendCode.Parameters(phone: "+15551234567", purpose: "sign_in", createUser: true),
                id: 21, "request-send-code")
        try pin(result: Methods.SendCode.Result(sentTo: "+15551234567", channel: "sms"), id: 21, "result-send-code")
        try pin(request: Methods.VerifyCode.name, Methods.VerifyCode.Parameters(email: "a@example.com", code: "123456", type: "recovery"),
                id: 22, "request-verify-code")
        try pin(request: Methods.SignInWithIdToken.name,
                Methods.SignInWithIdToken.Parameters(provider: "apple", idToken: "eyJhbGciOiJFUzI1NiJ9.e30.sig", nonce: "raw-nonce"),
                id: 23, "request-sign-in-with-id-token")
        try pin(result: Methods.MakeNonce.Result(nonce: "raw-nonce", nonceSHA256: "1f2e3d"), id: 24, "result-make-nonce")
        try pin(request: Methods.OAuthBegin.name, Methods.OAuthBegin.Parameters(provider: "github", redirectTo: "http://127.0.0.1:41234/callback"),
                id: 25, "request-oauth-begin")
        try pin(result: Methods.OAuthBegin.Result(flowID: "Qm9vdA", url: "https://abcd.supabase.co/auth/v1/authorize?provider=github", expiresIn: 300),
                id: 25, "result-oauth-begin")
        try pin(request: Methods.OAuthComplete.name, Methods.OAuthComplete.Parameters(callbackURL: "myapp://login-callback?code=c0de"),
                id: 26, "request-oauth-complete")
        try pin(request: Methods.UpdateUser.name, Methods.UpdateUser.Parameters(data: ["plan": .string("pro"), "seats": .integer(3)]),
                id: 27, "request-user-update")
        let user = JSONValue.object(["id": .string("u1"), "email": .string("a@example.com"),
                                     "user_metadata": .object(["plan": .string("pro"), "seats": .integer(3)])])
        try pin(result: UserResult(profile: "default", user: user), id: 27, "result-user")
    }

    @Test func appMethodsBothWays() throws {
        try pin(request: Methods.ListApps.name, ProfileParameters(profile: "work"), id: 30, "request-apps-list")
        let waiting = AppRecord(app: "/usr/bin/python3.11", executable: "/usr/bin/python3.11", appID: nil, profile: "work",
                                access: "pending", requests: 0, lastUsed: nil)
        let maps = AppRecord(app: "org.gnome.Maps", executable: "/app/bin/gnome-maps", appID: "org.gnome.Maps", profile: "work",
                             access: "allowed", requests: 12, lastUsed: 1_800_000_000)
        try pin(result: Methods.ListApps.Result(apps: [waiting, maps], policies: ["work": "ask"]), id: 30, "result-apps-list")
        try pin(request: Methods.DecideApp.name, Methods.DecideApp.Parameters(profile: "work", app: "/usr/bin/python3.11", decision: "allow"),
                id: 31, "request-apps-decide")
        var allowed = waiting
        allowed.access = "allowed"
        try pin(result: allowed, id: 31, "result-apps-decide")
    }

    @Test func unknownReasonsAndEventNamesAreAcceptedByClients() throws {
        let error = try JSONDecoder().decode(RPCErrorObject.self, from: Data(#"{"code":-32000,"message":"m","data":{"reason":"from_the_future"}}"#.utf8))
        #expect(error.reason == nil && error.data?.reason == "from_the_future")
        #expect(ErrorReason(rawValue: "code_rejected") == .codeRejected)
    }
}

/// The one rule for what a CAPTCHA token can look like, shared by authctl and authd.
@Suite struct CaptchaTokenRuleTests {
    @Test func printableASCIIUpToTheLimitAndNothingElse() {
        #expect(CaptchaTokenRule.isWellFormed("10000000-aaaa-bbbb-cccc-000000000001"))
        #expect(CaptchaTokenRule.isWellFormed(String(repeating: "a", count: CaptchaTokenRule.maximumBytes)))
        #expect(!CaptchaTokenRule.isWellFormed(String(repeating: "a", count: CaptchaTokenRule.maximumBytes + 1)))
        #expect(!CaptchaTokenRule.isWellFormed(""))
        for refused in ["two words", "tab\there", "new\nline", "del\u{7f}", "caf\u{e9}", "nul\u{0}"] {
            #expect(!CaptchaTokenRule.isWellFormed(refused), "\(refused.debugDescription)")
        }
        #expect(CaptchaTokenRule.isWellFormed("!~"), "the ends of printable ASCII")
    }
}
