import AuthCore
import AuthTestSupport
import Foundation
import Testing

/// The sign-in a "sign in again" notice offers, read from the ended session's last token.
@Suite struct SignInAgainPlanTests {
    func plan(_ amr: [String], _ claims: String) -> SignInAgainPlan {
        SignInAgainPlan(accessToken: Fixtures.accessToken(aal: "aal1", amr: amr, extraClaims: claims))
    }

    @Test func theMostRecentFirstFactorDecides() {
        #expect(plan(["password"], #""email":"a@example.com""#) == .password(.email("a@example.com")))
        // A second factor on top (newest first) is asked by the sign-in itself.
        #expect(plan(["totp", "password"], #""email":"a@example.com""#) == .password(.email("a@example.com")))
        #expect(plan(["otp"], #""email":"","phone":"15551234567""#) == .code(.phone("15551234567")))
        #expect(plan(["magiclink"], #""email":"a@example.com""#) == .code(.email("a@example.com")))
        #expect(plan(["oauth"], #""email":"a@example.com","app_metadata":{"provider":"github"}"#) == .browser(provider: "github"))
        // `provider` is the account's first identity's; the one OAuth provider linked is this sign-in's.
        #expect(plan(["oauth"], #""app_metadata":{"provider":"email","providers":["email","github"]}"#) == .browser(provider: "github"))
        #expect(plan(["id_token"], #""app_metadata":{"provider":"apple"}"#) == .browser(provider: "apple"))
        // GoTrue names the SSO provider in the amr entry itself.
        let claims = Data(#"{"sub":"u","amr":[{"method":"sso/saml","timestamp":1,"provider":"2b7c6c3e-0000-4000-8000-000000000009"}]}"#.utf8)
        let part = claims.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        #expect(SignInAgainPlan(accessToken: "eyJhbGciOiJIUzI1NiJ9.\(part).c2ln") == .singleSignOn(providerID: "2b7c6c3e-0000-4000-8000-000000000009"))
    }

    @Test func nothingToSignInAgainWithIsSaid() {
        #expect(plan(["anonymous"], #""is_anonymous":true"#) == .anonymous)
        #expect(plan(["password"], "") == .unknown, "a password sign-in without an address")
        #expect(plan(["oauth"], #""app_metadata":{"provider":"email"}"#) == .unknown)
        #expect(plan(["oauth"], #""app_metadata":{"provider":"google","providers":["google","github"]}"#) == .unknown, "two providers: which one is not known")
        #expect(plan(["token_refresh"], #""email":"a@example.com""#) == .unknown)
        #expect(SignInAgainPlan(accessToken: "not a token") == .unknown)
        #expect(SignInAgainPlan(accessToken: "") == .unknown)
    }

    @Test func authctlIsToldTheSameWay() {
        #expect(SignInAgainPlan.password(.email("a@example.com")).authctlArguments(profile: "work") == ["login", "--profile", "work", "--email", "a@example.com"])
        #expect(SignInAgainPlan.password(.phone("+15551234567")).authctlArguments(profile: "work") == ["login", "--profile", "work", "--otp", "--phone", "+15551234567"])
        #expect(SignInAgainPlan.code(.email("a@example.com")).authctlArguments(profile: "w") == ["login", "--profile", "w", "--otp", "--email", "a@example.com"])
        #expect(SignInAgainPlan.browser(provider: "github").authctlArguments(profile: "w") == ["login", "--profile", "w", "--provider", "github"])
        #expect(SignInAgainPlan.singleSignOn(providerID: "p-1").authctlArguments(profile: "w") == ["login", "--profile", "w", "--sso-provider", "p-1"])
        #expect(SignInAgainPlan.anonymous.authctlArguments(profile: "w") == nil && SignInAgainPlan.unknown.authctlArguments(profile: "w") == nil)
        #expect(!SignInAgainPlan.browser(provider: "github").needsTerminal(secondFactor: false))
        #expect(SignInAgainPlan.browser(provider: "github").needsTerminal(secondFactor: true))
        #expect(SignInAgainPlan.password(.email("a@example.com")).needsTerminal(secondFactor: false))
    }
}
