import AuthCore
import Foundation
import GoTrue
import Testing

/// What `GoTrueClient` sends for every call, byte for byte: method, target (path and query) and
/// JSON body, seen by a server that records them. The client writes a body's keys in sorted
/// order, so the same request is the same bytes every time; the bodies here were first checked
/// as JSON values against the client that built them from dictionaries.
@Suite struct GoTrueRequestBodyTests {
    static let user = #"{"id":"9d7a8c4e-0000-4000-8000-000000000001","email":"a@example.com"}"#
    static let session = #"{"access_token":"at","refresh_token":"rt","expires_in":3600,"user":\#(user)}"#
    static let factorID = "2b7c6c3e-0000-4000-8000-000000000009"
    static let challengeID = "2b7c6c3e-0000-4000-8000-00000000000a"
    static let identityID = "2b7c6c3e-0000-4000-8000-00000000000b"
    static let link = EmailLink(redirectTo: "http://127.0.0.1:4000/cb?x=a+b", codeChallenge: "chal")
    static let redirectQuery = "redirect_to=http://127.0.0.1:4000/cb?x%3Da%2Bb"

    /// GoTrue's answers to each path, enough for the client to read them.
    static func answer(_ request: RecordingHTTPServer.Request) -> RecordingHTTPServer.Answer {
        let path = String(request.target.prefix { $0 != "?" })
        switch (request.method, path) {
        case ("POST", "/auth/v1/token"), ("POST", "/auth/v1/verify"), ("POST", "/auth/v1/signup"),
             ("POST", "/auth/v1/factors/\(factorID)/verify"):
            return .init(status: 200, body: session)
        case ("GET", "/auth/v1/user"), ("PUT", "/auth/v1/user"): return .init(status: 200, body: user)
        case ("POST", "/auth/v1/factors"):
            return .init(status: 200, body: #"{"id":"\#(factorID)","type":"totp","totp":{"uri":"otpauth://totp/x","secret":"S","qr_code":"q"}}"#)
        case ("POST", "/auth/v1/factors/\(factorID)/challenge"):
            return .init(status: 200, body: #"{"id":"\#(challengeID)","type":"totp","expires_at":1800000000}"#)
        case ("GET", "/auth/v1/user/identities/authorize"), ("POST", "/auth/v1/sso"):
            return .init(status: 200, body: #"{"url":"https://idp.example.com/start"}"#)
        case ("POST", "/auth/v1/logout"): return .init(status: 204, body: "")
        default: return .init(status: 200, body: "{}")
        }
    }

    /// Makes the calls `calls` and checks each request against `expected` (method, target, body).
    func check(_ calls: (GoTrueClient) async throws -> Void, _ expected: [(String, String, String)],
               sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let server = try await RecordingHTTPServer.start(answer: Self.answer)
        let client = GoTrueClient(projectURL: server.base, anonKey: "anon", environment: [:])
        do { try await calls(client) } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        let requests = server.requests
        #expect(requests.count == expected.count, sourceLocation: sourceLocation)
        for (request, (method, target, body)) in zip(requests, expected) {
            #expect(request.method == method && request.target == target, "\(request)", sourceLocation: sourceLocation)
            #expect(String(decoding: request.body, as: UTF8.self) == body, "\(request)", sourceLocation: sourceLocation)
        }
    }

    @Test func signInGrants() async throws {
        let metadata = Data(#"{"plan":"free","n":1,"nested":{"b":true,"a":null,"f":1.5,"s":"x/y"}}"#.utf8)
        try await check({ client in
            _ = try await client.signIn(.password(.email("a@example.com"), password: "pw-1"))
            _ = try await client.signIn(.password(.phone("+15551234567"), password: "pw-1"), captchaToken: "cap")
            _ = try await client.signIn(.oneTimeCode(.email("a@example.com"), code: "123456", type: .email), captchaToken: "cap")
            _ = try await client.signIn(.oneTimeCode(.phone("+15551234567"), code: "123456", type: .phoneChange))
            _ = try await client.signIn(.idToken(provider: "google", idToken: "idt", accessToken: nil, nonce: nil), captchaToken: "cap")
            _ = try await client.signIn(.idToken(provider: "apple", idToken: "idt", accessToken: "oat", nonce: "n-1"))
            _ = try await client.signIn(.authorizationCode(code: "c-1", codeVerifier: "v-1"), captchaToken: "cap")
            _ = try await client.signIn(.tokenHash("h-1", type: .magiclink))
            _ = try await client.signIn(.anonymous(metadata: nil))
            _ = try await client.signIn(.anonymous(metadata: metadata), captchaToken: "cap")
            _ = try await client.signIn(.refreshToken("r-1"), captchaToken: "cap")
            _ = try await client.refresh(refreshToken: "r-2")
        }, [
            ("POST", "/auth/v1/token?grant_type=password", #"{"email":"a@example.com","password":"pw-1"}"#),
            ("POST", "/auth/v1/token?grant_type=password", #"{"gotrue_meta_security":{"captcha_token":"cap"},"password":"pw-1","phone":"+15551234567"}"#),
            ("POST", "/auth/v1/verify", #"{"email":"a@example.com","token":"123456","type":"email"}"#),
            ("POST", "/auth/v1/verify", #"{"phone":"+15551234567","token":"123456","type":"phone_change"}"#),
            ("POST", "/auth/v1/token?grant_type=id_token", #"{"id_token":"idt","provider":"google"}"#),
            ("POST", "/auth/v1/token?grant_type=id_token", #"{"access_token":"oat","id_token":"idt","nonce":"n-1","provider":"apple"}"#),
            ("POST", "/auth/v1/token?grant_type=pkce", #"{"auth_code":"c-1","code_verifier":"v-1"}"#),
            ("POST", "/auth/v1/verify", #"{"token_hash":"h-1","type":"magiclink"}"#),
            ("POST", "/auth/v1/signup", "{}"),
            ("POST", "/auth/v1/signup", #"{"data":{"n":1,"nested":{"a":null,"b":true,"f":1.5,"s":"x\/y"},"plan":"free"},"gotrue_meta_security":{"captcha_token":"cap"}}"#),
            ("POST", "/auth/v1/token?grant_type=refresh_token", #"{"refresh_token":"r-1"}"#),
            ("POST", "/auth/v1/token?grant_type=refresh_token", #"{"refresh_token":"r-2"}"#),
        ])
    }

    @Test func signUpCodesAndResends() async throws {
        let q = Self.redirectQuery
        let pkce = #""code_challenge":"chal","code_challenge_method":"s256""#
        try await check({ client in
            _ = try await client.signUp(SignUpRequest(address: .email("a@example.com"), password: "pw-1"))
            _ = try await client.signUp(SignUpRequest(address: .phone("+15551234567"), password: "pw-1", metadata: Data(#"{"k":"v"}"#.utf8),
                                                      link: Self.link), captchaToken: "cap")
            try await client.sendCode(.signIn(.email("a@example.com"), createUser: true))
            try await client.sendCode(.signIn(.phone("+15551234567"), createUser: false), captchaToken: "cap", link: Self.link)
            try await client.sendCode(.recovery(email: "a@example.com"))
            try await client.sendCode(.recovery(email: "a@example.com"), captchaToken: "cap", link: Self.link)
            try await client.resend(ResendRequest(address: .email("a@example.com"), purpose: .signup), captchaToken: nil, link: nil)
            try await client.resend(ResendRequest(address: .phone("+15551234567"), purpose: .phoneChange), captchaToken: "cap", link: Self.link)
        }, [
            ("POST", "/auth/v1/signup", #"{"email":"a@example.com","password":"pw-1"}"#),
            ("POST", "/auth/v1/signup?\(q)",
             #"{\#(pkce),"data":{"k":"v"},"gotrue_meta_security":{"captcha_token":"cap"},"password":"pw-1","phone":"+15551234567"}"#),
            ("POST", "/auth/v1/otp", #"{"create_user":true,"email":"a@example.com"}"#),
            ("POST", "/auth/v1/otp?\(q)", #"{\#(pkce),"create_user":false,"gotrue_meta_security":{"captcha_token":"cap"},"phone":"+15551234567"}"#),
            ("POST", "/auth/v1/recover", #"{"email":"a@example.com"}"#),
            ("POST", "/auth/v1/recover?\(q)", #"{\#(pkce),"email":"a@example.com","gotrue_meta_security":{"captcha_token":"cap"}}"#),
            ("POST", "/auth/v1/resend", #"{"email":"a@example.com","type":"signup"}"#),
            ("POST", "/auth/v1/resend?\(q)", #"{\#(pkce),"gotrue_meta_security":{"captcha_token":"cap"},"phone":"+15551234567","type":"phone_change"}"#),
        ])
    }

    @Test func userAndSessionCalls() async throws {
        try await check({ client in
            _ = try await client.user(accessToken: "at")
            _ = try await client.updateUser(accessToken: "at", UserChanges())
            _ = try await client.updateUser(accessToken: "at", UserChanges(email: "b@example.com"))
            _ = try await client.updateUser(accessToken: "at", UserChanges(email: "b@example.com", phone: "+15551234567", password: "pw-2",
                                                                           metadata: Data(#"{"k":[1,"two"]}"#.utf8), nonce: "n-1"))
            try await client.reauthenticate(accessToken: "at")
            try await client.signOut(accessToken: "at", scope: .global)
            try await client.signOut(accessToken: "at", scope: .others)
        }, [
            ("GET", "/auth/v1/user", ""),
            ("PUT", "/auth/v1/user", "{}"),
            ("PUT", "/auth/v1/user", #"{"email":"b@example.com"}"#),
            ("PUT", "/auth/v1/user", #"{"data":{"k":[1,"two"]},"email":"b@example.com","nonce":"n-1","password":"pw-2","phone":"+15551234567"}"#),
            ("GET", "/auth/v1/reauthenticate", ""),
            ("POST", "/auth/v1/logout?scope=global", ""),
            ("POST", "/auth/v1/logout?scope=others", ""),
        ])
    }

    @Test func factorCalls() async throws {
        let id = Self.factorID
        try await check({ client in
            _ = try await client.enrollFactor(accessToken: "at", FactorEnrollmentRequest(kind: .totp))
            _ = try await client.enrollFactor(accessToken: "at", FactorEnrollmentRequest(kind: .totp, friendlyName: "Phone app", issuer: "Acme"))
            _ = try await client.enrollFactor(accessToken: "at", FactorEnrollmentRequest(kind: .phone, friendlyName: "Mobile", phone: "+15551234567"))
            _ = try await client.challengeFactor(accessToken: "at", factorID: id, channel: nil)
            _ = try await client.challengeFactor(accessToken: "at", factorID: id.uppercased(), channel: "whatsapp")
            _ = try await client.verifyFactor(accessToken: "at", factorID: id, challengeID: Self.challengeID, code: "123456")
            try await client.unenrollFactor(accessToken: "at", factorID: id)
        }, [
            ("POST", "/auth/v1/factors", #"{"factor_type":"totp"}"#),
            ("POST", "/auth/v1/factors", #"{"factor_type":"totp","friendly_name":"Phone app","issuer":"Acme"}"#),
            ("POST", "/auth/v1/factors", #"{"factor_type":"phone","friendly_name":"Mobile","phone":"+15551234567"}"#),
            ("POST", "/auth/v1/factors/\(id)/challenge", "{}"),
            ("POST", "/auth/v1/factors/\(id)/challenge", #"{"channel":"whatsapp"}"#),
            ("POST", "/auth/v1/factors/\(id)/verify", #"{"challenge_id":"\#(Self.challengeID)","code":"123456"}"#),
            ("DELETE", "/auth/v1/factors/\(id)", ""),
        ])
    }

    @Test func identityAndSingleSignOnCalls() async throws {
        let redirect = "http://127.0.0.1:4000/cb?x=a+b"
        let pkce = #""code_challenge":"chal","code_challenge_method":"s256""#
        try await check({ client in
            _ = try await client.identityLinkURL(accessToken: "at", provider: "github", redirectTo: redirect, codeChallenge: "chal", scopes: nil)
            _ = try await client.identityLinkURL(accessToken: "at", provider: "google", redirectTo: redirect, codeChallenge: "chal", scopes: "a b+c")
            try await client.unlinkIdentity(accessToken: "at", identityID: Self.identityID)
            _ = try await client.singleSignOnURL(.domain("example.com"), redirectTo: redirect, codeChallenge: "chal")
            _ = try await client.singleSignOnURL(.provider(Self.factorID), redirectTo: redirect, codeChallenge: "chal")
        }, [
            ("GET", "/auth/v1/user/identities/authorize?provider=github&\(Self.redirectQuery)&code_challenge=chal&code_challenge_method=s256&skip_http_redirect=true", ""),
            ("GET", "/auth/v1/user/identities/authorize?provider=google&\(Self.redirectQuery)&code_challenge=chal&code_challenge_method=s256&skip_http_redirect=true&scopes=a%20b%2Bc", ""),
            ("DELETE", "/auth/v1/user/identities/\(Self.identityID)", ""),
            ("POST", "/auth/v1/sso", #"{\#(pkce),"domain":"example.com","redirect_to":"http:\/\/127.0.0.1:4000\/cb?x=a+b","skip_http_redirect":true}"#),
            ("POST", "/auth/v1/sso", #"{\#(pkce),"provider_id":"\#(Self.factorID)","redirect_to":"http:\/\/127.0.0.1:4000\/cb?x=a+b","skip_http_redirect":true}"#),
        ])
    }

    @Test func bodilessCalls() async throws {
        try await check({ client in
            _ = try await client.health()
            _ = try? await client.keySet()
        }, [
            ("GET", "/auth/v1/health", ""),
            ("GET", "/auth/v1/.well-known/jwks.json", ""),
        ])
    }
}
