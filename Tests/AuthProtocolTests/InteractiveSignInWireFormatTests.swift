import AuthProtocol
import Foundation
import Testing

/// authd's sign-in page on the wire: its three methods and the event that says how a page ended,
/// pinned both ways like the other methods.
@Suite struct InteractiveSignInWireFormatTests {
    let pins = AccountWireFormatTests()
    let server = "https://abcd.supabase.co"

    @Test func aPageBegunOnAFormWithTheAddressFilledIn() throws {
        try pins.pin(request: Methods.BeginInteractiveSignIn.name,
                     Methods.BeginInteractiveSignIn.Parameters(profile: "work", method: "email_code", email: "a@example.com", openBrowser: false),
                     id: 60, "request-interactive-sign-in-begin")
        try pins.pin(result: Methods.BeginInteractiveSignIn.Result(flowID: "Pg4Xq2sL9aWmZt7c", url: "http://127.0.0.1:43117/sign-in/open/3q2-7wEXAMPLE",
                                                                   expiresIn: 600, browserOpened: false),
                     id: 60, "result-interactive-sign-in-begin")
    }

    @Test func aWaitAndACancelNameThePage() throws {
        try pins.pin(request: Methods.WaitForInteractiveSignIn.name, InteractiveSignInParameters(flowID: "Pg4Xq2sL9aWmZt7c"), id: 61,
                     "request-interactive-sign-in-wait")
        try pins.pin(request: Methods.CancelInteractiveSignIn.name, InteractiveSignInParameters(profile: "work", flowID: "Pg4Xq2sL9aWmZt7c"),
                     id: 62, "request-interactive-sign-in-cancel")
        try pins.pin(result: Methods.CancelInteractiveSignIn.Result(cancelled: true), id: 62, "result-interactive-sign-in-cancel")
    }

    @Test func theEventOfAPageThatFailed() throws {
        let message = AuthEventMessage(event: .interactiveSignInEnded, profile: "default",
                                       status: SessionStatus(profile: "default", state: "signed_out", server: server),
                                       reason: InteractiveSignInEnd.failed, flowID: "Pg4Xq2sL9aWmZt7c",
                                       message: "The project's sign-in settings could not be read. Try again in a moment.")
        let encoded = try RPCCodec.encodeNotification(RPCNotification(method: AuthEventMessage.method, params: message))
        #expect(WireFormatTests.line(encoded) == (try WireFormatTests.fixture("event-interactive-sign-in-ended")))
        struct Note: Decodable { var method: String; var params: AuthEventMessage }
        #expect(try JSONDecoder().decode(Note.self, from: try WireFormatTests.fixture("event-interactive-sign-in-ended")).params == message)
    }

    @Test func anOtherEventCarriesNeitherPageNorMessage() throws {
        let line = try RPCCodec.encodeNotification(RPCNotification(method: AuthEventMessage.method, params: AuthEventMessage(
            event: .signedIn, profile: "default", status: SessionStatus(profile: "default", state: "signed_in", server: server))))
        let text = String(decoding: line, as: UTF8.self)
        #expect(!text.contains("flow_id") && !text.contains("\"message\""), "\(text)")
    }
}
