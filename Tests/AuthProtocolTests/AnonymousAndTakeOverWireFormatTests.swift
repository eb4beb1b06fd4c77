import AuthProtocol
import Foundation
import Testing

/// The anonymous sign-in and the session take-over, pinned both ways like the other methods.
@Suite struct AnonymousAndTakeOverWireFormatTests {
    let pins = AccountWireFormatTests()

    @Test func anAnonymousSignInAndTheStatusItGives() throws {
        try pins.pin(request: Methods.SignInAnonymously.name,
                     Methods.SignInAnonymously.Parameters(profile: "work", data: ["theme": .string("dark")]), id: 48, "request-sign-in-anonymously")
        let user = SessionStatus.User(id: "9b2f6c1e-0000-4000-8000-000000000002", email: nil, phone: nil, isAnonymous: true)
        let status = SessionStatus(profile: "work", state: "signed_in", user: user, expiresAt: 1_800_003_600, server: "https://abcd.supabase.co",
                                   aal: "aal1", amr: ["anonymous"])
        try pins.pin(result: status, id: 48, "result-status-anonymous")
        #expect(user.displayName == "anonymous user 9b2f6c1e-0000-4000-8000-000000000002")
        // A phone as GoTrue keeps it (the digits, no "+") is named as people write it.
        #expect(SessionStatus.User(id: "u", email: nil, phone: "15551234567").displayName == "+15551234567")
        #expect(SessionStatus.User(id: "u", email: "a@example.com", phone: "15551234567").displayName == "a@example.com")
    }

    @Test func aPermanentUserCarriesNoAnonymousMember() throws {
        let line = try RPCCodec.encodeResult(SessionStatus.User(id: "u", email: "a@example.com", phone: nil), id: .number(1))
        #expect(!String(decoding: line, as: UTF8.self).contains("is_anonymous"))
    }

    @Test func aSessionTakenOverByItsRefreshToken() throws {
        try pins.pin(request: Methods.SignInWithRefreshToken.name, Methods.SignInWithRefreshToken.Parameters(refreshToken: "v2rt-4f7b2c9d1e"),
                     id: 49, "request-sign-in-with-refresh-token")
    }
}
