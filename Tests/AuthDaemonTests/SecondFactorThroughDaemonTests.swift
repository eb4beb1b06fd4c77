import AuthCore
import AuthDaemon
import AuthdClient
import AuthProtocol
import AuthTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// Second factors seen from a client: a verification keeps refreshes away and announces the
/// raised session; wrong input changes nothing; a token asked for at `aal2` is never a lower one.
@Suite struct SecondFactorThroughDaemonTests {
    let factor = FakeGoTrue.factorID

    /// A stored session with 1000 s left, whose token states `aal`.
    static func store(aal: String? = nil, verifiedFactor: Bool = false) -> InMemorySessionStore {
        var session = Fixtures.session(100, receivedAt: Date().addingTimeInterval(-2600))
        if let aal { session.accessToken = Fixtures.accessToken(aal: aal, amr: aal == "aal2" ? ["totp", "password"] : ["password"]) }
        if verifiedFactor { session.user.verifiedFactors = [FactorSummary(id: FakeGoTrue.factorID, type: "totp")] }
        return InMemorySessionStore(sessions: ["default": session])
    }

    @Test func aVerificationHoldsRefreshesBackAndIsAnnouncedToSubscribers() async throws {
        let api = FakeGoTrue()
        api.setVerifyDelay(.seconds(2))
        try await DaemonHarness.run(api: api, store: Self.store()) { daemon in
            let watcher = try await daemon.subscriber(timeout: 30)
            defer { watcher.close() }
            async let verified = offPool {
                try daemon.connect().call(Methods.VerifyFactor.self, .init(factorID: FakeGoTrue.factorID, code: FakeGoTrue.factorCode))
            }
            // While the verification is out, a request for more validity than the token has left
            // would refresh; it waits instead, and gets the raised session's token.
            try #require(await eventually { daemon.api.isVerifying })
            let token = try await offPool { try daemon.connect().call(Methods.Token.self, .init(minValidity: 1200)) }
            let status = try await verified
            #expect(status.state == "signed_in")
            #expect(token.accessToken == "access-1")
            #expect(daemon.api.refreshesDuringVerify == 0)
            #expect(daemon.api.refreshCalls == 0, "the raised session's fresh token met the request")
            #expect(daemon.api.factorCalls == ["challenge", "verify"])
            #expect(daemon.store.stored("default")?.accessToken == "access-1")
            let names = try await offPool { () -> [String] in
                var names: [String] = []
                while !names.contains("MFA_CHALLENGE_VERIFIED"), let line = try watcher.readLine() {
                    let event = try JSONDecoder().decode(EventLine.self, from: Data(line))
                    names.append(event.params.event.rawValue)
                }
                return names
            }
            #expect(names.last == "MFA_CHALLENGE_VERIFIED")
            #expect(!names.contains("SIGNED_IN") && !names.contains("TOKEN_REFRESHED"))
        }
    }

    @Test func aVerificationWaitsForARefreshThatIsOutAndGoesAheadAfterIt() async throws {
        let api = FakeGoTrue()
        api.setRefreshDelay(.seconds(1))
        try await DaemonHarness.run(api: api, store: Self.store()) { daemon in
            async let refreshed = offPool { try daemon.connect().call(Methods.Token.self, .init(minValidity: 1200)) }
            try #require(await eventually { daemon.api.refreshCalls == 1 })
            let status = try await offPool {
                try daemon.connect().call(Methods.VerifyFactor.self, .init(factorID: FakeGoTrue.factorID, code: FakeGoTrue.factorCode))
            }
            #expect(status.state == "signed_in")
            #expect(try await refreshed.accessToken == "access-1")
            #expect(daemon.api.refreshesDuringVerify == 0)
            // The verification's session came after the refresh's and is the one served.
            #expect(daemon.store.stored("default")?.accessToken == "access-2")
        }
    }

    @Test func aVerificationWithoutAnAnswerIsTriedOnceMore() async throws {
        let api = FakeGoTrue()
        api.failNextVerifies([.unreachable(url: "https://example.test/auth/v1", detail: "connection reset")])
        try await DaemonHarness.run(api: api, store: Self.store()) { daemon in
            let status = try await offPool {
                try daemon.connect().call(Methods.VerifyFactor.self, .init(factorID: FakeGoTrue.factorID, code: FakeGoTrue.factorCode))
            }
            #expect(status.state == "signed_in" && status.degraded == nil)
            #expect(daemon.api.factorCalls == ["challenge", "verify", "verify"])
            #expect(daemon.store.stored("default")?.accessToken == "access-1")
        }
    }

