@testable import AuthCore
import Foundation
import Testing

/// The sign-in page's second factor: asked for when the user has one and the session lacks it,
/// and offered for enrolment when the page was opened for it.
@Suite struct SignInPageSecondFactorTests {
    let setup = TOTPSetup(uri: "otpauth://totp/p:ada?secret=JBSWY3DPEHPK3PXP", secret: "JBSWY3DPEHPK3PXP", qrCode: "<svg/>")

    /// A flow signed in with a password as `account`; the operation that follows, if any.
    func signedIn(_ account: SignInPageAccount, options: SignInPageFlow.Options = .init()) throws -> (SignInPageFlow, SignInPageRequest?) {
        var flow = Page.flow(options: options)
        let signIn = try flow.post(.signInWithPassword(email: "ada@example.com", password: "pw"))
        let next = try flow.report(.signedIn(account), for: signIn)
        return (flow, next)
    }

    func challenge(_ id: String) -> FactorChallenge { FactorChallenge(id: id, type: "totp", expiresAt: nil) }

    @Test func theOneFactorIsChallengedAtOnceAndItsCodeRaisesTheSession() throws {
        var (flow, next) = try signedIn(Page.account(factors: [Page.totp]))
        let challenge = try #require(next)
        #expect(challenge.operation == .challengeFactor(id: Page.totp.id))
        #expect(flow.show(.submitSecondFactorCode("123456")) == .refused(.busy))
        try flow.report(.challenged(self.challenge("c-1")), for: challenge)
        #expect(flow.step == .secondFactorCode(Page.totp, enrolling: false))

        let wrong = try flow.post(.submitSecondFactorCode("000000"))
        #expect(wrong.operation == .verifyFactor(id: Page.totp.id, challengeID: "c-1", code: "000000"))
        try flow.report(Page.refusal("mfa_verification_failed", status: 422), for: wrong)
        #expect(flow.error == .wrongSecondFactorCode)
        #expect(flow.step == .secondFactorCode(Page.totp, enrolling: false))

        let right = try flow.post(.submitSecondFactorCode("123 456"))
        #expect(right.operation == .verifyFactor(id: Page.totp.id, challengeID: "c-1", code: "123456"))
        let raised = Page.account(factors: [Page.totp], level: .aal2)
        try flow.report(.signedIn(raised), for: right)
        #expect(flow.step == .finished(.signedIn(raised)))
    }

