import AuthTestSupport
import Foundation
import Testing

/// An anonymous user made permanent (an email given, an email change confirmed, an identity
/// linked) while the development server holds every refresh grant back: the first token after
/// the command already says so, and `USER_UPDATED` comes no earlier than that token.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct AnonymousConversionTests {
    /// How long the server holds each refresh grant back: long enough that a token served before
    /// the refresh is stored would be the anonymous one every time.
    static let refreshDelay = 1.5

    /// The claims of the token `authctl token` prints now.
    static func tokenClaims(_ stack: Stack) throws -> [String: Any] {
        let token = try stack.authctl(["token"])
        #expect(token.status == 0, "\(token.stderr)")
        return claims(of: token.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Signs in anonymously and checks the token says so.
    static func signInAnonymously(_ stack: Stack) throws {
        let login = try stack.authctl(["login", "--anonymous"])
        #expect(login.status == 0, "\(login.stderr)")
        #expect(try tokenClaims(stack)["is_anonymous"] as? Bool == true)
    }

    @Test func anEmailGivenIsInTheFirstTokenAfterTheAnswer() async throws {
        try await Stack.running("anonymous-email-slow", lifetime: 3600) { stack in
            let daemon = try stack.startDaemon()
            defer { daemon.stop() }
            try Self.signInAnonymously(stack)
            let watcher = try stack.watch(["--json"])
            defer { watcher.stop() }
            #expect(watcher.waitForOutput { $0.contains("INITIAL_SESSION") })
            try stack.injectRefreshFault(#"{"delay":\#(Self.refreshDelay)}"#)

            let email = "kept-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let started = Date()
            let update = try stack.authctl(["user", "update", "--email", email])
            #expect(update.status == 0, "\(update.stderr)")
            #expect(Date().timeIntervalSince(started) >= Self.refreshDelay - 0.1, "answered before the refresh came back")
            // The very first token after the answer: no `is_anonymous: true`.
            #expect(try Self.tokenClaims(stack)["is_anonymous"] as? Bool != true)
            #expect(try Self.tokenClaims(stack)["email"] as? String == email)

            // USER_UPDATED comes with the new token, not before it.
            #expect(watcher.waitForOutput { $0.contains("USER_UPDATED") })
            let names = Stack.events(watcher).compactMap { $0["event"] as? String }
            let refreshed = try #require(names.lastIndex(of: "TOKEN_REFRESHED"), "\(names)")
            #expect(names.firstIndex(of: "USER_UPDATED").map { $0 > refreshed } == true, "\(names)")
        }
    }

    @Test func aConfirmedEmailChangeIsInTheFirstTokenAfterTheAnswer() async throws {
        try await Stack.running("anonymous-email-change", lifetime: 3600) { stack in
            let daemon = try stack.startDaemon()
            defer { daemon.stop() }
            try Self.signInAnonymously(stack)
            try stack.setConfirmEmail(true)
            try stack.injectRefreshFault(#"{"delay":\#(Self.refreshDelay)}"#)
            let email = "confirmed-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let update = try stack.authctl(["user", "update", "--email", email])
            #expect(update.status == 0 && update.stderr.contains("authctl verify --type email_change"), "\(update.stderr)")
            #expect(try Self.tokenClaims(stack)["is_anonymous"] as? Bool == true, "not confirmed yet")

            let code = try stack.outboxCode(to: email, type: "email_change")
            let verify = try stack.authctl(["verify", "--type", "email_change", "--email", email], input: code + "\n")
            #expect(verify.status == 0, "\(verify.stderr)")
            #expect(try Self.tokenClaims(stack)["is_anonymous"] as? Bool != true)
        }
    }

    @Test func aLinkedIdentityIsInTheFirstTokenAfterTheAnswer() async throws {
        try await Stack.running("anonymous-link", lifetime: 3600) { stack in
            let daemon = try stack.startDaemon()
            defer { daemon.stop() }
            try Self.signInAnonymously(stack)
            try stack.injectRefreshFault(#"{"delay":\#(Self.refreshDelay)}"#)
            var environment = stack.environment
            environment["BROWSER"] = try stack.script("browser-follow", "exec curl -sSL -o /dev/null \"$1\"")
            let linked = try stack.authctl(["identities", "link", "github"], environment: environment)
            #expect(linked.status == 0, "\(linked.stderr)")
            #expect(try Self.tokenClaims(stack)["is_anonymous"] as? Bool != true)
        }
    }

    @Test func aFailingRefreshSaysTheEmailIsSetAndKeepsTheSession() async throws {
        try await Stack.running("anonymous-email-failing", lifetime: 3600) { stack in
            let daemon = try stack.startDaemon()
            defer { daemon.stop() }
            try Self.signInAnonymously(stack)
            try stack.injectRefreshFault(#"{"status":503,"count":1}"#)
            let email = "kept-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let update = try stack.authctl(["user", "update", "--email", email])
            #expect(update.status == 6, "\(update.status): \(update.stderr)")
            #expect(update.stderr.contains("the server made the change"), "\(update.stderr)")
            let status = try stack.statusJSON()
            #expect(status["state"] as? String == "signed_in")
            #expect((status["user"] as? [String: Any])?["email"] as? String == email)
            // The refresh is tried again (a token request after the retry gap starts it) and brings the token.
            #expect(waitUntil { (try? Self.tokenClaims(stack))?["is_anonymous"] as? Bool == false })
        }
    }
}