    @Test func aVerificationWhoseOutcomeStaysUnknownHoldsRefreshesUntilANewOne() async throws {
        let api = FakeGoTrue()
        let reset = ServerFailure.unreachable(url: "https://example.test/auth/v1", detail: "connection reset")
        api.failNextVerifies([reset, .http(status: 502, code: nil, message: "Bad Gateway", retryAfter: nil)])
        try await DaemonHarness.run(api: api, store: Self.store()) { daemon in
            let (refusal, status, token) = try await offPool { () -> (AuthdError?, SessionStatus, String) in
                let client = try daemon.connect()
                var refusal: AuthdError?
                do { _ = try client.call(Methods.VerifyFactor.self, .init(factorID: FakeGoTrue.factorID, code: FakeGoTrue.factorCode)) } catch let error as AuthdError {
                    refusal = error
                }
                // The server may have moved the refresh token on: no refresh, the current token serves.
                let token = try client.call(Methods.Token.self, .init(minValidity: 1200)).accessToken
                return (refusal, try client.call(Methods.Status.self, .init()), token)
            }
            guard case .offline(let message)? = refusal else { Issue.record("expected a server error, got \(String(describing: refusal))"); return }
            #expect(message.contains("verify again now"))
            #expect(status.state == "signed_in" && status.degraded?.reason == "mfa_verification_uncertain")
            #expect(token == "access-100" && daemon.api.refreshCalls == 0)
            // A new verification brings the new tokens and ends the wait.
            let raised = try await offPool {
                try daemon.connect().call(Methods.VerifyFactor.self, .init(factorID: FakeGoTrue.factorID, code: FakeGoTrue.factorCode))
            }
            #expect(raised.degraded == nil)
            #expect(daemon.store.stored("default")?.accessToken == "access-1")
        }
    }

    @Test func aSecondTryRefusedBeforeGoTrueLooksAtTheChallengeLeavesTheOutcomeUnknown() async throws {
        let reset = ServerFailure.unreachable(url: "https://example.test/auth/v1", detail: "connection reset")
        // "Already verified" says the first went through; a rate limit says nothing of it.
        for second in [ServerFailure.http(status: 422, code: "mfa_ip_address_mismatch", message: "Challenge and verify IP addresses mismatch.", retryAfter: nil),
                       .http(status: 429, code: "over_request_rate_limit", message: "Too many requests", retryAfter: nil)] {
            let api = FakeGoTrue()
            api.failNextVerifies([reset, second])
            try await DaemonHarness.run(api: api, store: Self.store()) { daemon in
                let status = try await offPool { () -> SessionStatus in
                    let client = try daemon.connect()
                    _ = try? client.call(Methods.VerifyFactor.self, .init(factorID: FakeGoTrue.factorID, code: FakeGoTrue.factorCode))
                    return try client.call(Methods.Status.self, .init())
                }
                #expect(status.degraded?.reason == "mfa_verification_uncertain", "\(second)")
            }
        }
        // Refused for certain after a first try that was never sent: nothing to wait for.
        let api = FakeGoTrue()
        api.failNextVerifies([.notSent(url: "https://example.test/auth/v1", detail: "connection refused")])
        try await DaemonHarness.run(api: api, store: Self.store()) { daemon in
            let status = try await offPool { () -> SessionStatus in
                let client = try daemon.connect()
                _ = try? client.call(Methods.VerifyFactor.self, .init(factorID: FakeGoTrue.factorID, code: FakeGoTrue.factorCode))
                return try client.call(Methods.Status.self, .init())
            }
            #expect(status.degraded == nil)
            #expect(daemon.api.factorCalls == ["challenge", "verify"], "not sent twice")
        }
    }

    @Test func aVerificationTheProjectRefusesSignsOutAsTheServerDid() async throws {
        let api = FakeGoTrue()
        api.failNextVerifies([.http(status: 403, code: "mfa_verification_rejected", message: "Too many attempts", retryAfter: nil)])
        try await DaemonHarness.run(api: api, store: Self.store()) { daemon in
            let status = try await offPool { () -> SessionStatus in
                let client = try daemon.connect()
                _ = try? client.call(Methods.VerifyFactor.self, .init(factorID: FakeGoTrue.factorID, code: FakeGoTrue.factorCode))
                return try client.call(Methods.Status.self, .init())
            }
            #expect(status.state == "signed_out" && status.signOutReason == "mfa_verification_rejected")
            #expect(daemon.store.stored("default") == nil)
        }
    }

