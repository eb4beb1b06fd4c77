import AuthCore
import Foundation
import Testing

/// The sign-in page's forms, one method after another: what each posts hands out, and what each
/// outcome shows next. Time is given with every input; nothing sleeps.
@Suite struct SignInPageFlowTests {
    // MARK: Settings

    @Test func theSettingsAreReadFirstAndDecideTheFirstForm() throws {
        var flow = SignInPageFlow(startedAt: Page.t0, options: .init(email: "ada@example.com"))
        #expect(flow.screen().step == .loading)
        #expect(flow.show(.choose(.password)) == .refused(.notNow))
        let read = try SignInPageFlow.request(flow.start(now: Page.at(0)), after: "start")
        #expect(read.operation == .fetchSettings)
        #expect(flow.start(now: Page.at(0)) == .refused(.busy))
        try flow.report(.settings(Page.everything), for: read)
        let screen = flow.screen()
        #expect(screen.step == .password(email: "ada@example.com"))
        #expect(screen.methods == [.password, .emailCode, .phoneCode, .singleSignOn, .signUp, .forgotPassword, .anonymous,
                                   .provider("github"), .provider("google")])
        #expect(screen.settings == Page.everything)
        #expect(flow.start(now: Page.at(3)) == .refused(.notNow))
        #expect(flow.complete(read.ticket, with: .settings(Page.everything), now: Page.at(3)) == .refused(.staleOutcome))
    }

    @Test func theFirstFormIsTheFirstMethodTheProjectEnables() {
        #expect(Page.flow(ProjectSettings(phoneEnabled: true)).step == .requestCode(.phone, address: ""))
        #expect(Page.flow(ProjectSettings(singleSignOnEnabled: true)).step == .singleSignOn(domain: ""))
        #expect(Page.flow(ProjectSettings(oauthProviders: ["github"])).step == .methods)
        #expect(Page.flow(ProjectSettings(anonymousSignInsEnabled: true)).step == .methods)
        // Two forms, or a form and a button: the first page, whence each is one step away.
        #expect(Page.flow(ProjectSettings(phoneEnabled: true, singleSignOnEnabled: true)).step == .methods)
        #expect(Page.flow(ProjectSettings(phoneEnabled: true, oauthProviders: ["github"])).step == .methods)
        // Anonymous sign-ins are sign-ups: with sign-ups off, nothing is left.
        #expect(Page.flow(ProjectSettings(signUpDisabled: true, anonymousSignInsEnabled: true)).step == .finished(.failed(.nothingOffered)))
    }

    /// An app (or the "sign in again" notice) opens the page on the form the account used, with
    /// its address: when the project offers that form. "Sign in another way" leads to the first page.
    @Test func thePageOpensOnTheFormAskedForWhenTheProjectOffersIt() {
        var flow = Page.flow(options: .init(email: "ada@example.com", method: .emailCode))
        #expect(flow.step == .requestCode(.email, address: "ada@example.com"))
        #expect(flow.show(.chooseAnother) == .next(nil))
        #expect(flow.step == .password(email: "ada@example.com"))
        #expect(Page.flow(options: .init(method: .singleSignOn)).step == .singleSignOn(domain: ""))
        #expect(Page.flow(options: .init(method: .signUp)).step == .signUp(email: ""))
        // Not offered: the page's own first form, as without a hint.
        #expect(Page.flow(ProjectSettings(emailEnabled: true), options: .init(method: .phoneCode)).step == .password(email: ""))
        #expect(Page.flow(ProjectSettings(emailEnabled: true, signUpDisabled: true), options: .init(method: .signUp)).step == .password(email: ""))
        // The forms are named on the wire as in logs; a button is no form to open on.
        #expect(SignInPageMethod.forms.map(\.description) == ["password", "email_code", "phone_code", "sign_up", "forgot_password", "sso"])
        #expect(SignInPageMethod(form: "sso") == .singleSignOn && SignInPageMethod(form: "anonymous") == nil && SignInPageMethod(form: "provider(github)") == nil)
    }

    /// A project with texted codes and a provider: the form and the button are each reachable
    /// from the first page, and "Sign in another way" leads back to it.
    @Test func withoutAPasswordFormEveryWayIsOneStepFromTheFirstPage() throws {
        var flow = Page.flow(ProjectSettings(phoneEnabled: true, oauthProviders: ["github"]))
        #expect(flow.show(.choose(.phoneCode)) == .next(nil))
        #expect(flow.step == .requestCode(.phone, address: ""))
        #expect(flow.show(.chooseAnother) == .next(nil))
        #expect(flow.step == .methods)
        #expect(try flow.post(.continueWithProvider("github")).operation == .startBrowserSignIn(.provider("github")))
    }

    @Test func settingsThatCannotBeReadEndTheFlow() throws {
        var flow = SignInPageFlow(startedAt: Page.t0)
        let read = try SignInPageFlow.request(flow.start(now: Page.at(0)), after: "start")
        try flow.report(Page.unreachable, for: read)
        #expect(flow.step == .finished(.failed(.unreachable)))
        #expect(flow.show(.choose(.password)) == .refused(.ended))
    }

    // MARK: Email and password

    @Test func aPasswordSignInChecksTheFieldsThenSignsIn() throws {
        var flow = Page.flow()
        flow.show(.signInWithPassword(email: "  ", password: "pw"))
        #expect(flow.error == .missing(.email))
        flow.show(.signInWithPassword(email: " ada ", password: "pw"))
        #expect(flow.error == .malformed(.email))
        #expect(flow.step == .password(email: "ada"), "what was typed stays, trimmed")
        flow.show(.signInWithPassword(email: "ada@example.com", password: ""))
        #expect(flow.error == .missing(.password))
        #expect(flow.error?.field == .password)

        let signIn = try flow.post(.signInWithPassword(email: " ada@example.com", password: " pass word "))
        #expect(signIn.operation == .signIn(.password(.email("ada@example.com"), password: " pass word ")))
        #expect(flow.error == nil)
        try flow.report(Page.refusal("invalid_credentials"), for: signIn)
        #expect(flow.step == .password(email: "ada@example.com"))
        #expect(flow.screen().errorMessage == "Wrong email or password.")

        let again = try flow.post(.signInWithPassword(email: "ada@example.com", password: "right"))
        #expect(again.ticket > signIn.ticket)
        try flow.report(.signedIn(Page.account()), for: again)
        #expect(flow.step == .finished(.signedIn(Page.account())))
        #expect(flow.account?.name == "ada@example.com")
    }

    /// GoTrue refuses a password sign-in of an unconfirmed address; the code of the confirmation
    /// signs in, and the page asks for it.
    @Test func anUnconfirmedAddressIsAskedForItsConfirmationCode() throws {
        var flow = Page.flow()
        let signIn = try flow.post(.signInWithPassword(email: "ada@example.com", password: "pw"))
        try flow.report(Page.refusal("email_not_confirmed"), for: signIn)
        #expect(flow.step == .enterCode(.email, address: "ada@example.com", purpose: .confirmSignUp))
        #expect(flow.error == .notConfirmed(.email))
        let resend = try flow.post(.sendCodeAgain)
        #expect(resend.operation == .resend(ResendRequest(address: .email("ada@example.com"), purpose: .signup)))
        try flow.report(.accepted, for: resend)
        #expect(flow.error == nil)
        let verify = try flow.post(.submitCode("12 34 56"))
        #expect(verify.operation == .signIn(.oneTimeCode(.email("ada@example.com"), code: "123456", type: .signup)))
        try flow.report(.signedIn(Page.account()), for: verify)
        #expect(flow.hasEnded)
    }

    // MARK: One-time codes

    @Test func aCodeByEmailIsSentThenVerified() throws {
        var flow = Page.flow(options: .init(email: "ada@example.com"))
        flow.show(.choose(.emailCode))
        #expect(flow.step == .requestCode(.email, address: "ada@example.com"))
        let send = try flow.post(.requestCode(address: "ada@example.com"))
        #expect(send.operation == .sendCode(.signIn(.email("ada@example.com"), createUser: true)))
        try flow.report(.accepted, for: send)
        #expect(flow.step == .enterCode(.email, address: "ada@example.com", purpose: .signIn))
        flow.show(.submitCode("12?456"))
        #expect(flow.error == .malformed(.code))
        let wrong = try flow.post(.submitCode("654321"))
        #expect(wrong.operation == .signIn(.oneTimeCode(.email("ada@example.com"), code: "654321", type: .email)))
        try flow.report(Page.refusal("otp_expired", status: 403), for: wrong)
        #expect(flow.error == .wrongCode)
        #expect(flow.step == .enterCode(.email, address: "ada@example.com", purpose: .signIn))
        let right = try flow.post(.submitCode("123456"))
        try flow.report(.signedIn(Page.account()), for: right)
        #expect(flow.step == .finished(.signedIn(Page.account())))
    }

    @Test func aCodeByEmailSignsNoNewAddressUpWhereSignUpsAreOff() throws {
        var settings = Page.everything
        settings.signUpDisabled = true
        var flow = Page.flow(settings)
        flow.show(.choose(.emailCode))
        let send = try flow.post(.requestCode(address: "new@example.com"))
        #expect(send.operation == .sendCode(.signIn(.email("new@example.com"), createUser: false)))
        try flow.report(Page.refusal("otp_disabled", status: 422, message: "Signups not allowed for otp"), for: send)
        #expect(flow.error == .signUpsDisabled)
        #expect(flow.step == .requestCode(.email, address: "new@example.com"))
    }

    @Test func aCodeBySMSGoesToTheNumberInItsInternationalForm() throws {
        var flow = Page.flow()
        flow.show(.choose(.phoneCode))
        #expect(flow.step == .requestCode(.phone, address: ""))
        flow.show(.requestCode(address: "555 1234"))
        #expect(flow.error == .malformed(.phone))
        #expect(flow.screen().errorMessage == "Enter the phone number with its country code, like +15551234567.")
        let send = try flow.post(.requestCode(address: " +1 (555) 123-4567 "))
        #expect(send.operation == .sendCode(.signIn(.phone("+15551234567"), createUser: true)))
        try flow.report(.accepted, for: send)
        #expect(flow.step == .enterCode(.phone, address: "+15551234567", purpose: .signIn))
        let verify = try flow.post(.submitCode("123456"))
        #expect(verify.operation == .signIn(.oneTimeCode(.phone("+15551234567"), code: "123456", type: .sms)))
        // The phone form keeps the number typed; the email forms keep theirs.
        try flow.report(.signedIn(SignInPageAccount(phone: "+15551234567")), for: verify)
        #expect(flow.account?.name == "+15551234567")
        // GoTrue keeps the digits without the "+": the page names the number as it was typed.
        #expect(SignInPageAccount(phone: "15551234567").name == "+15551234567")
        #expect(SignInPageAccount(phone: "not a number").name == "not a number")
    }

    /// GoTrue refuses another code within its limit; the one sent moments ago still works, so the
    /// page asks for it, and holds "send again" back until the server's time has passed.
    // MARK: Sign-up

    @Test func aSignUpSignsInAtOnceOrAsksForTheConfirmationCode() throws {
        var flow = Page.flow(options: .init(email: "ada@example.com"))
        flow.show(.choose(.signUp))
        #expect(flow.step == .signUp(email: "ada@example.com"))
        let signUp = try flow.post(.signUp(email: "ada@example.com", password: "long password"))
        #expect(signUp.operation == .signUp(SignUpRequest(address: .email("ada@example.com"), password: "long password")))
        try flow.report(.confirmationSent, for: signUp)
        #expect(flow.step == .enterCode(.email, address: "ada@example.com", purpose: .confirmSignUp))
        let confirm = try flow.post(.submitCode("123456"))
        #expect(confirm.operation == .signIn(.oneTimeCode(.email("ada@example.com"), code: "123456", type: .signup)))

        var confirmed = Page.flow()
        confirmed.show(.choose(.signUp))
        let direct = try confirmed.post(.signUp(email: "bob@example.com", password: "long password"))
        try confirmed.report(.signedIn(Page.account("bob@example.com")), for: direct)
        #expect(confirmed.step == .finished(.signedIn(Page.account("bob@example.com"))))
    }

    @Test func aSignUpsRefusalsReadPlainly() throws {
        var flow = Page.flow()
        flow.show(.choose(.signUp))
        let taken = try flow.post(.signUp(email: "ada@example.com", password: "pw"))
        try flow.report(Page.refusal("user_already_exists", status: 422), for: taken)
        #expect(flow.error == .accountExists)
        #expect(flow.error?.field == .email)
        let weak = try flow.post(.signUp(email: "ada@example.com", password: "pw"))
        try flow.report(Page.refusal("weak_password", status: 422, message: "Password should be at least 6 characters."), for: weak)
        #expect(flow.screen().errorMessage == "Choose a stronger password: Password should be at least 6 characters.")
        let guarded = try flow.post(.signUp(email: "ada@example.com", password: "long password"))
        try flow.report(Page.refusal("captcha_failed", message: "captcha protection: request disallowed (no captcha_token found)"), for: guarded)
        #expect(flow.error == .captchaRequired)
        #expect(flow.screen().captchaUnsupported)
        #expect(flow.step == .signUp(email: "ada@example.com"))
    }

    @Test func noSignUpIsOfferedOrTakenWhereSignUpsAreOff() {
        var settings = Page.everything
        settings.signUpDisabled = true
        var flow = Page.flow(settings)
        #expect(!flow.screen().methods.contains(.signUp))
        #expect(!flow.screen().methods.contains(.anonymous))
        #expect(flow.show(.choose(.signUp)) == .refused(.notOffered))
        #expect(flow.show(.signInAnonymously) == .refused(.notOffered))
        #expect(flow.step == .password(email: ""))
    }

    // MARK: Forgotten password

    @Test func aRecoveryCodeSignsInAndThenTheNewPasswordIsSet() throws {
        var flow = Page.flow()
        flow.show(.choose(.forgotPassword))
        flow.show(.forgotPassword(email: "nope"))
        #expect(flow.error == .malformed(.email))
        let send = try flow.post(.forgotPassword(email: "ada@example.com"))
        #expect(send.operation == .sendCode(.recovery(email: "ada@example.com")))
        try flow.report(.accepted, for: send)
        #expect(flow.step == .enterCode(.email, address: "ada@example.com", purpose: .recovery))
        let resend = try flow.post(.sendCodeAgain)
        #expect(resend.operation == .sendCode(.recovery(email: "ada@example.com")))
        try flow.report(.accepted, for: resend)
        let verify = try flow.post(.submitCode("123456"))
        #expect(verify.operation == .signIn(.oneTimeCode(.email("ada@example.com"), code: "123456", type: .recovery)))
        try flow.report(.signedIn(Page.account()), for: verify)
        #expect(flow.step == .newPassword(Page.account()))
        #expect(flow.show(.choose(.password)) == .refused(.notNow), "signed in: no other method now")
        flow.show(.setNewPassword(""))
        #expect(flow.error == .missing(.newPassword))
        let same = try flow.post(.setNewPassword("old password"))
        #expect(same.operation == .updatePassword("old password"))
        try flow.report(Page.refusal("same_password", status: 422), for: same)
        #expect(flow.error == .samePassword)
        let change = try flow.post(.setNewPassword("new password"))
        try flow.report(.accepted, for: change)
        #expect(flow.step == .finished(.signedIn(Page.account())))
    }

    // MARK: Browser sign-ins

    @Test func aProviderButtonSendsTheBrowserThereAndItsReturnSignsIn() throws {
        var flow = Page.flow()
        #expect(flow.show(.choose(.provider("github"))) == .refused(.notNow), "a button, not a form")
        #expect(flow.show(.continueWithProvider("gitlab")) == .refused(.notOffered))
        #expect(flow.browserReturned(now: Page.at(1)) == .refused(.notNow))
        let start = try flow.post(.continueWithProvider("github"))
        #expect(start.operation == .startBrowserSignIn(.provider("github")))
        let url = URL(string: "https://p.supabase.co/auth/v1/authorize?provider=github")!
        try flow.report(.browserURL(url), for: start)
        #expect(flow.step == .atProvider(.provider("github"), url: url))
        let complete = try SignInPageFlow.request(flow.browserReturned(now: Page.at(60)), after: "return")
        #expect(complete.operation == .completeBrowserSignIn(.provider("github")))
        try flow.report(.signedIn(Page.account()), for: complete, at: 61)
        #expect(flow.step == .finished(.signedIn(Page.account())))
    }

    @Test func aCancelledProviderSignInGoesBackToTheFirstForm() throws {
        var flow = Page.flow()
        let start = try flow.post(.continueWithProvider("google"))
        try flow.report(.browserURL(URL(string: "https://accounts.example/")!), for: start)
        let complete = try SignInPageFlow.request(flow.browserReturned(now: Page.at(5)), after: "return")
        try flow.report(.failed(.browser(.provider(error: "access_denied", code: nil, description: "The user denied"))), for: complete)
        #expect(flow.step == .password(email: ""))
        #expect(flow.error == .browserCancelled)
    }

    /// The user came back to the page and chose another method: the browser's late return is
    /// refused, and the driver drops its code.
    @Test func aBrowserReturningAfterTheUserMovedOnIsRefused() throws {
        var flow = Page.flow()
        let start = try flow.post(.continueWithProvider("github"))
        try flow.report(.browserURL(URL(string: "https://github.example/")!), for: start)
        flow.show(.choose(.emailCode), at: 10)
        #expect(flow.browserReturned(now: Page.at(11)) == .refused(.notNow))
        #expect(flow.step == .requestCode(.email, address: ""))
    }

    @Test func singleSignOnFindsTheDomainOfAnAddress() throws {
        var flow = Page.flow()
        flow.show(.choose(.singleSignOn))
        flow.show(.continueWithSingleSignOn(domain: "intranet"))
        #expect(flow.error == .malformed(.domain))
        let start = try flow.post(.continueWithSingleSignOn(domain: " Ada@Example.COM "))
        #expect(start.operation == .startBrowserSignIn(.singleSignOn(domain: "example.com")))
        try flow.report(Page.refusal("sso_provider_not_found", status: 404), for: start)
        #expect(flow.error == .unknownSingleSignOnDomain)
        #expect(flow.error?.field == .domain)
        #expect(flow.step == .singleSignOn(domain: "Ada@Example.COM"))

        var settings = Page.everything
        settings.singleSignOnEnabled = false
        var off = Page.flow(settings)
        #expect(off.show(.choose(.singleSignOn)) == .refused(.notOffered))
        #expect(off.show(.continueWithSingleSignOn(domain: "example.com")) == .refused(.notNow))
    }

    @Test func anAnonymousSignInIsOneButton() throws {
        var flow = Page.flow()
        let signIn = try flow.post(.signInAnonymously)
        #expect(signIn.operation == .signIn(.anonymous(metadata: nil)))
        let anonymous = SignInPageAccount(isAnonymous: true)
        try flow.report(.signedIn(anonymous), for: signIn)
        #expect(flow.step == .finished(.signedIn(anonymous)))
        #expect(anonymous.name == nil)
    }
}

