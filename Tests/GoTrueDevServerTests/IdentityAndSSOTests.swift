import Crypto
import Foundation
import GoTrueDevServer
import Testing

/// The development server's linked identities (`/user/identities/…` through the simulated
/// provider's `/callback`) and enterprise SSO (`POST /sso` through the simulated IdP's page),
/// request by request with the time passed in. The project has an anon key: API calls carry it,
/// the browser's GETs (the callback, the IdP page) do not, as on Supabase. Requests carry the
/// API version header, so errors come as `{"code": …, "message": …}`.
@Suite struct IdentityAndSSOTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    let api = DevAuthAPI(options: DevServerOptions(anonKey: "anon"))
    /// Where the app wants the browser back.
    let appCallback = "http://127.0.0.1:5000/cb"
    let verifier = String(repeating: "v", count: 50)
    var challenge: String {
        Data(SHA256.hash(data: Data(verifier.utf8))).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    typealias Answer = (status: Int, body: [String: Any], headers: [String: String])

    func send(_ method: String, _ target: String, _ json: [String: Any]? = nil, token: String? = nil,
              browser: Bool = false, at time: TimeInterval = 0) -> Answer {
        var headers: [String: String] = browser ? [:] : ["x-supabase-api-version": "2024-01-01", "apikey": "anon"]
        if let token { headers["authorization"] = "Bearer \(token)" }
        let body = try! json.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        let response = api.handle(DevRequest(method: method, target: "/auth/v1" + target, headers: headers, body: body), now: t0.addingTimeInterval(time))
        return (response.status, (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:], response.headers)
    }

    /// A browser GET of a URL the server handed out (its base is the default external URL).
    func browse(_ url: String, at time: TimeInterval = 0) throws -> Answer {
        let base = "http://127.0.0.1:9999/auth/v1"
        try #require(url.hasPrefix(base), "\(url)")
        return send("GET", String(url.dropFirst(base.count)), browser: true, at: time)
    }

    func signUp(_ email: String) throws -> [String: Any] {
        let answer = send("POST", "/signup", ["email": email, "password": "password-1"])
        try #require(answer.status == 200, "\(answer.body)")
        return answer.body
    }

    func token(_ session: [String: Any]) -> String { session["access_token"] as? String ?? "" }
    func user(_ session: [String: Any]) -> [String: Any] { session["user"] as? [String: Any] ?? [:] }
    func identities(_ user: [String: Any]) -> [[String: Any]] { user["identities"] as? [[String: Any]] ?? [] }
    func providers(_ user: [String: Any]) -> [String] { identities(user).compactMap { $0["provider"] as? String } }

    func claims(_ session: [String: Any]) -> [String: Any] {
        let payload = String(token(session).split(separator: ".", omittingEmptySubsequences: false).dropFirst().first ?? "")
        var base64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
    }

    /// The query items of a redirect's `Location`, decoded as a form (GoTrue's `+` is a space).
    func query(_ answer: Answer) -> [String: String] {
        var items: [String: String] = [:]
        for item in URLComponents(string: answer.headers["Location"] ?? "")?.percentEncodedQueryItems ?? [] {
            items[item.name] = (item.value ?? "").replacingOccurrences(of: "+", with: "%20").removingPercentEncoding ?? ""
        }
        return items
    }

    /// `GET /user/identities/authorize` for `provider` with `skip_http_redirect=true`; the URL.
    func linkURL(_ session: [String: Any], provider: String = "github", at time: TimeInterval = 0) throws -> String {
        let answer = send("GET", "/user/identities/authorize?provider=\(provider)&redirect_to=\(appCallback)&code_challenge=\(challenge)&code_challenge_method=s256&skip_http_redirect=true",
                          token: token(session), at: time)
        try #require(answer.status == 200, "\(answer.body)")
        return try #require(answer.body["url"] as? String)
    }

    /// The PKCE exchange of the `code` a redirect carries; must succeed.
    func exchange(_ redirect: Answer, at time: TimeInterval = 0) throws -> [String: Any] {
        let code = try #require(query(redirect)["code"], "\(redirect.headers)")
        let session = send("POST", "/token?grant_type=pkce", ["auth_code": code, "code_verifier": verifier], at: time)
        try #require(session.status == 200, "\(session.body)")
        return session.body
    }

    /// Links `provider`, the simulated provider signing in `email`; the session of the exchange.
    func link(_ session: [String: Any], provider: String = "github", as email: String) throws -> [String: Any] {
        #expect(send("POST", "/admin/dev/oauth", ["email": email]).status == 204)
        let back = try browse(try linkURL(session, provider: provider))
        try #require(back.status == 302 && back.headers["Location"]?.hasPrefix(appCallback + "?code=") == true, "\(back.headers)")
        return try exchange(back)
    }

    /// Registers an SSO provider; its id.
    func registerSSO(_ domains: [String], email: String) throws -> String {
        let answer = send("POST", "/admin/dev/sso", ["domains": domains, "email": email])
        try #require(answer.status == 200, "\(answer.body)")
        return try #require(answer.body["id"] as? String)
    }

    func sso(_ fields: [String: Any], at time: TimeInterval = 0) -> Answer {
        send("POST", "/sso", fields.merging(["redirect_to": appCallback, "code_challenge": challenge, "code_challenge_method": "s256",
                                            "skip_http_redirect": true]) { given, _ in given }, at: time)
    }

    // MARK: Identities

    @Test func usersListGoTruesIdentitiesWithStableIDs() throws {
        let session = try signUp("ids@example.com")
        let id = try #require(user(session)["id"] as? String)
        let email = try #require(identities(user(session)).first)
        #expect(identities(user(session)).count == 1)
        #expect(email["provider"] as? String == "email" && email["id"] as? String == id && email["user_id"] as? String == id)
        #expect(email["email"] as? String == "ids@example.com")
        #expect((email["identity_data"] as? [String: Any])?["email"] as? String == "ids@example.com")
        #expect((email["identity_data"] as? [String: Any])?["sub"] as? String == id)
        let identityID = try #require(email["identity_id"] as? String)
        #expect(UUID(uuidString: identityID) != nil)
        #expect(identities(send("GET", "/user", token: token(session)).body).first?["identity_id"] as? String == identityID,
                "the same identity from one answer to the next")

        // A phone user's identity has the user's id as its id and no email.
        #expect(send("POST", "/otp", ["phone": "+15550007777"]).status == 200)
        let code = try #require(((send("GET", "/admin/dev/outbox?to=15550007777").body["messages"] as? [[String: Any]])?.last?["code"]) as? String)
        let phoneSession = send("POST", "/verify", ["type": "sms", "phone": "15550007777", "token": code]).body
        let phone = try #require(identities(user(phoneSession)).first)
        #expect(phone["provider"] as? String == "phone" && phone["id"] as? String == user(phoneSession)["id"] as? String)
        #expect(phone["email"] == nil && (phone["identity_data"] as? [String: Any])?["phone_verified"] as? Bool == true)

        // An anonymous user has none.
        #expect(identities(user(send("POST", "/signup", [:]).body)).isEmpty)

        // An OAuth user's identity carries the provider's subject.
        #expect(send("POST", "/admin/dev/oauth", ["email": "octo@example.com"]).status == 204)
        let browser = send("GET", "/authorize?provider=github&redirect_to=\(appCallback)&code_challenge=\(challenge)&code_challenge_method=s256", browser: true)
        let oauth = try #require(identities(user(try exchange(browser))).first)
        #expect(oauth["provider"] as? String == "github" && oauth["id"] as? String == "dev-github-octo@example.com")
        #expect((oauth["identity_data"] as? [String: Any])?["email_verified"] as? Bool == true)
    }

    @Test func linkingThroughTheProviderGivesTheSameUserASecondIdentity() throws {
        let session = try signUp("ada@example.com")
        let id = try #require(user(session)["id"] as? String)
        let path = "/user/identities/authorize?provider=github&redirect_to=\(appCallback)&code_challenge=\(challenge)&code_challenge_method=s256"
        let anonymous = send("GET", path)
        #expect(anonymous.status == 401 && anonymous.body["code"] as? String == "no_authorization")
        // Without skip_http_redirect it is a redirect to the same kind of URL.
        let redirect = send("GET", path, token: token(session))
        #expect(redirect.status == 302 && redirect.headers["Location"]?.hasPrefix("http://127.0.0.1:9999/auth/v1/callback?state=") == true)
        #expect(send("GET", "/user/identities/authorize?provider=myspace&code_challenge=\(challenge)&code_challenge_method=s256",
                     token: token(session)).body["code"] as? String == "validation_failed")

        let linked = try link(session, as: "ada-gh@example.com")
        #expect(user(linked)["id"] as? String == id, "the user who asked, not a new one")
        #expect(user(linked)["email"] as? String == "ada@example.com", "a user with an email keeps it")
        #expect(providers(user(linked)) == ["email", "github"])
        #expect(user(linked)["app_metadata"] as? NSDictionary == ["provider": "email", "providers": ["email", "github"]])
        let github = try #require(identities(user(linked)).last)
        #expect(github["id"] as? String == "dev-github-ada-gh@example.com" && github["email"] as? String == "ada-gh@example.com")
        #expect(github["user_id"] as? String == id)
        #expect((claims(linked)["amr"] as? [[String: Any]])?.first?["method"] as? String == "oauth")
        #expect(linked["provider_token"] is String)
        #expect(send("GET", "/admin/dev/stats").body["users"] as? Int == 1)

        // Signing in with GitHub now finds the same user.
        let browser = send("GET", "/authorize?provider=github&redirect_to=\(appCallback)&code_challenge=\(challenge)&code_challenge_method=s256", browser: true)
        #expect(user(try exchange(browser))["id"] as? String == id)
    }

    @Test func aLinkStateIsUsedOnceAndExpires() throws {
        let session = try signUp("once@example.com")
        let url = try linkURL(session)
        #expect(try browse(url).status == 302)
        // A browser sends no API version, so these errors come in the legacy format.
        let again = try browse(url)
        #expect(again.status == 400 && again.body["error_code"] as? String == "flow_state_already_used")
        let late = try browse(try linkURL(session), at: 301)
        #expect(late.status == 400 && late.body["msg"] as? String == "OAuth state has expired")
        #expect(send("GET", "/callback", browser: true).body["error_code"] as? String == "bad_oauth_callback")
        #expect(send("GET", "/callback?state=nope", browser: true).body["error_code"] as? String == "bad_oauth_state")
    }

    @Test func anIdentityOfAnotherUserIsRefusedInTheRedirect() throws {
        // Bob signs in with GitHub first.
        #expect(send("POST", "/admin/dev/oauth", ["email": "bob@example.com"]).status == 204)
        let bob = try exchange(send("GET", "/authorize?provider=github&redirect_to=\(appCallback)&code_challenge=\(challenge)&code_challenge_method=s256", browser: true))
        let ada = try signUp("ada@example.com")
        let refused = try browse(try linkURL(ada))
        #expect(refused.status == 302)
        let location = try #require(refused.headers["Location"])
        #expect(location.hasPrefix(appCallback + "?"))
        #expect(query(refused) == ["error": "server_error", "error_code": "identity_already_exists",
                                   "error_description": "Identity is already linked to another user"])
        #expect(location.hasSuffix("#error=server_error&error_code=identity_already_exists&error_description=Identity+is+already+linked+to+another+user&sb="))
        #expect(providers(send("GET", "/user", token: token(ada)).body) == ["email"])
        #expect(providers(send("GET", "/user", token: token(bob)).body) == ["github"])

        // Linking one's own identity again says so.
        _ = try link(ada, as: "ada-gh@example.com")
        let twice = try browse(try linkURL(ada))
        #expect(query(twice)["error_description"] == "Identity is already linked")
        // The provider's own refusal comes back too.
        #expect(send("POST", "/admin/dev/oauth", ["error": "access_denied", "error_description": "The user said no"]).status == 204)
        #expect(query(try browse(try linkURL(ada)))["error"] == "access_denied")
    }

    @Test func unlinkingRemovesAnIdentityButNeverTheLast() throws {
        let session = try signUp("un@example.com")
        let linked = try link(session, as: "un-gh@example.com")
        let before = identities(user(linked))
        #expect(before.count == 2)

        // GoTrue's checks: a UUID, more than one identity, one of the user's.
        let notUUID = send("DELETE", "/user/identities/abc", token: token(linked))
        #expect(notUUID.status == 404 && notUUID.body["code"] as? String == "validation_failed")
        let unknown = send("DELETE", "/user/identities/\(UUID().uuidString.lowercased())", token: token(linked))
        #expect(unknown.status == 422)
        #expect(unknown.body as NSDictionary == ["code": "identity_not_found", "message": "Identity doesn't exist"])
        #expect(send("DELETE", "/user/identities/\(UUID().uuidString.lowercased())").status == 401)

        let github = try #require(before.first { $0["provider"] as? String == "github" }?["identity_id"] as? String)
        let unlinked = send("DELETE", "/user/identities/\(github)", token: token(linked))
        #expect(unlinked.status == 200 && unlinked.body.isEmpty)
        let after = send("GET", "/user", token: token(linked)).body
        #expect(providers(after) == ["email"] && after["email"] as? String == "un@example.com")
        #expect(after["app_metadata"] as? NSDictionary == ["provider": "email", "providers": ["email"]])

        let last = try #require(identities(after).first?["identity_id"] as? String)
        let refused = send("DELETE", "/user/identities/\(last)", token: token(linked))
        #expect(refused.status == 422)
        #expect(refused.body as NSDictionary == ["code": "single_identity_not_deletable", "message": "User must have at least 1 identity after unlinking"])
        // The identity is free again: another user may link it.
        let other = try signUp("other@example.com")
        #expect(providers(user(try link(other, as: "un-gh@example.com"))) == ["email", "github"])
    }

    @Test func unlinkingTheEmailIdentityMovesTheEmailToTheOneLeft() throws {
        let session = try signUp("primary@example.com")
        let linked = try link(session, as: "secondary@example.com")
        let email = try #require(identities(user(linked)).first { $0["provider"] as? String == "email" }?["identity_id"] as? String)
        #expect(send("DELETE", "/user/identities/\(email)", token: token(linked)).status == 200)
        let after = send("GET", "/user", token: token(linked)).body
        #expect(after["email"] as? String == "secondary@example.com" && after["email_confirmed_at"] is String)
        #expect(after["app_metadata"] as? NSDictionary == ["provider": "github", "providers": ["github"]])
        // The old address is free for a new account.
        #expect(send("POST", "/signup", ["email": "primary@example.com", "password": "password-1"]).status == 200)
    }

    @Test func linkingMakesAnAnonymousUserPermanentWithTheProvidersEmail() throws {
        let anonymous = send("POST", "/signup", [:]).body
        let id = try #require(user(anonymous)["id"] as? String)
        let linked = try link(anonymous, provider: "google", as: "guest@example.com")
        #expect(user(linked)["id"] as? String == id)
        #expect(user(linked)["is_anonymous"] as? Bool == false && claims(linked)["is_anonymous"] as? Bool == false)
        #expect(user(linked)["email"] as? String == "guest@example.com" && user(linked)["email_confirmed_at"] is String)
        #expect(providers(user(linked)) == ["google"])
        #expect(user(linked)["app_metadata"] as? NSDictionary == ["provider": "google", "providers": ["google"]])

        // An email that belongs to someone else is refused, in the redirect.
        _ = try signUp("taken@example.com")
        let other = send("POST", "/signup", [:]).body
        #expect(send("POST", "/admin/dev/oauth", ["email": "taken@example.com"]).status == 204)
        let refused = try browse(try linkURL(other, provider: "google"))
        #expect(query(refused)["error_code"] == "email_exists" && query(refused)["error"] == "invalid_request")
    }

    @Test func withManualLinkingOffBothEndpointsRefuse() throws {
        let session = try signUp("off@example.com")
        #expect(send("POST", "/admin/dev/settings", ["manual_linking": false]).status == 204)
        let link = send("GET", "/user/identities/authorize?provider=github&code_challenge=\(challenge)&code_challenge_method=s256", token: token(session))
        #expect(link.status == 404)
        #expect(link.body as NSDictionary == ["code": "manual_linking_disabled", "message": "Manual linking is disabled"])
        let unlink = send("DELETE", "/user/identities/\(UUID().uuidString.lowercased())", token: token(session))
        #expect(unlink.status == 404 && unlink.body["code"] as? String == "manual_linking_disabled")
        // Authentication comes first, as in GoTrue's router.
        #expect(send("GET", "/user/identities/authorize?provider=github").status == 401)
        #expect(send("POST", "/admin/dev/settings", ["manual_linking": true]).status == 204)
        #expect(try linkURL(session).contains("/callback?state="))
    }

    // MARK: SSO

    @Test func ssoByDomainSignsInAnSSOUserThroughTheIdP() throws {
        #expect(send("GET", "/settings").body["saml_enabled"] as? Bool == false)
        let disabled = sso(["domain": "corp.example"])
        #expect(disabled.status == 404 && disabled.body["code"] as? String == "saml_provider_disabled")

        let providerID = try registerSSO(["corp.example"], email: "ada@corp.example")
        #expect(send("GET", "/settings").body["saml_enabled"] as? Bool == true)
        let start = sso(["domain": "corp.example"])
        #expect(start.status == 200)
        let url = try #require(start.body["url"] as? String)
        #expect(url.hasPrefix("http://127.0.0.1:9999/auth/v1/admin/dev/idp/\(providerID)?"))
        let back = try browse(url, at: 5)
        #expect(back.status == 302 && back.headers["Location"]?.hasPrefix(appCallback + "?code=") == true)
        let session = try exchange(back, at: 6)

        let user = self.user(session)
        #expect(user["email"] as? String == "ada@corp.example" && user["email_confirmed_at"] is String)
        #expect(providers(user) == ["sso:\(providerID)"])
        #expect(user["app_metadata"] as? NSDictionary == ["provider": "sso:\(providerID)", "providers": ["sso:\(providerID)"]])
        #expect(user["is_sso_user"] == nil, "GoTrue never shows is_sso_user")
        #expect(identities(user).first?["id"] as? String == "ada@corp.example", "the NameID")
        let amr = claims(session)["amr"] as? [[String: Any]]
        #expect(amr?.count == 1 && amr?.first?["method"] as? String == "sso/saml" && amr?.first?["provider"] as? String == providerID)
        #expect(session["provider_token"] == nil)

        // A second sign-in finds the same user.
        let again = try exchange(try browse(try #require(sso(["domain": "corp.example"], at: 10).body["url"] as? String), at: 10), at: 10)
        #expect(self.user(again)["id"] as? String == user["id"] as? String)

        // An SSO user is kept apart: the same email may sign up, and signs in as that other user.
        let signUp = send("POST", "/signup", ["email": "ada@corp.example", "password": "password-1"], at: 20)
        #expect(signUp.status == 200 && self.user(signUp.body)["id"] as? String != user["id"] as? String)
        let password = send("POST", "/token?grant_type=password", ["email": "ada@corp.example", "password": "password-1"], at: 21)
        #expect(self.user(password.body)["id"] as? String == self.user(signUp.body)["id"] as? String)

        // The IdP owns the SSO user's email and password.
        let refused = send("PUT", "/user", ["password": "password-2"], token: token(session), at: 30)
        #expect(refused.status == 422)
        #expect(refused.body as NSDictionary == ["code": "user_sso_managed", "message": "Updating email, phone, password of a SSO account only possible via SSO"])
        #expect(send("PUT", "/user", ["email": "new@corp.example"], token: token(session), at: 30).body["code"] as? String == "user_sso_managed")
        #expect(send("PUT", "/user", ["data": ["team": "core"]], token: token(session), at: 30).status == 200)
    }

    @Test func ssoByProviderIDAndAsARedirect() throws {
        let providerID = try registerSSO(["one.example"], email: "bo@one.example")
        _ = try registerSSO(["two.example"], email: "cy@two.example")
        let redirect = send("POST", "/sso", ["provider_id": providerID.uppercased(), "redirect_to": appCallback,
                                             "code_challenge": challenge, "code_challenge_method": "s256"])
        #expect(redirect.status == 303)
        let url = try #require(redirect.headers["Location"])
        let session = try exchange(try browse(url))
        #expect(user(session)["email"] as? String == "bo@one.example")
        #expect((claims(session)["amr"] as? [[String: Any]])?.first?["provider"] as? String == providerID)

        // The IdP signs in whoever it is told to next.
        #expect(send("POST", "/admin/dev/sso", ["id": providerID, "email": "di@one.example"]).body["email"] as? String == "di@one.example")
        let next = try exchange(try browse(try #require(sso(["provider_id": providerID]).body["url"] as? String)))
        #expect(user(next)["email"] as? String == "di@one.example" && user(next)["id"] as? String != user(session)["id"] as? String)
    }

    @Test func ssoRefusesUnknownProvidersAndAmbiguousRequests() throws {
        let providerID = try registerSSO(["corp.example"], email: "ada@corp.example")
        let unknownDomain = sso(["domain": "nowhere.example"])
        #expect(unknownDomain.status == 404)
        #expect(unknownDomain.body as NSDictionary == ["code": "sso_provider_not_found", "message": "No SSO provider assigned for this domain"])
        let unknownID = sso(["provider_id": UUID().uuidString])
        #expect(unknownID.status == 404 && unknownID.body["message"] as? String == "No such SSO provider")
        let both = sso(["domain": "corp.example", "provider_id": providerID])
        #expect(both.status == 400)
        #expect(both.body as NSDictionary == ["code": "validation_failed", "message": "Only one of provider_id or domain supported"])
        let neither = sso([:])
        #expect(neither.status == 400)
        #expect(neither.body as NSDictionary == ["code": "validation_failed", "message": "A provider_id or domain needs to be provided"])
        let badID = sso(["provider_id": "abc"])
        #expect(badID.status == 400 && badID.body["code"] as? String == "bad_json")
        #expect(badID.body["message"] as? String == "Could not parse request body as JSON: uuid: incorrect UUID length 3 in string \"abc\"")
        let halfPKCE = send("POST", "/sso", ["domain": "corp.example", "code_challenge": challenge])
        #expect(halfPKCE.status == 400 && halfPKCE.body["message"] as? String == "PKCE flow requires code_challenge_method and code_challenge")
        #expect(send("POST", "/admin/dev/sso", ["domains": ["corp.example"], "email": "x@corp.example"]).status == 400, "a domain has one provider")

        // GoTrue's CAPTCHA protects POST /sso, but only once SAML is on.
        #expect(send("POST", "/admin/dev/settings", ["captcha_token": "solved"]).status == 204)
        #expect(sso(["domain": "corp.example"]).body["code"] as? String == "captcha_failed")
        #expect(sso(["domain": "corp.example", "gotrue_meta_security": ["captcha_token": "solved"]]).status == 200)
        #expect(send("POST", "/admin/dev/settings", ["saml_enabled": false]).status == 204)
        #expect(sso(["domain": "corp.example"]).body["code"] as? String == "saml_provider_disabled")
    }

    @Test func aRelayStateIsUsedOnceAndExpires() throws {
        _ = try registerSSO(["corp.example"], email: "ada@corp.example")
        let url = try #require(sso(["domain": "corp.example"]).body["url"] as? String)
        #expect(try browse(url).status == 302)
        let reused = try browse(url)
        #expect(reused.status == 303 && reused.headers["Location"]?.hasPrefix("http://127.0.0.1:9999?") == true)
        #expect(query(reused)["error_code"] == "saml_relay_state_not_found")
        let late = try browse(try #require(sso(["domain": "corp.example"], at: 100).body["url"] as? String), at: 220)
        #expect(query(late)["error_code"] == "saml_relay_state_expired" && query(late)["error"] == "server_error")
    }
}
