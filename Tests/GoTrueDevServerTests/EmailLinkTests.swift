import Crypto
import Foundation
import GoTrueDevServer
import Testing

/// The development server's email links (`DevEmailLinks.swift`): the link and token hash of each
/// outbox message, the click (`GET /verify`) with its redirects in the PKCE and implicit flows,
/// the `pkce` grant for a clicked link's code, `POST /verify` with a token hash, and `/resend`;
/// request by request with the time passed in. The project has an anon key: the click carries
/// none, as a mail client's would. Requests carry the API version header, so errors come as
/// `{"code": …, "message": …}`.
@Suite struct EmailLinkTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    /// Replaced in a copy of the suite by the test that needs other options.
    var api = DevAuthAPI(options: DevServerOptions(anonKey: "anon"))
    let site = "http://127.0.0.1:9999"
    /// A client's PKCE verifier and its `s256` challenge.
    let verifier = "email-link-verifier-0123456789-abcdefghijklmnopqrstuvwxyz"
    var challenge: String {
        Data(SHA256.hash(data: Data(verifier.utf8))).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
    /// The text every used or expired link redirects with, as GoTrue's `url.Values` encodes it.
    let expiredLink = "error=access_denied&error_code=otp_expired&error_description=Email+link+is+invalid+or+has+expired"

    typealias Answer = (status: Int, body: [String: Any], headers: [String: String])

    func send(_ method: String, _ target: String, _ json: [String: Any]? = nil, token: String? = nil,
              headers extra: [String: String] = [:], at time: TimeInterval = 0) -> Answer {
        var headers = ["x-supabase-api-version": "2024-01-01", "apikey": "anon"].merging(extra) { $1 }
        if let token { headers["authorization"] = "Bearer \(token)" }
        let body = try! json.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        let response = api.handle(DevRequest(method: method, target: "/auth/v1" + target, headers: headers, body: body), now: t0.addingTimeInterval(time))
        return (response.status, (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:], response.headers)
    }

    /// Opens an email's link as a browser would (no apikey, no version header); answers the
    /// status and the `Location` it redirects to.
    func click(_ link: String, at time: TimeInterval = 0) -> (status: Int, location: String) {
        let target = link.hasPrefix(site) ? String(link.dropFirst(site.count)) : link
        let response = api.handle(DevRequest(method: "GET", target: target, headers: [:], body: Data()), now: t0.addingTimeInterval(time))
        return (response.status, response.headers["Location"] ?? "")
    }

    func messages(to address: String) -> [[String: Any]] {
        send("GET", "/admin/dev/outbox?to=\(address)").body["messages"] as? [[String: Any]] ?? []
    }

    func lastMessage(to address: String) throws -> [String: Any] {
        try #require(messages(to: address).last, "nothing was sent to \(address)")
    }

    /// The decoded pairs of a `Location`'s query or fragment, in order.
    func pairs(_ text: Substring?) -> [(String, String)] {
        (text ?? "").split(separator: "&").map { part in
            let halves = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            return (halves[0], halves.count > 1 ? halves[1] : "")
        }
    }

    func fragment(_ location: String) -> [(String, String)] { pairs(location.split(separator: "#", maxSplits: 1).dropFirst().first) }

    func code(in location: String) throws -> String {
        let query = location.split(separator: "#").first?.split(separator: "?", maxSplits: 1).dropFirst().first
        return try #require(pairs(query).first { $0.0 == "code" }?.1, "no code in \(location)")
    }

    func claims(_ accessToken: String) -> [String: Any] {
        let payload = String(accessToken.split(separator: ".", omittingEmptySubsequences: false).dropFirst().first ?? "")
        var base64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
    }

    func amr(_ session: [String: Any]) -> [String] {
        (claims(session["access_token"] as? String ?? "")["amr"] as? [[String: Any]] ?? []).compactMap { $0["method"] as? String }
    }

    func exchange(_ code: String, verifier: String? = nil, at time: TimeInterval = 0) -> Answer {
        send("POST", "/token?grant_type=pkce", ["auth_code": code, "code_verifier": verifier ?? self.verifier], at: time)
    }

    func isHex(_ text: String, count: Int) -> Bool {
        text.count == count && text.allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }

    // MARK: PKCE

    @Test func aPKCEMagicLinkRedirectsWithACodeThatOnlyItsVerifierExchanges() throws {
        #expect(send("POST", "/signup", ["email": "m@example.com", "password": "password-1"]).status == 200)
        let sent = send("POST", "/otp?redirect_to=http%3A%2F%2F127.0.0.1%3A5000%2Fwelcome",
                        ["email": "m@example.com", "code_challenge": challenge, "code_challenge_method": "s256"], at: 10)
        #expect(sent.status == 200 && sent.body.isEmpty)
        let message = try lastMessage(to: "m@example.com")
        #expect(message["type"] as? String == "magiclink" && (message["code"] as? String)?.count == 6)
        let hash = try #require(message["token_hash"] as? String)
        #expect(hash.hasPrefix("pkce_") && isHex(String(hash.dropFirst(5)), count: 56), "GoTrue's pkce_ + hex SHA-224: \(hash)")
        #expect(message["link"] as? String == "\(site)/auth/v1/verify?token=\(hash)&type=magiclink&redirect_to=http://127.0.0.1:5000/welcome")

        let clicked = click(message["link"] as! String, at: 20)
        #expect(clicked.status == 303)
        #expect(clicked.location.hasPrefix("http://127.0.0.1:5000/welcome?code="))
        let code = try code(in: clicked.location)
        #expect(UUID(uuidString: code) != nil)

        let wrong = exchange(code, verifier: String(verifier.reversed()), at: 25)
        #expect(wrong.status == 400)
        #expect(wrong.body as NSDictionary == ["code": "bad_code_verifier", "message": "code challenge does not match previously saved code verifier"])
        let session = exchange(code, at: 30)
        #expect(session.status == 200, "\(session.body)")
        #expect((session.body["user"] as? [String: Any])?["email"] as? String == "m@example.com")
        #expect(amr(session.body) == ["magiclink"], "the flow state's authentication method")
        #expect(session.body["provider_token"] == nil, "only an OAuth provider hands out tokens of its own")
        #expect(send("GET", "/user", token: session.body["access_token"] as? String).status == 200)
        let again = exchange(code, at: 31)
        #expect(again.status == 404 && again.body["code"] as? String == "flow_state_not_found")

        // The link was used up: it now leads back with the error, in the query too for a PKCE link.
        let used = click(message["link"] as! String, at: 40)
        #expect(used.status == 303)
        #expect(used.location == "http://127.0.0.1:5000/welcome?\(expiredLink)#\(expiredLink)&sb=")
        // The six-digit code went with it.
        let code6 = send("POST", "/verify", ["type": "magiclink", "email": "m@example.com", "token": message["code"] as! String], at: 41)
        #expect(code6.status == 403)
    }

    @Test func aMagicLinksFlowStateExpiresCountingFromTheClick() throws {
        #expect(send("POST", "/signup", ["email": "late@example.com", "password": "password-1"]).status == 200)
        let pkce: [String: Any] = ["email": "late@example.com", "code_challenge": challenge, "code_challenge_method": "S256"]
        #expect(send("POST", "/otp", pkce).status == 200)
        let first = try code(in: click(try lastMessage(to: "late@example.com")["link"] as! String, at: 200).location)
        #expect(exchange(first, at: 450).status == 200, "250 s after the click, 450 s after the request")

        #expect(send("POST", "/otp", pkce, at: 1000).status == 200)
        let second = try code(in: click(try lastMessage(to: "late@example.com")["link"] as! String, at: 1010).location)
        let late = exchange(second, at: 1311)
        #expect(late.status == 422)
        #expect(late.body as NSDictionary == ["code": "flow_state_expired", "message": "invalid flow state, flow state has expired"])
    }

    @Test func aSignUpConfirmationLinkConfirmsAtTheClickAndSignsInByTheExchange() throws {
        var options = DevServerOptions(anonKey: "anon")
        options.mailerAutoconfirm = false
        var suite = self
        suite.api = DevAuthAPI(options: options)
        let plain = String(repeating: "p", count: 43)
        let signUp = suite.send("POST", "/signup?redirect_to=http%3A%2F%2F127.0.0.1%3A5000%2Fconfirmed",
                                ["email": "s@example.com", "password": "password-1", "code_challenge": plain, "code_challenge_method": "plain"])
        #expect(signUp.status == 200 && signUp.body["access_token"] == nil && signUp.body["confirmation_sent_at"] is String)
        let message = try suite.lastMessage(to: "s@example.com")
        #expect(message["type"] as? String == "signup")
        let link = try #require(message["link"] as? String)
        #expect(link.contains("&type=signup&redirect_to=http://127.0.0.1:5000/confirmed") && link.contains("token=pkce_"))
        let early = suite.send("POST", "/token?grant_type=password", ["email": "s@example.com", "password": "password-1"], at: 5)
        #expect(early.body["code"] as? String == "email_not_confirmed")

        let code = try suite.code(in: suite.click(link, at: 10).location)
        // Confirmed by the click, before any exchange.
        #expect(suite.send("POST", "/token?grant_type=password", ["email": "s@example.com", "password": "password-1"], at: 15).status == 200)
        let session = suite.exchange(code, verifier: plain, at: 20)
        #expect(session.status == 200, "\(session.body)")
        #expect(suite.amr(session.body) == ["email/signup"])
        #expect((session.body["user"] as? [String: Any])?["email_confirmed_at"] is String)

        // A sign-up's flow state counts from the request, not from the click.
        #expect(suite.send("POST", "/signup", ["email": "t@example.com", "password": "password-1", "code_challenge": plain,
                                               "code_challenge_method": "plain"], at: 1000).status == 200)
        let lateCode = try suite.code(in: suite.click(try suite.lastMessage(to: "t@example.com")["link"] as! String, at: 1301).location)
        #expect(suite.exchange(lateCode, verifier: plain, at: 1302).body["code"] as? String == "flow_state_expired")
    }

    @Test func aRecoveryLinksSessionIsAsAfterARecoveryCode() throws {
        #expect(send("POST", "/signup", ["email": "r@example.com", "password": "password-1"]).status == 200)
        let asked = send("POST", "/recover?redirect_to=http%3A%2F%2F127.0.0.1%3A5000%2Freset",
                         ["email": "r@example.com", "code_challenge": challenge, "code_challenge_method": "s256"], at: 10)
        #expect(asked.status == 200 && asked.body.isEmpty)
        let message = try lastMessage(to: "r@example.com")
        #expect(message["type"] as? String == "recovery")
        let link = try #require(message["link"] as? String)
        #expect(link.contains("&type=recovery&redirect_to=http://127.0.0.1:5000/reset"))
        let clicked = click(link, at: 20)
        #expect(clicked.location.hasPrefix("http://127.0.0.1:5000/reset?code="))
        let session = exchange(try code(in: clicked.location), at: 30)
        #expect(session.status == 200)
        #expect(amr(session.body) == ["recovery"])
        let changed = send("PUT", "/user", ["password": "password-2"], token: session.body["access_token"] as? String, at: 40)
        #expect(changed.status == 200)
        #expect(send("POST", "/token?grant_type=password", ["email": "r@example.com", "password": "password-2"], at: 50).status == 200)

        // The same session as a recovery code gives.
        #expect(send("POST", "/recover", ["email": "r@example.com"], at: 100).status == 200)
        let byCode = send("POST", "/verify", ["type": "recovery", "email": "r@example.com", "token": try lastMessage(to: "r@example.com")["code"] as! String], at: 110)
        #expect(amr(byCode.body) == ["recovery"])
        // Unknown addresses answer the same and get nothing, whatever the challenge method.
        let unknown = send("POST", "/recover", ["email": "nobody@example.com", "code_challenge": challenge, "code_challenge_method": "sha512"])
        #expect(unknown.status == 200 && messages(to: "nobody@example.com").isEmpty)
        let known = send("POST", "/recover", ["email": "r@example.com", "code_challenge": challenge, "code_challenge_method": "sha512"], at: 200)
        #expect(known.status == 500 && known.body["code"] as? String == "unexpected_failure")
    }

    @Test func pkceFieldsAreCheckedAsGoTrueChecksThem() throws {
        func refusal(_ body: [String: Any], _ path: String = "/signup") -> (Int, String?, String?) {
            let answer = send("POST", path, body)
            return (answer.status, answer.body["code"] as? String, answer.body["message"] as? String)
        }
        let base: [String: Any] = ["email": "p@example.com", "password": "password-1"]
        #expect(refusal(base.merging(["code_challenge": challenge]) { $1 })
                == (400, "validation_failed", "PKCE flow requires code_challenge_method and code_challenge"))
        #expect(refusal(base.merging(["code_challenge_method": "s256"]) { $1 }, "/otp")
                == (400, "validation_failed", "PKCE flow requires code_challenge_method and code_challenge"))
        #expect(refusal(base.merging(["code_challenge": "short", "code_challenge_method": "s256"]) { $1 }, "/recover")
                == (400, "validation_failed", "code challenge has to be between 43 and 128 characters"))
        #expect(refusal(base.merging(["code_challenge": String(repeating: "+", count: 43), "code_challenge_method": "s256"]) { $1 })
                == (400, "validation_failed", "code challenge can only contain alphanumeric characters, hyphens, periods, underscores and tildes"))
        #expect(refusal(["phone": "+15550001234", "password": "password-1", "code_challenge": challenge, "code_challenge_method": "s256"])
                == (400, "validation_failed", "PKCE not supported for phone signups"))
        #expect(send("GET", "/admin/dev/stats").body["users"] as? Int == 0)

        // An unknown method fails where GoTrue makes the flow state: a 500, and no user is left behind.
        #expect(send("POST", "/admin/dev/settings", ["mailer_autoconfirm": false]).status == 204)
        #expect(refusal(base.merging(["code_challenge": challenge, "code_challenge_method": "sha512"]) { $1 }).0 == 500)
        #expect(refusal(["email": "q@example.com", "code_challenge": challenge, "code_challenge_method": "sha512"], "/otp").0 == 500)
        #expect(send("GET", "/admin/dev/stats").body["users"] as? Int == 0)
        // Without create_user the otp_disabled answer comes first.
        #expect(refusal(["email": "q@example.com", "create_user": false, "code_challenge": challenge, "code_challenge_method": "sha512"], "/otp").1
                == "otp_disabled")
    }

    // MARK: Implicit flow and errors

    @Test func anImplicitLinkPutsTheSessionInTheFragment() throws {
        #expect(send("POST", "/signup", ["email": "i@example.com", "password": "password-1"]).status == 200)
        #expect(send("POST", "/otp?redirect_to=myapp%3A%2F%2Fdone", ["email": "i@example.com"]).status == 200)
        let message = try lastMessage(to: "i@example.com")
        let hash = try #require(message["token_hash"] as? String)
        #expect(isHex(hash, count: 56), "no pkce_ prefix without a challenge")
        #expect(message["link"] as? String == "\(site)/auth/v1/verify?token=\(hash)&type=magiclink&redirect_to=myapp://done")

        let clicked = click(message["link"] as! String, at: 5)
        #expect(clicked.status == 303)
        #expect(clicked.location.hasPrefix("myapp://done#access_token="))
        let values = fragment(clicked.location)
        #expect(values.map(\.0) == ["access_token", "expires_at", "expires_in", "refresh_token", "sb", "token_type", "type"], "sorted, as Go encodes")
        let fields = Dictionary(values) { $1 }
        #expect(fields["token_type"] == "bearer" && fields["type"] == "magiclink" && fields["expires_in"] == "3600" && fields["sb"] == "")
        #expect(fields["expires_at"] == String(Int(t0.timeIntervalSince1970) + 5 + 3600))
        let accessToken = try #require(fields["access_token"])
        #expect(claims(accessToken)["email"] as? String == "i@example.com")
        #expect((claims(accessToken)["amr"] as? [[String: Any]])?.first?["method"] as? String == "otp")
        #expect(send("GET", "/user", token: accessToken, at: 6).body["email"] as? String == "i@example.com")
        let refreshed = send("POST", "/token?grant_type=refresh_token", ["refresh_token": fields["refresh_token"] ?? ""], at: 7)
        #expect(refreshed.status == 200)
    }

    @Test func anExpiredOrUnusableLinkRedirectsWithGoTruesError() throws {
        var options = DevServerOptions(anonKey: "anon")
        options.otpLifetime = 60
        var suite = self
        suite.api = DevAuthAPI(options: options)
        #expect(suite.send("POST", "/signup", ["email": "e@example.com", "password": "password-1"]).status == 200)
        #expect(suite.send("POST", "/otp?redirect_to=http%3A%2F%2F127.0.0.1%3A5000%2Fwelcome%3Ffrom%3Dmail", ["email": "e@example.com"]).status == 200)
        let implicit = try suite.lastMessage(to: "e@example.com")["link"] as! String
        #expect(implicit.hasSuffix("&redirect_to=http%3A%2F%2F127.0.0.1%3A5000%2Fwelcome%3Ffrom%3Dmail"), "escaped: it holds a `=`")
        // An implicit link keeps the query it had and puts the error in the fragment only.
        #expect(suite.click(implicit, at: 61).location == "http://127.0.0.1:5000/welcome?from=mail#\(expiredLink)&sb=")

        #expect(suite.send("POST", "/otp?redirect_to=http%3A%2F%2F127.0.0.1%3A5000%2Fcb%3Fa%3D1%26b%3D2",
                           ["email": "e@example.com", "code_challenge": challenge, "code_challenge_method": "s256"], at: 100).status == 200)
        let pkce = try suite.lastMessage(to: "e@example.com")["link"] as! String
        // A type whose flow state the user has none of: nothing changes (GoTrue's transaction),
        // and the redirect says why, in the query and (escaped once more by Go) the fragment.
        let noFlow = suite.click(pkce.replacingOccurrences(of: "type=magiclink", with: "type=recovery"), at: 110)
        #expect(noFlow.location == "http://127.0.0.1:5000/cb?a=1&b=2&error=invalid_request&error_code=flow_state_not_found"
                + "&error_description=No+associated+flow+state+found.+422%3A+No+valid+flow+state+found+for+user."
                + "#error=invalid_request&error_code=flow_state_not_found"
                + "&error_description=No+associated+flow+state+found.+422%253A+No+valid+flow+state+found+for+user.&sb=")
        // A type GoTrue parses as an authentication method but cannot verify a link of.
        let wrongType = suite.click(pkce.replacingOccurrences(of: "type=magiclink", with: "type=otp"), at: 111)
        #expect(wrongType.location.contains("?a=1&b=2&error=invalid_request&error_code=validation_failed&error_description=Invalid+email+verification+type#"))
        // The link still works, and its code joins the query the redirect already had.
        let clicked = suite.click(pkce, at: 112)
        #expect(clicked.location.hasPrefix("http://127.0.0.1:5000/cb?a=1&b=2&code="))
        #expect(suite.exchange(try suite.code(in: clicked.location), at: 113).status == 200)

        // Missing parameters and a PKCE link of a type GoTrue cannot parse answer JSON, not a redirect.
        let noType = suite.click("/auth/v1/verify?token=abc")
        #expect(noType.status == 400 && noType.location.isEmpty)
        #expect(suite.click("/auth/v1/verify?type=magiclink").status == 400)
        #expect(suite.click("/auth/v1/verify?token=pkce_abc&type=email").status == 500)
        #expect(suite.click(pkce.replacingOccurrences(of: "type=magiclink", with: "type=sms")).status == 500)
        // An unknown token of the implicit flow redirects to the site URL when no redirect is given.
        #expect(suite.click("/auth/v1/verify?token=abc&type=signup").location == "\(site)#\(expiredLink)&sb=")
    }

    @Test func redirectsAreCheckedAsForAuthorize() throws {
        #expect(send("POST", "/signup", ["email": "d@example.com", "password": "password-1"]).status == 200)
        func link(query: String = "", headers: [String: String] = [:]) throws -> String {
            #expect(send("POST", "/otp" + query, ["email": "d@example.com"], headers: headers).status == 200)
            return try #require(try lastMessage(to: "d@example.com")["link"] as? String)
        }
        // Not on the allow list and not a loopback IP literal: the site URL instead.
        let elsewhere = try link(query: "?redirect_to=https%3A%2F%2Fevil.example%2Fcb")
        #expect(elsewhere.hasSuffix("&redirect_to=\(site)"))
        #expect(click(elsewhere).location.hasPrefix("\(site)#access_token="))
        // No redirect asked for: the site URL too.
        #expect(try link().hasSuffix("&redirect_to=\(site)"))
        // GoTrue also reads a `redirect_to` header, and falls back to the Referer.
        #expect(try link(headers: ["redirect_to": "http://127.0.0.1:7000/h"]).hasSuffix("&redirect_to=http://127.0.0.1:7000/h"))
        #expect(try link(headers: ["referer": "http://127.0.0.1:8000/page"]).hasSuffix("&redirect_to=http://127.0.0.1:8000/page"))
        #expect(try link(query: "?redirect_to=https%3A%2F%2Fevil.example", headers: ["referer": "authd://back"]).hasSuffix("&redirect_to=authd://back"))
        // The click checks its own redirect_to the same way.
        let edited = try link().replacingOccurrences(of: "redirect_to=\(site)", with: "redirect_to=https://evil.example/")
        #expect(click(edited).location.hasPrefix("\(site)#access_token="))
    }

    // MARK: POST /verify with a token hash

    @Test func aTokenHashVerifiesWithoutTheAddress() throws {
        #expect(send("POST", "/otp", ["email": "h@example.com"]).status == 200)
        let hash = try #require(try lastMessage(to: "h@example.com")["token_hash"] as? String)
        #expect(send("POST", "/verify", ["type": "email", "token_hash": hash, "email": "h@example.com"]).body["message"] as? String
                == "Only the token_hash and type should be provided")
        #expect(send("POST", "/verify", ["type": "email", "token_hash": hash, "token": "123456"]).body["message"] as? String
                == "Verify requires either a token or a token hash")
        #expect(send("POST", "/verify", ["type": "email"]).body["message"] as? String == "Verify requires either a token or a token hash")
        let sms = send("POST", "/verify", ["type": "sms", "token_hash": hash])
        #expect(sms.status == 400 && sms.body["message"] as? String == "Invalid email verification type")
        let wrongColumn = send("POST", "/verify", ["type": "recovery", "token_hash": hash])
        #expect(wrongColumn.status == 403)
        #expect(wrongColumn.body as NSDictionary == ["code": "otp_expired", "message": "Email link is invalid or has expired"])

        let session = send("POST", "/verify", ["type": "email", "token_hash": hash], at: 5)
        #expect(session.status == 200, "\(session.body)")
        #expect((session.body["user"] as? [String: Any])?["email_confirmed_at"] is String)
        #expect(amr(session.body) == ["otp"])
        #expect(send("POST", "/verify", ["type": "email", "token_hash": hash], at: 6).body["code"] as? String == "otp_expired")

        // A PKCE link's token hash verifies too, straight to a session.
        #expect(send("POST", "/otp", ["email": "h@example.com", "code_challenge": challenge, "code_challenge_method": "s256"], at: 10).status == 200)
        let pkceHash = try #require(try lastMessage(to: "h@example.com")["token_hash"] as? String)
        #expect(pkceHash.hasPrefix("pkce_"))
        #expect(send("POST", "/verify", ["type": "magiclink", "token_hash": String(pkceHash.dropFirst(5))], at: 11).status == 403, "the prefix is part of it")
        let viaHash = send("POST", "/verify", ["type": "magiclink", "token_hash": pkceHash], at: 12)
        #expect(viaHash.status == 200 && viaHash.body["refresh_token"] is String)
    }

    @Test func anEmailChangeLinkConfirmsTheNewAddress() throws {
        let session = send("POST", "/signup", ["email": "old@example.com", "password": "password-1"]).body
        #expect(send("POST", "/admin/dev/settings", ["mailer_autoconfirm": false]).status == 204)
        let pending = send("PUT", "/user?redirect_to=http%3A%2F%2F127.0.0.1%3A5000%2Fmoved", ["email": "new@example.com"],
                           token: session["access_token"] as? String)
        #expect(pending.body["new_email"] as? String == "new@example.com")
        let message = try lastMessage(to: "new@example.com")
        #expect(message["type"] as? String == "email_change")
        let clicked = click(try #require(message["link"] as? String), at: 5)
        #expect(clicked.location.hasPrefix("http://127.0.0.1:5000/moved#access_token="))
        #expect(Dictionary(fragment(clicked.location)) { $1 }["type"] == "email_change")
        #expect(send("POST", "/token?grant_type=password", ["email": "new@example.com", "password": "password-1"], at: 6).status == 200)
    }

    // MARK: POST /resend

    @Test func resendSendsTheSignUpCodeAgainWithGoTruesChecks() throws {
        #expect(send("POST", "/admin/dev/settings", ["mailer_autoconfirm": false]).status == 204)
        #expect(send("POST", "/signup", ["email": "again@example.com", "password": "password-1"]).status == 200)
        let first = try lastMessage(to: "again@example.com")

        let soon = send("POST", "/resend", ["type": "signup", "email": "again@example.com"], at: 10)
        #expect(soon.status == 429)
        #expect(soon.body as NSDictionary == ["code": "over_email_send_rate_limit",
                                              "message": "For security purposes, you can only request this after 50 seconds."])
        let resent = send("POST", "/resend?redirect_to=http%3A%2F%2F127.0.0.1%3A5000%2Fconfirmed",
                          ["type": "signup", "email": "again@example.com", "code_challenge": challenge, "code_challenge_method": "s256"], at: 61)
        #expect(resent.status == 200 && resent.body.isEmpty)
        #expect(messages(to: "again@example.com").count == 2)
        let second = try lastMessage(to: "again@example.com")
        #expect(second["type"] as? String == "signup" && second["token_hash"] as? String != first["token_hash"] as? String)
        // The earlier code was replaced.
        #expect(send("POST", "/verify", ["type": "signup", "token_hash": first["token_hash"] as! String], at: 62).status == 403)
        let clicked = click(second["link"] as! String, at: 63)
        #expect(clicked.location.hasPrefix("http://127.0.0.1:5000/confirmed?code="))
        let session = exchange(try code(in: clicked.location), at: 64)
        #expect(amr(session.body) == ["email/signup"])

        // Nothing is sent for a confirmed user or an unknown address, and the answer is the same.
        let confirmed = send("POST", "/resend", ["type": "signup", "email": "again@example.com"], at: 200)
        #expect(confirmed.status == 200 && confirmed.body.isEmpty && messages(to: "again@example.com").count == 2)
        let unknown = send("POST", "/resend", ["type": "signup", "email": "nobody@example.com"], at: 200)
        #expect(unknown.status == 200 && messages(to: "nobody@example.com").isEmpty)
    }

    @Test func resendRefusesWhatGoTrueRefuses() {
        func message(_ body: [String: Any]) -> String? {
            let answer = send("POST", "/resend", body)
            #expect(answer.status == 400, "\(body)")
            return answer.body["message"] as? String
        }
        let types = "Missing one of these types: signup, email_change, sms, phone_change"
        #expect(message(["email": "x@example.com"]) == types)
        #expect(message(["type": "magiclink", "email": "x@example.com"]) == types)
        #expect(message(["type": "recovery", "email": "x@example.com"]) == types)
        #expect(message(["type": "signup"]) == "Type provided requires an email address")
        #expect(message(["type": "signup", "phone": "+15550001234"]) == "Type provided requires an email address")
        #expect(message(["type": "sms"]) == "Type provided requires a phone number")
        #expect(message(["type": "email_change"]) == "Missing email address or phone number")
        #expect(message(["type": "phone_change", "email": "x@example.com", "phone": "+15550001234"])
                == "Only an email address or phone number should be provided.")
        #expect(message(["type": "signup", "email": "not-an-address"]) == "Unable to validate email address: invalid format")
        #expect(message(["type": "signup", "email": "x@example.com", "code_challenge": challenge])
                == "PKCE flow requires code_challenge_method and code_challenge")

        // The CAPTCHA guards /resend as it guards sign-ups.
        #expect(send("POST", "/admin/dev/settings", ["captcha_token": "solved"]).status == 204)
        let captcha = send("POST", "/resend", ["type": "signup", "email": "x@example.com"])
        #expect(captcha.status == 400 && captcha.body["code"] as? String == "captcha_failed")
        #expect(send("POST", "/resend", ["type": "signup", "email": "x@example.com", "gotrue_meta_security": ["captcha_token": "solved"]]).status == 200)
    }

    @Test func resendSendsSMSAndChangeCodesAgain() throws {
        #expect(send("POST", "/signup", ["phone": "+15550001111", "password": "password-1"]).status == 200)
        let soon = send("POST", "/resend", ["type": "sms", "phone": "+15550001111"], at: 30)
        #expect(soon.status == 429)
        #expect(soon.body as NSDictionary == ["code": "over_sms_send_rate_limit",
                                              "message": "For security purposes, you can only request this after 30 seconds."])
        #expect(send("POST", "/admin/dev/settings", ["sms_max_frequency": 0, "smtp_max_frequency": 0]).status == 204)
        let sms = send("POST", "/resend", ["type": "sms", "phone": "+15550001111"], at: 31)
        #expect(sms.status == 200 && (sms.body["message_id"] as? String)?.isEmpty == false)
        let resentSMS = try lastMessage(to: "15550001111")
        #expect(messages(to: "15550001111").count == 2 && resentSMS["channel"] as? String == "sms" && resentSMS["link"] == nil)
        #expect(send("POST", "/verify", ["type": "sms", "phone": "+15550001111", "token": resentSMS["code"] as! String], at: 32).status == 200)

        // Changes: found by the current address, sent to the new one.
        let session = send("POST", "/signup", ["email": "c@example.com", "password": "password-1"]).body
        let token = session["access_token"] as? String
        #expect(send("POST", "/resend", ["type": "email_change", "email": "c@example.com"]).body.isEmpty, "nothing pending")
        #expect(send("POST", "/admin/dev/settings", ["mailer_autoconfirm": false]).status == 204)
        #expect(send("PUT", "/user", ["email": "c2@example.com", "phone": "+15550002222"], token: token).status == 200)
        let email = send("POST", "/resend", ["type": "email_change", "email": "c@example.com"], at: 1)
        #expect(email.status == 200 && messages(to: "c2@example.com").count == 2)
        let phone = send("POST", "/resend", ["type": "phone_change", "email": "c@example.com"], at: 1)
        #expect(phone.body["message_id"] is String && messages(to: "15550002222").count == 2)
        let changed = send("POST", "/verify", ["type": "email_change", "token_hash": try lastMessage(to: "c2@example.com")["token_hash"] as! String], at: 2)
        #expect((changed.body["user"] as? [String: Any])?["email"] as? String == "c2@example.com")
    }
}
