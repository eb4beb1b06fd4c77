import AuthProtocol
import Foundation
import Testing

/// Every method has a pinned request and result, and every event name a pinned notification:
/// a method or event added without its fixtures fails here.
@Suite struct ProtocolCoverageTests {
    /// For each method: its request fixture and the fixture of its answer.
    static let methodFixtures: [String: (request: String, result: String)] = [
        Methods.Hello.name: ("request-hello", "result-hello"),
        Methods.Status.name: ("request-status", "result-status"),
        Methods.Token.name: ("request-token", "result-token"),
        Methods.SignInWithPassword.name: ("request-sign-in", "result-status"),
        Methods.SignOut.name: ("request-sign-out", "result-sign-out"),
        Methods.Subscribe.name: ("request-subscribe", "result-subscribe"),
        Methods.CheckServer.name: ("request-check-server", "result-check-server"),
        Methods.SignUp.name: ("request-sign-up", "result-sign-up"),
        Methods.SendCode.name: ("request-send-code", "result-send-code"),
        Methods.VerifyCode.name: ("request-verify-code", "result-status"),
        Methods.SignInWithIdToken.name: ("request-sign-in-with-id-token", "result-status"),
        Methods.MakeNonce.name: ("request-make-nonce", "result-make-nonce"),
        Methods.OAuthBegin.name: ("request-oauth-begin", "result-oauth-begin"),
        Methods.OAuthComplete.name: ("request-oauth-complete", "result-status"),
        Methods.OAuthWait.name: ("request-oauth-wait", "result-status"),
        Methods.GetUser.name: ("request-user-get", "result-user"),
        Methods.UpdateUser.name: ("request-user-update", "result-user"),
        Methods.Reauthenticate.name: ("request-user-reauthenticate", "result-user-reauthenticate"),
        Methods.Claims.name: ("request-claims", "result-claims"),
        Methods.ListApps.name: ("request-apps-list", "result-apps-list"),
        Methods.DecideApp.name: ("request-apps-decide", "result-apps-decide"),
        Methods.SetDefaultProfile.name: ("request-profiles-set-default", "result-profiles-set-default"),
        Methods.EnrollFactor.name: ("request-mfa-enroll", "result-mfa-enroll"),
        Methods.ChallengeFactor.name: ("request-mfa-challenge", "result-mfa-challenge"),
        Methods.VerifyFactor.name: ("request-mfa-verify", "result-status-aal2"),
        Methods.UnenrollFactor.name: ("request-mfa-unenroll", "result-mfa-unenroll"),
        Methods.ListFactors.name: ("request-mfa-factors", "result-mfa-factors"),
        Methods.SignInAnonymously.name: ("request-sign-in-anonymously", "result-status-anonymous"),
        Methods.SignInWithRefreshToken.name: ("request-sign-in-with-refresh-token", "result-status"),
        Methods.Resend.name: ("request-resend", "result-send-code"),
        Methods.ListIdentities.name: ("request-identities-list", "result-identities-list"),
        Methods.LinkIdentity.name: ("request-identities-link", "result-oauth-begin"),
        Methods.UnlinkIdentity.name: ("request-identities-unlink", "result-identities-unlink"),
        Methods.SingleSignOnBegin.name: ("request-sso-begin", "result-oauth-begin"),
        Methods.BeginInteractiveSignIn.name: ("request-interactive-sign-in-begin", "result-interactive-sign-in-begin"),
        Methods.WaitForInteractiveSignIn.name: ("request-interactive-sign-in-wait", "result-status"),
        Methods.CancelInteractiveSignIn.name: ("request-interactive-sign-in-cancel", "result-interactive-sign-in-cancel"),
    ]

    /// Every event name the daemon sends, and its fixture.
    static let eventFixtures: [String: String] = [
        "INITIAL_SESSION": "event-initial-session", "SIGNED_IN": "event-signed-in", "SIGNED_OUT": "event-signed-out",
        "TOKEN_REFRESHED": "event-token-refreshed", "USER_UPDATED": "event-user-updated", "PASSWORD_RECOVERY": "event-password-recovery",
        "REFRESHING": "event-refreshing", "REFRESH_FAILING": "event-refresh-failing",
        "KEYRING_UNAVAILABLE": "event-keyring-unavailable", "KEYRING_AVAILABLE": "event-keyring-available",
        "MFA_CHALLENGE_VERIFIED": "event-mfa-challenge-verified", "INTERACTIVE_SIGN_IN_ENDED": "event-interactive-sign-in-ended",
    ]

