import AuthCore
import AuthTestSupport
import Foundation
import Testing

/// What the "sign in again" notice offers, decided without any notice, starter or driver.
@Suite struct SignInAgainOfferTests {
    static func ended(amr: [String], claims: String, factors: [FactorSummary] = []) -> Session {
        var session = Fixtures.session()
        session.accessToken = Fixtures.accessToken(aal: "aal1", amr: amr, extraClaims: claims)
        session.user.verifiedFactors = factors
        return session
    }

    @Test func aBrowserSignInRunsInTheBackgroundUnlessASecondFactorIsAskedFor() {
        let github = Self.ended(amr: ["oauth"], claims: #""app_metadata":{"provider":"github"}"#)
        let plain = SignInAgainOffer(reason: .sessionEnded(code: "refresh_token_not_found"), ended: github)
        #expect(plain.plan == .browser(provider: "github"))
        #expect(!plain.inTerminal)
        #expect(plain.canBeStarted)
        // The sign-out was for lack of a second factor, or the account has one: its code is typed.
        #expect(SignInAgainOffer(reason: .secondFactorRequired(serverCode: "insufficient_aal"), ended: github).inTerminal)
        let withFactor = Self.ended(amr: ["oauth"], claims: #""app_metadata":{"provider":"github"}"#, factors: [FactorSummary(id: "f", type: "totp")])
        #expect(SignInAgainOffer(reason: .sessionEnded(code: "refresh_token_not_found"), ended: withFactor).inTerminal)
    }

    @Test func aPasswordSignInAsksForWhatItTypesAndOnlyAnAnonymousUserCannotBeStarted() {
        let password = SignInAgainOffer(reason: .sessionEnded(code: "session_expired"), ended: Self.ended(amr: ["password"], claims: #""email":"a@example.com""#))
        #expect(password.plan == .password(.email("a@example.com")))
        #expect(password.inTerminal && password.canBeStarted)
        // Nothing tells how: the sign-in page asks.
        let unknown = SignInAgainOffer(reason: .sessionEnded(code: "session_expired"), ended: nil)
        #expect(unknown.plan == .unknown)
        #expect(unknown.canBeStarted)
        let anonymous = SignInAgainOffer(reason: .sessionEnded(code: "session_expired"), ended: Self.ended(amr: ["anonymous"], claims: #""is_anonymous":true"#))
        #expect(anonymous.plan == .anonymous)
        #expect(!anonymous.canBeStarted)
    }
}
