import AuthTestSupport
import Foundation
import Testing

/// Emailed links that come back to authctl's loopback listener, confirmations sent again,
/// enterprise SSO and linked identities, through `authctl`, the real daemon and keyring, and the
/// development server's simulated email, IdP and provider.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct LinksIdentitiesAndSSOTests {
    /// The newest message to `address` that carries a link.
    static func linkMessage(_ stack: Stack, to address: String) throws -> [String: Any]? {
        let query = address.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? address
        let result = try runCommand("/usr/bin/curl", ["-sS", "\(stack.serverURL)/auth/v1/admin/dev/outbox?to=\(query)"], environment: stack.environment)
        let messages = (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?["messages"] as? [[String: Any]] ?? []
        return messages.last { $0["link"] is String }
    }

    @Test func theEmailedLinkOpenedOnThisComputerSignsIn() async throws {
        try await Stack.running("email-link", lifetime: 3600) { stack in
            let email = "link-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            try stack.signUp(email: email, password: "link-pw-\(UUID().uuidString)")
            let daemon = try stack.startDaemon()
            defer { daemon.stop() }
            let waiting = try Spawned(Binaries.path("authctl"), ["login", "--otp", "--link", "--email", email, "--timeout", "60"],
                                      environment: stack.environment, in: stack.directory, name: "login-link")
            defer { waiting.stop() }
            var message: [String: Any]?
            #expect(try waitUntil { message = try Self.linkMessage(stack, to: email); return message != nil })
            let link = try #require(message?["link"] as? String)
            // The code must show nowhere; the link is on this test's curl command line, as it
            // would be on a browser's, so it is not one of the secrets scanned for.
            SecretScan.record(secrets: [message?["code"] as? String ?? ""])
            #expect(link.contains("redirect_to=http"), "the link leads back to the loopback listener: \(link)")
            // The click: the browser follows GoTrue's redirect to the listener, which hands the code to authd.
            let clicked = try runCommand("/usr/bin/curl", ["-sSL", "-o", "/dev/null", "-w", "%{http_code}", link], environment: stack.environment)
            #expect(clicked.stdout == "200", "\(clicked.stderr)")
            #expect(waiting.waitForExit(timeout: 30) == 0, "\(waiting.stderr)")
            #expect(waiting.stderr.contains("A sign-in link was sent to \(email)") && waiting.stderr.contains("Signed in as \(email)"))
            #expect(try stack.statusJSON()["state"] as? String == "signed_in")
            // The link works once.
            let again = try runCommand("/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{redirect_url}", link], environment: stack.environment)
            #expect(again.stdout.contains("error"), "a used link goes back with an error: \(again.stdout)")
        }
    }

    @Test func aRecoveryLinkSignsInForTheNewPassword() async throws {
        try await Stack.running("recovery-link", lifetime: 3600) { stack in
            let email = "lost-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            try stack.signUp(email: email, password: "lost-pw-\(UUID().uuidString)")
            let daemon = try stack.startDaemon()
            defer { daemon.stop() }
            let newPassword = "found-pw-\(UUID().uuidString)"
            SecretScan.record(secrets: [newPassword])
            // The new password comes from a file on standard input, never a command line.
            let typed = try stack.file("new-password", contents: newPassword + "\n")
            let waiting = try Spawned("/bin/sh", ["-c", #"exec "$0" reset-password --email "$1" --link --stdin --timeout 60 < "$2""#,
                                                  Binaries.path("authctl"), email, typed],
                                      environment: stack.environment, in: stack.directory, name: "reset-link")
            defer { waiting.stop() }
            var message: [String: Any]?
            #expect(try waitUntil { message = try Self.linkMessage(stack, to: email); return message?["type"] as? String == "recovery" })
            let link = try #require(message?["link"] as? String)
            let clicked = try runCommand("/usr/bin/curl", ["-sSL", "-o", "/dev/null", "-w", "%{http_code}", link], environment: stack.environment)
            #expect(clicked.stdout == "200", "\(clicked.stderr)")
            #expect(waiting.waitForExit(timeout: 30) == 0, "\(waiting.stderr)")
            #expect(waiting.stderr.contains("Link accepted") && waiting.stderr.contains("Password changed"))
            #expect(try stack.authctl(["logout"]).status == 0)
            #expect(try stack.authctl(["login", "--email", email, "--password-stdin"], input: newPassword + "\n").status == 0)
        }
    }

    @Test func aConfirmationIsSentAgain() async throws {
        try await Stack.running("resend", lifetime: 3600) { stack in
            let daemon = try stack.startDaemon()
            defer { daemon.stop() }
            try stack.setConfirmEmail(true)
            let email = "resend-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let password = "resend-pw-\(UUID().uuidString)"
            #expect(try stack.authctl(["signup", "--email", email, "--password-stdin"], input: password + "\n").status == 0)
            let first = try stack.outboxCode(to: email, type: "signup")
            // GoTrue sends at most one a minute to an address, and says so.
            let early = try stack.authctl(["resend", "--email", email])
            #expect(early.status == 6 && early.stderr.contains("moments ago"), "\(early.stderr)")
            try stack.devPOST("/auth/v1/admin/dev/settings", #"{"smtp_max_frequency":0}"#)
            let resent = try stack.authctl(["resend", "--email", email, "--json"])
            #expect(resent.status == 0, "\(resent.stderr)")
            #expect(resent.stdout.contains(#""sent_to":"\#(email)""#))
            let second = try stack.outboxCode(to: email, type: "signup")
            let verified = try stack.authctl(["verify", "--email", email, "--type", "signup"], input: second + "\n")
            #expect(verified.status == 0, "\(verified.stderr) (first code \(first.count) digits)")
            let wrongType = try stack.authctl(["resend", "--phone", "+15551234567", "--type", "signup"])
            #expect(wrongType.status == 64)
        }
    }

    @Test func singleSignOnThroughTheCompanysIdentityProvider() async throws {
        try await Stack.running("sso", lifetime: 3600) { stack in
            let daemon = try stack.startDaemon()
            defer { daemon.stop() }
            let domain = "corp-\(UUID().uuidString.prefix(6).lowercased()).example"
            let provider = try stack.devPOST("/auth/v1/admin/dev/sso", #"{"domains":["\#(domain)"],"email":"ada@\#(domain)"}"#)
            let providerID = try #require((try JSONSerialization.jsonObject(with: Data(provider.utf8)) as? [String: Any])?["id"] as? String)
            let follow = try stack.script("browser-follow", "exec curl -sSL -o /dev/null \"$1\"")
            var environment = stack.environment
            environment["BROWSER"] = follow
            let signedIn = try stack.authctl(["login", "--sso", domain, "--json"], environment: environment)
            #expect(signedIn.status == 0, "\(signedIn.stderr)")
            #expect(signedIn.stderr.contains("Signed in as ada@\(domain)"))
            let claims = try stack.authctl(["claims", "--json"])
            #expect(claims.stdout.contains("sso/saml"))
            #expect(try stack.authctl(["logout"]).status == 0)
            #expect(try stack.authctl(["login", "--sso-provider", providerID], environment: environment).status == 0)

            let unknown = try stack.authctl(["login", "--sso", "nobody-\(domain)"], environment: environment)
            #expect(unknown.status == 8)
            #expect(unknown.stderr.contains("no SSO provider"))
        }
    }

    @Test func anIdentityIsLinkedInTheBrowserListedAndUnlinked() async throws {
        try await Stack.running("identities", lifetime: 3600) { stack in
            let email = "ids-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let daemon = try stack.startSignedIn(email: email, password: "ids-pw-\(UUID().uuidString)")
            defer { daemon.stop() }
            let listed = try stack.authctl(["identities", "--json"])
            #expect(listed.status == 0, "\(listed.stderr)")
            #expect(listed.stdout.contains(#""provider":"email""#) && !listed.stdout.contains("github"))
            let follow = try stack.script("browser-follow", "exec curl -sSL -o /dev/null \"$1\"")
            var environment = stack.environment
            environment["BROWSER"] = follow
            let linked = try stack.authctl(["identities", "link", "github"], environment: environment)
            #expect(linked.status == 0, "\(linked.stderr)")
            #expect(linked.stderr.contains("Linked github"))
            let both = try stack.authctl(["identities"])
            #expect(both.stdout.contains("github") && both.stdout.contains("email"))

            let removed = try stack.authctl(["identities", "unlink", "github", "--json"])
            #expect(removed.status == 0, "\(removed.stderr)")
            #expect(!(try stack.authctl(["identities"]).stdout.contains("github")))
            let last = try stack.authctl(["identities", "unlink", "email"])
            #expect(last.status != 0 && last.stderr.contains("only identity"))
            // Still signed in (perhaps refreshing: an unlink refreshes the session).
            #expect(["signed_in", "refreshing"].contains(try stack.statusJSON()["state"] as? String ?? ""))
        }
    }
}
