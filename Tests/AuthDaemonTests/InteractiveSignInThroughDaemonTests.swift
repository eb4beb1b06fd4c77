import AuthCore
import AuthDaemon
import AuthProtocol
import AuthTestSupport
import Foundation
import SignInPage
import SignInPageServer
import Synchronization
import Testing

/// authd's sign-in page through the daemon: an app asks for it over the socket, the real page
/// server answers a browser over real TCP on 127.0.0.1, and the session it signs in is the
/// profile's. GoTrue is the fake; the browser a stand-in that keeps the cookie and posts forms;
/// the time the test's own, so that an expiry and the closing after an end happen exactly when
/// the test moves the clocks.
@Suite struct InteractiveSignInThroughDaemonTests {
    /// Records the addresses the daemon opened, and says whether a browser came up.
    final class RecordingOpener: BrowserOpener {
        let opened = Mutex<[String]>([])
        let starts: Bool
        init(starts: Bool = true) { self.starts = starts }
        var canOpen: Bool { starts }
        func open(_ url: String) async -> Bool {
            opened.withLock { $0.append(url) }
            return starts
        }
    }

    /// A daemon serving pages for real, with `api`, opening them with `opener`, on clocks the test moves.
    static func run(api: FakeGoTrue = FakeGoTrue(), opener: RecordingOpener = RecordingOpener(), clock: ManualWallClock = ManualWallClock(Date()),
                    monotonic: SteppingMonotonicClock = SteppingMonotonicClock(),
                    _ body: @Sendable (DaemonHarness) async throws -> Void) async throws {
        try await DaemonHarness.run(api: api, pages: LoopbackSignInPageListening(), browserOpener: opener, clock: clock, monotonic: monotonic, body)
    }

    /// Events read until one named `last` (or the connection's read timeout).
    static func events(on watcher: LineConnection, until last: String) async throws -> [AuthEventMessage] {
        try await offPool {
            var events: [AuthEventMessage] = []
            while events.last?.event.rawValue != last, let line = try watcher.readLine() {
                events.append(try JSONDecoder().decode(SecondFactorThroughDaemonTests.EventLine.self, from: Data(line)).params)
            }
            return events
        }
    }

    @Test func theFormsNamedOnTheWireAreThePagesForms() {
        #expect(InteractiveSignInMethod.names == SignInPageMethod.forms.map(\.description))
    }

    @Test func aPageOpenedInTheBrowserSignsInAndTheAppWaitingLearnsIt() async throws {
        let opener = RecordingOpener()
        try await Self.run(opener: opener) { daemon in
            let watcher = try await daemon.subscriber()
            defer { watcher.close() }
            let page = try await offPool {
                try daemon.connect().call(Methods.BeginInteractiveSignIn.self, .init(method: "password", email: "a@example.com"))
            }
            let opened = opener.opened.withLock { $0 }
            #expect(page.browserOpened && opened == [page.url])
            #expect(page.expiresIn == 600)
            #expect(page.url.hasPrefix("http://127.0.0.1:") && page.url.contains("/sign-in/open/"))
            async let waited = offPool { try daemon.connect().call(Methods.WaitForInteractiveSignIn.self, .init(flowID: page.flowID), timeout: 60) }

            var browser = try PageBrowser(url: page.url)
            try await browser.open(page.url)
            // The project is named, the address filled in, and the password is the question.
            #expect(browser.heading == "Sign in")
            #expect(browser.page.contains("example.test") && browser.page.contains(#"value="a@example.com""#))
            try await browser.submit("/sign-in/password", ["email": "a@example.com", "password": "correct horse"])
            #expect(browser.heading == "You are signed in", "\(browser.page)")

            let status = try await waited
            #expect(status.state == "signed_in" && status.user?.email == "a@example.com")
            let events = try await Self.events(on: watcher, until: "INTERACTIVE_SIGN_IN_ENDED")
            #expect(events.map(\.event.rawValue) == ["SIGNED_IN", "INTERACTIVE_SIGN_IN_ENDED"])
            #expect(events.last?.flowID == page.flowID && events.last?.reason == "signed_in" && events.last?.message == nil)
            // Asked again after the end: the same answer at once.
            let again = try await offPool { try daemon.connect().call(Methods.WaitForInteractiveSignIn.self, .init(flowID: page.flowID), timeout: 5) }
            #expect(again.state == "signed_in")
            #expect(try await offPool { try daemon.connect().call(Methods.CancelInteractiveSignIn.self, .init(flowID: page.flowID)) }.cancelled == false)
        }
    }

