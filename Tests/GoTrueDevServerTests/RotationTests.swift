import AuthCore
import Foundation
import GoTrueDevServer
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Refresh-token rotation as GOTRUE.md describes it, over real HTTP.
@Suite struct RotationTests {
    @Test func eachRefreshRotatesAndTheParentOfTheCurrentTokenReturnsTheCurrentOne() async throws {
        try await DevServerHarness.run() { harness in
            let first = try await harness.signUp("rotate@example.com")
            let r0 = try #require(first["refresh_token"] as? String)

            let second = try await harness.refresh(r0)
            #expect(second.status == 200)
            let r1 = try #require(second.body["refresh_token"] as? String)
            #expect(r1 != r0)

            // A client that crashed before saving r1 presents r0 again: it gets the current token, r1.
            let again = try await harness.refresh(r0)
            #expect(again.status == 200)
            #expect(again.body["refresh_token"] as? String == r1)

            let third = try await harness.refresh(r1)
            let r2 = try #require(third.body["refresh_token"] as? String)
            #expect(r2 != r1)
            // r1 is now the parent of r2: still answered with r2.
            #expect(try await harness.refresh(r1).body["refresh_token"] as? String == r2)
        }
    }

    @Test func reusingAnOlderTokenRevokesTheWholeSession() async throws {
        try await DevServerHarness.run() { harness in
            let r0 = try #require(try await harness.signUp("reuse@example.com")["refresh_token"] as? String)
            let r1 = try #require(try await harness.refresh(r0).body["refresh_token"] as? String)
            let r2 = try #require(try await harness.refresh(r1).body["refresh_token"] as? String)
            _ = r2

            let reuse = try await harness.refresh(r0)
            #expect(reuse.status == 400)
            #expect(reuse.body["code"] as? String == "refresh_token_already_used")
            #expect(reuse.headers["x-sb-error-code"] == "refresh_token_already_used")
            // Every token of that session is gone, the current one included.
            let current = try await harness.refresh(r2)
            #expect(current.status == 400)
            #expect(current.body["code"] as? String == "refresh_token_not_found")
        }
    }

    @Test func anOlderTokenIsAcceptedWithinTheReuseInterval() async throws {
        try await DevServerHarness.run(DevServerOptions(reuseInterval: 30)) { harness in
            let r0 = try #require(try await harness.signUp("interval@example.com")["refresh_token"] as? String)
            let r1 = try #require(try await harness.refresh(r0).body["refresh_token"] as? String)
            let r2 = try #require(try await harness.refresh(r1).body["refresh_token"] as? String)
            let late = try await harness.refresh(r0)
            #expect(late.status == 200)
            #expect(late.body["refresh_token"] as? String == r2)
        }
    }

    @Test func theReuseIntervalIsAlsoDecidedByTimeWithoutHTTP() {
        let api = DevAuthAPI(options: DevServerOptions(reuseInterval: 10))
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        func post(_ path: String, _ body: [String: String], at time: Date) -> [String: Any] {
            let request = DevRequest(method: "POST", target: "/auth/v1" + path, headers: ["X-Supabase-Api-Version": "2024-01-01"],
                                     body: try! JSONSerialization.data(withJSONObject: body))
            return (try? JSONSerialization.jsonObject(with: api.handle(request, now: time).body)) as? [String: Any] ?? [:]
        }
        let r0 = post("/signup", ["email": "clock@example.com", "password": "password-1"], at: t0)["refresh_token"] as! String
        let r1 = post("/token?grant_type=refresh_token", ["refresh_token": r0], at: t0)["refresh_token"] as! String
        _ = post("/token?grant_type=refresh_token", ["refresh_token": r1], at: t0.addingTimeInterval(1))
        // The session was last refreshed at t0 + 1: r0 is inside the window 8 s later, and that
        // answer is a refresh too, so r0 is outside it only 11 s after that.
        #expect(post("/token?grant_type=refresh_token", ["refresh_token": r0], at: t0.addingTimeInterval(9))["refresh_token"] != nil)
        #expect(post("/token?grant_type=refresh_token", ["refresh_token": r0], at: t0.addingTimeInterval(20))["code"] as? String
                == "refresh_token_already_used")
    }

    /// GoTrue's v2 tokens: the window of an older token counts from the session's last refresh,
    /// not from when that token was revoked. A token a session took over long ago (authd's
    /// `--with-session` leaves the app's copy two steps behind) is answered again right after
    /// each refresh of the session, and ends the session at any other time.
    @Test func theReuseWindowOpensAgainWithEveryRefreshOfTheSession() {
        let api = DevAuthAPI(options: DevServerOptions(reuseInterval: 10))
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        func post(_ body: [String: String], to path: String = "/token?grant_type=refresh_token", at seconds: TimeInterval) -> [String: Any] {
            let request = DevRequest(method: "POST", target: "/auth/v1" + path, headers: ["X-Supabase-Api-Version": "2024-01-01"],
                                     body: try! JSONSerialization.data(withJSONObject: body))
            return (try? JSONSerialization.jsonObject(with: api.handle(request, now: t0.addingTimeInterval(seconds)).body)) as? [String: Any] ?? [:]
        }
        let r0 = post(["email": "window@example.com", "password": "password-1"], to: "/signup", at: 0)["refresh_token"] as! String
        let r1 = post(["refresh_token": r0], at: 0)["refresh_token"] as! String
        let r2 = post(["refresh_token": r1], at: 1)["refresh_token"] as! String
        // An hour later the current token is refreshed: r0, revoked an hour ago, is answered
        // with the newest token for the next 10 s.
        let r3 = post(["refresh_token": r2], at: 3600)["refresh_token"] as! String
        #expect(post(["refresh_token": r0], at: 3605)["refresh_token"] as? String == r3)
        // Its immediate parent is answered whenever it comes.
        #expect(post(["refresh_token": r2], at: 3700)["refresh_token"] as? String == r3)
        // More than 10 s after the last refresh (3700), r0 is taken for a stolen token.
        #expect(post(["refresh_token": r0], at: 3711)["code"] as? String == "refresh_token_already_used")
        #expect(post(["refresh_token": r3], at: 3712)["code"] as? String == "refresh_token_not_found")
    }
}

