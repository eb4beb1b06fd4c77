import AuthCore
import AuthTestSupport
import Foundation
import Testing

/// What a browser redirect may carry through each channel, and what it may do to the flow it
/// matched: credentials only from a bound flow's listener, errors and junk ending only a bound flow.
@Suite struct RedirectRulesTests {
    let t0 = Fixtures.t0
    let soon = Fixtures.t0.addingTimeInterval(10)

    /// An emailed link's flow back to an app's custom scheme (unbound: its address takes no query of ours).
    var schemeLink: OAuthFlow {
        var flow = OAuthFlow(id: "s1", provider: "email", redirectTo: "myapp://confirm", codeVerifier: "verifier-s1", startedAt: t0)
        flow.kind = .emailLink
        flow.emailAddress = "a@example.com"
        return flow
    }

    /// An emailed link's flow back to a loopback listener, bound as the daemon binds it.
    var loopbackLink: OAuthFlow {
        var flow = OAuthFlow(id: "l1", provider: "email", redirectTo: OAuthFlow.bound("http://127.0.0.1:4000/callback", to: "l1"),
                             codeVerifier: "verifier-l1", startedAt: t0, isBound: true)
        flow.kind = .emailLink
        flow.emailAddress = "a@example.com"
        return flow
    }

    func scheme(_ query: String) -> URL { URL(string: "myapp://confirm?\(query)")! }
    func loopback(_ query: String, flow: String? = "l1") -> URL {
        URL(string: "http://127.0.0.1:4000/callback?\(query)" + (flow.map { "&authd_flow=\($0)" } ?? ""))!
    }

    @Test func aRedirectNamingItsFlowComesFromAListenerAndOneWithoutFromACommandLine() {
        #expect(RedirectChannel(namesFlow: true) == .listener)
        #expect(RedirectChannel(namesFlow: false) == .commandLine)
    }

