import AuthCore
import Foundation
import SignInPage
import SignInPageDriver
import Synchronization
import Testing

/// A whole visit of the sign-in page as a browser makes it: the link, the cookie, the page, its
/// forms, the provider's return; the operations faked, the time given.
// The bound ends a failing visit whose ends or operations never come (the waits below read
// streams that only a finished visit closes); a passing one takes milliseconds.
@Suite(.timeLimit(.minutes(5))) struct SignInPageVisitTests {
    static let port: UInt16 = 40555
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let everything = ProjectSettings(emailEnabled: true, phoneEnabled: true, singleSignOnEnabled: true,
                                            anonymousSignInsEnabled: true, oauthProviders: ["github"])
    static let ada = SignInPageAccount(email: "ada@example.com")

    /// A clock the test moves.
    final class TestClock: WallClock {
        let time = Mutex(SignInPageVisitTests.t0)
        func now() -> Date { time.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { time.withLock { $0 = $0.addingTimeInterval(seconds) } }
    }

    /// Operations answered by `script`, each recorded with the query it came back with; a
    /// `.signIn` waits for `release` while `hold` is set.
    final class Operations: SignInPageOperations {
        let performed = Mutex<[(SignInPageOperation, SignInPageForm?)]>([])
        let script: @Sendable (SignInPageOperation) -> SignInPageOutcome
        let hold: Bool
        let (entered, enter) = AsyncStream<Void>.makeStream()
        let (released, release) = AsyncStream<Void>.makeStream()

        init(hold: Bool = false, _ script: @escaping @Sendable (SignInPageOperation) -> SignInPageOutcome) {
            self.script = script
            self.hold = hold
        }

        func perform(_ operation: SignInPageOperation, returnURL: String, returned: SignInPageForm?) async -> SignInPageOutcome {
            performed.withLock { $0.append((operation, returned)) }
            if hold, case .signIn = operation {
                enter.yield()
                for await _ in released { break }
            }
            return script(operation)
        }

        var operations: [SignInPageOperation] { performed.withLock { $0.map(\.0) } }
    }

    /// The answers everyone gets: the settings, and a signed-in Ada.
    static func usual(_ operation: SignInPageOperation) -> SignInPageOutcome {
        switch operation {
        case .fetchSettings: return .settings(everything)
        case .startBrowserSignIn: return .browserURL(URL(string: "https://github.com/login/oauth/authorize?client_id=x")!)
        default: return .signedIn(ada)
        }
    }

    /// A browser: it keeps the cookie and reads the page token out of the page it was shown.
    struct Browser {
        let visit: SignInPageVisit
        var cookie: String?
        var token = ""

        func headers(post: Bool) -> [(name: String, value: String)] {
            var headers: [(name: String, value: String)] = [("Host", "127.0.0.1:\(SignInPageVisitTests.port)")]
            if let cookie { headers.append(("Cookie", cookie)) }
            if post {
                headers += [("Origin", "http://127.0.0.1:\(SignInPageVisitTests.port)"), ("Content-Type", "application/x-www-form-urlencoded")]
            }
            return headers
        }

        /// Opens the link and shows the page.
        mutating func open() async throws -> String {
            let path = String(visit.openURL.dropFirst("http://127.0.0.1:\(SignInPageVisitTests.port)".count))
            let entered = await visit.answer(SignInPageHTTPRequest(method: "GET", target: path, headers: headers(post: false)))
            #expect(entered.status == 303)
            cookie = try #require(entered.value(of: "Set-Cookie")?.split(separator: ";").first.map(String.init))
            return try await show()
        }

        /// The page as it is now; its token kept for the next form.
        mutating func show() async throws -> String {
            let response = await visit.answer(SignInPageHTTPRequest(method: "GET", target: "/sign-in", headers: headers(post: false)))
            #expect(response.status == 200)
            let html = String(decoding: response.body, as: UTF8.self)
            if let match = html.firstMatch(of: /name="csrf_token" value="([0-9a-f]+)"/) { token = String(match.output.1) }
            return html
        }

        /// Posts `fields` to `path` with the page's token; the answer.
        func post(_ path: String, _ fields: [String: String]) async -> SignInPageHTTPResponse {
            let body = (fields.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }
                + ["csrf_token=\(token)"]).joined(separator: "&")
            return await visit.answer(SignInPageHTTPRequest(method: "POST", target: path, headers: headers(post: true), body: Array(body.utf8)))
        }
    }

    static func visit(_ operations: Operations, clock: TestClock = TestClock(), options: SignInPageFlow.Options = .init()) async -> SignInPageVisit {
        let visit = SignInPageVisit(port: port, project: SignInPageView.Project(name: "Acme", host: "acme.supabase.co"), options: options,
                                    clock: clock, operations: operations)
        await visit.start()
        return visit
    }

    @Test func aPasswordSignInFromLinkToSignedIn() async throws {
        let operations = Operations(Self.usual)
        let visit = await Self.visit(operations)
        var browser = Browser(visit: visit)
        let first = try await browser.open()
        #expect(first.contains("<h1>Sign in</h1>") && first.contains("Continue with GitHub") && first.contains("Acme"))
        let answer = await browser.post("/sign-in/password", ["email": "ada@example.com", "password": "pw d"])
        #expect(answer.status == 303 && answer.value(of: "Location") == "/sign-in")
        #expect(operations.operations.last == .signIn(.password(.email("ada@example.com"), password: "pw d")))
        let done = try await browser.show()
        #expect(done.contains("You are signed in") && done.contains("ada@example.com"))
        var ends: [SignInPageEnd] = []
        for await end in visit.ends { ends.append(end) }
        #expect(ends == [.signedIn(Self.ada)])
    }

    @Test func aWrongPasswordIsShownOnTheFormWithTheEmailKept() async throws {
        let operations = Operations { operation in
            if case .signIn = operation { return .failed(.server(.http(status: 400, code: "invalid_credentials", message: "Invalid login credentials", retryAfter: nil))) }
            return Self.usual(operation)
        }
        var browser = Browser(visit: await Self.visit(operations))
        _ = try await browser.open()
        _ = await browser.post("/sign-in/password", ["email": "ada@example.com", "password": "nope"])
        let page = try await browser.show()
        #expect(page.contains("Wrong email or password.") && page.contains("value=\"ada@example.com\""))
        #expect(!page.contains("nope"))
    }

    @Test func aProviderIsLeftForWithAPageAndItsReturnSignsIn() async throws {
        let operations = Operations(Self.usual)
        let visit = await Self.visit(operations)
        var browser = Browser(visit: visit)
        _ = try await browser.open()
        let leaving = await browser.post("/sign-in/provider", ["provider": "github"])
        let html = String(decoding: leaving.body, as: UTF8.self)
        #expect(leaving.status == 200, "a redirect to another origin would be stopped by form-action")
        #expect(html.contains("content=\"0; url=https://github.com/login/oauth/authorize?client_id=x\""))
        // The provider sends the browser back: a cross-site navigation, without the cookie.
        let path = String(visit.returnURL.dropFirst("http://127.0.0.1:\(Self.port)".count))
        let back = await visit.answer(SignInPageHTTPRequest(method: "GET", target: path + "?code=abc",
                                                            headers: [("Host", "127.0.0.1:\(Self.port)")]))
        let onward = String(decoding: back.body, as: UTF8.self)
        #expect(back.status == 200 && onward.contains("url=http://127.0.0.1:\(Self.port)/sign-in\""))
        let completed = operations.performed.withLock { $0.last }
        #expect(completed?.0 == .completeBrowserSignIn(.provider("github")) && completed?.1 == SignInPageForm(["code": "abc"]))
        #expect(try await browser.show().contains("You are signed in"))
    }

    @Test func whileAFormIsAtTheServerAnotherTabSeesTheWaitingPage() async throws {
        let operations = Operations(hold: true, Self.usual)
        var browser = Browser(visit: await Self.visit(operations))
        _ = try await browser.open()
        let poster = browser
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { _ = await poster.post("/sign-in/password", ["email": "ada@example.com", "password": "pw"]) }
            for await _ in operations.entered { break }
            let waiting = try await browser.show()
            #expect(waiting.contains("<meta http-equiv=\"refresh\" content=\"2\">") && waiting.contains("One moment"))
            operations.release.yield()
            try await group.waitForAll()
        }
        #expect(try await browser.show().contains("You are signed in"))
    }

    @Test func aVisitLeftOpenExpiresAndSaysSo() async throws {
        let clock = TestClock()
        let visit = await Self.visit(Operations(Self.usual), clock: clock)
        await visit.expireIfDue()
        clock.advance(SignInPageFlow.lifetime)
        await visit.expireIfDue()
        var ends: [SignInPageEnd] = []
        for await end in visit.ends { ends.append(end) }
        #expect(ends == [.expired])
    }

    @Test func aFailedSignInCanStartAgainOnTheSamePage() async throws {
        let reads = Atomic<Int>(0)
        let operations = Operations { operation in
            if case .fetchSettings = operation, reads.add(1, ordering: .relaxed).newValue == 1 {
                return .failed(.server(.notSent(url: "https://acme.supabase.co/auth/v1", detail: "connection refused")))
            }
            return Self.usual(operation)
        }
        let visit = await Self.visit(operations)
        var browser = Browser(visit: visit)
        let failed = try await browser.open()
        #expect(failed.contains("Sign-in did not finish") && failed.contains("cannot be reached"))
        let again = await browser.post("/sign-in/go", ["to": "choose"])
        #expect(again.status == 303)
        #expect(try await browser.show().contains("<h1>Sign in</h1>"))
        _ = await browser.post("/sign-in/cancel", [:])
        var ends: [SignInPageEnd] = []
        for await end in visit.ends { ends.append(end) }
        #expect(ends == [.failed(.unreachable), .cancelled(signedInAs: nil)])
    }

    /// An app cancels while the sign-in is at the server: nothing is handed out after it, and the
    /// page ends cancelled, even when that sign-in's own outcome ended the flow (a failure, which
    /// alone would let the user start again).
    @Test func anAppsCancelWhileASignInIsOutEndsThePageWhateverItsOutcome() async throws {
        let operations = Operations(hold: true) { operation in
            if case .signIn = operation { return .failed(.sessionEnded) }
            return Self.usual(operation)
        }
        let visit = await Self.visit(operations)
        var browser = Browser(visit: visit)
        _ = try await browser.open()
        let poster = browser
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { _ = await poster.post("/sign-in/password", ["email": "ada@example.com", "password": "pw"]) }
            for await _ in operations.entered { break }
            #expect(await visit.cancel(), "a page under way is cancelled")
            operations.release.yield()
            try await group.waitForAll()
        }
        #expect(await Self.ends(of: visit) == [.failed(.sessionEnded), .cancelled(signedInAs: nil)])
        #expect(await !visit.cancel(), "a page that has ended is not cancelled again")
        #expect(operations.operations.count == 2, "nothing was handed out after the cancel: \(operations.operations)")
    }

    /// How `visit` ended, read until its stream finishes; none when it does not within 30 s (a
    /// bound that only ends a failing test, rather than hang it).
    static func ends(of visit: SignInPageVisit) async -> [SignInPageEnd] {
        await withTaskGroup(of: [SignInPageEnd]?.self) { group in
            group.addTask {
                var ends: [SignInPageEnd] = []
                for await end in visit.ends { ends.append(end) }
                return ends
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(30))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            // Not ended in time: no ends, which no test expects.
            return first ?? []
        }
    }
}
