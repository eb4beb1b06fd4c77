import AuthCore
import AuthDaemon
import AuthTestSupport
import Foundation
import Logging
import Testing

/// The "sign in again" notice from the driver's side: shown for a sign-out the server decided,
/// with the sign-in the ended session used; that sign-in started when chosen; withdrawn when the
/// profile signs in again; never shown for a transient failure or the user's own sign-out.
@Suite struct SignInAgainThroughDaemonTests {
    typealias Notices = SecondFactorThroughDaemonTests.RecordedNotices
    typealias Starts = SecondFactorThroughDaemonTests.RecordedStarts

    /// A stored session with 1000 s left, signed in as `amr` says, its token carrying `claims`.
    static func store(amr: [String], claims: String) -> InMemorySessionStore {
        var session = Fixtures.session(100, receivedAt: Date().addingTimeInterval(-2600))
        session.accessToken = Fixtures.accessToken(aal: "aal1", amr: amr, extraClaims: claims)
        return InMemorySessionStore(sessions: ["default": session])
    }

    /// Runs a driver with `notices` and `starts` whose next refresh fails with `failure`, asks
    /// for a token that needs that refresh, and hands the running driver to `body`.
    static func afterRefreshFailing(_ failure: ServerFailure, store: InMemorySessionStore, notices: Notices, starts: Starts,
                                    _ body: @Sendable (SessionDriver, FakeGoTrue) async throws -> Void) async throws {
        let api = FakeGoTrue()
        api.failNextRefreshes([failure])
        let driver = SessionDriver(profile: "default", server: "https://example.test", store: store, api: api, notice: notices,
                                   signInStarter: starts, policy: RefreshPolicy(jitterFraction: 0), logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await driver.run() }
            _ = await driver.token(validFor: 1200)
            try await body(driver, api)
            group.cancelAll()
        }
    }

    static let fatal = ServerFailure.http(status: 400, code: "refresh_token_already_used", message: "Invalid Refresh Token: Already Used", retryAfter: nil)

    @Test func aSessionTheServerEndedOffersItsOwnSignInAndStartsItWhenChosen() async throws {
        let notices = Notices(.choose), starts = Starts()
        try await Self.afterRefreshFailing(Self.fatal, store: Self.store(amr: ["password"], claims: #""email":"a@example.com""#),
                                           notices: notices, starts: starts) { driver, _ in
            #expect(await driver.status().signOutReason == "refresh_token_already_used")
            try #require(await eventually { !starts.started.isEmpty })
            #expect(notices.seen == ["default refresh_token_already_used"])
            #expect(notices.plans == [.password(.email("a@example.com"))])
            #expect(notices.offers == [true])
            #expect(starts.started == ["in terminal: default login --profile default --email a@example.com"])
        }
    }

    @Test func aBrowserSignInIsOfferedForAnOAuthSession() async throws {
        let notices = Notices(.close), starts = Starts()
        let claims = #""email":"a@example.com","app_metadata":{"provider":"email","providers":["email","github"]}"#
        try await Self.afterRefreshFailing(Self.fatal, store: Self.store(amr: ["oauth"], claims: claims), notices: notices, starts: starts) { _, _ in
            try #require(await eventually { !notices.plans.isEmpty })
            #expect(notices.plans == [.browser(provider: "github")])
        }
    }

    @Test func aBrowserSignInToAnAccountWithASecondFactorRunsInATerminal() async throws {
        let notices = Notices(.choose), starts = Starts()
        var store = Self.store(amr: ["totp", "oauth"], claims: #""app_metadata":{"provider":"github","providers":["github"]}"#)
        var session = try #require(store.stored("default"))
        session.user.verifiedFactors = [FactorSummary(id: FakeGoTrue.factorID, type: "totp")]
        store = InMemorySessionStore(sessions: ["default": session])
        try await Self.afterRefreshFailing(Self.fatal, store: store, notices: notices, starts: starts) { _, _ in
            try #require(await eventually { !starts.started.isEmpty })
            // authctl asks for the second factor's code after the browser, so it needs a terminal.
            #expect(starts.started == ["in terminal: default login --profile default --provider github"])
        }
    }

    @Test func withNothingToStartTheNoticeOffersNoAction() async throws {
        let notices = Notices(.choose), starts = Starts(available: false)
        try await Self.afterRefreshFailing(Self.fatal, store: Self.store(amr: ["password"], claims: #""email":"a@example.com""#),
                                           notices: notices, starts: starts) { _, _ in
            try #require(await eventually { !notices.offers.isEmpty })
            #expect(notices.offers == [false])
            #expect(starts.started.isEmpty)
        }
    }

    @Test func signingInAgainWithdrawsTheNotice() async throws {
        let notices = Notices(.stay), starts = Starts()
        try await Self.afterRefreshFailing(Self.fatal, store: Self.store(amr: ["password"], claims: #""email":"a@example.com""#),
                                           notices: notices, starts: starts) { driver, api in
            try #require(await eventually { notices.seen.count == 1 })
            #expect(notices.withdrawn == 0)
            guard case .success = await driver.adopt(api.grant(), announcing: .signedIn) else { Issue.record("the sign-in failed"); return }
            try #require(await eventually { notices.withdrawn == 1 })
            #expect(starts.started.isEmpty)
        }
    }

    @Test func aTransientFailureKeepsTheSessionAndShowsNothing() async throws {
        let notices = Notices(.choose), starts = Starts()
        let offline = ServerFailure.unreachable(url: "https://example.test", detail: "connection refused")
        try await Self.afterRefreshFailing(offline, store: Self.store(amr: ["password"], claims: #""email":"a@example.com""#),
                                           notices: notices, starts: starts) { driver, api in
            #expect(await driver.status().state != "signed_out")
            _ = await driver.signOut(scope: .local)
            #expect(await driver.status().state == "signed_out")
            // Then a sign-out the server decides, which is news. The notices take the driver's
            // inputs in order, so a notice for the failure or the user's sign-out would have been
            // started before this one.
            guard case .success = await driver.adopt(api.grant(), announcing: .signedIn) else { Issue.record("the sign-in failed"); return }
            api.failNextRefreshes([Self.fatal])
            await driver.refreshNow()
            try #require(await eventually { !notices.seen.isEmpty })
        }
        // The driver has stopped, and with it every notice it started: all of them are recorded.
        #expect(notices.seen == ["default refresh_token_already_used"], "neither a network problem nor the user's own sign-out is news")
    }

    @Test func anAnonymousSessionIsToldAsLostWithNothingToStart() async throws {
        let notices = Notices(.close), starts = Starts()
        try await Self.afterRefreshFailing(Self.fatal, store: Self.store(amr: ["anonymous"], claims: #""is_anonymous":true"#),
                                           notices: notices, starts: starts) { _, _ in
            try #require(await eventually { !notices.plans.isEmpty })
            #expect(notices.plans == [.anonymous])
        }
    }
}
