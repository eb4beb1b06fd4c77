import AuthCore
import AuthTestSupport
import Foundation
import Testing

/// Matching browser redirects to pending PKCE flows, and reading what they say.
@Suite struct OAuthFlowBookTests {
    let t0 = Fixtures.t0

    /// A loopback flow, bound as the daemon binds them (its redirect carries authd_flow=<id>).
    func flow(_ id: String, port: Int = 4000, owner: String = "/usr/bin/authctl", at time: TimeInterval = 0) -> OAuthFlow {
        OAuthFlow(id: id, provider: "github", redirectTo: OAuthFlow.bound("http://127.0.0.1:\(port)/callback", to: id),
                  codeVerifier: "verifier-\(id)", startedAt: t0.addingTimeInterval(time), owner: owner, isBound: true)
    }

    func schemeFlow(_ id: String, redirect: String, owner: String = "/usr/bin/app", at time: TimeInterval = 0) -> OAuthFlow {
        OAuthFlow(id: id, provider: "github", redirectTo: redirect, codeVerifier: "verifier-\(id)", startedAt: t0.addingTimeInterval(time), owner: owner)
    }

    func callback(_ id: String?, port: Int = 4000, _ query: String = "code=c0de") -> URL {
        URL(string: "http://127.0.0.1:\(port)/callback?\(query)" + (id.map { "&authd_flow=\($0)" } ?? ""))!
    }

    @Test func aBoundRedirectKeepsItsAddressAndCarriesTheFlow() {
        #expect(OAuthFlow.bound("http://127.0.0.1:4000/callback", to: "abc") == "http://127.0.0.1:4000/callback?authd_flow=abc")
        #expect(OAuthFlow.bound("http://127.0.0.1:4000/cb?x=1", to: "abc") == "http://127.0.0.1:4000/cb?x=1&authd_flow=abc")
    }

    @Test func aLoopbackRedirectTakesTheFlowItNamesOnce() throws {
        var book = OAuthFlowBook()
        _ = book.start(flow("a"), now: t0)
        _ = book.start(flow("b", port: 4001), now: t0)
        // Matching leaves the flow in the book; taking removes it.
        #expect(try book.match(callback: callback("a"), flowID: "a").get().id == "a")
        #expect(book.pending(now: t0).map(\.id) == ["a", "b"])
        let taken = try book.take(callback: callback("a"), flowID: "a").get()
        #expect(taken.codeVerifier == "verifier-a")
        #expect(book.pending(now: t0).map(\.id) == ["b"])
        #expect(book.take(callback: callback("a"), flowID: "a") == .failure(.noPendingFlow("a")))
        #expect(OAuthFlowBook.address(of: callback("a")) == "http://127.0.0.1:4000/callback")
    }

    /// Another user's code, a junk callback, a provider error meant for another sign-in: none of
    /// them carries this flow's binding, so none completes or ends it.
    @Test func aRedirectWithoutTheFlowsBindingNeitherCompletesNorEndsIt() throws {
        var book = OAuthFlowBook()
        _ = book.start(flow("a"), now: t0)
        _ = book.start(flow("b", port: 4001), now: t0)
        #expect(book.take(callback: callback(nil, "code=attackers"), flowID: "a") == .failure(.notThisFlow))
        #expect(book.take(callback: callback("b", "error=access_denied"), flowID: "a") == .failure(.notThisFlow))
        #expect(book.take(callback: callback(nil, "error=access_denied"), flowID: nil) == .failure(.notThisFlow))
        #expect(book.pending(now: t0).map(\.id) == ["a", "b"])
        // Two concurrent flows never cross: each takes only its own redirect.
        #expect(try book.take(callback: callback("b", port: 4001), flowID: "b").get().id == "b")
        #expect(try book.take(callback: callback("a"), flowID: "a").get().id == "a")
    }

    @Test func aNewerCustomSchemeFlowToTheSameAddressReplacesTheOlder() throws {
        var book = OAuthFlowBook()
        #expect(book.start(schemeFlow("old", redirect: "myapp://login-callback"), now: t0) == .success([]))
        _ = book.start(schemeFlow("other", redirect: "otherapp://cb"), now: t0)
        let replaced = try book.start(schemeFlow("new", redirect: "myapp://login-callback/", at: 1), now: t0).get()
        #expect(replaced.map(\.id) == ["old"])
        #expect(try book.take(callback: URL(string: "MYAPP://login-callback?code=x")!, flowID: nil).get().id == "new")
        #expect(book.take(callback: URL(string: "myapp://login-callback?code=y")!, flowID: nil) == .failure(.noPendingFlow("myapp://login-callback")))
        #expect(book.pending(now: t0).map(\.id) == ["other"])
    }

    @Test func anExpiredFlowIsNoLongerPending() {
        var book = OAuthFlowBook()
        _ = book.start(flow("a"), now: t0)
        #expect(book.pending(now: t0.addingTimeInterval(OAuthFlowBook.lifetime + 1)).isEmpty)
    }

    /// A client starting flows in a loop drops only its own oldest; the user's flow stays.
    @Test func aClientKeepsAFewFlowsAndCannotPushOutAnothers() throws {
        var book = OAuthFlowBook()
        _ = book.start(flow("users", owner: "/usr/bin/authctl-full"), now: t0)
        var dropped: [String] = []
        for index in 0..<20 {
            dropped += try book.start(flow("spam\(index)", port: 5000 + index, owner: "/home/u/spammer"), now: t0).get().map(\.id)
        }
        let pending = book.pending(now: t0).map(\.id)
        #expect(pending.contains("users"))
        #expect(pending.filter { $0.hasPrefix("spam") } == ["spam16", "spam17", "spam18", "spam19"])
        #expect(dropped.count == 16)
    }

    @Test func aProfileRefusesNewFlowsBeyondItsCapacity() {
        var book = OAuthFlowBook()
        for index in 0..<OAuthFlowBook.capacity {
            #expect((try? book.start(flow("f\(index)", port: 5000 + index, owner: "app-\(index)"), now: t0).get()) == [])
        }
        #expect(book.start(flow("late", port: 7000, owner: "late-app"), now: t0) == .failure(.tooManyFlows(OAuthFlowBook.capacity)))
        #expect(book.pending(now: t0).count == OAuthFlowBook.capacity)
    }
}

extension OAuthFlowBook {
    /// What the daemon does with a redirect that completes its flow: matches it, then forgets the flow.
    mutating func take(callback: URL, flowID: String?) -> Result<OAuthFlow, OAuthFlowFailure> {
        let matched = match(callback: callback, flowID: flowID)
        if case .success(let flow) = matched { cancel(flow.id) }
        return matched
    }
}
