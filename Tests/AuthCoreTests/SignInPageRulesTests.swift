import AuthCore
import Foundation
import Testing

/// The sign-in page's rules across all forms: refusals that change nothing, one operation at a
/// time, the ten-minute lifetime (time advanced, not slept), rate limits, errors in plain words,
/// and no secret in any description.
@Suite struct SignInPageRulesTests {
    /// Every action on a step it does not fit is refused, and the page stays exactly as it was.
    @Test func anActionThatDoesNotFitTheStepChangesNothing() throws {
        var misfits: [(String, SignInPageFlow, [SignInPageAction])] = [
            ("password", Page.flow(), [.submitCode("1"), .sendCodeAgain, .signUp(email: "a@b.c", password: "p"), .forgotPassword(email: "a@b.c"),
                                     .setNewPassword("p"), .continueWithSingleSignOn(domain: "b.c"), .chooseFactor(id: "x"),
                                     .submitSecondFactorCode("1"), .enrol(.totp, phone: nil), .skipEnrolment, .requestCode(address: "a@b.c"),
                                     .choose(.anonymous), .choose(.provider("github"))]),
            ("new password", try newPasswordFlow(), [.signInWithPassword(email: "a@b.c", password: "p"), .choose(.password),
                                                     .continueWithProvider("github"), .signInAnonymously, .submitCode("1")]),
        ]
        let atProvider = try browserFlow()
        misfits += [
            ("enter code", try codeFlow(), [.requestCode(address: "a@b.c"), .signInWithPassword(email: "a@b.c", password: "p"),
                                            .setNewPassword("p"), .submitSecondFactorCode("1"), .skipEnrolment]),
            ("at provider", atProvider, [.submitCode("1"), .sendCodeAgain, .signInWithPassword(email: "a@b.c", password: "p"),
                                         .continueWithSingleSignOn(domain: "b.c")]),
            ("second factor", try secondFactorFlow(), [.choose(.password), .submitCode("1"), .continueWithProvider("github"),
                                                       .enrol(.totp, phone: nil), .skipEnrolment, .setNewPassword("p")]),
            ("enrolment offer", try enrolmentFlow(), [.choose(.emailCode), .submitSecondFactorCode("1"), .chooseFactor(id: "x"),
                                                      .signInAnonymously, .sendCodeAgain]),
        ]
        for (name, flow, actions) in misfits {
            for action in actions {
                var copy = flow
                #expect(copy.show(action) == .refused(.notNow), "\(action) on \(name)")
                #expect(copy.screen() == flow.screen(), "\(action) on \(name)")
            }
        }
    }

    func codeFlow() throws -> SignInPageFlow {
        var flow = Page.flow()
        flow.show(.choose(.emailCode))
        try flow.report(.accepted, for: try flow.post(.requestCode(address: "ada@example.com")))
        return flow
    }

    func browserFlow() throws -> SignInPageFlow {
        var flow = Page.flow()
        try flow.report(.browserURL(URL(string: "https://github.example/")!), for: try flow.post(.continueWithProvider("github")))
        return flow
    }

    func secondFactorFlow() throws -> SignInPageFlow {
        var flow = Page.flow()
        let signIn = try flow.post(.signInWithPassword(email: "ada@example.com", password: "pw"))
        let challenge = try #require(try flow.report(.signedIn(Page.account(factors: [Page.totp])), for: signIn))
        try flow.report(.challenged(FactorChallenge(id: "c", type: "totp", expiresAt: nil)), for: challenge)
        return flow
    }

    func enrolmentFlow() throws -> SignInPageFlow {
        var flow = Page.flow(options: .init(offerEnrolment: true))
        try flow.report(.signedIn(Page.account()), for: try flow.post(.signInWithPassword(email: "ada@example.com", password: "pw")))
        return flow
    }

    /// After the end, every action and the browser's return are refused.
    @Test func nothingIsTakenAfterTheEnd() throws {
        var flow = try secondFactorFlow()
        flow.show(.cancel)
        let ended = flow.screen()
        for action: SignInPageAction in [.cancel, .choose(.password), .submitSecondFactorCode("123456"), .skipEnrolment, .signInAnonymously] {
            #expect(flow.show(action) == .refused(.ended), "\(action)")
        }
        #expect(flow.browserReturned(now: Page.at(5)) == .refused(.ended))
        #expect(flow.complete(1, with: .accepted, now: Page.at(5)) == .refused(.ended))
        #expect(flow.screen() == ended)
    }

