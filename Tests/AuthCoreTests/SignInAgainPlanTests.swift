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

    @Test func claimsOfAnOddShapeMakeNoPlan() {
        for email in ["x@y.z; touch /tmp/pwned", "a@example.com\nb", "$(id)@example.com", "a b@example.com", "a\"b@example.com",
                      "a@exa_mple.com", "a@example..com", "@example.com", "a@", "a@@example.com", "-oProxyCommand=x@example.com x", "-o@example.com",
                      String(repeating: "a", count: 65) + "@example.com", "é@example.com"] {
            #expect(plan(["password"], #""email":\#(json(email))"#) == .unknown, "\(email)")
            #expect(plan(["magiclink"], #""email":\#(json(email))"#) == .unknown, "\(email)")
            // An odd email is no reason to fall back to the phone.
            #expect(plan(["otp"], #""email":\#(json(email)),"phone":"15551234567""#) == .unknown, "\(email)")
        }
        for phone in ["1555; reboot", "+1 555 123 4567", "1234", "1234567890123456", "+", "15551234567\n", "+-15551234567"] {
            #expect(plan(["otp"], #""email":"","phone":\#(json(phone))"#) == .unknown, "\(phone)")
        }
        for provider in ["git hub", "github;id", "--config=/tmp/x", "-x", "$(id)", "github\n", "gïthub", String(repeating: "g", count: 65)] {
            #expect(plan(["oauth"], #""app_metadata":{"provider":\#(json(provider))}"#) == .unknown, "\(provider)")
        }
        // The SSO provider id GoTrue names is a UUID.
        for id in ["p-1", "2b7c6c3e-0000-4000-8000-000000000009; id", "--sso=x"] {
            let claims = Data(#"{"sub":"u","amr":[{"method":"sso/saml","timestamp":1,"provider":\#(json(id))}]}"#.utf8)
            let part = claims.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(SignInAgainPlan(accessToken: "eyJhbGciOiJIUzI1NiJ9.\(part).c2ln") == .unknown, "\(id)")
        }
    }

    @Test func realisticClaimsStillMakePlans() {
        for email in ["ada.lovelace+work@example.co.uk", "A_B-c%d@mail-1.example.com", "x@y.z", "root@localhost",
                      "o'brien@example.com", "_ops@corp.example.com"] {
            #expect(plan(["password"], #""email":\#(json(email))"#) == .password(.email(email)), "\(email)")
        }
        #expect(plan(["otp"], #""email":"","phone":"+15551234567""#) == .code(.phone("+15551234567")))
        for provider in ["linkedin_oidc", "slack_oidc", "custom:acme", "azure", "workos"] {
            #expect(plan(["oauth"], #""app_metadata":{"provider":\#(json(provider))}"#) == .browser(provider: provider), "\(provider)")
        }
    }

    @Test func theCommandShownIsQuotedForTheShell() {
        // Shapes keep server values plain; what is not plain (a profile's name, or a plan made
        // in code) is quoted so that pasting it runs exactly these words.
        #expect(SignInAgainPlan.password(.email("a@example.com")).commandLine(profile: "work") == "authctl login --profile work --email a@example.com")
        #expect(SignInAgainPlan.password(.email("x@y.z; touch /tmp/p")).commandLine(profile: "work")
                == "authctl login --profile work --email 'x@y.z; touch /tmp/p'")
        #expect(SignInAgainPlan.browser(provider: "git'hub").commandLine(profile: "my work")
                == #"authctl login --profile 'my work' --provider 'git'\''hub'"#)
        #expect(SignInAgainPlan.code(.phone("+15551234567")).commandLine(profile: "w") == "authctl login --profile w --otp --phone +15551234567")
        #expect(SignInAgainPlan.unknown.commandLine(profile: "$(id)") == "authctl login --profile '$(id)' --email ADDRESS")
        #expect(SignInAgainPlan.anonymous.commandLine(profile: "w") == "authctl login --profile w --email ADDRESS")
        #expect(ShellWord.quoted("") == "''")
        for word in ["~root", "a*b", "a\nb", "a\\b", "`id`", "a&b", "a|b", "a>b", "#x", "!x", "a\"b", "{a,b}"] {
            #expect(ShellWord.quoted(word) == "'\(word)'", "\(word.debugDescription)")
        }
    }

    /// `text` as a JSON string literal.
    private func json(_ text: String) -> String {
        String(decoding: try! JSONEncoder().encode(text), as: UTF8.self)
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

    /// What the notice's "Sign in" opens: the page, on the form the account used with its address
    /// in it, for anything the user types; the provider itself for a browser sign-in alone.
    @Test func anythingTypedIsSignedInOnThePageOnTheFormTheAccountUsed() {
        let cases: [(SignInAgainPlan, asks: Bool, page: Bool, SignInPageFlow.Options)] = [
            (.password(.email("a@example.com")), true, true, .init(email: "a@example.com", method: .password)),
            (.code(.email("a@example.com")), true, true, .init(email: "a@example.com", method: .emailCode)),
            (.code(.phone("15551234567")), true, true, .init(phone: "15551234567", method: .phoneCode)),
            (.password(.phone("+15551234567")), true, true, .init(phone: "+15551234567", method: .phoneCode)),
            (.unknown, true, true, .init()),
            (.browser(provider: "github"), false, false, .init()),
            (.browser(provider: "github"), true, true, .init()),
            (.singleSignOn(providerID: "3f2504e0-4f89-11d3-9a0c-0305e82c3301"), false, false, .init()),
        ]
        for (plan, asks, page, options) in cases {
            #expect(plan.opensSignInPage(asks: asks) == page, "\(plan)")
            #expect(plan.signInPageOptions == options, "\(plan)")
        }
        // The page fills in the number as people write it.
        let flow = SignInPageFlow(startedAt: Date(timeIntervalSince1970: 0), settings: ProjectSettings(phoneEnabled: true),
                                  options: SignInAgainPlan.code(.phone("15551234567")).signInPageOptions)
        #expect(flow.step == .requestCode(.phone, address: "+15551234567"))
    }
}