/// The transitions the walks above do not pass through: failures of the browser and enrolment
/// calls, and the page with buttons only.
@Suite struct SignInPageFlowEdgeTests {
    @Test func aBrowserSignInThatCannotStartKeepsTheForm() throws {
        var flow = Page.flow()
        let start = try flow.post(.continueWithProvider("github"))
        try flow.report(Page.unreachable, for: start)
        #expect(flow.step == .password(email: ""))
        #expect(flow.error == .unreachable)
        // Choosing another form clears the error.
        flow.show(.choose(.emailCode))
        #expect(flow.error == nil)
    }

    @Test func aFailedSingleSignOnGoesBackToItsForm() throws {
        var flow = Page.flow()
        flow.show(.choose(.singleSignOn))
        let start = try flow.post(.continueWithSingleSignOn(domain: "example.com"))
        try flow.report(.browserURL(URL(string: "https://idp.example.com/saml")!), for: start)
        let complete = try SignInPageFlow.request(flow.browserReturned(now: Page.at(30)), after: "return")
        #expect(complete.operation == .completeBrowserSignIn(.singleSignOn(domain: "example.com")))
        try flow.report(.failed(.browser(.provider(error: "server_error", code: "saml_assertion_no_email", description: "No email in the assertion"))),
                        for: complete, at: 31)
        #expect(flow.step == .singleSignOn(domain: "example.com"))
        #expect(flow.screen(at: 31).errorMessage == "The browser sign-in failed: No email in the assertion")
    }

