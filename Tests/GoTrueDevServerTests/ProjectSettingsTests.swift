import AuthCore
import Foundation
@testable import GoTrue
import GoTrueDevServer
import Testing

/// `GET /settings` through the adapter, and how leniently its answer is read: a member missing
/// or written oddly offers nothing, and only an answer that is not an object fails.
@Suite struct ProjectSettingsTests {
    func read(_ json: String) throws(ServerFailure) -> ProjectSettings {
        try SettingsAnswer.settings(Data(json.utf8))
    }

    @Test func theDevelopmentServersSettingsThroughTheAdapter() async throws {
        try await DevServerHarness.run(DevServerOptions(anonKey: "anon-key-1")) { harness in
            let client = GoTrueClient(projectURL: harness.base, anonKey: "anon-key-1")
            let settings = try await client.settings()
            #expect(settings == ProjectSettings(emailEnabled: true, phoneEnabled: true, signUpDisabled: false,
                                                emailAutoconfirm: true, phoneAutoconfirm: false, singleSignOnEnabled: false,
                                                anonymousSignInsEnabled: true, oauthProviders: ["apple", "github", "google"]))

            // The switches the server has change what it publishes.
            let switched = try await harness.call("POST", "/admin/dev/settings",
                                                  json: ["mailer_autoconfirm": false, "anonymous_users": false, "saml_enabled": true],
                                                  headers: ["apikey": "anon-key-1"])
            #expect(switched.status == 204)
            let changed = try await client.settings()
            #expect(!changed.emailAutoconfirm)
            #expect(!changed.anonymousSignInsEnabled)
            #expect(changed.singleSignOnEnabled)
            #expect(changed.oauthProviders == ["apple", "github", "google"])
        }
    }

    @Test func gotruesOwnAnswerReadsAsItSays() throws {
        let settings = try read("""
            {"external": {"anonymous_users": false, "apple": false, "azure": false, "github": true, "google": true,
                          "linkedin_oidc": true, "email": true, "phone": false, "zoom": false},
             "disable_signup": true, "mailer_autoconfirm": false, "phone_autoconfirm": true,
             "sms_provider": "twilio", "saml_enabled": true, "passkeys_enabled": false}
            """)
        #expect(settings == ProjectSettings(emailEnabled: true, phoneEnabled: false, signUpDisabled: true, emailAutoconfirm: false,
                                            phoneAutoconfirm: true, singleSignOnEnabled: true, anonymousSignInsEnabled: false,
                                            oauthProviders: ["github", "google", "linkedin_oidc"]))
    }

    /// Without `external` nothing in it is enabled; the top-level members still count.
    @Test func aMissingOrOddExternalEnablesNoMethod() throws {
        for external in ["", #""external": null,"#, #""external": [true],"#, #""external": "github","#] {
            let settings = try read("{\(external) \"disable_signup\": false, \"saml_enabled\": true}")
            #expect(settings == ProjectSettings(signUpDisabled: false, singleSignOnEnabled: true), "\(external)")
        }
    }

    /// `"true"`, `1` or `null` is no `true`; and sign-ups count as allowed only when the server
    /// says `disable_signup: false`.
    @Test func valuesThatAreNotBooleansOfferNothing() throws {
        let settings = try read("""
            {"external": {"email": "true", "phone": 1, "anonymous_users": null, "github": {"enabled": true}, "gitlab": true},
             "disable_signup": "no", "mailer_autoconfirm": 1, "phone_autoconfirm": "true", "saml_enabled": null}
            """)
        #expect(settings == ProjectSettings(signUpDisabled: true, oauthProviders: ["gitlab"]))
        #expect(try read("{}") == ProjectSettings(signUpDisabled: true))
        #expect(try read(#"{"disable_signup": false}"#).signUpDisabled == false)
    }

    /// A provider GoTrue adds later is offered like the others, sorted; names that are no
    /// provider's (methods of their own, odd characters, far too long) are not.
    @Test func unknownProvidersAreOfferedAndNonProvidersAreNot() throws {
        let long = String(repeating: "x", count: SettingsAnswer.maximumProviderLength + 1)
        let settings = try read("""
            {"external": {"zitadel_new": true, "azure": true, "email": true, "phone": true, "anonymous_users": true,
                          "web3_solana": true, "web3_ethereum": true, "bad name": true, "<script>": true, "\(long)": true,
                          "GitHub-Enterprise": true, "": true}}
            """)
        #expect(settings.oauthProviders == ["GitHub-Enterprise", "azure", "zitadel_new"])
        #expect(settings.emailEnabled && settings.phoneEnabled && settings.anonymousSignInsEnabled)
        #expect(settings.enablesProvider("azure") && !settings.enablesProvider("web3_solana"))
    }

    @Test func anAnswerThatIsNotAnObjectFails() {
        for body in ["[]", "true", "\"settings\"", "null", "<html>502</html>", ""] {
            #expect(throws: ServerFailure.invalidResponse(detail: "the project's settings are not a JSON object"), "\(body)") {
                _ = try read(body)
            }
        }
    }
}