    @Test func everyMethodHasARequestAndAResultFixture() throws {
        #expect(Set(Self.methodFixtures.keys) == Set(Methods.allNames))
        for (method, fixtures) in Self.methodFixtures {
            let request = try JSONSerialization.jsonObject(with: try WireFormatTests.fixture(fixtures.request)) as? [String: Any]
            #expect(request?["method"] as? String == method, "\(fixtures.request)")
            #expect(request?["params"] is [String: Any], "\(fixtures.request)")
            let result = try JSONSerialization.jsonObject(with: try WireFormatTests.fixture(fixtures.result)) as? [String: Any]
            #expect(result?["result"] != nil, "\(fixtures.result)")
        }
    }

    /// Every event name the wire contract declares (`public static let … : AuthEventName = "…"`
    /// in AuthProtocol), read from its source: an event added there without a fixture fails.
    static func declaredEventNames() throws -> Set<String> {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/AuthProtocol")
        var names = Set<String>()
        let declaration = /static let \w+: AuthEventName = "([A-Z_]+)"/
        for file in try FileManager.default.contentsOfDirectory(atPath: sources.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: declaration) { names.insert(String(match.1)) }
        }
        return names
    }

    @Test func everyEventNameHasAFixture() throws {
        let declared = try Self.declaredEventNames()
        #expect(declared.contains("SIGNED_IN") && declared.count >= 10, "the declarations were not found: \(declared)")
        #expect(Set(Self.eventFixtures.keys) == declared)
        for (name, fixture) in Self.eventFixtures {
            let event = try JSONDecoder().decode(Notification.self, from: try WireFormatTests.fixture(fixture))
            #expect(event.method == AuthEventMessage.method && event.params.event.rawValue == name, "\(fixture)")
        }
    }

    let user = SessionStatus.User(id: "9b2f6c1e-0000-4000-8000-000000000001", email: "a@example.com", phone: nil)
    let server = "https://abcd.supabase.co"

    @Test func statusAndTheRemainingRequestsBothWays() throws {
        let pins = AccountWireFormatTests()
        try pins.pin(request: Methods.Status.name, ProfileParameters(profile: "work"), id: 1, "request-status")
        let status = SessionStatus(profile: "work", state: "signed_in", user: user, expiresAt: 1_800_003_600,
                                   degraded: .init(reason: "offline", detail: "cannot reach \(server)/auth/v1: connection refused", retryAt: 1_800_003_300),
                                   server: server)
        try pins.pin(result: status, id: 1, "result-status")
        try pins.pin(request: Methods.MakeNonce.name, ProfileParameters(), id: 24, "request-make-nonce")
        try pins.pin(request: Methods.OAuthWait.name, Methods.OAuthWait.Parameters(flowID: "Qm9vdA"), id: 28, "request-oauth-wait")
        try pins.pin(request: Methods.GetUser.name, ProfileParameters(profile: "work"), id: 29, "request-user-get")
    }

    @Test func theRemainingEventsBothWays() throws {
        let signedIn = SessionStatus(profile: "default", state: "signed_in", user: user, expiresAt: 1_800_003_600, server: server)
        var refreshed = signedIn
        refreshed.expiresAt = 1_800_007_200
        var refreshing = signedIn
        refreshing.state = "refreshing"
        let signedOut = SessionStatus(profile: "default", state: "signed_out", signOutReason: "refresh_token_revoked", server: server)
        let locked = SessionStatus(profile: "default", state: "keyring_unavailable", keyring: "unavailable",
                                   keyringDetail: "the keyring is locked: unlock it (log in to the desktop, or 'gnome-keyring-daemon --unlock')", server: server)
        let cases: [(String, AuthEventMessage)] = [
            ("event-signed-out", AuthEventMessage(event: "SIGNED_OUT", profile: "default", status: signedOut, reason: "refresh_token_revoked")),
            ("event-token-refreshed", AuthEventMessage(event: "TOKEN_REFRESHED", profile: "default", status: refreshed)),
            ("event-user-updated", AuthEventMessage(event: "USER_UPDATED", profile: "default", status: signedIn)),
            ("event-password-recovery", AuthEventMessage(event: "PASSWORD_RECOVERY", profile: "default", status: signedIn)),
            ("event-refreshing", AuthEventMessage(event: "REFRESHING", profile: "default", status: refreshing)),
            ("event-keyring-unavailable", AuthEventMessage(event: "KEYRING_UNAVAILABLE", profile: "default", status: locked)),
            ("event-keyring-available", AuthEventMessage(event: "KEYRING_AVAILABLE", profile: "default", status: signedIn)),
        ]
        for (fixture, message) in cases {
            let encoded = try RPCCodec.encodeNotification(RPCNotification(method: AuthEventMessage.method, params: message))
            #expect(WireFormatTests.line(encoded) == (try WireFormatTests.fixture(fixture)), "\(fixture)")
            #expect(try JSONDecoder().decode(Notification.self, from: try WireFormatTests.fixture(fixture)).params == message, "\(fixture)")
        }
    }

    struct Notification: Decodable { var method: String; var params: AuthEventMessage }
}
