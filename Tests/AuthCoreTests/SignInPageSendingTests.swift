import AuthCore
import Foundation
import Testing

/// Codes sent, and GoTrue's two meanings of "too many": a code to this address moments ago (it
/// still works, and another waits for the time GoTrue names), or a project that may send no more
/// for now (nothing was sent).
@Suite struct SignInPageSendingTests {
    @Test func aCodeSentMomentsAgoIsAskedForAndAnotherWaits() throws {
        var flow = Page.flow()
        flow.show(.choose(.emailCode))
        let send = try flow.post(.requestCode(address: "ada@example.com"))
        // GoTrue says when in words only: no Retry-After.
        try flow.report(Page.refusal("over_email_send_rate_limit", status: 429, message: Page.tooSoon(30)), for: send, at: 2)
        #expect(flow.step == .enterCode(.email, address: "ada@example.com", purpose: .signIn))
        #expect(flow.screen(at: 2).errorMessage == "A code was sent moments ago: use that one. You can send another in 30 seconds.")
        #expect(flow.show(.sendCodeAgain, at: 12) == .next(nil), "held back: nothing is sent")
        #expect(flow.screen(at: 12).errorMessage == "A code was sent moments ago: use that one. You can send another in 20 seconds.")
        // Verifying is another kind of call: not held back.
        #expect(try flow.post(.submitCode("123456"), at: 13).operation == .signIn(.oneTimeCode(.email("ada@example.com"), code: "123456", type: .email)))
        var later = Page.flow()
        later.show(.choose(.emailCode))
        let first = try later.post(.requestCode(address: "ada@example.com"))
        try later.report(Page.refusal("over_email_send_rate_limit", status: 429, message: Page.tooSoon(30)), for: first, at: 2)
        #expect(try later.post(.sendCodeAgain, at: 32).operation == .sendCode(.signIn(.email("ada@example.com"), createUser: true)))
    }

    /// The same code, when the project's quota of emails or texts is used up, means that nothing
    /// was sent: the form stays, with no code field to wait at.
    @Test func aProjectThatCannotSendMoreSaysSoAndKeepsTheForm() throws {
        var flow = Page.flow()
        flow.show(.choose(.emailCode))
        let send = try flow.post(.requestCode(address: "ada@example.com"))
        try flow.report(Page.refusal("over_email_send_rate_limit", status: 429, message: "email rate limit exceeded"), for: send, at: 2)
        #expect(flow.step == .requestCode(.email, address: "ada@example.com"))
        #expect(flow.error == .cannotSendNow(.email, retryAt: nil))
        #expect(flow.screen(at: 2).errorMessage
            == "This project cannot send more emails right now, so nothing was sent. Wait a little, then try again. Or sign in another way.")
        flow.show(.choose(.phoneCode))
        let text = try flow.post(.requestCode(address: "+15551234567"), at: 3)
        try flow.report(Page.refusal("over_sms_send_rate_limit", status: 429, message: "SMS rate limit exceeded"), for: text, at: 4)
        #expect(flow.step == .requestCode(.phone, address: "+15551234567"))
        #expect(flow.error == .cannotSendNow(.phone, retryAt: nil))
    }

    /// GoTrue before 2.160 worded a code asked for again too soon another way.
    @Test func anOlderServersWordsForTooSoonAreACodeSentMomentsAgo() throws {
        var flow = Page.flow()
        flow.show(.choose(.emailCode))
        let send = try flow.post(.requestCode(address: "ada@example.com"))
        try flow.report(Page.refusal("over_email_send_rate_limit", status: 429,
                                     message: "For security purposes, you can only request this once every 60 seconds"), for: send, at: 2)
        #expect(flow.step == .enterCode(.email, address: "ada@example.com", purpose: .signIn))
        #expect(flow.error == .codeSentRecently(retryAt: Page.at(62)))
    }

    /// A sign-up whose confirmation went out moments ago (the account is there): its code confirms it.
    @Test func aSignUpWhoseConfirmationWentOutMomentsAgoAsksForItsCode() throws {
        var flow = Page.flow()
        flow.show(.choose(.signUp))
        let signUp = try flow.post(.signUp(email: "ada@example.com", password: "correct horse"))
        try flow.report(Page.refusal("over_email_send_rate_limit", status: 429, message: Page.tooSoon(50)), for: signUp, at: 2)
        #expect(flow.step == .enterCode(.email, address: "ada@example.com", purpose: .confirmSignUp))
        #expect(flow.error == .codeSentRecently(retryAt: Page.at(52)))
    }
}
