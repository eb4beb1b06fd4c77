import AuthdClient
import Testing

/// The refresh token found in what an app kept before it used authd.
@Suite struct StoredSessionTests {
    @Test func aBareTokenIsTakenAsItIsWithoutTheSpaceAround() {
        #expect(StoredSession.refreshToken(in: "  v2rt-abc\n") == "v2rt-abc")
        #expect(StoredSession.refreshToken(in: " \n ") == nil)
    }

    @Test func eachClientLibrarysStoredSessionGivesItsRefreshToken() {
        // supabase-js 2.x: the session object itself.
        #expect(StoredSession.refreshToken(in: #"{"access_token":"eyJ.a.b","refresh_token":"js2","expires_at":1800000000}"#) == "js2")
        // supabase-swift: the session under "session".
        #expect(StoredSession.refreshToken(in: "{\n \"session\": {\"refresh_token\": \"swift\"},\n \"expirationDate\": 0\n}") == "swift")
        // supabase-js 1.x: under "currentSession".
        #expect(StoredSession.refreshToken(in: #"{"currentSession":{"refresh_token":"js1"},"expiresAt":1}"#) == "js1")
    }

    @Test func jsonWithoutARefreshTokenGivesNone() {
        #expect(StoredSession.refreshToken(in: #"{"access_token":"eyJ.a.b"}"#) == nil)
        #expect(StoredSession.refreshToken(in: #"{"refresh_token":""}"#) == nil)
        #expect(StoredSession.refreshToken(in: #"{"refresh_token":42}"#) == nil)
        #expect(StoredSession.refreshToken(in: "{not json") == nil)
    }
}
