import AuthCore
import AuthTestSupport
import Foundation
import Testing

/// The one claims type every reader of a JWT shares: each claim on its own, an odd one named.
@Suite struct TokenClaimsTests {
    func claims(_ json: String) -> TokenClaims? { TokenClaims(payload: Data(json.utf8)) }

    /// An unsigned token carrying `json` as its claims.
    func token(_ json: String) -> String {
        func part(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        return part(#"{"alg":"HS256"}"#) + "." + part(json) + ".c2ln"
    }

    @Test func everyClaimAReaderNeedsIsRead() throws {
        let read = try #require(claims(#"""
            {"role":"authenticated","aal":"aal2","amr":[{"method":"totp","timestamp":1},"password",{"method":"sso/saml","provider":"p-1"}],
             "email":"a@example.com","phone":"15551234567","is_anonymous":false,
             "app_metadata":{"provider":"email","providers":["email","github"],"other":1},"iat":1800000000,"exp":1800003600.5,"sub":"u"}
            """#))
        #expect(read.role == "authenticated" && read.aal == "aal2")
        #expect(read.amr?.map(\.method) == ["totp", "password", "sso/saml"])
        #expect(read.amr?.map(\.provider) == [nil, nil, "p-1"])
        #expect(read.email == "a@example.com" && read.phone == "15551234567" && read.isAnonymous == false)
        #expect(read.appMetadata?.provider == "email" && read.appMetadata?.providers == ["email", "github"])
        #expect(read.issuedAt == 1_800_000_000 && read.expiresAt == 1_800_003_600.5)
        #expect(read.malformed.isEmpty)
        #expect(TokenClaims(accessToken: token(#"{"aal":"aal1"}"#))?.aal == "aal1")
    }

    @Test func aClaimOfAnotherTypeReadsAsAbsentAndIsNamed() throws {
        let read = try #require(claims(#"{"role":5,"aal":"aal1","amr":[1],"email":null,"app_metadata":{"providers":"github"},"exp":"soon"}"#))
        #expect(read.role == nil && read.amr == nil && read.appMetadata == nil && read.expiresAt == nil)
        #expect(read.aal == "aal1" && read.email == nil)
        #expect(read.malformed == ["role", "amr", "app_metadata", "exp"])
        #expect(read.wellFormed(["aal", "email"]) && !read.wellFormed(["aal", "amr"]))
        // An amr entry's provider of another type is only no provider.
        #expect(claims(#"{"amr":[{"method":"sso/saml","provider":7}]}"#)?.amr == claims(#"{"amr":[{"method":"sso/saml"}]}"#)?.amr)
        #expect(claims(#"{"amr":[{"method":7}]}"#)?.malformed == ["amr"])
    }

    @Test func aPayloadThatIsNotAnObjectHasNoClaims() {
        #expect(claims("[1,2]") == nil && claims("\"x\"") == nil && claims("not json") == nil)
        #expect(TokenClaims(accessToken: "not a token") == nil)
    }

    @Test func eachReaderStillMindsOnlyTheClaimsItReads() {
        // An odd claim the reader does not use changes nothing; an odd one it uses makes nothing.
        let odd = #""role":5,"iat":"x","email":7"#
        #expect(TokenAssurance(accessToken: Fixtures.accessToken(aal: "aal2", amr: ["totp"], extraClaims: odd))
                == TokenAssurance(level: .aal2, methods: ["totp"]))
        #expect(TokenAssurance(accessToken: token(#"{"aal":"aal1","amr":"password"}"#)) == nil)
        #expect(SignInAgainPlan(accessToken: Fixtures.accessToken(aal: "aal1", amr: ["password"], extraClaims: #""email":"a@example.com","role":5,"iat":"x""#))
                == .password(.email("a@example.com")))
        #expect(SignInAgainPlan(accessToken: Fixtures.accessToken(aal: "aal1", amr: ["oauth"], extraClaims: #""app_metadata":{"provider":"github"},"phone":5"#))
                == .unknown)
    }
}
