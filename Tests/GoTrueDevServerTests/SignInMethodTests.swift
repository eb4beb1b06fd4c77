import AuthCore
import Crypto
import Foundation
import GoTrue
import GoTrueDevServer
import Testing

/// The development server's sign-in methods, request by request with the time passed in (so
/// expiry is tested without sleeping), and the GoTrue adapter against it over real HTTP.
@Suite struct SignInMethodTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    let versioned = ["x-supabase-api-version": "2024-01-01"]

    func post(_ api: DevAuthAPI, _ target: String, _ json: [String: Any], at time: TimeInterval = 0, headers: [String: String] = [:]) -> (status: Int, body: [String: Any], headers: [String: String]) {
        let body = try! JSONSerialization.data(withJSONObject: json)
        let response = api.handle(DevRequest(method: "POST", target: "/auth/v1" + target, headers: versioned.merging(headers) { $1 }, body: body),
                                  now: t0.addingTimeInterval(time))
        return (response.status, (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:], response.headers)
    }

    func get(_ api: DevAuthAPI, _ target: String, at time: TimeInterval = 0) -> (status: Int, body: [String: Any], headers: [String: String]) {
        let response = api.handle(DevRequest(method: "GET", target: "/auth/v1" + target, headers: [:], body: Data()), now: t0.addingTimeInterval(time))
        return (response.status, (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:], response.headers)
    }

    func lastCode(_ api: DevAuthAPI, to address: String) -> String? {
        ((get(api, "/admin/dev/outbox?to=\(address)").body["messages"] as? [[String: Any]])?.last?["code"]) as? String
    }

    @Test func aCodeWorksOnceAndNotAfterItsLifetime() {
        var options = DevServerOptions()
        options.otpLifetime = 60
        let api = DevAuthAPI(options: options)
        #expect(post(api, "/otp", ["email": "c@example.com", "create_user": false]).body["code"] as? String == "otp_disabled")
        #expect(post(api, "/otp", ["email": "c@example.com"]).status == 200)
        let code = lastCode(api, to: "c@example.com")!
        #expect(code.count == 6 && code.allSatisfy(\.isNumber))
        let late = post(api, "/verify", ["type": "email", "email": "c@example.com", "token": code], at: 61)
        #expect(late.status == 403 && late.body["code"] as? String == "otp_expired" && late.body["message"] as? String == "Token has expired or is invalid")

        #expect(post(api, "/otp", ["email": "c@example.com"], at: 100).status == 200)
        let fresh = lastCode(api, to: "c@example.com")!
        let session = post(api, "/verify", ["type": "email", "email": "c@example.com", "token": fresh], at: 110)
        #expect(session.status == 200 && session.body["access_token"] is String)
        #expect(post(api, "/verify", ["type": "email", "email": "c@example.com", "token": fresh], at: 111).status == 403)
    }

    @Test func confirmationRequiredSignUpAnswersABareUserUntilTheCodeIsVerified() {
        var options = DevServerOptions()
        options.mailerAutoconfirm = false
        let api = DevAuthAPI(options: options)
        let signUp = post(api, "/signup", ["email": "new@example.com", "password": "password-1"])
        #expect(signUp.status == 200 && signUp.body["access_token"] == nil && signUp.body["confirmation_sent_at"] is String)
        #expect(signUp.body["id"] is String && signUp.body["email"] as? String == "new@example.com")
        let early = post(api, "/token?grant_type=password", ["email": "new@example.com", "password": "password-1"])
        #expect(early.status == 400 && early.body["code"] as? String == "email_not_confirmed")
        let code = lastCode(api, to: "new@example.com")!
        #expect(post(api, "/verify", ["type": "signup", "email": "new@example.com", "token": code]).status == 200)
        #expect(post(api, "/token?grant_type=password", ["email": "new@example.com", "password": "password-1"]).status == 200)
    }

    @Test func idTokensAreCheckedForIssuerAudienceAndNonceWithGoTruesErrorBodies() {
        let api = DevAuthAPI(options: DevServerOptions())
        func mint(_ extra: [String: Any]) -> String {
            post(api, "/admin/dev/id_token", ["provider": "google", "email": "g@example.com"].merging(extra) { $1 }).body["id_token"] as! String
        }
        let raw = "raw-nonce-1"
        let hash = SHA256.hash(data: Data(raw.utf8)).map { String(format: "%02x", $0) }.joined()
        let withNonce = mint(["nonce": hash])

        let missing = post(api, "/token?grant_type=id_token", ["provider": "google", "id_token": withNonce])
        #expect(missing.status == 400)
        #expect(missing.body as NSDictionary == ["error": "invalid request", "error_description": "Passed nonce and nonce in id_token should either both exist or not."])
        let mismatch = post(api, "/token?grant_type=id_token", ["provider": "google", "id_token": withNonce, "nonce": hash])
        #expect(mismatch.body as NSDictionary == ["error": "invalid nonce", "error_description": "Nonces mismatch"])
        let audience = post(api, "/token?grant_type=id_token", ["provider": "google", "id_token": mint(["aud": "ios-client"])])
        #expect(audience.body["error_description"] as? String == "Unacceptable audience in id_token: [ios-client]")
        let wrongIssuer = post(api, "/token?grant_type=id_token", ["provider": "apple", "id_token": mint([:])])
        #expect(wrongIssuer.body["error_description"] as? String == "Bad ID token")
        let expired = post(api, "/token?grant_type=id_token", ["provider": "google", "id_token": mint(["expires_in": 10])], at: 11)
        #expect(expired.body["error_description"] as? String == "Bad ID token")
        var forged = withNonce.split(separator: ".").map(String.init)
        forged[2] = String(forged[2].reversed())
        #expect(post(api, "/token?grant_type=id_token", ["provider": "google", "id_token": forged.joined(separator: "."), "nonce": raw])
            .body["error_description"] as? String == "Bad ID token")
        let good = post(api, "/token?grant_type=id_token", ["provider": "google", "id_token": withNonce, "nonce": raw])
        #expect(good.status == 200 && (good.body["user"] as? [String: Any])?["email"] as? String == "g@example.com")
    }

    @Test func authorizeRedirectsWithACodeThatOnlyTheRightVerifierExchanges() throws {
        let api = DevAuthAPI(options: DevServerOptions(anonKey: "anon"))
        let verifier = String(repeating: "v", count: 50)
        let challenge = Data(SHA256.hash(data: Data(verifier.utf8))).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let redirect = get(api, "/authorize?provider=github&redirect_to=http%3A%2F%2F127.0.0.1%3A5000%2Fcallback&code_challenge=\(challenge)&code_challenge_method=s256")
        #expect(redirect.status == 302) // no apikey needed: a browser sends none
        let location = try #require(redirect.headers["Location"])
        #expect(location.hasPrefix("http://127.0.0.1:5000/callback?code="))
        let code = String(location.split(separator: "=").last!)
        let apikey = ["apikey": "anon"]

        let wrong = post(api, "/token?grant_type=pkce", ["auth_code": code, "code_verifier": String(repeating: "w", count: 50)], headers: apikey)
        #expect(wrong.status == 403 && wrong.body["code"] as? String == "bad_code_verifier")
        let late = post(api, "/token?grant_type=pkce", ["auth_code": code, "code_verifier": verifier], at: 301, headers: apikey)
        #expect(late.status == 400 && late.body["code"] as? String == "flow_state_expired")
        #expect(post(api, "/token?grant_type=pkce", ["auth_code": code, "code_verifier": verifier], headers: apikey).body["code"] as? String == "flow_state_not_found")

        let again = get(api, "/authorize?provider=github&redirect_to=myapp%3A%2F%2Fcb&code_challenge=\(challenge)&code_challenge_method=s256")
        let second = String(try #require(again.headers["Location"]).split(separator: "=").last!)
        #expect(again.headers["Location"]?.hasPrefix("myapp://cb?code=") == true)
        let session = post(api, "/token?grant_type=pkce", ["auth_code": second, "code_verifier": verifier], headers: apikey)
        #expect(session.status == 200 && session.body["provider_token"] is String)

        let elsewhere = get(api, "/authorize?provider=github&redirect_to=https%3A%2F%2Fevil.example%2F&code_challenge=\(challenge)&code_challenge_method=s256")
        #expect(elsewhere.headers["Location"]?.hasPrefix("http://127.0.0.1:9999?code=") == true) // falls back to the site URL
        #expect(get(api, "/authorize?provider=myspace&code_challenge=x&code_challenge_method=s256").status == 400)
    }

    @Test func theAdapterSpeaksEveryMethodOverHTTP() async throws {
        try await DevServerHarness.run(DevServerOptions(anonKey: "k")) { harness in
            let client = GoTrueClient(projectURL: harness.base, anonKey: "k")
            guard case .signedIn(let grant) = try await client.signUp(SignUpRequest(address: .email("h@example.com"), password: "password-1",
                                                                                      metadata: Data(#"{"plan":"free"}"#.utf8))) else {
                Issue.record("an auto-confirming project did not sign the new user in")
                return
            }
            let user = try await client.user(accessToken: grant.accessToken)
            #expect(user.summary.email == "h@example.com")
            let updated = try await client.updateUser(accessToken: grant.accessToken, UserChanges(metadata: Data(#"{"plan":"pro"}"#.utf8)))
            let metadata = (try JSONSerialization.jsonObject(with: updated.json) as? [String: Any])?["user_metadata"] as? [String: Any]
            #expect(metadata?["plan"] as? String == "pro")
            await #expect(throws: ServerFailure.http(status: 422, code: "same_password", message: "New password should be different from the old password.", retryAfter: nil)) {
                _ = try await client.updateUser(accessToken: grant.accessToken, UserChanges(password: "password-1"))
            }
            try await client.sendCode(.recovery(email: "h@example.com"))
            try await client.sendCode(.signIn(.phone("+15550001234"), createUser: true))
            await #expect(throws: ServerFailure.http(status: 403, code: "otp_expired", message: "Token has expired or is invalid", retryAfter: nil)) {
                _ = try await client.signIn(.oneTimeCode(.email("h@example.com"), code: "000000", type: .recovery))
            }
            // The id_token grant's OAuth-style error comes through with its description.
            await #expect(throws: ServerFailure.http(status: 400, code: "invalid request", message: "Bad ID token", retryAfter: nil)) {
                _ = try await client.signIn(.idToken(provider: "google", idToken: "not.a.token", accessToken: nil, nonce: nil))
            }
            let url = client.authorizeURL(provider: "google", redirectTo: "http://127.0.0.1:5000/callback", codeChallenge: "abc", scopes: "email profile")
            let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            #expect(query.first { $0.name == "redirect_to" }?.value == "http://127.0.0.1:5000/callback")
            #expect(query.first { $0.name == "scopes" }?.value == "email profile")
            #expect(query.first { $0.name == "code_challenge_method" }?.value == "s256")
        }
    }
}
