import AuthCore
import AuthdClient
import AuthProtocol
import AuthTestSupport
import Foundation
import Testing

/// Emailed links that come back to authd, confirmations sent again and SSO's start, with the
/// real socket and `FakeGoTrue`.
@Suite struct EmailLinkAndSSOThroughDaemonTests {
    let loopback = "http://127.0.0.1:41234/callback"
    typealias Refusal = AnonymousAndTakeOverThroughDaemonTests

    /// The message of a refusal, as the daemon wrote it.
    static func message(_ error: AuthdError?) -> String {
        guard let error else { return "(accepted)" }
        if case .rejected(_, let message) = error { return message }
        return error.localizedDescription
    }

    @Test func aCodeSentWithALinkWaitsForItAndATokenHashLinkSignsIn() async throws {
        try await DaemonHarness.run { daemon in
            let sent = try await offPool {
                try daemon.connect().call(Methods.SendCode.self, .init(email: "a@example.com", redirectTo: self.loopback))
            }
            let flowID = try #require(sent.flowID)
            let link = try #require(daemon.api.links.last ?? nil)
            #expect(link.redirectTo == "\(loopback)?authd_flow=\(flowID)" && !link.codeChallenge.isEmpty)
            // A link for a flow of someone else's making (no binding) completes nothing.
            let stranger = try await Refusal.refusal(daemon, Methods.OAuthComplete.self,
                                                     .init(flowID: flowID, callbackURL: "\(loopback)?token_hash=good-token-hash&type=email"))
            #expect(stranger != nil)
            let status = try await offPool {
                try daemon.connect().call(Methods.OAuthComplete.self,
                                          .init(flowID: flowID, callbackURL: "\(self.loopback)?authd_flow=\(flowID)&token_hash=good-token-hash&type=email"))
            }
            #expect(status.state == "signed_in")
            // Used once.
            let again = try await Refusal.refusal(daemon, Methods.OAuthComplete.self,
                                                  .init(flowID: flowID, callbackURL: "\(loopback)?authd_flow=\(flowID)&token_hash=good-token-hash&type=email"))
            #expect(again != nil)
        }
    }

    @Test func aTokenHashLinkToAnotherAccountIsRefusedAndItsSessionEnded() async throws {
        let store = InMemorySessionStore(sessions: ["default": Fixtures.session(7, receivedAt: Date())])
        try await DaemonHarness.run(store: store) { daemon in
            let sent = try await offPool { try daemon.connect().call(Methods.SendCode.self, .init(email: "a@example.com", redirectTo: self.loopback)) }
            let flowID = try #require(sent.flowID)
            let refused = try await Refusal.refusal(daemon, Methods.OAuthComplete.self,
                                                    .init(flowID: flowID, callbackURL: "\(loopback)?authd_flow=\(flowID)&token_hash=other-account-hash&type=magiclink"))
            guard case .browserSignInFailed(let message)? = refused else { Issue.record("expected a refusal, got \(String(describing: refused))"); return }
            #expect(message.contains("another account"))
            // The foreign session is ended at the server with its own token; the user's stays.
            #expect(daemon.api.signOutCalls == [.local] && daemon.api.signOutTokens == ["access-1"])
            #expect(daemon.store.stored("default")?.refreshToken == "refresh-7")
            let status = try await offPool { try daemon.connect().call(Methods.Status.self, ProfileParameters()) }
            #expect(status.state == "signed_in" && status.user?.email == "a@example.com")
            // A type no emailed link has is refused before anything is verified.
            let again = try await offPool { try daemon.connect().call(Methods.SendCode.self, .init(email: "a@example.com", redirectTo: self.loopback)) }
            let second = try #require(again.flowID)
            let sms = try await Refusal.refusal(daemon, Methods.OAuthComplete.self,
                                                .init(flowID: second, callbackURL: "\(loopback)?authd_flow=\(second)&token_hash=good-token-hash&type=sms"))
            #expect(Self.message(sms).contains("type"))
        }
    }

    @Test func aTokenHashHandedOverOnACommandLineIsRefusedUnused() async throws {
        try await DaemonHarness.run { daemon in
            // No flow at all: said the same way, and nothing is verified.
            let unasked = try await Refusal.refusal(daemon, Methods.OAuthComplete.self, .init(callbackURL: "myapp://confirm?token_hash=good-token-hash&type=email"))
            #expect(Self.message(unasked).contains("{{ .ConfirmationURL }}"))
            // A provider sign-in's flow to that address gets the same answer.
            let begun = try await offPool { try daemon.connect().call(Methods.OAuthBegin.self, .init(provider: "github", redirectTo: "myapp://confirm")) }
            let refused = try await Refusal.refusal(daemon, Methods.OAuthComplete.self,
                                                    .init(callbackURL: "myapp://confirm?token_hash=good-token-hash&type=email"))
            guard case .browserSignInFailed(let message)? = refused else { Issue.record("expected a refusal, got \(String(describing: refused))"); return }
            #expect(message.contains("email template") && !message.contains("good-token-hash"))
            #expect(!begun.flowID.isEmpty)
            // The implicit flow's tokens, in the fragment, are refused the same way.
            let implicit = try await Refusal.refusal(daemon, Methods.OAuthComplete.self, .init(callbackURL: "myapp://confirm#access_token=a&refresh_token=r"))
            #expect(Self.message(implicit).contains("session tokens in the clear"))
            #expect(try await offPool { try daemon.connect().call(Methods.Status.self, ProfileParameters()) }.state == "signed_out")
        }
    }

