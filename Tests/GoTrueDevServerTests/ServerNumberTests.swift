import AuthCore
import Foundation
@testable import GoTrue
import GoTrueDevServer
import NIOHTTP1
import Testing

/// Numbers a server sends are range-checked where they enter, so that nothing computed from them
/// later can overflow: `Retry-After`, `expires_in`, the `Date` header.
@Suite struct ServerNumberTests {
    static let serverDate = "Sun, 06 Nov 1994 08:49:37 GMT"

    @Test(arguments: [
        ("30", 30), ("0", 0), (" 45 ", 45), ("3600", 3600), ("3601", 3600), ("999999", 3600),
        ("99999999999999999999999999", 3600),
        ("Sun, 06 Nov 1994 08:51:37 GMT", 120), ("Sun, 06 Nov 1994 08:00:00 GMT", 0), ("Fri, 31 Dec 9999 23:59:59 GMT", 3600),
    ] as [(String, Double)])
    func aReadableRetryAfterIsClampedToAnHour(_ value: String, _ seconds: Double) {
        #expect(RetryAfter.seconds(value, serverDate: Self.serverDate, now: Date()) == seconds)
    }

    @Test(arguments: ["inf", "Infinity", "1e400", "nan", "-5", "1.5", "0x10", "", "soon", "+30",
                      "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT"])
    func anUnreadableRetryAfterIsIgnored(_ value: String) {
        #expect(RetryAfter.seconds(value, serverDate: Self.serverDate, now: Date()) == nil)
    }

    @Test func aRetryAfterDateIsMeasuredFromTheLocalClockWhenTheAnswerHasNoDate() {
        let now = Date(timeIntervalSince1970: 784_111_777)
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:50:37 GMT", serverDate: nil, now: now) == 60)
        #expect(RetryAfter.seconds("Sun, 06 Nov 1994 08:50:37 GMT", serverDate: "garbage", now: now) == 60)
    }

    @Test(arguments: ["inf", "1e400", "-1", "Fri, 31 Dec 9999 23:59:59 GMT", "99999999999999999999"])
    func aRateLimitWithAnyRetryAfterDecodesToAFiniteWait(_ value: String) {
        let failure = GoTrueErrorDecoder.failure(status: 429, headers: HTTPHeaders([("Retry-After", value)]), body: Data("{}".utf8))
        guard case .http(429, _, _, let retryAfter) = failure else { Issue.record("\(failure)"); return }
        #expect(retryAfter.map { $0.isFinite && (0...3600).contains($0) } ?? true, "\(String(describing: retryAfter))")
    }

    @Test func httpDatesAreReadStrictly() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
        #expect(HTTPDate.parse("Tue, 29 Feb 2000 12:00:00 GMT") == Date(timeIntervalSince1970: 951_825_600))
        #expect(HTTPDate.parse("Fri, 31 Dec 9999 23:59:59 GMT") == Date(timeIntervalSince1970: 253_402_300_799))
        for bad in ["Mon, 29 Feb 2100 00:00:00 GMT", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 99999 08:49:37 GMT",
                    "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", ""] {
            #expect(HTTPDate.parse(bad) == nil, "\(bad)")
        }
    }

    static let badLifetimes = ["0", "-1", "3.5", "31536001", "9223372036854775807", "9223372036854775808", "1e400", #""3600""#, "null", "", "true"]

    @Test(arguments: badLifetimes)
    func aSignInAnsweredWithAnUnusableLifetimeIsRefused(_ raw: String) async throws {
        try await DevServerHarness.run { harness in
            _ = try await harness.signUp("lifetime@example.com")
            _ = try await harness.call("POST", "/admin/dev/faults", json: ["grant": "password", "expires_in": raw])
            let client = GoTrueClient(projectURL: harness.base, anonKey: "k")
            do throws(ServerFailure) {
                let grant = try await client.signIn(.password(.email("lifetime@example.com"), password: "password-1"))
                Issue.record("a session living \(grant.expiresIn) s was accepted")
            } catch {
                guard case .invalidResponse(let detail) = error else { Issue.record("wrong failure \(error)"); return }
                #expect(detail.contains("expires_in"))
            }
        }
    }

    @Test(arguments: badLifetimes)
    func aRefreshAnsweredWithAnUnusableLifetimeIsATransientFailure(_ raw: String) async throws {
        try await DevServerHarness.run { harness in
            let refreshToken = try #require(try await harness.signUp("lifetime@example.com")["refresh_token"] as? String)
            _ = try await harness.call("POST", "/admin/dev/faults", json: ["expires_in": raw, "count": 1])
            let client = GoTrueClient(projectURL: harness.base, anonKey: "k")
            do throws(ServerFailure) {
                _ = try await client.refresh(refreshToken: refreshToken)
                Issue.record("the refresh was accepted")
            } catch {
                #expect(error.refreshClass == .transient(.serverError, retryAfter: nil), "\(error)")
            }
            // The server rotated the token; its parent, still held, is answered the current session.
            #expect(try await client.refresh(refreshToken: refreshToken).expiresIn == 3600)
        }
    }

    @Test(arguments: [1, 31_536_000])
    func lifetimesAtTheEdgesAreAccepted(_ seconds: Int) async throws {
        try await DevServerHarness.run { harness in
            _ = try await harness.signUp("edge@example.com")
            _ = try await harness.call("POST", "/admin/dev/faults", json: ["grant": "password", "expires_in": String(seconds)])
            let grant = try await GoTrueClient(projectURL: harness.base, anonKey: "k").signIn(.password(.email("edge@example.com"), password: "password-1"))
            #expect(grant.expiresIn == seconds)
        }
    }
}
