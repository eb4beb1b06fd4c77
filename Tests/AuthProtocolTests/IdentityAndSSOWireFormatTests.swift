import AuthProtocol
import Foundation
import Testing

/// Emailed links, confirmations sent again, linked identities and SSO, pinned both ways.
@Suite struct IdentityAndSSOWireFormatTests {
    let pins = AccountWireFormatTests()
    let loopback = "http://127.0.0.1:41234/callback"

    @Test func aCodeWhoseLinkComesBackAndOneSentAgain() throws {
        try pins.pin(request: Methods.SendCode.name, Methods.SendCode.Parameters(email: "a@example.com", redirectTo: loopback), id: 50, "request-send-code-link")
        try pins.pin(result: Methods.SendCode.Result(sentTo: "a@example.com", channel: "email", flowID: "Qm9vdA"), id: 50, "result-send-code-link")
        try pins.pin(request: Methods.Resend.name, Methods.Resend.Parameters(email: "a@example.com", type: "signup"), id: 51, "request-resend")
    }

    @Test func identitiesListedLinkedAndUnlinked() throws {
        try pins.pin(request: Methods.ListIdentities.name, ProfileParameters(profile: "work"), id: 52, "request-identities-list")
        let listed = Methods.ListIdentities.Result(profile: "work", identities: [
            .init(identityID: "5f0c0000-0000-4000-8000-000000000001", provider: "email", email: "a@example.com",
                  createdAt: "2027-01-15T08:00:00Z", lastSignInAt: "2027-01-15T08:00:00Z"),
            .init(identityID: "5f0c0000-0000-4000-8000-000000000002", provider: "github", email: "a@example.com", createdAt: "2027-02-01T09:30:00Z"),
        ])
        try pins.pin(result: listed, id: 52, "result-identities-list")
        try pins.pin(request: Methods.LinkIdentity.name, Methods.LinkIdentity.Parameters(provider: "github", redirectTo: loopback), id: 53, "request-identities-link")
        try pins.pin(request: Methods.UnlinkIdentity.name, Methods.UnlinkIdentity.Parameters(identityID: "5f0c0000-0000-4000-8000-000000000002"),
                     id: 54, "request-identities-unlink")
        try pins.pin(result: Methods.UnlinkIdentity.Result(profile: "default", identityID: "5f0c0000-0000-4000-8000-000000000002"),
                     id: 54, "result-identities-unlink")
    }

    @Test func anSSOSignInByEmailDomain() throws {
        try pins.pin(request: Methods.SingleSignOnBegin.name, Methods.SingleSignOnBegin.Parameters(domain: "example.com", redirectTo: loopback),
                     id: 55, "request-sso-begin")
    }
}
