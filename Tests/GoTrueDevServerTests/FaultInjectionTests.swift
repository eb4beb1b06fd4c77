import Foundation
import GoTrueDevServer
import Testing

/// The development server's fault injection and revocation, called in process (no sockets):
/// what each fault does to a refresh grant, before or after the token is rotated. Requests carry
/// the API version header, so errors come in the newer `{"code": …}` shape.
@Suite struct FaultInjectionTests {
    let api = DevAuthAPI(options: DevServerOptions())

    func post(_ path: String, _ json: String, query: String = "") -> DevResponse {
        api.handle(DevRequest(method: "POST", target: "/auth/v1\(path)\(query)", headers: ["content-type": "application/json", "x-supabase-api-version": "2024-01-01"], body: Data(json.utf8)))
    }

    func body(_ response: DevResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:]
    }

    func signUp(_ email: String) throws -> String {
        let response = post("/signup", #"{"email":"\#(email)","password":"password-1"}"#)
        return try #require(body(response)["refresh_token"] as? String)
    }

    func refresh(_ token: String) -> DevResponse {
        post("/token", #"{"refresh_token":"\#(token)"}"#, query: "?grant_type=refresh_token")
    }

    @Test(arguments: [#"{}"#, #"{"status":200}"#, #"{"delay":-1}"#, #"{"drop":false}"#, #"{"status":503,"grant":"pkce"}"#])
    func aFaultThatWouldDoNothingIsRefused(_ fault: String) {
        let response = post("/admin/dev/faults", fault)
        #expect(response.status == 400)
        #expect(body(response)["code"] as? String == "validation_failed")
    }

    @Test func aDropFaultClosesWithoutAnswerAndLeavesTheTokenUnrotated() throws {
        let token = try signUp("drop@example.com")
        #expect(post("/admin/dev/faults", #"{"drop":true,"count":1}"#).status == 204)
        #expect(refresh(token).dropConnection)
        let next = refresh(token)
        #expect(!next.dropConnection)
        #expect(next.status == 200, "the first grant failed before rotating, so the token is still current")
    }

    @Test func aDelayOnlyFaultRotatesButHoldsTheAnswerBack() throws {
        let token = try signUp("delay@example.com")
        #expect(post("/admin/dev/faults", #"{"delay":2.5,"count":1}"#).status == 204)
        let delayed = refresh(token)
        #expect(delayed.status == 200)
        #expect(delayed.delay == 2.5)
        let rotated = try #require(body(delayed)["refresh_token"] as? String)
        #expect(rotated != token)
        #expect(refresh(rotated).delay == 0, "count 1: only the first grant is delayed")
    }

    @Test func aStatusFaultWithDelayFailsLate() throws {
        let token = try signUp("late-error@example.com")
        #expect(post("/admin/dev/faults", #"{"status":503,"retry_after":7,"delay":1}"#).status == 204)
        let failed = refresh(token)
        #expect(failed.status == 503)
        #expect(failed.delay == 1)
        #expect(failed.headers["Retry-After"] == "7")
    }

    @Test func revokingAUserEndsEverySessionAtTheNextRefresh() throws {
        let first = try signUp("revoke@example.com")
        let second = try #require(body(post("/token", #"{"email":"revoke@example.com","password":"password-1"}"#, query: "?grant_type=password"))["refresh_token"] as? String)
        let revoked = post("/admin/dev/revoke", #"{"email":"revoke@example.com"}"#)
        #expect(body(revoked)["revoked_sessions"] as? Int == 2)
        for token in [first, second] {
            #expect(body(refresh(token))["code"] as? String == "refresh_token_not_found")
        }
        #expect(post("/admin/dev/revoke", #"{"email":"nobody@example.com"}"#).status == 404)
    }

    @Test func aRetryAfterGivenAsTextIsSentVerbatim() throws {
        let token = try signUp("retry-text@example.com")
        #expect(post("/admin/dev/faults", #"{"status":429,"retry_after":"1e400","count":1}"#).status == 204)
        #expect(refresh(token).headers["Retry-After"] == "1e400")
    }

    @Test(arguments: ["1e400", "-1", "9223372036854775807", #""3600""#])
    func anExpiresInFaultRotatesAndAnswersThatNumberVerbatim(_ raw: String) throws {
        let token = try signUp("expires-\(raw.count)@example.com")
        #expect(post("/admin/dev/faults", #"{"expires_in":"# + String(reflecting: raw) + #","count":1}"#).status == 204)
        let answer = refresh(token)
        #expect(answer.status == 200)
        let text = String(decoding: answer.body, as: UTF8.self)
        #expect(text.contains(#""expires_in":"# + raw + ","), "\(text)")
        #expect(text.contains(#""expires_at":"#), "the other fields are left alone")
        #expect(!refresh(token).body.isEmpty, "the token was rotated: its parent is still answered")
    }

    @Test func anEmptyExpiresInLeavesTheFieldOut() throws {
        let token = try signUp("expires-missing@example.com")
        #expect(post("/admin/dev/faults", #"{"expires_in":"","count":1}"#).status == 204)
        let answer = body(refresh(token))
        #expect(answer["expires_in"] == nil)
        #expect(answer["refresh_token"] is String)
    }

    @Test func aFaultForPasswordGrantsLeavesRefreshGrantsAlone() throws {
        let token = try signUp("password-fault@example.com")
        #expect(post("/admin/dev/faults", #"{"grant":"password","expires_in":"0"}"#).status == 204)
        #expect(body(refresh(token))["expires_in"] as? Int == 3600)
        let signIn = post("/token", #"{"email":"password-fault@example.com","password":"password-1"}"#, query: "?grant_type=password")
        #expect(body(signIn)["expires_in"] as? Int == 0)
        #expect(post("/admin/dev/faults", #"{"grant":"password","status":429,"retry_after":"inf"}"#).status == 204)
        let limited = post("/token", #"{"email":"password-fault@example.com","password":"password-1"}"#, query: "?grant_type=password")
        #expect(limited.status == 429)
        #expect(limited.headers["Retry-After"] == "inf")
    }
}