    @Test func buttonsOnlyProjectsOfferTheirButtons() throws {
        var flow = Page.flow(ProjectSettings(anonymousSignInsEnabled: true, oauthProviders: ["github"]))
        #expect(flow.screen().methods == [.anonymous, .provider("github")])
        #expect(flow.show(.choose(.password)) == .refused(.notOffered))
        #expect(try flow.post(.continueWithProvider("github")).operation == .startBrowserSignIn(.provider("github")))
    }

    @Test func aCaptchaOnThePasswordSignInIsSaidToBeUnsupported() throws {
        var flow = Page.flow()
        #expect(!flow.screen().captchaUnsupported)
        let signIn = try flow.post(.signInWithPassword(email: "ada@example.com", password: "pw"))
        try flow.report(Page.refusal("captcha_failed", message: "captcha protection: request disallowed (no captcha_token found)"), for: signIn)
        #expect(flow.screen().captchaUnsupported)
        flow.show(.choose(.emailCode))
        #expect(flow.screen().captchaUnsupported, "said for the rest of the visit")
    }

    @Test func enrolmentFailuresGoBackToTheOffer() throws {
        var flow = Page.flow(options: .init(offerEnrolment: true))
        try flow.report(.signedIn(Page.account()), for: try flow.post(.signInWithPassword(email: "ada@example.com", password: "pw")))
        let enrol = try flow.post(.enrol(.totp, phone: nil))
        try flow.report(Page.refusal("mfa_totp_enroll_not_enabled", status: 422, message: "MFA enroll is disabled for TOTP"), for: enrol)
        #expect(flow.step == .offerEnrolment)
        #expect(flow.error == .factorNotAvailable)
        let again = try flow.post(.enrol(.phone, phone: "+15551234567"))
        let factor = FactorSummary(id: "66666666-6666-4666-8666-666666666666", type: "phone")
        let challenge = try #require(try flow.report(.enrolled(FactorEnrollment(id: factor.id, type: "phone")), for: again))
        try flow.report(Page.refusal("over_sms_send_rate_limit", status: 429, message: Page.tooSoon(40)), for: challenge)
        #expect(flow.step == .offerEnrolment)
        // The offer has no code field: the wait is what it says.
        #expect(flow.error == .rateLimited(retryAt: Page.at(42)))
    }

    @Test func aFailureOfTheDriversOwnReadsAsTryAgain() throws {
        var flow = Page.flow()
        let signIn = try flow.post(.signInWithPassword(email: "ada@example.com", password: "pw"))
        try flow.report(.failed(.interrupted), for: signIn)
        #expect(flow.screen().errorMessage == "That did not go through. Try again.")
        #expect(flow.step == .password(email: "ada@example.com"))
    }

    @Test func anAccountIsReadFromASession() {
        let session = Session(accessToken: "not-a-jwt", refreshToken: "r", expiresAt: Page.at(3600), receivedAt: Page.t0,
                              user: UserSummary(id: "u", email: "ada@example.com", verifiedFactors: [Page.totp]))
        let account = SignInPageAccount(session: session)
        #expect(account == Page.account(factors: [Page.totp], level: .aal1))
        #expect(account.needsSecondFactor)
    }
}