    /// `authctl open-url 'myapp://confirm?token_hash=…'`: every user could read it, so it is
    /// refused before any flow is looked for, and nothing of it is used.
    @Test func aCredentialOnACommandLineIsRefusedWhateverWaits() {
        #expect(RedirectRules.screen(scheme("token_hash=pkce_abc&type=magiclink"), channel: .commandLine)
                == .exposedCredential(parameter: "token_hash"))
        // The implicit flow's tokens come in the fragment.
        #expect(RedirectRules.screen(URL(string: "myapp://confirm#access_token=a&refresh_token=r&type=magiclink")!, channel: .commandLine)
                == .exposedCredential(parameter: "access_token"))
        #expect(RedirectRules.screen(scheme("provider_refresh_token=x"), channel: .commandLine) == .exposedCredential(parameter: "provider_refresh_token"))
        // A PKCE code is useless without authd's verifier; an empty parameter carries nothing.
        #expect(RedirectRules.screen(scheme("code=c0de"), channel: .commandLine) == nil)
        #expect(RedirectRules.screen(scheme("token_hash=&code=c0de"), channel: .commandLine) == nil)
        // A listener's redirect crossed no command line.
        #expect(RedirectRules.screen(loopback("token_hash=pkce_abc&type=magiclink"), channel: .listener) == nil)
    }

    @Test func aCustomSchemeLinkTakesOnlyItsCodeAndKeepsWaitingForIt() {
        let flow = schemeLink
        #expect(RedirectRules.disposition(of: scheme("code=c0de"), for: flow, channel: .commandLine, now: soon) == .exchangeCode("c0de"))
        #expect(RedirectRules.disposition(of: scheme("token_hash=pkce_abc&type=magiclink"), for: flow, channel: .commandLine, now: soon)
                == .refuse(.exposedCredential(parameter: "token_hash")))
        // An app's own handler that names the flow got the URL on its command line all the same.
        #expect(RedirectRules.disposition(of: scheme("token_hash=pkce_abc&type=magiclink"), for: flow, channel: .listener, now: soon)
                == .refuse(.exposedCredential(parameter: "token_hash")))
        #expect(RedirectRules.disposition(of: scheme("state=x"), for: flow, channel: .commandLine, now: soon)
                == .refuse(.malformedCallback("the redirect carries neither a code nor an error")))
        // Whatever comes after its lifetime finds it dead.
        #expect(RedirectRules.disposition(of: scheme("code=c0de"), for: flow, channel: .commandLine, now: t0.addingTimeInterval(OAuthFlowBook.lifetime + 1))
                == .end(.expired))
    }

    /// A web page can open `myapp://confirm?error=…&error_description=<its own words>`: with
    /// nothing to tie it to the flow, it ends nothing and its words go nowhere.
    @Test func anErrorNothingTiesToTheFlowEndsNothingAndCarriesNoText() {
        let page = scheme("error=access_denied&error_description=Your%20account%20was%20locked.%20Call%20support")
        #expect(RedirectRules.isBound(page, to: schemeLink) == false)
        #expect(RedirectRules.disposition(of: page, for: schemeLink, channel: .commandLine, now: soon) == .refuse(.unboundError))
        var provider = schemeLink
        provider.kind = .signIn
        #expect(RedirectRules.disposition(of: URL(string: "myapp://confirm#error=server_error&error_description=down")!, for: provider,
                                          channel: .commandLine, now: soon) == .refuse(.unboundError))
        // A loopback flow's error without its binding never reaches the rules: the book refuses it.
        #expect(RedirectRules.isBound(loopback("error=access_denied", flow: nil), to: loopbackLink) == false)
        #expect(RedirectRules.isBound(loopback("error=access_denied", flow: "other"), to: loopbackLink) == false)
    }

    @Test func aBoundRedirectEndsItsFlowWithTheProvidersWords() {
        let query = loopback("error=access_denied&error_code=provider_denied&error_description=The%20user%20said%20no")
        #expect(RedirectRules.isBound(query, to: loopbackLink))
        #expect(RedirectRules.disposition(of: query, for: loopbackLink, channel: .listener, now: soon)
                == .end(.provider(error: "access_denied", code: "provider_denied", description: "The user said no")))
        let fragment = URL(string: "http://127.0.0.1:4000/callback?authd_flow=l1#error=server_error&error_description=oops")!
        #expect(RedirectRules.disposition(of: fragment, for: loopbackLink, channel: .listener, now: soon)
                == .end(.provider(error: "server_error", code: nil, description: "oops")))
        #expect(RedirectRules.disposition(of: loopback(""), for: loopbackLink, channel: .listener, now: soon)
                == .end(.malformedCallback("the redirect carries neither a code nor an error")))
        #expect(RedirectRules.disposition(of: loopback("code=c0de"), for: loopbackLink, channel: .listener, now: soon) == .exchangeCode("c0de"))
    }

    @Test func aTokenHashSignsInOnlyThroughABoundEmailLinksListener() {
        #expect(RedirectRules.disposition(of: loopback("token_hash=pkce_abc&type=magiclink"), for: loopbackLink, channel: .listener, now: soon)
                == .verifyTokenHash("pkce_abc", type: .magiclink))
        // The same URL handed to `authctl open-url` was on its command line.
        #expect(RedirectRules.disposition(of: loopback("token_hash=pkce_abc&type=magiclink"), for: loopbackLink, channel: .commandLine, now: soon)
                == .refuse(.exposedCredential(parameter: "token_hash")))
        // A type no emailed link has, or a late link, ends the flow it is bound to.
        #expect(RedirectRules.disposition(of: loopback("token_hash=x&type=sms"), for: loopbackLink, channel: .listener, now: soon)
                == .end(.malformedCallback("the link's type is not one an emailed link verifies")))
        #expect(RedirectRules.disposition(of: loopback("token_hash=x&type=magiclink"), for: loopbackLink, channel: .listener,
                                          now: t0.addingTimeInterval(OAuthFlowBook.lifetime + 1)) == .end(.expired))
        // A provider's sign-in takes no token hash.
        var provider = loopbackLink
        provider.kind = .signIn
        #expect(RedirectRules.disposition(of: loopback("token_hash=x&type=magiclink"), for: provider, channel: .listener, now: soon)
                == .end(.malformedCallback("a token_hash answers only an emailed link's sign-in")))
        var recovery = loopbackLink
        recovery.kind = .recoveryLink
        #expect(RedirectRules.disposition(of: loopback("token_hash=x&type=recovery"), for: recovery, channel: .listener, now: soon)
                == .verifyTokenHash("x", type: .recovery))
    }

    /// A junk code at an app's address (any web page can open it) is refused by the server as
    /// not this flow's: the unbound flow goes on waiting. A bound flow ends, as does any other
    /// refusal (the code was the flow's own, and is spent).
    @Test func onlyAnUnboundFlowOutlivesACodeTheServerSaysIsNotItsOwn() {
        #expect(RedirectRules.keepsWaiting(afterRefusal: "flow_state_not_found", bound: false))
        #expect(RedirectRules.keepsWaiting(afterRefusal: "bad_code_verifier", bound: false))
        #expect(!RedirectRules.keepsWaiting(afterRefusal: "flow_state_not_found", bound: true))
        #expect(!RedirectRules.keepsWaiting(afterRefusal: "flow_state_expired", bound: false))
        #expect(!RedirectRules.keepsWaiting(afterRefusal: nil, bound: false))
    }
}