    /// An expired challenge takes no code: a new one is made at once (for an SMS factor, a new
    /// code is sent), and the page says the code came too late.
    @Test func anExpiredChallengeIsReplaced() throws {
        var (flow, next) = try signedIn(Page.account(factors: [Page.sms]))
        try flow.report(.challenged(challenge("c-1")), for: try #require(next))
        let late = try flow.post(.submitSecondFactorCode("123456"), at: 400)
        let renewed = try #require(try flow.report(Page.refusal("mfa_challenge_expired", status: 422), for: late, at: 401))
        #expect(flow.error == .secondFactorCodeExpired)
        #expect(flow.isBusy)
        #expect(renewed.operation == .challengeFactor(id: Page.sms.id))
        #expect(flow.show(.submitSecondFactorCode("123456"), at: 401) == .refused(.busy))
        try flow.report(.challenged(challenge("c-2")), for: renewed, at: 402)
        #expect(flow.error == .secondFactorCodeExpired, "still shown with the new code's field")
        #expect(try flow.post(.submitSecondFactorCode("654321"), at: 403).operation == .verifyFactor(id: Page.sms.id, challengeID: "c-2", code: "654321"))
    }

    /// "Text me a new code" within GoTrue's minute: refused, and the code the user has still
    /// goes to the challenge it belongs to; another new code waits for the time GoTrue named.
    @Test func aNewSMSCodeAskedForTooSoonKeepsTheCodeTheUserHas() throws {
        var (flow, next) = try signedIn(Page.account(factors: [Page.sms]))
        try flow.report(.challenged(challenge("c-1")), for: try #require(next))
        let again = try flow.post(.chooseFactor(id: Page.sms.id), at: 20)
        #expect(again.operation == .challengeFactor(id: Page.sms.id))
        try flow.report(Page.refusal("over_sms_send_rate_limit", status: 429, message: Page.tooSoon(40)), for: again, at: 21)
        #expect(flow.step == .secondFactorCode(Page.sms, enrolling: false))
        #expect(flow.error == .codeSentRecently(retryAt: Page.at(61)))
        #expect(flow.show(.chooseFactor(id: Page.sms.id), at: 30) == .next(nil), "held back: nothing is sent")
        #expect(try flow.post(.submitSecondFactorCode("123456"), at: 31).operation
            == .verifyFactor(id: Page.sms.id, challengeID: "c-1", code: "123456"))
    }

    /// GoTrue limits challenges per phone factor: after an SMS code asked for too soon, the
    /// authenticator app is not held back, and the phone is, with the wait as its words.
    @Test func anSMSLimitHoldsBackThatFactorOnly() throws {
        var (flow, _) = try signedIn(Page.account(factors: [Page.totp, Page.sms]))
        try flow.report(.challenged(challenge("c-1")), for: try flow.post(.chooseFactor(id: Page.sms.id), at: 10), at: 11)
        let again = try flow.post(.chooseFactor(id: Page.sms.id), at: 20)
        try flow.report(Page.refusal("over_sms_send_rate_limit", status: 429, message: Page.tooSoon(40)), for: again, at: 21)
        #expect(flow.show(.chooseAnotherFactor, at: 22) == .next(nil))
        #expect(flow.show(.chooseFactor(id: Page.sms.id), at: 23) == .next(nil), "held back: nothing is sent")
        #expect(flow.error == .rateLimited(retryAt: Page.at(61)), "no code field here: the wait")
        #expect(try flow.post(.chooseFactor(id: Page.totp.id), at: 24).operation == .challengeFactor(id: Page.totp.id))
    }

    /// A failed first challenge leaves no code to enter: back to the factors.
    @Test func aFailedFirstChallengeGoesBackToTheFactors() throws {
        var (flow, next) = try signedIn(Page.account(factors: [Page.sms]))
        try flow.report(Page.refusal("over_sms_send_rate_limit", status: 429, message: "SMS rate limit exceeded"), for: try #require(next))
        #expect(flow.step == .chooseSecondFactor([Page.sms]))
        #expect(flow.error == .cannotSendNow(.phone, retryAt: nil))
    }

    /// From a factor's code, back to the list to use another; not with one factor, nor while adding one.
    @Test func theUserCanGoBackToTheirOtherFactors() throws {
        var (flow, _) = try signedIn(Page.account(factors: [Page.totp, Page.sms]))
        let challenge = try flow.post(.chooseFactor(id: Page.sms.id))
        try flow.report(.challenged(self.challenge("c-1")), for: challenge)
        #expect(flow.show(.chooseAnotherFactor) == .next(nil))
        #expect(flow.step == .chooseSecondFactor([Page.totp, Page.sms]))
        #expect(flow.show(.submitSecondFactorCode("123456")) == .refused(.notNow), "the challenge went with its field")
        var (single, next) = try signedIn(Page.account(factors: [Page.totp]))
        try single.report(.challenged(self.challenge("c-2")), for: try #require(next))
        #expect(single.show(.chooseAnotherFactor) == .refused(.notNow))
    }

    @Test func theUserChoosesAmongSeveralFactorsAndAnUnverifiableOneIsLeftOut() throws {
        var (flow, next) = try signedIn(Page.account(factors: [Page.passkey, Page.totp, Page.sms]))
        #expect(next == nil)
        #expect(flow.step == .chooseSecondFactor([Page.totp, Page.sms]))
        #expect(flow.show(.chooseFactor(id: Page.passkey.id)) == .refused(.notOffered))
        #expect(flow.show(.submitSecondFactorCode("123456")) == .refused(.notNow))
        let challenge = try flow.post(.chooseFactor(id: Page.sms.id))
        #expect(challenge.operation == .challengeFactor(id: Page.sms.id))
        try flow.report(Page.unreachable, for: challenge)
        #expect(flow.step == .chooseSecondFactor([Page.totp, Page.sms]), "back to choosing: nothing to verify against")
        #expect(flow.error == .unreachable)

        // From a factor's code field, another factor can be chosen, or the same one challenged
        // again (an SMS factor's code sent again).
        let totp = try flow.post(.chooseFactor(id: Page.totp.id))
        try flow.report(.challenged(self.challenge("c-2")), for: totp)
        #expect(flow.step == .secondFactorCode(Page.totp, enrolling: false))
        #expect(flow.show(.chooseFactor(id: Page.passkey.id)) == .refused(.notOffered))
        let sms = try flow.post(.chooseFactor(id: Page.sms.id))
        try flow.report(.challenged(self.challenge("c-3")), for: sms)
        #expect(flow.step == .secondFactorCode(Page.sms, enrolling: false))
        #expect(try flow.post(.submitSecondFactorCode("123456")).operation == .verifyFactor(id: Page.sms.id, challengeID: "c-3", code: "123456"))

        // Only a passkey, which the page cannot verify: signed in as the session is.
        let (passkeyOnly, none) = try signedIn(Page.account(factors: [Page.passkey]))
        #expect(none == nil)
        #expect(passkeyOnly.step == .finished(.signedIn(Page.account(factors: [Page.passkey]))))
    }

    /// A project hook refusing the factor signs the user out everywhere: nothing to go on with.
    @Test func aRejectedSecondFactorEndsTheFlow() throws {
        var (flow, next) = try signedIn(Page.account(factors: [Page.totp]))
        try flow.report(.challenged(challenge("c-1")), for: try #require(next))
        let verify = try flow.post(.submitSecondFactorCode("123456"))
        try flow.report(Page.refusal("mfa_verification_rejected", status: 403), for: verify)
        #expect(flow.step == .finished(.failed(.secondFactorRejected)))
    }

    /// The page's session was signed out meanwhile (elsewhere, or by the server): nothing to
    /// verify a factor of.
    @Test func aSessionEndedMeanwhileEndsTheFlow() throws {
        let (start, next) = try signedIn(Page.account(factors: [Page.totp]))
        var flow = start
        try flow.report(Page.refusal("session_not_found", status: 403), for: try #require(next))
        #expect(flow.step == .finished(.failed(.sessionEnded)))
        #expect(flow.screen().errorMessage == "You were signed out, or another sign-in took your place, meanwhile. Start again.")
        var replaced = start
        try replaced.report(.failed(.sessionEnded), for: try #require(next))
        #expect(replaced.step == .finished(.failed(.sessionEnded)))
    }

    @Test func cancellingTheSecondFactorSaysWhoStaysSignedIn() throws {
        var (flow, next) = try signedIn(Page.account(factors: [Page.totp]))
        try flow.report(.challenged(challenge("c-1")), for: try #require(next))
        flow.show(.cancel)
        #expect(flow.step == .finished(.cancelled(signedInAs: Page.account(factors: [Page.totp]))))
    }

    /// A recovery code signs in below the user's level: the second factor first, then the new
    /// password (GoTrue changes a password of a user with factors only from an `aal2` session).
    @Test func aRecoveryAsksForTheSecondFactorBeforeTheNewPassword() throws {
        var flow = Page.flow()
        flow.show(.choose(.forgotPassword))
        let send = try flow.post(.forgotPassword(email: "ada@example.com"))
        try flow.report(.accepted, for: send)
        let verify = try flow.post(.submitCode("123456"))
        let challenge = try #require(try flow.report(.signedIn(Page.account(factors: [Page.totp])), for: verify))
        try flow.report(.challenged(self.challenge("c-1")), for: challenge)
        let second = try flow.post(.submitSecondFactorCode("123456"))
        let raised = Page.account(factors: [Page.totp], level: .aal2)
        try flow.report(.signedIn(raised), for: second)
        #expect(flow.step == .newPassword(raised))
        let change = try flow.post(.setNewPassword("new password"))
        try flow.report(.accepted, for: change)
        #expect(flow.step == .finished(.signedIn(raised)))
    }

    // MARK: Enrolment

    @Test func aTOTPFactorIsEnrolledShownAndVerified() throws {
        var (flow, next) = try signedIn(Page.account(), options: .init(offerEnrolment: true))
        #expect(next == nil)
        #expect(flow.step == .offerEnrolment)
        let enrol = try flow.post(.enrol(.totp, phone: nil))
        #expect(enrol.operation == .enrolFactor(FactorEnrollmentRequest(kind: .totp, friendlyName: "Authenticator app, added 2027-01-15 08:00:01 UTC")))
        let factor = FactorSummary(id: "44444444-4444-4444-8444-444444444444", type: "totp")
        let challenge = try #require(try flow.report(.enrolled(FactorEnrollment(id: factor.id, type: "totp", totp: setup)), for: enrol))
        #expect(challenge.operation == .challengeFactor(id: factor.id))
        try flow.report(.challenged(self.challenge("c-1")), for: challenge)
        #expect(flow.step == .enrolTOTP(factor, setup: setup))
        // The page shows the setup; nothing that describes the flow or its screen does.
        for text in [String(describing: flow), String(reflecting: flow), String(describing: flow.screen()), String(reflecting: flow.screen()),
                     String(describing: flow.step)] {
            #expect(!text.contains("JBSWY3DPEHPK3PXP"), "\(text)")
        }
        // Nor does a dump of the step or of the enrolment's outcome, which a driver might log.
        var dumped = ""
        dump(flow.screen(), to: &dumped)
        dump(flow, to: &dumped)
        dump(flow.step, to: &dumped)
        dump(SignInPageOutcome.enrolled(FactorEnrollment(id: factor.id, type: "totp", totp: setup)), to: &dumped)
        #expect(!dumped.contains("JBSWY3DPEHPK3PXP") && !dumped.contains("otpauth") && !dumped.contains("<svg"), "\(dumped)")
        #expect(dumped.contains("TOTPSetup(<redacted>)"), "the dumps reached the setup: \(dumped)")

        let wrong = try flow.post(.submitSecondFactorCode("000000"))
        try flow.report(Page.refusal("mfa_verification_failed", status: 422), for: wrong)
        #expect(flow.step == .enrolTOTP(factor, setup: setup), "the QR code stays until the app has it")
        let right = try flow.post(.submitSecondFactorCode("123456"))
        #expect(right.operation == .verifyFactor(id: factor.id, challengeID: "c-1", code: "123456"))
        let raised = Page.account(factors: [factor], level: .aal2)
        try flow.report(.signedIn(raised), for: right)
        #expect(flow.step == .finished(.signedIn(raised)))
        // The setup went with its step: no call out or challenge still carries it.
        #expect(flow.outstanding == nil && flow.challenge == nil, "the setup went with its step")
    }

    @Test func aPhoneFactorIsEnrolledByItsFirstCode() throws {
        var (flow, _) = try signedIn(Page.account(), options: .init(offerEnrolment: true))
        #expect(flow.show(.addPhoneFactor) == .next(nil))
        #expect(flow.step == .enrolPhone(number: ""))
        #expect(flow.show(.enrol(.totp, phone: nil)) == .refused(.notNow), "the phone's page adds a phone")
        flow.show(.enrol(.phone, phone: "12"))
        #expect(flow.error == .malformed(.phone))
        #expect(flow.step == .enrolPhone(number: "12"), "the number stays, with the problem under it")
        let enrol = try flow.post(.enrol(.phone, phone: "+44 20 7946 0000"))
        #expect(enrol.operation == .enrolFactor(FactorEnrollmentRequest(kind: .phone, friendlyName: "Phone, added 2027-01-15 08:00:01 UTC",
                                                                        phone: "+442079460000")))
        let factor = FactorSummary(id: "55555555-5555-4555-8555-555555555555", type: "phone")
        let challenge = try #require(try flow.report(.enrolled(FactorEnrollment(id: factor.id, type: "phone", phone: "+442079460000")), for: enrol))
        try flow.report(.challenged(self.challenge("c-9")), for: challenge)
        #expect(flow.step == .secondFactorCode(factor, enrolling: true))
    }

    /// Each factor added gets a name of its own (GoTrue refuses a name the user's factors have,
    /// an abandoned one's included): the time, to the second, in UTC.
    @Test func anAddedFactorIsNamedByTheTimeItWasAdded() {
        let cases: [(TimeInterval, String)] = [(0, "1970-01-01 00:00:00"), (-1, "1969-12-31 23:59:59"), (951_782_400, "2000-02-29 00:00:00"),
                                               (4_102_444_799, "2099-12-31 23:59:59"), (1_764_288_665.9, "2025-11-28 00:11:05")]
        for (seconds, text) in cases {
            #expect(SignInPageFactorName.utcText(Date(timeIntervalSince1970: seconds)) == text + " UTC")
        }
        #expect(SignInPageFactorName.name(for: .phone, at: Page.t0) == "Phone, added 2027-01-15 08:00:00 UTC")
    }

    @Test func enrolmentIsOfferedOnlyWhenAskedForAndCanBeSkipped() throws {
        let (plain, _) = try signedIn(Page.account())
        #expect(plain.step == .finished(.signedIn(Page.account())))
        var (flow, _) = try signedIn(Page.account(), options: .init(offerEnrolment: true))
        flow.show(.skipEnrolment)
        #expect(flow.step == .finished(.signedIn(Page.account())))

        // A TOTP enrolment answered without its setup cannot be shown.
        var (broken, _) = try signedIn(Page.account(), options: .init(offerEnrolment: true))
        let enrol = try broken.post(.enrol(.totp, phone: nil))
        #expect(try broken.report(.enrolled(FactorEnrollment(id: "x", type: "totp")), for: enrol) == nil)
        #expect(broken.error == .serverFailed)
        #expect(broken.step == .offerEnrolment)
    }
}
