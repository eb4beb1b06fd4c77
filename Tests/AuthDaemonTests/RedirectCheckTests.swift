import AuthdClient
import AuthProtocol
import AuthTestSupport
import Foundation
import Testing

/// URLs that enter over the socket: a browser sign-in may only send the code back to this
/// machine (loopback http) or to an app's own scheme, never to http:// on another host.
@Suite struct RedirectCheckTests {
    private func begin(_ daemon: DaemonHarness, redirect: String) throws -> Result<Methods.OAuthBegin.Result, AuthdError> {
        let client = try daemon.connect()
        return Result { () throws(AuthdError) in
            try client.call(Methods.OAuthBegin.self, .init(provider: "google", redirectTo: redirect))
        }
    }

    @Test func plainHTTPOffLoopbackIsRefusedWithWhatToUseInstead() async throws {
        try await DaemonHarness.run { daemon in
            try await offPool {
                for redirect in ["http://example.com/callback", "HTTP://evil.example:8080/cb", "http://127.0.0.1.evil.example/cb",
                                 "http://localhost.evil.example/cb", "http://[::2]:1/cb", "//127.0.0.1/cb"] {
                    // Invalid params carry no reason of their own.
                    guard case .failure(.rejected(reason: nil, let message)) = try begin(daemon, redirect: redirect) else {
                        Issue.record("\(redirect) was accepted, or refused for another reason")
                        continue
                    }
                    #expect(message.contains("127.0.0.1"), "\(redirect): \(message)")
                }
            }
        }
    }

    @Test func loopbackAndCustomSchemesAreAccepted() async throws {
        try await DaemonHarness.run { daemon in
            try await offPool {
                for redirect in ["http://127.0.0.1:41234/callback", "http://[::1]:41234/callback", "http://localhost:41234/cb", "authd://callback"] {
                    let result = try begin(daemon, redirect: redirect)
                    guard case .success(let begun) = result else { Issue.record("\(redirect): \(result)"); continue }
                    #expect(begun.url.contains("/authorize?provider=google"), "\(begun.url)")
                }
            }
        }
    }
}