    @Test func aCancelledPageIsClosedAfterItsLastPageAndItsWaiterLearnsWhy() async throws {
        let monotonic = SteppingMonotonicClock()
        try await Self.run(opener: RecordingOpener(starts: false), monotonic: monotonic) { daemon in
            let watcher = try await daemon.subscriber()
            defer { watcher.close() }
            let page = try await offPool { try daemon.connect().call(Methods.BeginInteractiveSignIn.self, .init()) }
            // No browser came up: the app is told, and opens the address itself.
            #expect(!page.browserOpened)
            var browser = try PageBrowser(url: page.url)
            try await browser.open(page.url)
            async let waited = Self.waitRefusal(daemon, page.flowID)
            let cancelled = try await offPool { try daemon.connect().call(Methods.CancelInteractiveSignIn.self, .init(flowID: page.flowID)) }
            #expect(cancelled.cancelled)
            #expect(try await waited == "sign_in_cancelled")
            let events = try await Self.events(on: watcher, until: "INTERACTIVE_SIGN_IN_ENDED")
            #expect(events.last?.reason == "cancelled" && events.last?.status.state == "signed_out")

            // Its last page is still served, then the server closes, exactly when the time is up.
            try await browser.show()
            #expect(browser.heading == "Sign-in cancelled")
            // The wait it means: the time its last page is still shown.
            #expect(await monotonic.waitForSleep(of: SignInPageBook.lingering))
            monotonic.advance(by: SignInPageBook.lingering - 1)
            let port = browser.port
            #expect(await PageBrowser.isListening(port: port))
            monotonic.advance(by: 1)
            #expect(await eventually(every: .milliseconds(50)) { await !PageBrowser.isListening(port: port) })
        }
    }

    /// Saying no on the first page is an answer the app gets at once, not ten minutes later.
    @Test func theUserCancelsOnTheFirstPageAndTheAppLearnsItAtOnce() async throws {
        try await Self.run { daemon in
            let page = try await offPool { try daemon.connect().call(Methods.BeginInteractiveSignIn.self, .init(openBrowser: false)) }
            var browser = try PageBrowser(url: page.url)
            try await browser.open(page.url)
            #expect(browser.hasForm("/sign-in/cancel"), "the first page offers no way to say no")
            try await browser.submit("/sign-in/cancel")
            #expect(browser.heading == "Sign-in cancelled")
            #expect(try await Self.waitRefusal(daemon, page.flowID) == "sign_in_cancelled")
        }
    }

    @Test func aPageLeftOpenExpiresAtItsTimeAndNotBefore() async throws {
        let clock = ManualWallClock(Date())
        let monotonic = SteppingMonotonicClock()
        try await Self.run(clock: clock, monotonic: monotonic) { daemon in
            let page = try await offPool { try daemon.connect().call(Methods.BeginInteractiveSignIn.self, .init()) }
            var browser = try PageBrowser(url: page.url)
            try await browser.open(page.url)
            #expect(await monotonic.waitForSleep(of: SignInPageFlow.lifetime))
            clock.advance(by: SignInPageFlow.lifetime - 1)
            monotonic.advance(by: SignInPageFlow.lifetime - 1)
            try await browser.show()
            #expect(browser.heading == "Sign in")
            clock.advance(by: 1)
            monotonic.advance(by: 1)
            #expect(try await Self.waitRefusal(daemon, page.flowID) == "flow_expired")
            try await browser.show()
            #expect(browser.heading == "This page has expired")
        }
    }

    @Test func settingsThatCannotBeReadFailThePageInWords() async throws {
        let api = FakeGoTrue()
        api.setSettings(.failure(.notSent(url: "https://example.test/auth/v1", detail: "connection refused")))
        try await Self.run(api: api) { daemon in
            let watcher = try await daemon.subscriber()
            defer { watcher.close() }
            let page = try await offPool { try daemon.connect().call(Methods.BeginInteractiveSignIn.self, .init()) }
            #expect(try await Self.waitRefusal(daemon, page.flowID) == "sign_in_failed")
            let events = try await Self.events(on: watcher, until: "INTERACTIVE_SIGN_IN_ENDED")
            #expect(events.last?.reason == "failed" && !(events.last?.message ?? "").isEmpty)
        }
    }

