import AuthProtocol
import Foundation
import Testing

/// The second-factor methods, the token request's `aal`, and the events and errors they bring,
/// pinned both ways like the other methods.
@Suite struct SecondFactorWireFormatTests {
    let pins = AccountWireFormatTests()
    let factor = "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0", challenge = "c0ffee00-1111-4222-8333-444455556666"
    let user = SessionStatus.User(id: "9b2f6c1e-0000-4000-8000-000000000001", email: "a@example.com", phone: nil)
    let server = "https://abcd.supabase.co"

    @Test func enrollingATOTPAppAndAPhone() throws {
        try pins.pin(request: Methods.EnrollFactor.name, Methods.EnrollFactor.Parameters(profile: "work", factorType: "totp", friendlyName: "phone app"),
                     id: 40, "request-mfa-enroll")
        let secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
        let totp = Methods.EnrollFactor.TOTP(
            uri: "otpauth://totp/abcd.supabase.co:a@example.com?algorithm=SHA1&digits=6&issuer=abcd.supabase.co&period=30&secret=\(secret)",
            secret: secret, qrCode: #"<svg xmlns="http://www.w3.org/2000/svg"></svg>"#)
        try pins.pin(result: Methods.EnrollFactor.Result(profile: "work", factorID: factor, type: "totp", friendlyName: "phone app", totp: totp),
                     id: 40, "result-mfa-enroll")
        try pins.pin(request: Methods.EnrollFactor.name, Methods.EnrollFactor.Parameters(factorType: "phone", phone: "+15551234567"),
                     id: 41, "request-mfa-enroll-phone")
    }

    @Test func challengingVerifyingAndRemoving() throws {
        try pins.pin(request: Methods.ChallengeFactor.name, Methods.ChallengeFactor.Parameters(factorID: factor, channel: "sms"), id: 42, "request-mfa-challenge")
        try pins.pin(result: Methods.ChallengeFactor.Result(factorID: factor, challengeID: challenge, type: "phone", expiresAt: 1_800_000_300),
                     id: 42, "result-mfa-challenge")
        try pins.pin(request: Methods.VerifyFactor.name, Methods.VerifyFactor.Parameters(profile: "work", factorID: factor, code: "123456"),
                     id: 43, "request-mfa-verify")
        let raised = SessionStatus(profile: "work", state: "signed_in", user: user, expiresAt: 1_800_003_600, server: server,
                                   aal: "aal2", nextAal: "aal2", amr: ["totp", "password"])
        try pins.pin(result: raised, id: 46, "result-status-aal2")
        try pins.pin(request: Methods.UnenrollFactor.name, Methods.UnenrollFactor.Parameters(factorID: factor), id: 44, "request-mfa-unenroll")
        try pins.pin(result: Methods.UnenrollFactor.Result(profile: "default", factorID: factor), id: 44, "result-mfa-unenroll")
    }

    @Test func listingFactorsWithTheLevels() throws {
        try pins.pin(request: Methods.ListFactors.name, ProfileParameters(profile: "work"), id: 45, "request-mfa-factors")
        let listed = Methods.ListFactors.Result(profile: "work", factors: [.init(id: factor, type: "totp", friendlyName: "phone app", status: "verified",
                                                                                 createdAt: "2027-01-15T08:00:00Z")],
                                                aal: "aal1", nextAal: "aal2")
        try pins.pin(result: listed, id: 45, "result-mfa-factors")
    }

    @Test func aTokenRequestThatAsksForAAL2AndItsRefusal() throws {
        try pins.pin(request: Methods.Token.name, Methods.Token.Parameters(minValidity: 60, aal: "aal2"), id: 47, "request-token-aal2")
        let fixture = try WireFormatTests.fixture("error-mfa-required")
        let error = try #require(try JSONDecoder().decode(RPCResponse<Methods.Token.Result>.self, from: fixture).error)
        #expect(error.reason == .mfaRequired && error.code == RPCErrorObject.applicationErrorCode)
        #expect(WireFormatTests.line(RPCCodec.encodeError(error, id: .number(47))) == fixture)
        // The hand-written writer writes `aal` as the general encoder does, and its narrow reader
        // reads it as the general decoder does.
        let written = try #require(Methods.Token.writeRequest(.init(minValidity: 60, aal: "aal2"), id: .number(47)))
        #expect(WireFormatTests.line(Data(written)) == (try WireFormatTests.fixture("request-token-aal2")))
        let withProfile = TokenParameters(profile: "work", minValidity: 5, aal: "aal1")
        #expect(Data(TokenRequestLine(id: .number(1), parameters: withProfile).encoded)
                == (try RPCCodec.encodeRequest(method: Methods.Token.name, params: withProfile, id: .number(1))))
        let read = try #require(TokenRequestLine(Array(try WireFormatTests.fixture("request-token-aal2"))))
        #expect(read.id == .number(47))
        #expect(read.parameters == (try RPCCodec.decodeParams(Methods.Token.Parameters.self, from: try WireFormatTests.fixture("request-token-aal2"))))
        #expect(read.parameters.aal == "aal2")
        #expect(throws: RPCErrorObject.self) { try Methods.Token.Parameters(aal: "aal3").validate() }
    }

    @Test func theVerifiedEventAndTheSignOutThatAsksForASecondFactor() throws {
        let raised = SessionStatus(profile: "default", state: "signed_in", user: user, expiresAt: 1_800_003_600, server: server,
                                   aal: "aal2", nextAal: "aal2", amr: ["totp", "password"])
        let signedOut = SessionStatus(profile: "default", state: "signed_out", signOutReason: "mfa_verification_required", server: server)
        let cases: [(String, AuthEventMessage)] = [
            ("event-mfa-challenge-verified", AuthEventMessage(event: .mfaChallengeVerified, profile: "default", status: raised)),
            ("event-signed-out-mfa-required", AuthEventMessage(event: .signedOut, profile: "default", status: signedOut,
                                                               reason: "mfa_verification_required")),
        ]
        for (fixture, message) in cases {
            let encoded = try RPCCodec.encodeNotification(RPCNotification(method: AuthEventMessage.method, params: message))
            #expect(WireFormatTests.line(encoded) == (try WireFormatTests.fixture(fixture)), "\(fixture)")
            #expect(try JSONDecoder().decode(ProtocolCoverageTests.Notification.self, from: try WireFormatTests.fixture(fixture)).params == message)
        }
        #expect(!SessionStatus(profile: "default", state: "signed_in", server: server, aal: "aal2", nextAal: "aal2").needsSecondFactor)
        #expect(SessionStatus(profile: "default", state: "signed_in", server: server, aal: "aal1", nextAal: "aal2").needsSecondFactor)
    }
}
