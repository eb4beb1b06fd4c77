import AuthCore
import AuthTestSupport
import Foundation
import Testing

/// Matching browser redirects to pending PKCE flows, and reading what they say.
@Suite struct OAuthFlowBookTests {
    let t0 = Fixtures.t0

    func flow(_ id: String, redirect: String = "http://127.0.0.1:4000/callback", at time: TimeInterval = 0) -> OAuthFlow {
        OAuthFlow(id: id, provider: "github", redirectTo: redirect, codeVerifier: "verifier-\(id)", startedAt: t0.addingTimeInterval(time))
    }

    @Test func aLoopbackRedirectTakesTheFlowItNamesOnce() {
        var book = OAuthFlowBook()
        book.start(flow("a"), now: t0)
        book.start(flow("b"), now: t0)
        let callback = URL(string: "http://127.0.0.1:4000/callback?code=c0de")!
        let taken = book.take(callback: callback, flowID: "a")
        #expect(taken?.codeVerifier == "verifier-a")
        #expect(taken.map { OAuthFlowBook.outcome(of: callback, for: $0, now: t0.addingTimeInterval(5)) } == .success("c0de"))
        #expect(book.pending(now: t0).map(\.id) == ["b"])
        #expect(book.take(callback: callback, flowID: "a") == nil)
        #expect(OAuthFlowBook.address(of: callback) == "http://127.0.0.1:4000/callback")
    }

    @Test func aCustomSchemeRedirectTakesTheNewestFlowWithThatAddress() {
        var book = OAuthFlowBook()
        book.start(flow("old", redirect: "myapp://login-callback"), now: t0)
        book.start(flow("other", redirect: "otherapp://cb"), now: t0)
        book.start(flow("new", redirect: "myapp://login-callback/", at: 1), now: t0)
        #expect(book.take(callback: URL(string: "MYAPP://login-callback?code=x")!, flowID: nil)?.id == "new")
        #expect(book.take(callback: URL(string: "myapp://login-callback?code=y")!, flowID: nil)?.id == "old")
        #expect(book.take(callback: URL(string: "thirdapp://cb?code=z")!, flowID: nil) == nil)
        #expect(book.pending(now: t0).map(\.id) == ["other"])
    }

    @Test func theProvidersErrorIsReadFromTheQueryOrTheFragment() {
        let pending = flow("a")
        let query = URL(string: "http://127.0.0.1:4000/callback?error=access_denied&error_code=provider_denied&error_description=The%20user%20said%20no")!
        #expect(OAuthFlowBook.outcome(of: query, for: pending, now: t0)
                == .failure(.provider(error: "access_denied", code: "provider_denied", description: "The user said no")))
        let fragment = URL(string: "http://127.0.0.1:4000/callback#error=server_error&error_description=oops")!
        #expect(OAuthFlowBook.outcome(of: fragment, for: pending, now: t0) == .failure(.provider(error: "server_error", code: nil, description: "oops")))
    }

    @Test func anExpiredFlowIsRefusedAndARedirectWithoutCodeIsMalformed() {
        var book = OAuthFlowBook()
        book.start(flow("a"), now: t0)
        let late = t0.addingTimeInterval(OAuthFlowBook.lifetime + 1)
        #expect(book.pending(now: late).isEmpty)
        #expect(OAuthFlowBook.outcome(of: URL(string: "http://127.0.0.1:4000/callback?code=x")!, for: flow("a"), now: late) == .failure(.expired))
        if case .failure(.malformedCallback) = OAuthFlowBook.outcome(of: URL(string: "http://127.0.0.1:4000/callback")!, for: flow("a"), now: t0) {} else {
            Issue.record("a redirect without code or error was accepted")
        }
    }

    @Test func theBookKeepsAtMostItsCapacityDroppingTheOldest() {
        var book = OAuthFlowBook()
        for index in 0..<(OAuthFlowBook.capacity + 3) { book.start(flow("f\(index)"), now: t0) }
        let pending = book.pending(now: t0).map(\.id)
        #expect(pending.count == OAuthFlowBook.capacity)
        #expect(pending.first == "f3")
    }
}