    func newPasswordFlow() throws -> SignInPageFlow {
        var flow = Page.flow()
        flow.show(.choose(.forgotPassword))
        try flow.report(.accepted, for: try flow.post(.forgotPassword(email: "ada@example.com")))
        try flow.report(.signedIn(Page.account()), for: try flow.post(.submitCode("123456")))
        return flow
    }

    /// Methods the settings do not enable are refused even when posted by hand.
    @Test func aMethodTheProjectDoesNotEnableIsRefused() {
        var flow = Page.flow(ProjectSettings(emailEnabled: true, signUpDisabled: true))
        #expect(flow.screen().methods == [.password, .emailCode, .forgotPassword])
        for action: SignInPageAction in [.choose(.phoneCode), .choose(.singleSignOn), .choose(.signUp), .signInAnonymously,
                                         .continueWithProvider("github")] {
            let before = flow.screen()
            #expect(flow.show(action) == .refused(.notOffered), "\(action)")
            #expect(flow.screen() == before)
        }
    }

    /// WorkOS needs a connection or an organisation that a button cannot name: no button, and
    /// refused by hand; the other providers stay.
    @Test func workOSIsNotOfferedAsAButton() throws {
        var flow = Page.flow(ProjectSettings(oauthProviders: ["github", "workos"]))
        #expect(flow.screen().methods == [.provider("github")])
        #expect(flow.show(.continueWithProvider("workos")) == .refused(.notOffered))
        #expect(try flow.post(.continueWithProvider("github")).operation == .startBrowserSignIn(.provider("github")))
    }