/// Error bodies in both formats, sign-in, /user and /logout.
@Suite struct DevServerEndpointTests {
    @Test func errorsComeInTheRequestedFormatWithTheHeader() async throws {
        try await DevServerHarness.run() { harness in
            _ = try await harness.signUp("format@example.com")
            let body = ["email": "format@example.com", "password": "wrong-password"]
            let modern = try await harness.call("POST", "/token?grant_type=password", json: body, headers: ["X-Supabase-Api-Version": "2024-01-01"])
            #expect(modern.status == 400)
            #expect(modern.body["code"] as? String == "invalid_credentials")
            #expect(modern.body["message"] as? String == "Invalid login credentials")
            #expect(modern.headers["x-supabase-api-version"] == "2024-01-01")
            #expect(modern.headers["x-sb-error-code"] == "invalid_credentials")

            let legacy = try await harness.call("POST", "/token?grant_type=password", json: body)
            #expect(legacy.body["code"] as? Int == 400)
            #expect(legacy.body["error_code"] as? String == "invalid_credentials")
            #expect(legacy.body["msg"] as? String == "Invalid login credentials")
            #expect(legacy.headers["x-sb-error-code"] == "invalid_credentials")
        }
    }

    @Test func sessionJSONAndAccessTokenClaimsAreGoTruesOwn() async throws {
        try await DevServerHarness.run(DevServerOptions(accessTokenLifetime: 120)) { harness in
            let session = try await harness.signUp("claims@example.com")
            #expect(session["token_type"] as? String == "bearer")
            #expect(session["expires_in"] as? Int == 120)
            #expect(session["expires_at"] is Int)
            let user = try #require(session["user"] as? [String: Any])
            for key in ["id", "aud", "role", "email", "app_metadata", "user_metadata", "identities", "created_at", "updated_at"] {
                #expect(user[key] != nil, "user.\(key)")
            }
            let jwt = try #require(session["access_token"] as? String)
            let payload = String(jwt.split(separator: ".")[1])
            var base64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
            let payloadData = try #require(Data(base64Encoded: base64))
                let claims = try #require(try JSONSerialization.jsonObject(with: payloadData) as? [String: Any])
            for key in ["iss", "sub", "aud", "exp", "iat", "email", "phone", "role", "aal", "amr", "session_id", "is_anonymous", "app_metadata", "user_metadata"] {
                #expect(claims[key] != nil, "claim \(key)")
            }
            #expect(claims["aud"] as? String == "authenticated")
            #expect(claims["email"] as? String == "claims@example.com")
            #expect((claims["exp"] as? Int).map { $0 - (claims["iat"] as? Int ?? 0) } == 120)
        }
    }

    @Test func userAndLogoutNeedAValidBearerAndLogoutEndsTheSession() async throws {
        try await DevServerHarness.run() { harness in
            let session = try await harness.signUp("logout@example.com")
            let jwt = try #require(session["access_token"] as? String)
            let v = ["X-Supabase-Api-Version": "2024-01-01"]
            #expect(try await harness.call("GET", "/user", headers: v).body["code"] as? String == "no_authorization")
            #expect(try await harness.call("GET", "/user", headers: v.merging(["Authorization": "Bearer x.y.z"]) { a, _ in a }).status == 403)
            let me = try await harness.call("GET", "/user", headers: ["Authorization": "Bearer \(jwt)"])
            #expect(me.status == 200 && me.body["email"] as? String == "logout@example.com")
            #expect(try await harness.call("POST", "/logout?scope=local", headers: ["Authorization": "Bearer \(jwt)"]).status == 204)
            let after = try await harness.call("GET", "/user", headers: v.merging(["Authorization": "Bearer \(jwt)"]) { a, _ in a })
            #expect(after.status == 403 && after.body["code"] as? String == "session_not_found")
        }
    }

    @Test func healthSettingsSignupRulesAndBadJSON() async throws {
        try await DevServerHarness.run() { harness in
            #expect(try await harness.call("GET", "/health").body["name"] as? String == "GoTrue")
            #expect(try await harness.call("GET", "/settings").body["mailer_autoconfirm"] as? Bool == true)
            let v = ["X-Supabase-Api-Version": "2024-01-01"]
            _ = try await harness.signUp("dup@example.com")
            #expect(try await harness.call("POST", "/signup", json: ["email": "dup@example.com", "password": "password-1"], headers: v).body["code"] as? String == "user_already_exists")
            #expect(try await harness.call("POST", "/signup", json: ["email": "short@example.com", "password": "123"], headers: v).body["code"] as? String == "weak_password")
            var request = URLRequest(url: URL(string: harness.base.absoluteString + "/auth/v1/token?grant_type=password")!)
            request.httpMethod = "POST"
            request.httpBody = Data("{not json".utf8)
            request.setValue("2024-01-01", forHTTPHeaderField: "X-Supabase-Api-Version")
            let (data, response) = try await URLSession.shared.data(for: request)
            #expect((response as! HTTPURLResponse).statusCode == 400)
            #expect(String(decoding: data, as: UTF8.self).contains("bad_json"))
        }
    }
}
