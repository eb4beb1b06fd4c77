import Foundation
import GoTrue
import Testing

/// The proxy environment is read as curl reads it.
@Suite struct ProxySettingsTests {
    let https = URL(string: "https://abcd.supabase.co")!
    let http = URL(string: "http://gotrue.corp:9999")!

    @Test func theSchemesVariableIsUsedThenAllProxy() {
        let environment = ["https_proxy": "http://proxy.corp:3128", "http_proxy": "http://plain.corp:8080", "ALL_PROXY": "socks5://socks.corp"]
        #expect(ProxySettings.forURL(https, environment: environment) == .http(host: "proxy.corp", port: 3128, username: nil, password: nil))
        #expect(ProxySettings.forURL(http, environment: environment) == .http(host: "plain.corp", port: 8080, username: nil, password: nil))
        #expect(ProxySettings.forURL(https, environment: ["ALL_PROXY": "socks5h://socks.corp"]) == .socks(host: "socks.corp", port: 1080))
        #expect(ProxySettings.forURL(https, environment: ["HTTPS_PROXY": "proxy.corp:3128"]) == .http(host: "proxy.corp", port: 3128, username: nil, password: nil))
        #expect(ProxySettings.forURL(https, environment: [:]) == .direct)
        #expect(ProxySettings.forURL(https, environment: ["https_proxy": ""]) == .direct)
    }

    @Test func theUppercaseHTTPProxyIsIgnoredAsCurlDoes() {
        // CGI sets HTTP_PROXY from a request's "Proxy:" header, so curl never reads it.
        #expect(ProxySettings.forURL(http, environment: ["HTTP_PROXY": "http://attacker:8080"]) == .direct)
    }

    static let everyProxyVariable = ["https_proxy": "http://proxy.corp:3128", "HTTPS_PROXY": "http://proxy.corp:3128",
                                     "http_proxy": "http://proxy.corp:3128", "all_proxy": "socks5://proxy.corp",
                                     "ALL_PROXY": "socks5://proxy.corp"]

    @Test(arguments: ["http://127.0.0.1:9999", "http://127.1.2.3:80", "http://localhost:54321", "http://LOCALHOST",
                      "http://[::1]:9999", "https://127.0.0.1:8443", "https://localhost"])
    func loopbackServersAreNeverProxied(_ url: String) {
        #expect(ProxySettings.forURL(URL(string: url)!, environment: Self.everyProxyVariable) == .direct)
    }

    @Test(arguments: ["http://127.0.0.1.example.com", "http://128.0.0.1", "http://10.0.0.1", "http://localhost.corp",
                      "http://[::2]", "http://127.0.0.256"])
    func hostsThatOnlyLookLikeLoopbackAreProxied(_ url: String) {
        #expect(ProxySettings.forURL(URL(string: url)!, environment: Self.everyProxyVariable) != .direct)
    }

    @Test func credentialsInTheProxyURLAreDecoded() {
        #expect(ProxySettings.forURL(https, environment: ["https_proxy": "http://me%40corp:p%3Ass@proxy.corp"])
            == .http(host: "proxy.corp", port: 1080, username: "me@corp", password: "p:ss"))
    }

    @Test(arguments: [
        ("abcd.supabase.co", true), ("supabase.co", true), (".supabase.co", true), ("other.com, supabase.co", true), ("*", true),
        ("other.com", false), ("co.uk", false), ("upabase.co", false), ("", false),
    ])
    func noProxyListsHostsAndDomains(_ list: String, _ bypassed: Bool) {
        let proxied = ProxySettings.http(host: "proxy.corp", port: 3128, username: nil, password: nil)
        #expect(ProxySettings.forURL(https, environment: ["https_proxy": "http://proxy.corp:3128", "no_proxy": list]) == (bypassed ? .direct : proxied))
    }

    @Test func aProxyAuthdCannotUseIsReportedNotSkipped() {
        guard case .unsupported(let variable, _) = ProxySettings.forURL(https, environment: ["https_proxy": "https://proxy.corp"]) else {
            Issue.record("an https:// proxy was taken")
            return
        }
        #expect(variable == "https_proxy")
        guard case .unsupported = ProxySettings.forURL(https, environment: ["https_proxy": "socks5://me:pw@proxy.corp"]) else {
            Issue.record("a SOCKS proxy with a user name was taken")
            return
        }
    }

    @Test func anUnusableProxyFailsTheRequestAndSaysWhich() async {
        let client = GoTrueClient(projectURL: https, anonKey: "k", environment: ["https_proxy": "https://proxy.corp"])
        do {
            _ = try await client.refresh(refreshToken: "whatever")
            Issue.record("a request went out past an unusable proxy")
        } catch {
            guard case .notSent(_, let detail) = error else { Issue.record("wrong failure \(error)"); return }
            #expect(detail.contains("https_proxy"))
        }
    }

    @Test func printingAProxyOrTheClientShowsNeitherThePasswordNorTheAnonKey() {
        let environment = ["https_proxy": "http://me%40corp:s3cret-pass@proxy.corp:3128"]
        let proxy = ProxySettings.forURL(https, environment: environment)
        #expect(proxy == .http(host: "proxy.corp", port: 3128, username: "me@corp", password: "s3cret-pass"))
        let client = GoTrueClient(projectURL: https, anonKey: "anon-key-not-for-logs", environment: environment)
        for text in [String(describing: proxy), String(reflecting: proxy), "\(client)", String(reflecting: client)] {
            #expect(!text.contains("s3cret-pass"), "\(text)")
            #expect(!text.contains("anon-key-not-for-logs"), "\(text)")
        }
        #expect("\(client)" == "GoTrueClient(https://abcd.supabase.co/auth/v1, http proxy proxy.corp:3128 with credentials)")
    }
}
