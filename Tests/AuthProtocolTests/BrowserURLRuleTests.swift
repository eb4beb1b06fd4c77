import AuthProtocol
import Testing

/// Which addresses from the server a browser is sent to.
@Suite struct BrowserURLRuleTests {
    static let hosted = "https://abcd.supabase.co"
    static let local = "http://127.0.0.1:54321"

    @Test(arguments: ["https://idp.example.com/saml?SAMLRequest=x&RelayState=y", "HTTPS://github.com/login/oauth/authorize?client_id=1",
                      "https://[2001:db8::1]:8443/sso"])
    func httpsIsOpenedForAnyProject(_ url: String) {
        #expect(BrowserURLRule.refusal(of: url, projectURL: Self.hosted) == nil)
        #expect(BrowserURLRule.refusal(of: url, projectURL: Self.local) == nil)
    }

    @Test(arguments: [local, "http://localhost:9999", "http://[::1]:9999", "HTTP://127.1.2.3"])
    func plainHTTPIsOpenedForAProjectOnThisMachine(_ project: String) {
        #expect(BrowserURLRule.refusal(of: "http://127.0.0.1:54321/auth/v1/admin/dev/idp/1", projectURL: project) == nil)
        #expect(BrowserURLRule.refusal(of: "http://keycloak.lan:8080/realms/x", projectURL: project) == nil)
    }

    @Test(arguments: [hosted, "http://127.0.0.1.example.com:54321", "https://127.0.0.1:54321", "not a url", ""])
    func plainHTTPIsRefusedOtherwise(_ project: String) {
        #expect(BrowserURLRule.refusal(of: "http://127.0.0.1:54321/idp", projectURL: project) == .plainHTTP)
    }

    @Test func otherSchemesAreRefusedNamingOnlyTheScheme() {
        let cases: [(String, String)] = [("file:///etc/passwd", "file"), ("FILE:///etc/passwd", "file"), ("javascript:alert(1)", "javascript"),
                                         ("data:text/html,hello", "data"), ("authd://callback?code=1", "authd"),
                                         ("ftp://example.com/x", "ftp"), ("x-very-long-scheme-name-indeed://a", "x-very-long-sche")]
        for (url, scheme) in cases {
            for project in [Self.hosted, Self.local] {
                let refusal = BrowserURLRule.refusal(of: url, projectURL: project)
                #expect(refusal == .scheme(scheme), "\(url)")
                #expect(refusal?.description == "its scheme is '\(scheme)', and only https is opened")
            }
        }
    }

    @Test(arguments: ["", "/etc/passwd", "example.com/path", "https:///etc/passwd", "https:/etc/passwd", "https://exa mple.com/",
                      "https://example.com/\na", "https://example.com/\u{7F}", "\u{1B}]8;;https://example.com"])
    func whatIsNotAnAbsoluteURLWithAHostIsRefused(_ url: String) {
        #expect(BrowserURLRule.refusal(of: url, projectURL: Self.local) == .notAURL, "\(url.debugDescription)")
    }

    @Test func noRefusalQuotesTheAddress() throws {
        let long = "file:///" + String(repeating: "a", count: 5000)
        for refusal in [BrowserURLRule.refusal(of: long, projectURL: Self.hosted),
                        BrowserURLRule.refusal(of: "http://evil.example/" + String(repeating: "b", count: 5000), projectURL: Self.hosted),
                        BrowserURLRule.refusal(of: "https:// " + String(repeating: "c", count: 5000), projectURL: Self.hosted)] {
            let text = try #require(refusal).description
            #expect(text.count < 120 && !text.contains("aaa") && !text.contains("bbb") && !text.contains("ccc"))
        }
    }
}
