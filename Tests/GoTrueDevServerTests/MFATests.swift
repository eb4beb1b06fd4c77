import Crypto
import Foundation
import GoTrueDevServer
import Testing

/// The development server's MFA (`/factors`), request by request with the time passed in, so that
/// expiry and rate limits are tested without sleeping. Requests carry the API version header, so
/// errors come as `{"code": …, "message": …}`.
@Suite struct MFATests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    /// Replaced in a copy of the suite by the test that needs other options.
    var api = DevAuthAPI(options: DevServerOptions())

    typealias Answer = (status: Int, body: [String: Any])

    func send(_ method: String, _ target: String, _ json: [String: Any]? = nil, token: String? = nil, at time: TimeInterval = 0) -> Answer {
        var headers = ["x-supabase-api-version": "2024-01-01"]
        if let token { headers["authorization"] = "Bearer \(token)" }
        let body = try! json.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        let response = api.handle(DevRequest(method: method, target: "/auth/v1" + target, headers: headers, body: body), now: t0.addingTimeInterval(time))
        return (response.status, (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:])
    }

    /// Signs `email` up (the first session) or in (another one); returns the session answer.
    func session(_ email: String, at time: TimeInterval = 0) -> [String: Any] {
        let signUp = send("POST", "/signup", ["email": email, "password": "password-1"], at: time)
        if signUp.status == 200 { return signUp.body }
        return send("POST", "/token?grant_type=password", ["email": email, "password": "password-1"], at: time).body
    }

    func claims(_ session: [String: Any]) -> [String: Any] {
        let payload = String((session["access_token"] as? String ?? "..").split(separator: ".", omittingEmptySubsequences: false)[1])
        var base64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } ?? [:]
    }

    func amrMethods(_ session: [String: Any]) -> [String] {
        (claims(session)["amr"] as? [[String: Any]] ?? []).compactMap { $0["method"] as? String }
    }

    func token(_ session: [String: Any]) -> String { session["access_token"] as? String ?? "" }

    /// Enrolls a TOTP factor; returns its id and raw secret.
    func enrollTOTP(_ session: [String: Any], name: String = "phone app", at time: TimeInterval = 0) throws -> (id: String, secret: [UInt8]) {
        let answer = send("POST", "/factors", ["factor_type": "totp", "friendly_name": name], token: token(session), at: time)
        #expect(answer.status == 200, "\(answer.body)")
        let id = try #require(answer.body["id"] as? String)
        let secret = try #require((answer.body["totp"] as? [String: Any])?["secret"] as? String)
        return (id, try #require(Self.base32Decode(secret)))
    }

    /// Challenges and verifies a TOTP factor with the right code; returns the new session answer.
    func verifyTOTP(_ session: [String: Any], factor: (id: String, secret: [UInt8]), at time: TimeInterval = 0) throws -> [String: Any] {
        let challenge = send("POST", "/factors/\(factor.id)/challenge", token: token(session), at: time)
        let challengeID = try #require(challenge.body["id"] as? String)
        let code = Self.totp(secret: factor.secret, time: t0.addingTimeInterval(time).timeIntervalSince1970)
        let verified = send("POST", "/factors/\(factor.id)/verify", ["challenge_id": challengeID, "code": code], token: token(session), at: time)
        #expect(verified.status == 200, "\(verified.body)")
        return verified.body
    }

    // MARK: RFC 6238, computed here independently of the server

    static func totp(secret: [UInt8], time: TimeInterval, digits: Int = 6) -> String {
        var counter = UInt64(time / 30).bigEndian
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: Data(bytes: &counter, count: 8), using: SymmetricKey(data: secret)))
        let offset = Int(mac[19] & 0x0f)
        let value = mac[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7fff_ffff
        let modulus = (0..<digits).reduce(UInt32(1)) { value, _ in value * 10 }
        let text = String(value % modulus)
        return String(repeating: "0", count: digits - text.count) + text
    }

    static func base32Decode(_ text: String) -> [UInt8]? {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var bits = 0, buffer = 0
        var bytes: [UInt8] = []
        for character in text {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            buffer = (buffer << 5 | value) & 0xffff
            bits += 5
            if bits >= 8 {
                bytes.append(UInt8(truncatingIfNeeded: buffer >> (bits - 8)))
                bits -= 8
            }
        }
        return bytes
    }

    @Test func theTestsTOTPHelperMatchesRFC6238() {
        let secret = Array("12345678901234567890".utf8)
        #expect(Self.totp(secret: secret, time: 59, digits: 8) == "94287082")
        #expect(Self.totp(secret: secret, time: 59) == "287082")
        #expect(Self.totp(secret: secret, time: 1_111_111_109, digits: 8) == "07081804")
    }

    // MARK: Enroll

    @Test func enrollingTOTPAnswersTheSecretItsURIAndAnSVG() throws {
        let session = session("totp@example.com")
        let answer = send("POST", "/factors", ["factor_type": "totp"], token: token(session))
        #expect(answer.status == 200)
        #expect(answer.body["type"] as? String == "totp")
        #expect(answer.body["friendly_name"] as? String == "", "GoTrue leaves an absent name empty")
        let id = try #require(answer.body["id"] as? String)
        #expect(UUID(uuidString: id) != nil)
        let totp = try #require(answer.body["totp"] as? [String: Any])
        let secret = try #require(totp["secret"] as? String)
        #expect(secret.count == 32 && !secret.contains("="))
        #expect(Self.base32Decode(secret)?.count == 20)
        // The issuer defaults to the host (and port) of the site URL, as GoTrue's SITE_URL host.
        #expect(totp["uri"] as? String
                == "otpauth://totp/127.0.0.1:9999:totp@example.com?algorithm=SHA1&digits=6&issuer=127.0.0.1:9999&period=30&secret=\(secret)")
        let svg = try #require(totp["qr_code"] as? String)
        #expect(svg.hasPrefix("<?xml") && svg.contains("<svg") && svg.contains("</svg>"))

        let named = send("POST", "/factors", ["factor_type": "totp", "friendly_name": "work", "issuer": "Acme Corp"], token: token(session))
        let uri = try #require((named.body["totp"] as? [String: Any])?["uri"] as? String)
        #expect(uri.hasPrefix("otpauth://totp/Acme%20Corp:totp@example.com?algorithm=SHA1&digits=6&issuer=Acme%20Corp&period=30&secret="))
        #expect(named.body["friendly_name"] as? String == "work")
    }

    @Test func enrollmentErrorsAreGoTruesOwn() {
        let session = session("enroll-errors@example.com")
        let jwt = token(session)
        func refused(_ body: [String: Any]) -> (Int, String?, String?) {
            let answer = send("POST", "/factors", body, token: jwt)
            return (answer.status, answer.body["code"] as? String, answer.body["message"] as? String)
        }
        #expect(refused(["factor_type": "sms"]) == (400, "validation_failed", "factor_type needs to be totp, phone, or webauthn"))
        #expect(refused([:]) == (400, "validation_failed", "factor_type needs to be totp, phone, or webauthn"))
        #expect(refused(["factor_type": "phone"]) == (400, "validation_failed", "Phone number required to enroll Phone factor"))
        for bad in ["12345a78", "+0123456789", "1", "+1234567890123456"] {
            #expect(refused(["factor_type": "phone", "phone": bad]) == (400, "validation_failed", "Invalid phone number format (E.164 required)"), "\(bad)")
        }
        #expect(refused(["factor_type": "webauthn"]).1 == "mfa_webauthn_enroll_not_enabled")
        #expect(refused(["factor_type": "totp", "friendly_name": 7]).1 == "bad_json")
        #expect(send("POST", "/factors", ["factor_type": "totp"]).body["code"] as? String == "no_authorization")

        let phone = send("POST", "/factors", ["factor_type": "phone", "friendly_name": "mobile", "phone": "+1 555 000 1234"], token: jwt)
        #expect(phone.status == 200)
        #expect(phone.body["type"] as? String == "phone" && phone.body["phone"] as? String == "+1 555 000 1234" && phone.body["totp"] == nil)
        #expect(refused(["factor_type": "totp", "friendly_name": "mobile"])
                == (422, "mfa_factor_name_conflict", #"A factor with the friendly name "mobile" for this user already exists"#))
        for index in 1..<10 { #expect(send("POST", "/factors", ["factor_type": "totp", "friendly_name": "f\(index)"], token: jwt).status == 200) }
        #expect(refused(["factor_type": "totp", "friendly_name": "eleventh"])
                == (422, "too_many_enrolled_mfa_factors", "Maximum number of verified factors reached, unenroll to continue"))
    }

    @Test func unverifiedFactorsNeverChallengedExpireAfterFiveMinutes() throws {
        let session = session("expiry@example.com")
        _ = try enrollTOTP(session, name: "first")
        let challenged = try enrollTOTP(session, name: "second")
        #expect(send("POST", "/factors/\(challenged.id)/challenge", token: token(session), at: 1).status == 200)
        #expect(send("POST", "/factors", ["factor_type": "totp", "friendly_name": "first"], token: token(session), at: 299).body["code"] as? String
                == "mfa_factor_name_conflict")
        // Past 300 s the unchallenged one is gone (on the next enrollment); the challenged one stays.
        #expect(send("POST", "/factors", ["factor_type": "totp", "friendly_name": "first"], token: token(session), at: 301).status == 200)
        #expect(send("POST", "/factors", ["factor_type": "totp", "friendly_name": "second"], token: token(session), at: 302).body["code"] as? String
                == "mfa_factor_name_conflict")
    }

    // MARK: Challenge and verify

    @Test func verifyingATOTPRaisesTheSessionToAAL2WithANewRefreshToken() throws {
        let first = session("verify@example.com")
        #expect(claims(first)["aal"] as? String == "aal1")
        #expect(amrMethods(first) == ["password"])
        let factor = try enrollTOTP(first)

        let challenge = send("POST", "/factors/\(factor.id)/challenge", token: token(first), at: 10)
        #expect(challenge.status == 200)
        #expect(challenge.body["type"] as? String == "totp")
        #expect(challenge.body["expires_at"] as? Int == Int(t0.timeIntervalSince1970) + 10 + 300)
        let challengeID = try #require(challenge.body["id"] as? String)
        let right = Self.totp(secret: factor.secret, time: t0.timeIntervalSince1970 + 20)
        let wrong = right == "000000" ? "111111" : "000000"
        func verify(_ code: String, challenge: String = challengeID, at time: TimeInterval = 20) -> Answer {
            send("POST", "/factors/\(factor.id)/verify", ["challenge_id": challenge, "code": code], token: token(first), at: time)
        }
        #expect(verify("").body["message"] as? String == "Code needs to be non-empty")
        let refused = verify(wrong)
        #expect(refused.status == 422 && refused.body["code"] as? String == "mfa_verification_failed")
        #expect(refused.body["message"] as? String == "Invalid TOTP code entered")
        let unknown = verify(right, challenge: UUID().uuidString)
        #expect(unknown.status == 422 && unknown.body["message"] as? String == "MFA factor with the provided challenge ID not found")
        #expect(verify(right, challenge: "not-a-uuid").body["code"] as? String == "bad_json")
        // The code of the period before is still accepted (skew 1): the challenge was not used up by the failures.
        let previousPeriod = Self.totp(secret: factor.secret, time: t0.timeIntervalSince1970 + 20 - 30)

        let raised = verify(previousPeriod)
        #expect(raised.status == 200)
        for key in ["access_token", "refresh_token", "expires_in", "expires_at", "token_type", "user"] { #expect(raised.body[key] != nil, "\(key)") }
        #expect(claims(raised.body)["aal"] as? String == "aal2")
        #expect(amrMethods(raised.body) == ["totp", "password"], "most recent first")
        #expect(claims(raised.body)["session_id"] as? String == claims(first)["session_id"] as? String)
        let factors = try #require((raised.body["user"] as? [String: Any])?["factors"] as? [[String: Any]])
        #expect(factors.first?["status"] as? String == "verified")
        let replay = verify(right)
        #expect(replay.status == 422 && replay.body["code"] as? String == "mfa_ip_address_mismatch")
        #expect(replay.body["message"] as? String == "Challenge and verify IP addresses mismatch.")

        // A refresh keeps the level and the methods.
        let refreshed = send("POST", "/token?grant_type=refresh_token", ["refresh_token": raised.body["refresh_token"] as Any], at: 40)
        #expect(claims(refreshed.body)["aal"] as? String == "aal2")
        #expect(amrMethods(refreshed.body) == ["totp", "password"])
    }

    @Test func theRefreshTokenFromBeforeTheVerificationEndsTheSession() throws {
        let first = session("old-token@example.com")
        let old = try #require(first["refresh_token"] as? String)
        let raised = try verifyTOTP(first, factor: try enrollTOTP(first), at: 5)
        let new = try #require(raised["refresh_token"] as? String)
        #expect(new != old)
        // Not the parent of the current token: presenting it is reuse of a revoked token.
        let reuse = send("POST", "/token?grant_type=refresh_token", ["refresh_token": old], at: 6)
        #expect(reuse.status == 400 && reuse.body["code"] as? String == "refresh_token_already_used")
        let gone = send("POST", "/token?grant_type=refresh_token", ["refresh_token": new], at: 7)
        #expect(gone.status == 400 && gone.body["code"] as? String == "refresh_token_not_found")
    }

    @Test func theOldTokenStillAnswersWithinTheReuseIntervalOfTheLastRefresh() throws {
        var suite = self
        suite.api = DevAuthAPI(options: DevServerOptions(reuseInterval: 10))
        let first = suite.session("reuse-window@example.com")
        let old = try #require(first["refresh_token"] as? String)
        let raised = try suite.verifyTOTP(first, factor: try suite.enrollTOTP(first), at: 5)
        let late = suite.send("POST", "/token?grant_type=refresh_token", ["refresh_token": old], at: 9)
        #expect(late.body["refresh_token"] as? String == raised["refresh_token"] as? String, "9 s after its issue: inside the window")
        // That answer was a refresh of the session: the window now counts from it (9 s).
        let tooLate = suite.send("POST", "/token?grant_type=refresh_token", ["refresh_token": old], at: 20)
        #expect(tooLate.body["code"] as? String == "refresh_token_already_used")
    }

    @Test func verifyingEndsTheUsersOtherAAL1Sessions() throws {
        let first = session("others@example.com")
        let other = session("others@example.com", at: 1)
        let stranger = session("stranger@example.com", at: 1)
        _ = try verifyTOTP(first, factor: try enrollTOTP(first), at: 2)
        let refresh = send("POST", "/token?grant_type=refresh_token", ["refresh_token": other["refresh_token"] as Any], at: 3)
        #expect(refresh.status == 400 && refresh.body["code"] as? String == "refresh_token_not_found")
        #expect(send("GET", "/user", token: token(other), at: 3).body["code"] as? String == "session_not_found")
        #expect(send("POST", "/token?grant_type=refresh_token", ["refresh_token": stranger["refresh_token"] as Any], at: 3).status == 200)
    }

    @Test func anExpiredChallengeIsDeleted() throws {
        let first = session("expired@example.com")
        let factor = try enrollTOTP(first)
        let challengeID = try #require(send("POST", "/factors/\(factor.id)/challenge", token: token(first)).body["id"] as? String)
        let code = Self.totp(secret: factor.secret, time: t0.timeIntervalSince1970 + 301)
        let late = send("POST", "/factors/\(factor.id)/verify", ["challenge_id": challengeID, "code": code], token: token(first), at: 301)
        #expect(late.status == 422 && late.body["code"] as? String == "mfa_challenge_expired")
        #expect(late.body["message"] as? String
                == "MFA challenge \(challengeID) has expired, verify against another challenge or create a new challenge.")
        let again = send("POST", "/factors/\(factor.id)/verify", ["challenge_id": challengeID, "code": code], token: token(first), at: 302)
        #expect(again.body["message"] as? String == "MFA factor with the provided challenge ID not found")
    }

    @Test func factorsAreOnlyTheirOwnersAndIDsMustBeUUIDs() throws {
        let owner = session("owner@example.com")
        let factor = try enrollTOTP(owner)
        let intruder = session("intruder@example.com")
        for target in ["/factors/\(factor.id)/challenge", "/factors/\(UUID().uuidString)/challenge"] {
            let answer = send("POST", target, token: token(intruder))
            #expect(answer.status == 404 && answer.body["code"] as? String == "mfa_factor_not_found" && answer.body["message"] as? String == "Factor not found")
        }
        let malformed = send("DELETE", "/factors/xyz", token: token(intruder))
        #expect(malformed.status == 404 && malformed.body["code"] as? String == "validation_failed")
        #expect(malformed.body["message"] as? String == "factor_id must be an UUID")
        #expect(send("POST", "/factors/\(factor.id.uppercased())/challenge", token: token(owner)).status == 200, "UUIDs compare as UUIDs")
    }

    @Test func wrongMethodsGet405AndUnknownPaths404() {
        let id = UUID().uuidString
        for (method, target) in [("GET", "/factors"), ("PUT", "/factors/\(id)"), ("GET", "/factors/\(id)/challenge"), ("DELETE", "/factors/\(id)/verify")] {
            let answer = send(method, target)
            #expect(answer.status == 405 && answer.body["code"] as? String == "method_not_allowed", "\(method) \(target)")
        }
        #expect(send("POST", "/factors/\(id)/elsewhere").status == 404)
    }

    // MARK: Phone factors

    @Test func aPhoneChallengeSendsACodeAtMostOnceAMinute() throws {
        let first = session("sms@example.com")
        let enrolled = send("POST", "/factors", ["factor_type": "phone", "phone": "+15550001111"], token: token(first))
        let id = try #require(enrolled.body["id"] as? String)
        #expect(send("POST", "/factors/\(id)/challenge", ["channel": "pigeon"], token: token(first)).body["code"] as? String == "validation_failed")
        let challenge = send("POST", "/factors/\(id)/challenge", ["channel": "sms"], token: token(first))
        #expect(challenge.status == 200 && challenge.body["type"] as? String == "phone")
        #expect(challenge.body["expires_at"] as? Int == Int(t0.timeIntervalSince1970) + 300)
        let messages = send("GET", "/admin/dev/outbox?to=15550001111").body["messages"] as? [[String: Any]] ?? []
        #expect(messages.count == 1)
        let message = try #require(messages.last)
        #expect(message["type"] as? String == "mfa" && message["channel"] as? String == "sms" && message["to"] as? String == "15550001111")
        let code = try #require(message["code"] as? String)
        #expect(message["text"] as? String == "Your code is \(code)")

        let soon = send("POST", "/factors/\(id)/challenge", token: token(first), at: 10)
        #expect(soon.status == 429 && soon.body["code"] as? String == "over_sms_send_rate_limit")
        #expect(soon.body["message"] as? String == "For security purposes, you can only request this after 50 seconds.")

        let challengeID = try #require(challenge.body["id"] as? String)
        let wrong = send("POST", "/factors/\(id)/verify", ["challenge_id": challengeID, "code": code == "000000" ? "111111" : "000000"], token: token(first), at: 20)
        #expect(wrong.status == 422 && wrong.body["message"] as? String == "Invalid MFA Phone code entered")
        let raised = send("POST", "/factors/\(id)/verify", ["challenge_id": challengeID, "code": code], token: token(first), at: 30)
        #expect(raised.status == 200)
        #expect(claims(raised.body)["aal"] as? String == "aal2")
        #expect(amrMethods(raised.body) == ["mfa/phone", "password"], "GoTrue's method name for phone factors")
        #expect(send("POST", "/factors/\(id)/challenge", token: token(raised.body), at: 61).status == 200)
    }

    // MARK: The user, unenrolling, low-AAL sessions

    @Test func theUserListsItsFactorsOnlyWhenItHasSome() throws {
        let first = session("listed@example.com")
        #expect(send("GET", "/user", token: token(first)).body["factors"] == nil)
        let factor = try enrollTOTP(first, name: "authenticator", at: 1)
        _ = send("POST", "/factors", ["factor_type": "phone", "phone": "15550002222"], token: token(first), at: 2)
        let factors = try #require(send("GET", "/user", token: token(first), at: 3).body["factors"] as? [[String: Any]])
        #expect(factors.count == 2)
        let totp = try #require(factors.first)
        #expect(totp["id"] as? String == factor.id && totp["factor_type"] as? String == "totp" && totp["status"] as? String == "unverified")
        #expect(totp["friendly_name"] as? String == "authenticator" && totp["created_at"] is String && totp["updated_at"] is String)
        #expect(totp["last_challenged_at"] is NSNull && totp["phone"] as? String == "")
        #expect(factors.last?["phone"] as? String == "15550002222" && factors.last?["friendly_name"] == nil)

        // Verifying deletes the other unverified TOTP factors, though the answer still lists them, as GoTrue's does.
        _ = try enrollTOTP(first, name: "spare", at: 4)
        let raised = try verifyTOTP(first, factor: factor, at: 5)
        #expect(((raised["user"] as? [String: Any])?["factors"] as? [[String: Any]])?.count == 3)
        let after = try #require(send("GET", "/user", token: token(raised), at: 6).body["factors"] as? [[String: Any]])
        #expect(after.map { $0["factor_type"] as? String } == ["totp", "phone"])
        #expect(after.first?["status"] as? String == "verified" && after.first?["last_challenged_at"] is String)
    }

    @Test func unenrollingAVerifiedFactorNeedsAAL2AndDowngradesItsSessions() throws {
        let first = session("unenroll@example.com")
        let factor = try enrollTOTP(first)
        let raised = try verifyTOTP(first, factor: factor, at: 1)
        let later = session("unenroll@example.com", at: 2)
        #expect(claims(later)["aal"] as? String == "aal1")
        let enrollLow = send("POST", "/factors", ["factor_type": "totp", "friendly_name": "second"], token: token(later), at: 3)
        #expect(enrollLow.status == 403 && enrollLow.body["code"] as? String == "insufficient_aal")
        #expect(enrollLow.body["message"] as? String == "AAL2 required to enroll a new factor")
        let refused = send("DELETE", "/factors/\(factor.id)", token: token(later), at: 3)
        #expect(refused.status == 422 && refused.body["code"] as? String == "insufficient_aal")
        #expect(refused.body["message"] as? String == "AAL2 required to unenroll verified factor")
        let spare = send("POST", "/factors", ["factor_type": "totp", "friendly_name": "spare"], token: token(raised), at: 4)
        let spareID = try #require(spare.body["id"] as? String)
        #expect(send("DELETE", "/factors/\(spareID)", token: token(later), at: 5).body["id"] as? String == spareID, "an unverified factor needs no AAL2")

        let removed = send("DELETE", "/factors/\(factor.id)", token: token(raised), at: 6)
        #expect(removed.status == 200 && removed.body as NSDictionary == ["id": factor.id])
        let downgraded = send("POST", "/token?grant_type=refresh_token", ["refresh_token": raised["refresh_token"] as Any], at: 7)
        #expect(claims(downgraded.body)["aal"] as? String == "aal1")
        #expect(amrMethods(downgraded.body) == ["password"])
        #expect((downgraded.body["user"] as? [String: Any])?["factors"] == nil)
    }

    @Test func lowAALSessionsEndAfterTheAllowance() throws {
        let first = session("low-aal@example.com")
        let stayedLow = session("plain@example.com")
        _ = try verifyTOTP(first, factor: try enrollTOTP(first), at: 1)
        // Signed in before the setting: its access token has the full lifetime.
        let low = session("low-aal@example.com", at: 2)
        #expect(send("POST", "/admin/dev/settings", ["allow_low_aal": 60]).status == 204)

        #expect(send("GET", "/user", token: token(low), at: 50).status == 200)
        let refreshed = send("POST", "/token?grant_type=refresh_token", ["refresh_token": low["refresh_token"] as Any], at: 50)
        #expect(refreshed.status == 200)
        #expect(refreshed.body["expires_in"] as? Int == 12, "a low-AAL session's tokens end with its allowance")
        let expired = send("POST", "/token?grant_type=refresh_token", ["refresh_token": refreshed.body["refresh_token"] as Any], at: 63)
        #expect(expired.status == 400 && expired.body["code"] as? String == "session_expired")
        #expect(expired.body["message"] as? String == "Invalid Refresh Token: Session Expired (Low AAL: User Needs MFA Verification)")
        let bearer = send("GET", "/user", token: token(low), at: 63)
        #expect(bearer.status == 403 && bearer.body["code"] as? String == "session_expired" && bearer.body["message"] as? String == "Session is no longer valid")
        // A user without a verified factor is at their highest level already.
        #expect(send("POST", "/token?grant_type=refresh_token", ["refresh_token": stayedLow["refresh_token"] as Any], at: 63).status == 200)

        #expect(send("POST", "/admin/dev/settings", ["allow_low_aal": NSNull()]).status == 204)
        #expect(send("POST", "/token?grant_type=refresh_token", ["refresh_token": refreshed.body["refresh_token"] as Any], at: 64).status == 200)
    }
}
