import AuthDaemon
import AuthProtocol
import Foundation
import Testing

/// The `STATUS=` line systemd shows: one per state, with what to do, never a token.
@Suite struct ServiceStatusTextTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let user = SessionStatus.User(id: "9b2f6c1e-0000-4000-8000-000000000001", email: "a@b.c", phone: nil)

    func status(_ state: SessionState, profile: String = "default", expiresIn: Int64? = nil) -> SessionStatus {
        var status = SessionStatus(profile: profile, state: state, server: "https://abcd.supabase.co")
        if state == "signed_in" || state == "refreshing" { status.user = user }
        if let expiresIn { status.expiresAt = 1_800_000_000 + expiresIn }
        return status
    }

    @Test func eachStateHasItsLine() {
        #expect(ServiceStatusText.line(for: [status("signed_in", expiresIn: 3240)], now: now) == "signed in as a@b.c, token valid 54 min")
        #expect(ServiceStatusText.line(for: [status("signed_in", expiresIn: 45)], now: now) == "signed in as a@b.c, token valid 45 s")
        #expect(ServiceStatusText.line(for: [status("signed_in", expiresIn: -5)], now: now) == "signed in as a@b.c, token expired")
        #expect(ServiceStatusText.line(for: [status("refreshing", expiresIn: 30)], now: now) == "signed in as a@b.c, refreshing the token")
        #expect(ServiceStatusText.line(for: [status("signed_out")], now: now) == "sign-in needed: authctl login")
        #expect(ServiceStatusText.line(for: [status("loading")], now: now) == "reading the keyring")
        #expect(ServiceStatusText.line(for: [status("keyring_unavailable")], now: now).hasPrefix("keyring locked or unavailable"))
        var ended = status("signed_out")
        ended.signOutReason = "refresh_token_already_used"
        #expect(ServiceStatusText.line(for: [ended], now: now) == "sign-in needed (session ended: refresh_token_already_used): authctl login")
    }

    @Test(arguments: [("offline", "offline"), ("server_error", "server error"), ("rate_limited", "rate limited by the server"),
                      ("refresh_limited", "holding refreshes back (10 a minute at most)")])
    func aDegradedSessionSaysWhyAndWhenItRetries(_ reason: String, _ words: String) {
        var degraded = status("signed_in", expiresIn: 600)
        degraded.degraded = SessionStatus.Degraded(reason: reason, detail: "x", retryAt: 1_800_000_030)
        #expect(ServiceStatusText.line(for: [degraded], now: now) == "\(words), retrying in 30 s")
    }

    @Test func severalProfilesAreNamedAndToldHowToSignIn() {
        let line = ServiceStatusText.line(for: [status("signed_in", profile: "work", expiresIn: 600), status("signed_out", profile: "home")], now: now)
        #expect(line == "work: signed in as a@b.c, token valid 10 min; home: sign-in needed: authctl --profile home login")
    }
}