    /// A second submit while the first is at the server starts nothing; the first's outcome is
    /// taken with its ticket only.
    @Test func oneOperationAtATime() throws {
        var flow = Page.flow()
        let first = try flow.post(.signInWithPassword(email: "ada@example.com", password: "pw"))
        #expect(flow.screen().isBusy)
        for action: SignInPageAction in [.signInWithPassword(email: "ada@example.com", password: "pw"), .choose(.emailCode),
                                         .continueWithProvider("github"), .cancel] {
            #expect(flow.show(action) == .refused(.busy), "\(action)")
        }
        #expect(flow.browserReturned(now: Page.at(1)) == .refused(.busy))
        #expect(flow.complete(first.ticket + 1, with: .signedIn(Page.account()), now: Page.at(2)) == .refused(.staleOutcome))
        try flow.report(Page.refusal("invalid_credentials"), for: first)
        #expect(flow.complete(first.ticket, with: .signedIn(Page.account()), now: Page.at(2)) == .refused(.staleOutcome),
                "an outcome counts once")
        #expect(flow.error == .wrongPassword)
    }

    @Test func anOutcomeOfAnotherKindIsAFailureNotAStep() throws {
        var flow = Page.flow()
        let signIn = try flow.post(.signInWithPassword(email: "ada@example.com", password: "pw"))
        try flow.report(.browserURL(URL(string: "https://example.com")!), for: signIn)
        #expect(flow.step == .password(email: "ada@example.com"))
        #expect(flow.error == .serverFailed)
        #expect(!flow.isBusy)
    }

    // MARK: Lifetime

    @Test func theFlowExpiresTenMinutesAfterItBegan() throws {
        var flow = Page.flow()
        #expect(flow.expiresAt == Page.at(600))
        flow.show(.choose(.emailCode), at: 599)
        #expect(flow.step == .requestCode(.email, address: ""))
        #expect(flow.screen(at: 599.9).step == .requestCode(.email, address: ""))
        #expect(flow.screen(at: 600).step == .finished(.expired), "the view says so before any input")
        #expect(flow.show(.requestCode(address: "ada@example.com"), at: 600) == .refused(.ended))
        #expect(flow.step == .finished(.expired))
        #expect(flow.show(.cancel, at: 601) == .refused(.ended))

        var idle = Page.flow()
        idle.expireIfDue(now: Page.at(599))
        #expect(!idle.hasEnded)
        idle.expireIfDue(now: Page.at(600))
        #expect(idle.step == .finished(.expired))
    }

    /// An operation out when the time runs out is waited for: a sign-in it brings counts, but
    /// nothing further is started and no form is shown again.
    @Test func anOperationOutAtExpiryIsWaitedForAndEndsIt() throws {
        var signingIn = Page.flow()
        let signIn = try signingIn.post(.signInWithPassword(email: "ada@example.com", password: "pw"), at: 599)
        signingIn.expireIfDue(now: Page.at(605))
        #expect(signingIn.show(.cancel, at: 605) == .refused(.busy))
        try signingIn.report(.signedIn(Page.account()), for: signIn, at: 606)
        #expect(signingIn.step == .finished(.signedIn(Page.account())))

        var refused = Page.flow()
        let wrong = try refused.post(.signInWithPassword(email: "ada@example.com", password: "pw"), at: 599)
        try refused.report(Page.refusal("invalid_credentials"), for: wrong, at: 606)
        #expect(refused.step == .finished(.expired))

        var secondFactor = Page.flow()
        let first = try secondFactor.post(.signInWithPassword(email: "ada@example.com", password: "pw"), at: 599)
        #expect(try secondFactor.report(.signedIn(Page.account(factors: [Page.totp])), for: first, at: 606) == nil,
                "no challenge is started past the lifetime")
        #expect(secondFactor.step == .finished(.expired))
        #expect(!secondFactor.isBusy)
    }

    @Test func cancellingEndsTheFlow() throws {
        var flow = Page.flow()
        #expect(flow.show(.cancel) == .next(nil))
        #expect(flow.step == .finished(.cancelled(signedInAs: nil)))
        #expect(flow.show(.choose(.password)) == .refused(.ended))
        var loading = SignInPageFlow(startedAt: Page.t0)
        loading.show(.cancel)
        #expect(loading.step == .finished(.cancelled(signedInAs: nil)))
        #expect(loading.start(now: Page.at(1)) == .refused(.ended))
    }

    // MARK: Rate limits and errors

    /// After a 429 with `Retry-After`, the same kind of call waits that long without being sent;
    /// other kinds go on.
    @Test func aRateLimitHoldsTheSameKindOfCallBackUntilItsTime() throws {
        var flow = Page.flow()
        let signIn = try flow.post(.signInWithPassword(email: "ada@example.com", password: "pw"), at: 10)
        try flow.report(Page.refusal("over_request_rate_limit", status: 429, retryAfter: 59.2), for: signIn, at: 10)
        #expect(flow.screen(at: 10).errorMessage == "Too many attempts. You can try again in 60 seconds.")
        #expect(flow.show(.signInWithPassword(email: "ada@example.com", password: "pw"), at: 40) == .next(nil))
        #expect(flow.screen(at: 40).errorMessage == "Too many attempts. You can try again in 30 seconds.")
        #expect(flow.screen(at: 69).errorMessage == "Too many attempts. You can try again in 1 second.")
        #expect(flow.screen(at: 70).errorMessage == "Too many attempts. Wait a little, then try again.")
        #expect(try flow.post(.continueWithProvider("github"), at: 41).operation == .startBrowserSignIn(.provider("github")))
        var again = Page.flow()
        let first = try again.post(.signInWithPassword(email: "ada@example.com", password: "pw"), at: 10)
        try again.report(Page.refusal("over_request_rate_limit", status: 429, retryAfter: 59.2), for: first, at: 10)
        #expect(try again.post(.signInWithPassword(email: "ada@example.com", password: "pw"), at: 70).ticket > first.ticket)
    }

    @Test func failuresReadInPlainWords() throws {
        let cases: [(SignInPageOutcome, SignInPageError, String)] = [
            (Page.unreachable, .unreachable, "The sign-in server cannot be reached. Check your connection and try again."),
            (.failed(.server(.unreachable(url: "u", detail: "reset"))), .unreachable, "The sign-in server cannot be reached. Check your connection and try again."),
            (.failed(.server(.untrustedCertificate(host: "h", problem: "expired"))), .unreachable, "The sign-in server cannot be reached. Check your connection and try again."),
            (.failed(.server(.invalidResponse(detail: "html"))), .serverFailed, "The sign-in server failed. Try again in a moment."),
            (Page.refusal("unexpected_failure", status: 503), .serverFailed, "The sign-in server failed. Try again in a moment."),
            (Page.refusal("over_request_rate_limit", status: 429), .rateLimited(retryAt: nil), "Too many attempts. Wait a little, then try again."),
            (Page.refusal("email_provider_disabled", status: 422), .methodDisabled, "This project does not allow signing in this way."),
            (Page.refusal("signup_disabled", status: 422), .signUpsDisabled, "This project does not take new accounts."),
            (Page.refusal("user_not_found", status: 404, message: "User not found"), .refused(message: "User not found", code: "user_not_found"),
             "The server refused: User not found"),
            (Page.refusal("something_new", status: 400, message: "Something new happened"), .refused(message: "Something new happened", code: "something_new"),
             "The server refused: Something new happened"),
            (.failed(.browser(.expired)), .browserFailed(detail: "it was not completed in time."), "The browser sign-in failed: it was not completed in time."),
            (.failed(.sessionEnded), .sessionEnded, "You were signed out, or another sign-in took your place, meanwhile. Start again."),
            (Page.refusal("email_address_not_authorized", status: 400, message: "Email address \"ada@example.com\" cannot be used as it is not authorized"),
             .addressNotAuthorized,
             "This project can send email only to its own team's addresses for now. Sign in another way, or ask the project's owner."),
            (Page.refusal("user_banned", status: 403, message: "User is banned"), .accountBlocked, "This account is blocked for now. Ask the project's owner."),
            (Page.refusal("saml_provider_disabled", status: 422), .methodDisabled, "This project does not allow signing in this way."),
            (Page.refusal("too_many_enrolled_mfa_factors", status: 422, message: "Maximum number of verified factors reached, unenroll to continue"),
             .tooManyFactors, SignInPageError.tooManyFactors.message(now: Page.t0)),
            (Page.refusal("over_email_send_rate_limit", status: 429, message: "email rate limit exceeded"), .cannotSendNow(.email, retryAt: nil),
             "This project cannot send more emails right now, so nothing was sent. Wait a little, then try again. Or sign in another way."),
            (Page.refusal("over_request_rate_limit", status: 429, message: "Request rate limit reached"), .rateLimited(retryAt: nil),
             "Too many attempts. Wait a little, then try again."),
        ]
        for (outcome, error, words) in cases {
            var flow = Page.flow()
            flow.show(.choose(.emailCode))
            let send = try flow.post(.requestCode(address: "ada@example.com"))
            try flow.report(outcome, for: send)
            let shown = flow.error ?? { if case .finished(.failed(let ended)) = flow.step { return ended } else { return nil } }()
            #expect(shown == error, "\(outcome)")
            #expect(shown?.message(now: Page.at(2)) == words)
        }
        #expect(SignInPageError.captchaRequired.message(now: Page.t0).contains("CAPTCHA, which this page does not support"))
    }

    // MARK: Secrets

    /// Passwords, codes and the TOTP secret go into operations and nowhere else: not into the
    /// flow's state, its view, or any description or dump of a flow, an action or an operation.
    @Test func noSecretIsKeptOrDescribed() throws {
        let secrets = ["hunter2-password", "987654", "NEWPASSWORD-xyz", "JBSWY3DPEHPK3PXP"]
        var texts: [String] = []
        func record(_ value: Any) {
            texts.append(String(describing: value))
            texts.append(String(reflecting: value))
            var dumped = ""
            dump(value, to: &dumped)
            texts.append(dumped)
        }
        var flow = Page.flow()
        flow.show(.choose(.forgotPassword))
        try flow.report(.accepted, for: try flow.post(.forgotPassword(email: "ada@example.com")))
        let actions: [SignInPageAction] = [.submitCode("987654"), .setNewPassword("NEWPASSWORD-xyz"),
                                           .signInWithPassword(email: "ada@example.com", password: "hunter2-password")]
        actions.forEach(record)
        let verify = try flow.post(.submitCode("987654"))
        record(verify)
        record(verify.operation)
        record(flow)
        record(flow.screen())
        try flow.report(.signedIn(Page.account()), for: verify)
        let change = try flow.post(.setNewPassword("NEWPASSWORD-xyz"))
        record(change)
        record(flow)
        record(flow.screen())
        record(SignInPageOperation.signUp(SignUpRequest(address: .email("a@b.c"), password: "hunter2-password")))
        record(SignInPageOperation.verifyFactor(id: "f", challengeID: "c", code: "987654"))
        record(SignInPageOperation.signIn(.password(.email("a@b.c"), password: "hunter2-password")))
        try flow.report(.accepted, for: change)
        record(flow)
        record(flow.screen())
        for text in texts {
            for secret in secrets { #expect(!text.contains(secret), "\(secret) in \(text)") }
        }
        #expect(flow.step == .finished(.signedIn(Page.account())))
    }
}
