import AuthCore
import Foundation
import GoTrue
import Testing

/// The user object as `GoTrueClient` reads it: the summary kept with the session, and the
/// factors and identities the daemon lists, lenient where GoTrue's lists may grow.
@Suite struct GoTrueUserAnswerTests {
    /// `GET /user` answered with `body`.
    func user(_ body: String) async throws -> UserRecord {
        let server = try await RecordingHTTPServer.start { _ in .init(status: 200, body: body) }
        do {
            let record = try await GoTrueClient(projectURL: server.base, anonKey: "anon", environment: [:]).user(accessToken: "at")
            await server.stop()
            return record
        } catch {
            await server.stop()
            throw error
        }
    }

    @Test func factorsAndIdentitiesAreListedAndOddEntriesLeftOut() async throws {
        let record = try await user(#"""
            {"id":"u-1","email":"a@example.com","phone":"",
             "factors":[
               {"id":"f-1","factor_type":"totp","status":"verified","friendly_name":"","created_at":"2026-01-01T00:00:00Z"},
               {"id":"f-2","factor_type":"phone","status":"unverified","friendly_name":"Mobile","phone":"+15551234567"},
               {"id":"f-3","status":"verified","phone":5},
               {"factor_type":"totp","status":"verified"},
               "odd"],
             "identities":[
               {"identity_id":"i-1","provider":"email","email":"","identity_data":{"email":"a@example.com"},"created_at":"c","last_sign_in_at":"l"},
               {"identity_id":"i-2","provider":"github","identity_data":{"email":"gh@example.com"}},
               {"identity_id":"","provider":"google"},
               {"identity_id":"i-4","provider":""},
               {"identity_id":"i-5","provider":"x","identity_data":{"email":7}},
               {"identity_id":"i-6"}]}
            """#)
        #expect(record.summary == UserSummary(id: "u-1", email: "a@example.com", phone: nil, verifiedFactors: [
            FactorSummary(id: "f-1", type: "totp"), FactorSummary(id: "f-3", type: "unknown"),
        ]))
        // f-3 counts as verified, but a phone that is not a string keeps it off the list.
        #expect(record.factors == [
            ListedFactor(id: "f-1", type: "totp", status: "verified", createdAt: "2026-01-01T00:00:00Z"),
            ListedFactor(id: "f-2", type: "phone", friendlyName: "Mobile", status: "unverified", phone: "+15551234567"),
        ])
        // An empty email of its own hides the provider data's.
        #expect(record.identities == [
            LinkedIdentity(id: "i-1", provider: "email", createdAt: "c", lastSignInAt: "l"),
            LinkedIdentity(id: "i-2", provider: "github", email: "gh@example.com"),
        ])
        #expect(try JSONSerialization.jsonObject(with: record.json) is [String: Any], "the object as it came, for user.get")
    }

    @Test func identitiesOfAnotherShapeAreNoneButTheUserStillReads() async throws {
        let record = try await user(#"{"id":"u-1","identities":{"not":"a list"},"factors":null}"#)
        #expect(record.summary == UserSummary(id: "u-1"))
        #expect(record.identities.isEmpty && record.factors.isEmpty)
    }

    @Test func aUserWithoutAnIDOrWithFactorsOfAnotherShapeIsNotAUser() async throws {
        for body in [#"{"email":"a@example.com"}"#, #"{"id":"u-1","factors":{"id":"f-1"}}"#, "[]"] {
            await #expect(throws: ServerFailure.invalidResponse(detail: "the user in the answer is incomplete"), "\(body)") {
                _ = try await user(body)
            }
        }
    }
}