    @Test func aWrongCodeIsRefusedAndTheSessionKept() async throws {
        try await DaemonHarness.run(store: Self.store()) { daemon in
            let refusal = try await offPool { () -> AuthdError? in
                do {
                    _ = try daemon.connect().call(Methods.VerifyFactor.self, .init(factorID: FakeGoTrue.factorID, code: "000000"))
                    return nil
                } catch let error as AuthdError { return error }
            }
            guard case .signInRefused(let message)? = refusal else { Issue.record("expected a refused code, got \(String(describing: refusal))"); return }
            #expect(message.contains("the code is wrong"))
            #expect(!message.contains("000000"))
            #expect(daemon.store.stored("default")?.accessToken == "access-100")
            // The hold was let go: a refresh can start again.
            _ = try await offPool { try daemon.connect().call(Methods.Token.self, .init(minValidity: 1200)) }
            #expect(daemon.api.refreshCalls == 1)
        }
    }

    @Test func malformedFactorInputIsRefusedBeforeAnythingIsSent() async throws {
        try await DaemonHarness.run(store: Self.store()) { daemon in
            let errors = try await offPool { () -> [String] in
                let client = try daemon.connect()
                var messages: [String] = []
                let calls: [() throws -> Void] = [
                    { _ = try client.call(Methods.VerifyFactor.self, .init(factorID: "../user", code: "123456")) },
                    { _ = try client.call(Methods.VerifyFactor.self, .init(factorID: FakeGoTrue.factorID + "\u{0}/../../user", code: "123456")) },
                    { _ = try client.call(Methods.VerifyFactor.self, .init(factorID: FakeGoTrue.factorID, code: "  ")) },
                    { _ = try client.call(Methods.EnrollFactor.self, .init(factorType: "sms")) },
                    { _ = try client.call(Methods.EnrollFactor.self, .init(factorType: "phone")) },
                    { _ = try client.call(Methods.ChallengeFactor.self, .init(factorID: FakeGoTrue.factorID, channel: "pigeon")) },
                    { _ = try client.call(Methods.UnenrollFactor.self, .init(factorID: "")) },
                    { _ = try client.call(Methods.Token.self, .init(aal: "aal9")) },
                ]
                for call in calls {
                    do { try call() } catch let AuthdError.rejected(_, message) { messages.append(message) }
                }
                return messages
            }
            #expect(errors.count == 8)
            #expect(errors.allSatisfy { $0.hasPrefix("invalid params") })
            #expect(errors[0].contains("'factor_id'") && errors[1].contains("'factor_id'"))
            #expect(daemon.api.factorCalls.isEmpty)
        }
    }

    @Test func aTokenAskedForAtAAL2IsRefusedBelowItAndGivenAtIt() async throws {
        try await DaemonHarness.run(store: Self.store(aal: "aal1", verifiedFactor: true)) { daemon in
            let (refusal, status) = try await offPool { () -> (AuthdError?, SessionStatus) in
                let client = try daemon.connect()
                var refusal: AuthdError?
                do { _ = try client.call(Methods.Token.self, .init(aal: "aal2")) } catch let error as AuthdError { refusal = error }
                return (refusal, try client.call(Methods.Status.self, .init()))
            }
            guard case .mfaRequired(let message)? = refusal else { Issue.record("expected mfa_required, got \(String(describing: refusal))"); return }
            #expect(message.contains("authctl mfa verify"))
            #expect(status.aal == "aal1" && status.nextAal == "aal2" && status.amr == ["password"] && status.needsSecondFactor)
        }
        try await DaemonHarness.run(store: Self.store(aal: "aal2")) { daemon in
            let token = try await offPool { try daemon.connect().call(Methods.Token.self, .init(aal: "aal2")) }
            #expect(token.accessToken.hasPrefix("eyJ"))
        }
        // A token whose level cannot be read meets aal1 only.
        try await DaemonHarness.run(store: Self.store()) { daemon in
            let aal1 = try await offPool { try daemon.connect().call(Methods.Token.self, .init(aal: "aal1")) }
            #expect(aal1.accessToken == "access-100")
            let refusal = try await offPool { () -> AuthdError? in
                do { _ = try daemon.connect().call(Methods.Token.self, .init(aal: "aal2")); return nil } catch let error as AuthdError { return error }
            }
            if case .mfaRequired? = refusal {} else { Issue.record("expected mfa_required, got \(String(describing: refusal))") }
        }
    }

    @Test func enrollingShowsTheSecretOnceAndRemovingAFactorRefreshes() async throws {
        try await DaemonHarness.run(store: Self.store()) { daemon in
            let enrolled = try await offPool { try daemon.connect().call(Methods.EnrollFactor.self, .init(factorType: "totp", friendlyName: "app")) }
            #expect(enrolled.factorID == FakeGoTrue.factorID && enrolled.totp?.secret.isEmpty == false)
            #expect(enrolled.totp?.uri.hasPrefix("otpauth://totp/") == true)
            let removed = try await offPool { try daemon.connect().call(Methods.UnenrollFactor.self, .init(factorID: FakeGoTrue.factorID.uppercased())) }
            #expect(removed.factorID == FakeGoTrue.factorID)
            // The refresh the removal asked for: the token may state a level the session lost.
            #expect(await eventually { daemon.api.refreshCalls > 0 })
            #expect(daemon.api.refreshCalls == 1)
            #expect(daemon.api.factorCalls == ["enroll totp", "unenroll"])
        }
    }

