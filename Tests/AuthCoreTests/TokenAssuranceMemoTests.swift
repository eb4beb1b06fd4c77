import AuthCore
import AuthTestSupport
import Synchronization
import Testing

/// Every status and event states the token's `aal` and `amr`: they are decoded once per token.
@Suite struct TokenAssuranceMemoTests {
    @Test func aTokenIsDecodedOnceAndANewTokenAgain() {
        let decodes = Atomic<Int>(0)
        var memo = TokenAssuranceMemo { token in
            decodes.add(1, ordering: .relaxed)
            return TokenAssurance(accessToken: token)
        }
        let first = Fixtures.accessToken(aal: "aal1", amr: ["password"])
        let second = Fixtures.accessToken(aal: "aal2", amr: ["totp", "password"])
        for _ in 0..<5 { #expect(memo.assurance(of: first)?.level == .aal1) }
        #expect(decodes.load(ordering: .relaxed) == 1)
        #expect(memo.assurance(of: second)?.level == .aal2)
        #expect(memo.assurance(of: second)?.methods == ["totp", "password"])
        #expect(decodes.load(ordering: .relaxed) == 2)
        // Not a JWT: no claims, remembered as such.
        #expect(memo.assurance(of: "opaque") == nil)
        #expect(memo.assurance(of: "opaque") == nil)
        #expect(decodes.load(ordering: .relaxed) == 3)
    }
}
