import Foundation
import GoTrueDevServer
import Testing

/// The development server's anonymous sign-ins (`POST /signup` without an email or phone) and
/// their conversion to permanent users, request by request with the time passed in. Requests
/// carry the API version header, so errors come as `{"code": …, "message": …}`.
@Suite struct AnonymousUserTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    /// A fresh server for each test, with the defaults: anonymous sign-ins on, emails auto-confirmed.
    let api = DevAuthAPI(options: DevServerOptions())

    typealias Answer = (status: Int, body: [String: Any])

    func send(_ method: String, _ target: String, _ json: [String: Any]? = nil, token: String? = nil,
              versioned: Bool = true, at time: TimeInterval = 0) -> Answer {
        var headers: [String: String] = versioned ? ["x-supabase-api-version": "2024-01-01"] : [:]
        if let token { headers["authorization"] = "Bearer \(token)" }
        let body = try! json.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        let response = api.handle(DevRequest(method: method, target: "/auth/v1" + target, headers: headers, body: body), now: t0.addingTimeInterval(time))
        return (response.status, (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:])
    }

    /// An anonymous sign-in that must succeed; returns the session answer.
    func signInAnonymously(_ data: [String: Any]? = nil, at time: TimeInterval = 0) throws -> [String: Any] {
        let answer = send("POST", "/signup", data.map { ["data": $0] } ?? [:], at: time)
        try #require(answer.status == 200, "\(answer.body)")
        return answer.body
    }

    func claims(_ session: [String: Any]) -> [String: Any] {
        let payload = String((session["access_token"] as? String ?? "..").split(separator: ".", omittingEmptySubsequences: false)[1])
        var base64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
    }

    func user(_ session: [String: Any]) -> [String: Any] { session["user"] as? [String: Any] ?? [:] }
    func token(_ session: [String: Any]) -> String { session["access_token"] as? String ?? "" }

    func lastMessage(to address: String) -> [String: Any]? {
        (send("GET", "/admin/dev/outbox?to=\(address)").body["messages"] as? [[String: Any]])?.last
    }

    // MARK: Sign-in

    @Test func disabledAnonymousSignInsAreRefusedInBothErrorFormats() {
        #expect(((send("GET", "/settings").body["external"] as? [String: Any])?["anonymous_users"] as? Bool) == true,
                "on by default, so that the embedded server lets one try it")
        #expect(send("POST", "/admin/dev/settings", ["anonymous_users": false]).status == 204)
        #expect(((send("GET", "/settings").body["external"] as? [String: Any])?["anonymous_users"] as? Bool) == false)

        let versioned = send("POST", "/signup", ["data": ["a": 1]])
        #expect(versioned.status == 422)
        #expect(versioned.body as NSDictionary == ["code": "anonymous_provider_disabled", "message": "Anonymous sign-ins are disabled"])
        let legacy = send("POST", "/signup", [:], versioned: false)
        #expect(legacy.status == 422)
        #expect(legacy.body as NSDictionary == ["code": 422, "error_code": "anonymous_provider_disabled", "msg": "Anonymous sign-ins are disabled"])
        // Empty strings are no email and no phone, so this is an anonymous sign-in too.
        #expect(send("POST", "/signup", ["email": "", "phone": "", "password": "password-1"]).body["code"] as? String == "anonymous_provider_disabled")
        // A sign-up with an email is not affected.
        #expect(send("POST", "/signup", ["email": "permanent@example.com", "password": "password-1"]).status == 200)
        #expect(send("GET", "/admin/dev/stats").body["users"] as? Int == 1)
    }

    @Test func anAnonymousSignInAnswersASessionOfAUserWithoutEmailOrPhone() throws {
        let session = try signInAnonymously(["nickname": "guest", "theme": "dark"])
        #expect(session["token_type"] as? String == "bearer" && session["refresh_token"] is String)
        let user = self.user(session)
        #expect(user["is_anonymous"] as? Bool == true)
        #expect(user["email"] as? String == "" && user["phone"] as? String == "")
        #expect(user["user_metadata"] as? NSDictionary == ["nickname": "guest", "theme": "dark"], "only what the client sent")
        #expect(user["app_metadata"] as? NSDictionary == [:], "GoTrue writes no provider for an anonymous sign-up")
        #expect((user["identities"] as? [Any])?.isEmpty == true)
        #expect(user["email_confirmed_at"] == nil && user["confirmed_at"] == nil && user["last_sign_in_at"] is String)

        let claims = self.claims(session)
        #expect(claims["is_anonymous"] as? Bool == true)
        #expect(claims["sub"] as? String == user["id"] as? String)
        #expect(claims["role"] as? String == "authenticated" && claims["aal"] as? String == "aal1")
        #expect((claims["amr"] as? [[String: Any]])?.compactMap { $0["method"] as? String } == ["anonymous"])
        #expect(claims["email"] as? String == "" && claims["app_metadata"] as? NSDictionary == [:])

        // The user can be read back, and a second sign-in is a second user.
        #expect(send("GET", "/user", token: token(session)).body["is_anonymous"] as? Bool == true)
        let other = try signInAnonymously()
        #expect(self.user(other)["id"] as? String != user["id"] as? String)
        #expect(self.user(other)["user_metadata"] as? NSDictionary == [:])
    }

    @Test func aUserWithoutAnEmailIsNotFoundByAnEmptyOne() throws {
        _ = try signInAnonymously()
        let password = send("POST", "/token?grant_type=password", ["email": "", "password": ""])
        #expect(password.status == 400 && password.body["code"] as? String == "invalid_credentials")
        #expect(send("POST", "/token?grant_type=password", ["phone": "", "password": ""]).body["code"] as? String == "invalid_credentials")
        #expect(send("POST", "/admin/dev/revoke", ["email": ""]).status == 404)
        // An email sign-up afterwards is not taken for the existing (anonymous) user.
        #expect(send("POST", "/signup", ["email": "later@example.com", "password": "password-1"]).status == 200)
    }

    @Test func theCaptchaProtectsAnonymousSignInsToo() throws {
        #expect(send("POST", "/admin/dev/settings", ["captcha_token": "solved"]).status == 204)
        let missing = send("POST", "/signup", ["data": [String: Any]()])
        #expect(missing.status == 400 && missing.body["code"] as? String == "captcha_failed")
        let solved = send("POST", "/signup", ["gotrue_meta_security": ["captcha_token": "solved"]])
        #expect(solved.status == 200 && user(solved.body)["is_anonymous"] as? Bool == true)
    }

    // MARK: Conversion

    @Test func aPasswordAloneIsRefusedButWithAnEmailItConvertsTheUser() throws {
        let session = try signInAnonymously()
        let alone = send("PUT", "/user", ["password": "password-1"], token: token(session))
        #expect(alone.status == 422)
        #expect(alone.body as NSDictionary == ["code": "validation_failed",
                                               "message": "Updating password of an anonymous user without an email or phone is not allowed"])
        // Metadata alone is fine and keeps the user anonymous.
        let data = send("PUT", "/user", ["data": ["step": 2]], token: token(session))
        #expect(data.status == 200 && data.body["is_anonymous"] as? Bool == true)

        let both = send("PUT", "/user", ["email": "Saved@Example.com", "password": "password-1"], token: token(session))
        #expect(both.status == 200 && both.body["is_anonymous"] as? Bool == false && both.body["email"] as? String == "saved@example.com")
        #expect(send("POST", "/token?grant_type=password", ["email": "saved@example.com", "password": "password-1"]).status == 200)
    }

    @Test func anEmailWithAutoconfirmConvertsTheSameUserAtOnce() throws {
        let session = try signInAnonymously(["nickname": "guest"])
        let id = try #require(user(session)["id"] as? String)
        let updated = send("PUT", "/user", ["email": "kept@example.com"], token: token(session), at: 10)
        #expect(updated.status == 200)
        #expect(updated.body["id"] as? String == id)
        #expect(updated.body["is_anonymous"] as? Bool == false)
        #expect(updated.body["email"] as? String == "kept@example.com" && updated.body["email_confirmed_at"] is String)
        #expect(updated.body["new_email"] == nil)
        #expect((updated.body["identities"] as? [[String: Any]])?.map { $0["provider"] as? String } == ["email"])
        // GoTrue confirms the email without going through /verify, so app_metadata stays empty.
        #expect(updated.body["app_metadata"] as? NSDictionary == [:])
        #expect(updated.body["user_metadata"] as? NSDictionary == ["nickname": "guest", "email_verified": true])
        #expect(send("GET", "/user", token: token(session), at: 11).body["is_anonymous"] as? Bool == false)

        // The access token in hand keeps its claim until the next refresh.
        #expect(claims(session)["is_anonymous"] as? Bool == true)
        let refreshed = send("POST", "/token?grant_type=refresh_token", ["refresh_token": session["refresh_token"] as? String ?? ""], at: 20)
        #expect(refreshed.status == 200)
        #expect(claims(refreshed.body)["is_anonymous"] as? Bool == false)
        #expect(claims(refreshed.body)["sub"] as? String == id && claims(refreshed.body)["email"] as? String == "kept@example.com")
        #expect(user(refreshed.body)["is_anonymous"] as? Bool == false)
        // The email can't be taken by another anonymous user now.
        let other = try signInAnonymously(at: 30)
        let taken = send("PUT", "/user", ["email": "kept@example.com"], token: token(other), at: 30)
        #expect(taken.status == 422 && taken.body["code"] as? String == "email_exists")
    }

    @Test func withoutAutoconfirmTheEmailChangeCodeConvertsTheUser() throws {
        #expect(send("POST", "/admin/dev/settings", ["mailer_autoconfirm": false]).status == 204)
        let session = try signInAnonymously()
        let id = try #require(user(session)["id"] as? String)
        let pending = send("PUT", "/user", ["email": "code@example.com"], token: token(session))
        #expect(pending.status == 200)
        #expect(pending.body["is_anonymous"] as? Bool == true && pending.body["email"] as? String == "")
        #expect(pending.body["new_email"] as? String == "code@example.com")
        let message = try #require(lastMessage(to: "code@example.com"))
        #expect(message["type"] as? String == "email_change")
        let code = try #require(message["code"] as? String)

        let wrong = code == "000000" ? "111111" : "000000"
        #expect(send("POST", "/verify", ["type": "email_change", "email": "code@example.com", "token": wrong]).status == 403)
        let verified = send("POST", "/verify", ["type": "email_change", "email": "code@example.com", "token": code], at: 5)
        #expect(verified.status == 200)
        let user = self.user(verified.body)
        #expect(user["id"] as? String == id && user["is_anonymous"] as? Bool == false)
        #expect(user["email"] as? String == "code@example.com" && user["new_email"] == nil)
        // GoTrue rewrites the providers after a verification.
        #expect(user["app_metadata"] as? NSDictionary == ["provider": "email", "providers": ["email"]])
        #expect(claims(verified.body)["is_anonymous"] as? Bool == false)
        let refreshed = send("POST", "/token?grant_type=refresh_token", ["refresh_token": session["refresh_token"] as? String ?? ""], at: 6)
        #expect(claims(refreshed.body)["is_anonymous"] as? Bool == false)
    }

    @Test func aPhoneChangeCodeConvertsTheUser() throws {
        let session = try signInAnonymously()
        let id = try #require(user(session)["id"] as? String)
        let badPhone = send("PUT", "/user", ["phone": "12ab"], token: token(session))
        #expect(badPhone.status == 400 && badPhone.body["message"] as? String == "Invalid phone number format (E.164 required)")
        // A password with a phone is allowed: the phone is what the user will sign in with.
        let pending = send("PUT", "/user", ["phone": "+1 555 000 4444", "password": "password-1"], token: token(session))
        #expect(pending.status == 200)
        #expect(pending.body["is_anonymous"] as? Bool == true && pending.body["new_phone"] as? String == "15550004444")
        let message = try #require(lastMessage(to: "15550004444"))
        #expect(message["type"] as? String == "phone_change" && message["channel"] as? String == "sms")
        let code = try #require(message["code"] as? String)

        // A phone_change code is not an SMS sign-in code.
        #expect(send("POST", "/verify", ["type": "sms", "phone": "15550004444", "token": code]).status == 403)
        let verified = send("POST", "/verify", ["type": "phone_change", "phone": "+15550004444", "token": code], at: 5)
        #expect(verified.status == 200)
        let user = self.user(verified.body)
        #expect(user["id"] as? String == id && user["is_anonymous"] as? Bool == false)
        #expect(user["phone"] as? String == "15550004444" && user["phone_confirmed_at"] is String && user["new_phone"] == nil)
        #expect(claims(verified.body)["is_anonymous"] as? Bool == false)
        #expect(send("POST", "/token?grant_type=password", ["phone": "15550004444", "password": "password-1"], at: 6).status == 200)
    }

    @Test func reauthenticationNeedsAnEmailOrPhone() throws {
        let session = try signInAnonymously()
        let answer = send("GET", "/reauthenticate", token: token(session))
        #expect(answer.status == 400)
        #expect(answer.body["message"] as? String == "Reauthentication requires the user to have an email or a phone number")
    }

    // MARK: MFA

    @Test func factorRoutesRefuseAnAnonymousToken() throws {
        let session = try signInAnonymously()
        let factorID = UUID().uuidString.lowercased()
        let refused: [String: Any] = ["code": "no_authorization", "message": "Anonymous user not allowed to perform these actions"]
        for (method, path, body) in [("POST", "/factors", ["factor_type": "totp"]),
                                     ("POST", "/factors/\(factorID)/challenge", [:]),
                                     ("POST", "/factors/\(factorID)/verify", ["challenge_id": factorID, "code": "123456"]),
                                     ("DELETE", "/factors/\(factorID)", nil)] as [(String, String, [String: Any]?)] {
            let answer = send(method, path, body, token: token(session))
            #expect(answer.status == 403, "\(method) \(path)")
            #expect(answer.body as NSDictionary == refused as NSDictionary, "\(method) \(path)")
        }
        // Once converted and refreshed, the user may enroll a factor.
        #expect(send("PUT", "/user", ["email": "mfa@example.com"], token: token(session)).status == 200)
        #expect(send("POST", "/factors", ["factor_type": "totp"], token: token(session)).status == 403, "the old token still says anonymous")
        let refreshed = send("POST", "/token?grant_type=refresh_token", ["refresh_token": session["refresh_token"] as? String ?? ""], at: 1)
        #expect(send("POST", "/factors", ["factor_type": "totp"], token: token(refreshed.body), at: 1).status == 200)
    }
}