    @Test func aRefreshRefusedForLackOfASecondFactorSignsOutSayingSoAndTellsTheDesktop() async throws {
        let api = FakeGoTrue()
        api.failNextRefreshes([.http(status: 400, code: "session_expired",
                                     message: "Invalid Refresh Token: Session Expired (Low AAL: User Needs MFA Verification)", retryAfter: nil)])
        let notices = RecordedNotices()
        let driver = SessionDriver(profile: "default", server: "https://example.test", store: Self.store(aal: "aal1", verifiedFactor: true), api: api,
                                   notice: notices, policy: RefreshPolicy(jitterFraction: 0), logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await driver.run() }
            let answer = await driver.token(validFor: 1200)
            #expect(answer == .failure(.notSignedIn(.secondFactorRequired(serverCode: "session_expired"))))
            #expect(await driver.status().signOutReason == "mfa_verification_required")
            #expect(await eventually { !notices.seen.isEmpty })
            #expect(notices.seen == ["default mfa_verification_required"])
            group.cancelAll()
        }
    }

    @Test func anAAL1SessionThatVanishedForAUserWithAFactorIsToldOnTheDesktopWithTheServersCode() async throws {
        let api = FakeGoTrue()
        api.failNextRefreshes([.http(status: 400, code: "refresh_token_not_found", message: "Invalid Refresh Token: Refresh Token Not Found", retryAfter: nil)])
        let notices = RecordedNotices()
        let driver = SessionDriver(profile: "default", server: "https://example.test", store: Self.store(aal: "aal1", verifiedFactor: true), api: api,
                                   notice: notices, policy: RefreshPolicy(jitterFraction: 0), logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await driver.run() }
            _ = await driver.token(validFor: 1200)
            #expect(await driver.status().signOutReason == "refresh_token_not_found")
            try #require(await eventually { !notices.seen.isEmpty })
            #expect(notices.seen == ["default refresh_token_not_found"])
            group.cancelAll()
        }
    }

    /// A `SignOutNotice` that records what it was asked to show, and then is closed, has its
    /// "Sign in" chosen, or stays until withdrawn, as `reaction` says.
    final class RecordedNotices: SignOutNotice {
        enum Reaction: Sendable { case close, choose, stay }
        private let reaction: Reaction
        private let state = Mutex<(seen: [String], plans: [SignInAgainPlan], offers: [Bool], withdrawn: Int)>(([], [], [], 0))
        init(_ reaction: Reaction = .close) { self.reaction = reaction }
        var seen: [String] { state.withLock { $0.seen } }
        var plans: [SignInAgainPlan] { state.withLock { $0.plans } }
        /// Whether each notice offered the "Sign in" action.
        var offers: [Bool] { state.withLock { $0.offers } }
        var withdrawn: Int { state.withLock { $0.withdrawn } }
        func sessionEnded(profile: String, reason: SignOutReason, plan: SignInAgainPlan, offersSignIn: Bool) async -> Bool {
            state.withLock {
                $0.seen.append("\(profile) \(reason.code)")
                $0.plans.append(plan)
                $0.offers.append(offersSignIn)
            }
            switch reaction {
            case .close: return false
            case .choose: return offersSignIn
            case .stay:
                while (try? await Task.sleep(for: .seconds(60))) != nil {}
                state.withLock { $0.withdrawn += 1 }
                return false
            }
        }
    }

    /// A `SignInStarter` that records the sign-ins it was asked to start ("in terminal:" first
    /// when in a terminal); `available` says whether it can start any.
    final class RecordedStarts: SignInStarter {
        private let state = Mutex<[String]>([])
        private let available: Bool
        init(available: Bool = true) { self.available = available }
        var started: [String] { state.withLock { $0 } }
        func canStart(_ plan: SignInAgainPlan, inTerminal: Bool) -> Bool { available }
        func startSignIn(profile: String, plan: SignInAgainPlan, inTerminal: Bool) async {
            let words = (inTerminal ? ["in terminal:"] : []) + [profile] + (plan.authctlArguments(profile: profile) ?? [])
            state.withLock { $0.append(words.joined(separator: " ")) }
        }
    }

    /// An `event` notification line.
    struct EventLine: Decodable { var params: AuthEventMessage }
}
