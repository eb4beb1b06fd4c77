import AuthCore
import FoundationEssentials
import SignInPage
import SignInPageBridge
import Testing

/// The bridge between the page and its flow: which page stands for which step, and what each
/// posted form asks the flow for.
@Suite struct SignInPageBridgeTests {
    static let expires = Date(timeIntervalSince1970: 1_800_000_000)
    static let everything = ProjectSettings(emailEnabled: true, phoneEnabled: true, singleSignOnEnabled: true,
                                            anonymousSignInsEnabled: true, oauthProviders: ["github", "newcomer"])
    static let methods = SignInPageMethod.offered(by: everything)
    static let totp = FactorSummary(id: "f-totp", type: "totp")
    static let phone = FactorSummary(id: "f-phone", type: "phone", friendlyName: "Work phone")
    static let account = SignInPageAccount(email: "a@example.com", verifiedFactors: [totp, phone])
    static let page = SignInPagePresenter.Page(project: SignInPageView.Project(name: "Acme", host: "acme.supabase.co"), csrfToken: "t0k")

    static func screen(_ step: SignInPageStep, error: SignInPageError? = nil, busy: Bool = false, captcha: Bool = false,
                       account: SignInPageAccount? = account) -> SignInPageScreen {
        SignInPageScreen(step: step, error: error, errorMessage: error?.message(now: expires), methods: methods, isBusy: busy,
                         account: account, captchaUnsupported: captcha, expiresAt: expires, settings: everything)
    }

    /// A screen of every step the flow has, with the page the user should see for it.
    static let steps: [(SignInPageStep, SignInPageView.Step)] = {
        let shown = SignInPagePresenter.view(of: screen(.methods), on: page).step
        guard case .choose(let methods, _) = shown else { return [] }
        let setup = TOTPSetup(uri: "otpauth://totp/x", secret: "SECRETKEY", qrCode: "data:image/svg+xml;utf-8,<svg/>")
        return [
            (.loading, .waiting(message: "Finding out how you can sign in to Acme…")),
            (.methods, .choose(methods)),
            (.password(email: "a@example.com"), .choose(methods, email: "a@example.com")),
            (.requestCode(.email, address: "a@example.com"), .requestCode(.email, destination: "a@example.com")),
            (.requestCode(.phone, address: "+15551234567"), .requestCode(.sms, destination: "+15551234567")),
            (.enterCode(.email, address: "a@example.com", purpose: .signIn), .enterCode(.email, destination: "a@example.com")),
            (.enterCode(.phone, address: "+15551234567", purpose: .signIn), .enterCode(.sms, destination: "+15551234567")),
            (.enterCode(.email, address: "a@example.com", purpose: .confirmSignUp), .checkInbox(email: "a@example.com")),
            (.enterCode(.phone, address: "+15551234567", purpose: .confirmSignUp), .enterCode(.sms, destination: "+15551234567")),
            (.enterCode(.email, address: "a@example.com", purpose: .recovery), .recoveryCode(email: "a@example.com")),
            (.signUp(email: "a@example.com"), .signUp(email: "a@example.com")),
            (.forgotPassword(email: "a@example.com"), .forgotPassword(email: "a@example.com")),
            (.singleSignOn(domain: "example.com"), .ssoDomain(domain: "example.com")),
            (.atProvider(.provider("github"), url: URL(string: "https://github.com/login/oauth/authorize?x=1")!),
             .leaving(to: "https://github.com/login/oauth/authorize?x=1", name: "GitHub")),
            (.atProvider(.singleSignOn(domain: "example.com"), url: URL(string: "https://idp.example.com/saml")!),
             .leaving(to: "https://idp.example.com/saml", name: "your organisation's sign-in page")),
            (.newPassword(account), .newPassword(email: "a@example.com")),
            (.chooseSecondFactor([totp, phone]),
             .chooseSecondFactor([SignInPageView.Factor(id: "f-totp", label: "Authenticator app"), SignInPageView.Factor(id: "f-phone", label: "Work phone")])),
            (.secondFactorCode(totp, enrolling: false), .secondFactor(.totp, others: true)),
            (.secondFactorCode(phone, enrolling: false), .secondFactor(.phone(number: "your phone"), others: true)),
            (.secondFactorCode(phone, enrolling: true), .secondFactor(.phone(number: "your phone"), enrolling: true)),
            (.offerEnrolment, .offerEnrolment(phone: true)),
            (.enrolPhone(number: "+1 555"), .enrollPhone(number: "+1 555")),
            (.enrolTOTP(totp, setup: setup), .enrollTOTP(qrImage: "data:image/svg+xml;utf-8,<svg/>", secret: "SECRETKEY")),
            (.finished(.signedIn(account)), .signedIn(who: "a@example.com")),
            (.finished(.signedIn(SignInPageAccount(isAnonymous: true))), .signedIn(who: "a new anonymous user")),
            (.finished(.failed(.serverFailed)), .ended(.failed)),
            (.finished(.cancelled(signedInAs: nil)), .ended(.cancelled)),
            (.finished(.cancelled(signedInAs: account)), .ended(.stoppedSignedIn(who: "a@example.com"))),
            (.finished(.expired), .ended(.expired)),
        ]
    }()