    /// A web page can open an app's address with anything in it: a token hash, an error with
    /// words of its choosing, junk. None of it ends the user's flow, which its own code completes.
    @Test func aCustomSchemeLinksFlowOutlivesWhatAWebPageSends() async throws {
        try await DaemonHarness.run { daemon in
            let sent = try await offPool { try daemon.connect().call(Methods.SendCode.self, .init(email: "a@example.com", redirectTo: "myapp://confirm")) }
            #expect(sent.flowID != nil)
            let hash = try await Refusal.refusal(daemon, Methods.OAuthComplete.self, .init(callbackURL: "myapp://confirm?token_hash=good-token-hash&type=magiclink"))
            #expect(Self.message(hash).contains("goes on waiting"))
            let page = "Your account was locked. Call support at 555-0100"
            let error = try await Refusal.refusal(daemon, Methods.OAuthComplete.self,
                                                  .init(callbackURL: "myapp://confirm?error=access_denied&error_description=\(page.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"))
            #expect(Self.message(error).contains("ended nothing") && !Self.message(error).contains("Call support"))
            let junk = try await Refusal.refusal(daemon, Methods.OAuthComplete.self, .init(callbackURL: "myapp://confirm?state=x"))
            #expect(Self.message(junk).contains("neither a code nor an error"))
            #expect(try await offPool { try daemon.connect().call(Methods.Status.self, ProfileParameters()) }.state == "signed_out")
            // The flow still waits: its code reaches the exchange (which FakeGoTrue refuses, not
            // knowing the flow's verifier), and uses the flow up.
            let code = try await Refusal.refusal(daemon, Methods.OAuthComplete.self, .init(callbackURL: "myapp://confirm?code=c0de"))
            #expect(Self.message(code).contains("Invalid login credentials"))
            let used = try await Refusal.refusal(daemon, Methods.OAuthComplete.self, .init(callbackURL: "myapp://confirm?code=c0de"))
            #expect(Self.message(used).contains("no browser sign-in is waiting"))
        }
    }

    @Test func linksAndResendsAreCheckedBeforeAnythingIsSent() async throws {
        try await DaemonHarness.run { daemon in
            let sms = try await Refusal.refusal(daemon, Methods.SendCode.self, .init(phone: "+15551234567", redirectTo: loopback))
            #expect(Self.message(sms).contains("a text message carries only the code"))
            let remote = try await Refusal.refusal(daemon, Methods.SendCode.self, .init(email: "a@example.com", redirectTo: "http://example.com/cb"))
            #expect(Self.message(remote).contains("loopback address"))
            let mismatched = try await Refusal.refusal(daemon, Methods.Resend.self, .init(phone: "+15551234567", type: "signup"))
            #expect(Self.message(mismatched).contains("goes with an 'email'"))
            let unknown = try await Refusal.refusal(daemon, Methods.Resend.self, .init(email: "a@example.com", type: "invite"))
            #expect(Self.message(unknown).contains("'type' must be one of"))
            #expect(daemon.api.links.isEmpty)
            let resent = try await offPool { try daemon.connect().call(Methods.Resend.self, .init(email: "a@example.com")) }
            #expect(resent.sentTo == "a@example.com" && resent.flowID == nil)
        }
    }

    @Test func singleSignOnStartsInTheBrowserAndAnUnknownDomainSaysSo() async throws {
        try await DaemonHarness.run { daemon in
            let begun = try await offPool { try daemon.connect().call(Methods.SingleSignOnBegin.self, .init(domain: "Example.com", redirectTo: self.loopback)) }
            #expect(begun.url.hasPrefix("https://idp.example.test/saml?code_challenge=") && begun.expiresIn == 300)
            let unknown = try await Refusal.refusal(daemon, Methods.SingleSignOnBegin.self, .init(domain: "unknown.example", redirectTo: loopback))
            guard case .browserSignInFailed(let message)? = unknown else { Issue.record("expected a refusal, got \(String(describing: unknown))"); return }
            #expect(message.contains("no SSO provider"))
            for bad in [Methods.SingleSignOnBegin.Parameters(redirectTo: loopback),
                        .init(domain: "example.com", providerID: "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0", redirectTo: loopback),
                        .init(domain: "not a domain", redirectTo: loopback), .init(providerID: "../etc", redirectTo: loopback)] {
                let refused = try await Refusal.refusal(daemon, Methods.SingleSignOnBegin.self, bad)
                guard case .rejected(_, let message)? = refused else { Issue.record("accepted \(bad)"); continue }
                #expect(message.hasPrefix("invalid params"))
            }
            let badIdentity = try await Refusal.refusal(daemon, Methods.UnlinkIdentity.self, .init(identityID: "../../factors"))
            #expect(Self.message(badIdentity).contains("'identity_id' must be"))
        }
    }
}