    /// The security line: once the page has signed a user in, its later forms go to that user's
    /// session only. Another sign-in meanwhile (another app, authctl) ends the page; the code the
    /// user then types reaches nobody's account.
    @Test func aSessionReplacedBeforeTheSecondFactorEndsThePageAndSendsNothing() async throws {
        let api = FakeGoTrue()
        api.setUser(id: "user-a", email: "a@example.com", verifiedFactors: [FactorSummary(id: FakeGoTrue.factorID, type: "totp")])
        try await Self.run(api: api) { daemon in
            let page = try await offPool { try daemon.connect().call(Methods.BeginInteractiveSignIn.self, .init()) }
            var browser = try PageBrowser(url: page.url)
            try await browser.open(page.url)
            try await browser.submit("/sign-in/password", ["email": "a@example.com", "password": "correct horse"])
            #expect(browser.hasForm("/sign-in/factor/verify"), "\(browser.heading)")
            #expect(api.factorCalls == ["challenge"])

            api.setUser(id: "user-b", email: "b@example.com")
            _ = try await offPool {
                try daemon.connect().call(Methods.SignInWithPassword.self, .init(email: "a@example.com", password: "correct horse"))
            }
            try await browser.submit("/sign-in/factor/verify", ["code": FakeGoTrue.factorCode])
            #expect(browser.heading == "Sign-in did not finish")
            #expect(browser.page.contains("another sign-in took your place"))
            #expect(api.factorCalls == ["challenge"], "no verification was sent for the page")
            let status = try await offPool { try daemon.connect().call(Methods.Status.self, .init()) }
            #expect(status.user?.id == "user-b")
        }
    }

    @Test func anAppsThirdPageClosesItsOldestAndUnknownPagesAreSaidSo() async throws {
        try await Self.run { daemon in
            let first = try await offPool { try daemon.connect().call(Methods.BeginInteractiveSignIn.self, .init(openBrowser: false)) }
            let port = try PageBrowser(url: first.url).port
            _ = try await offPool { try daemon.connect().call(Methods.BeginInteractiveSignIn.self, .init(openBrowser: false)) }
            #expect(await PageBrowser.isListening(port: port))
            _ = try await offPool { try daemon.connect().call(Methods.BeginInteractiveSignIn.self, .init(openBrowser: false)) }
            // Closed at once, not after the time an ended page is still shown (the clock stands still).
            #expect(await eventually(every: .milliseconds(50)) { await !PageBrowser.isListening(port: port) })
            #expect(try await Self.waitRefusal(daemon, first.flowID) == "sign_in_cancelled")
            #expect(try await Self.waitRefusal(daemon, "NoSuchPage0000") == "sign_in_failed")
        }
    }

    @Test func aDaemonWithoutPagesSaysWhatToDoInstead() async throws {
        try await DaemonHarness.run { daemon in
            #expect(try await Self.refusal(daemon, Methods.BeginInteractiveSignIn.name, "{}") == "sign_in_failed")
            let message = try await offPool { () -> String in
                do {
                    _ = try daemon.connect().call(Methods.BeginInteractiveSignIn.self, .init())
                    return ""
                } catch { return "\(error)" }
            }
            #expect(message.contains("serves no sign-in page") && message.contains("authctl login --email"), "\(message)")
        }
    }

    /// The stable reason of the error `method` answers with `params` (JSON), read off the wire;
    /// nil when it answered a result.
    static func refusal(_ daemon: DaemonHarness, _ method: String, _ params: String) async throws -> String? {
        try await offPool {
            let connection = try daemon.raw()
            defer { connection.close() }
            connection.setReadTimeout(60)
            try connection.write(Data("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"\(method)\",\"params\":\(params)}\n".utf8))
            let answer = object(try connection.readLine())
            guard let error = answer["error"] as? [String: Any] else { return nil }
            return ((error["data"] as? [String: Any])?["reason"] as? String) ?? "no reason: \(error)"
        }
    }

    /// The reason `session.waitForInteractiveSignIn` answers for `flowID`.
    static func waitRefusal(_ daemon: DaemonHarness, _ flowID: String) async throws -> String? {
        try await refusal(daemon, Methods.WaitForInteractiveSignIn.name, #"{"flow_id":"\#(flowID)"}"#)
    }
}