    @Test func eachStepOfTheFlowHasItsPage() {
        #expect(Self.steps.count == 29)
        for (step, expected) in Self.steps {
            #expect(SignInPagePresenter.view(of: Self.screen(step), on: Self.page).step == expected, "\(step)")
        }
    }

    @Test func theFirstPageListsWhatTheProjectOffersWithProvidersNamedAsPeopleKnowThem() {
        let view = SignInPagePresenter.view(of: Self.screen(.methods), on: Self.page)
        #expect(view.step == .choose(SignInPageView.Methods(password: true, forgotPassword: true, signUp: true, emailCode: true, smsCode: true,
                                                            sso: true, anonymous: true,
                                                            providers: [SignInPageView.Provider(id: "github", name: "GitHub"),
                                                                        SignInPageView.Provider(id: "newcomer", name: "Newcomer")])))
        #expect(view.project == Self.page.project && view.csrfToken == "t0k" && view.actions == SignInPageView.FormActions())
    }

    @Test func whileAnOperationIsOutThePageWaits() {
        guard case .waiting = SignInPagePresenter.view(of: Self.screen(.password(email: ""), busy: true), on: Self.page).step else {
            Issue.record("a busy flow did not show the waiting page")
            return
        }
    }

    @Test func theOfferToAddAFactorOffersThePhoneOnlyWhereThePhoneIsOffered() {
        var noPhone = Self.screen(.offerEnrolment)
        noPhone.settings?.phoneEnabled = false
        #expect(SignInPagePresenter.view(of: noPhone, on: Self.page).step == .offerEnrolment(phone: false))
    }

    @Test func anotherFactorIsOfferedOnlyToAUserWhoHasOne() {
        let one = SignInPageAccount(email: "a@example.com", verifiedFactors: [Self.totp])
        #expect(SignInPagePresenter.view(of: Self.screen(.secondFactorCode(Self.totp, enrolling: false), account: one), on: Self.page).step
            == .secondFactor(.totp))
        #expect(SignInPagePresenter.view(of: Self.screen(.secondFactorCode(Self.totp, enrolling: true)), on: Self.page).step
            == .secondFactor(.totp, enrolling: true))
    }

    @Test func errorsStandNextToTheFieldThePageHas() {
        let wrong = SignInPagePresenter.view(of: Self.screen(.password(email: "a@example.com"), error: .wrongPassword), on: Self.page)
        #expect(wrong.error == SignInPageView.Problem(SignInPageError.wrongPassword.message(now: Self.expires), field: .password))
        let weak = SignInPagePresenter.view(of: Self.screen(.signUp(email: ""), error: .weakPassword(detail: "Too short")), on: Self.page)
        #expect(weak.error?.field == .newPassword)
        let same = SignInPagePresenter.view(of: Self.screen(.newPassword(Self.account), error: .samePassword), on: Self.page)
        #expect(same.error?.field == .newPassword)
        let general = SignInPagePresenter.view(of: Self.screen(.methods, error: .unreachable), on: Self.page)
        #expect(general.error?.field == nil && general.error?.message == SignInPageError.unreachable.message(now: Self.expires))
        let captcha = SignInPagePresenter.view(of: Self.screen(.methods, captcha: true), on: Self.page)
        #expect(captcha.error?.message.contains("CAPTCHA") == true)
    }

    /// What a user would type into a field.
    static func typed(_ field: String) -> String {
        switch field {
        case "email": return "a@example.com"
        case "phone": return "+15551234567"
        case "domain": return "example.com"
        case "code": return "123456"
        default: return "correct horse"
        }
    }

    @Test func everyFormOnEveryPageMeansSomethingToTheFlow() {
        var formsSeen = 0
        var pathsSeen: Set<String> = []
        for (step, _) in Self.steps {
            let page = Self.page
            let html = SignInPageRenderer.render(SignInPagePresenter.view(of: Self.screen(step), on: page))
            for form in RenderedForm.read(html) {
                formsSeen += 1
                pathsSeen.insert(form.action)
                #expect(form.hidden["csrf_token"] == "t0k", "\(step): \(form)")
                var fields = form.hidden
                for field in form.visible { fields[field] = Self.typed(field) }
                let meaning = SignInPageFormReader.meaning(path: form.action, form: SignInPageForm(fields), step: step, actions: page.actions)
                #expect(meaning != .nothing, "on \(step), the form \(form) does nothing")
            }
        }
        #expect(formsSeen > 40)
        #expect(pathsSeen == SignInPageView.FormActions().all, "never shown: \(SignInPageView.FormActions().all.subtracting(pathsSeen))")
    }

    @Test func formsReadAsTheFlowsActions() {
        let actions = SignInPageView.FormActions()
        func meaning(_ path: String, _ fields: [String: String], on step: SignInPageStep = .methods) -> SignInPageFormMeaning {
            SignInPageFormReader.meaning(path: path, form: SignInPageForm(fields), step: step, actions: actions)
        }
        #expect(meaning(actions.signIn, ["email": "a@example.com", "password": "pw"]) == .action(.signInWithPassword(email: "a@example.com", password: "pw")))
        #expect(meaning(actions.signIn, [:]) == .action(.signInWithPassword(email: "", password: "")))
        #expect(meaning(actions.signUp, ["email": "a@example.com", "new_password": "pw"]) == .action(.signUp(email: "a@example.com", password: "pw")))
        #expect(meaning(actions.requestCode, ["phone": "+15551234567"]) == .action(.requestCode(address: "+15551234567")))
        #expect(meaning(actions.requestCode, ["email": "a@example.com"]) == .action(.requestCode(address: "a@example.com")))
        #expect(meaning(actions.verifyCode, ["code": "123456"]) == .action(.submitCode("123456")))
        #expect(meaning(actions.provider, ["provider": "github"]) == .action(.continueWithProvider("github")))
        #expect(meaning(actions.sso, ["domain": "example.com"]) == .action(.continueWithSingleSignOn(domain: "example.com")))
        #expect(meaning(actions.forgotPassword, ["email": "a@example.com"]) == .action(.forgotPassword(email: "a@example.com")))
        #expect(meaning(actions.resetPassword, ["new_password": "pw"]) == .action(.setNewPassword("pw")))
        #expect(meaning(actions.verifyFactor, ["code": "123456"]) == .action(.submitSecondFactorCode("123456")))
        #expect(meaning(actions.anonymous, [:]) == .action(.signInAnonymously))
        #expect(meaning(actions.chooseFactor, ["factor": "f-phone"]) == .action(.chooseFactor(id: "f-phone")))
        #expect(meaning(actions.enroll, ["factor_type": "totp"]) == .action(.enrol(.totp, phone: nil)))
        #expect(meaning(actions.enroll, ["factor_type": "phone", "phone": "+15551234567"]) == .action(.enrol(.phone, phone: "+15551234567")))
        #expect(meaning(actions.enroll, ["factor_type": "webauthn"]) == .nothing)
        #expect(meaning(actions.skipEnrolment, [:]) == .action(.skipEnrolment))
        #expect(meaning(actions.cancel, [:]) == .action(.cancel))
        #expect(meaning("/elsewhere", [:]) == .nothing)
    }

    @Test func sendingAgainDependsOnTheStep() {
        let actions = SignInPageView.FormActions()
        func resend(_ step: SignInPageStep) -> SignInPageFormMeaning {
            SignInPageFormReader.meaning(path: actions.resendCode, form: SignInPageForm(), step: step, actions: actions)
        }
        #expect(resend(.enterCode(.email, address: "a@example.com", purpose: .confirmSignUp)) == .action(.sendCodeAgain))
        #expect(resend(.secondFactorCode(Self.phone, enrolling: false)) == .action(.chooseFactor(id: "f-phone")))
        #expect(resend(.password(email: "")) == .nothing)
    }

    @Test func secondaryActionsChooseFormsTheFirstPageOrANewStart() {
        let actions = SignInPageView.FormActions()
        func go(_ to: String, on step: SignInPageStep = .signUp(email: "")) -> SignInPageFormMeaning {
            SignInPageFormReader.meaning(path: actions.go, form: SignInPageForm(["to": to]), step: step, actions: actions)
        }
        #expect(go("choose") == .action(.chooseAnother))
        #expect(go("choose", on: .finished(.failed(.serverFailed))) == .startAgain)
        #expect(go("sign-up") == .action(.choose(.signUp)))
        #expect(go("email-code") == .action(.choose(.emailCode)))
        #expect(go("sms-code") == .action(.choose(.phoneCode)))
        #expect(go("sso") == .action(.choose(.singleSignOn)))
        #expect(go("forgot-password") == .action(.choose(.forgotPassword)))
        #expect(go("enroll-phone", on: .offerEnrolment) == .action(.addPhoneFactor))
        #expect(go("choose-factor", on: .secondFactorCode(Self.totp, enrolling: false)) == .action(.chooseAnotherFactor))
        #expect(go("elsewhere") == .nothing)
    }
}
