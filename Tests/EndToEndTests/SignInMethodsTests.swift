import AuthTestSupport
import Foundation
import Testing

/// Every sign-in method through `authctl`, against the development server, with a subscriber
/// (`authctl watch --json`) checking the events, and a scan for secrets in everything printed.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct SignInMethodsTests {
    @Test func signUpWithConfirmationCodeAndWithAutoConfirm() async throws {
        try await Stack.running("signup", lifetime: 3600) { stack in
            try stack.setConfirmEmail(true)
            try stack.startDaemon()
            let watcher = try stack.watch(["--json"])
            defer { watcher.stop() }
            #expect(watcher.waitForOutput { $0.contains("INITIAL_SESSION") })
            let email = "new-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let password = "signup-pw-\(UUID().uuidString)"

            let signup = try stack.authctl(["signup", "--email", email, "--password-stdin", "--data", "name=Ada"], input: password + "\n")
            #expect(signup.status == 0, "\(signup.stderr)")
            #expect(signup.stderr.contains("Check your inbox") && signup.stderr.contains("authctl verify --email \(email) (it asks for the code)"))
            #expect(try stack.authctl(["status"]).status == 4) // no session until the code is entered
            let early = try stack.authctl(["login", "--email", email, "--password-stdin"], input: password + "\n")
            #expect(early.status == 5)
            #expect(early.stderr.contains("not confirmed yet") && early.stderr.contains("authctl verify"))

            let wrong = try stack.authctl(["verify", "--email", email], input: "000000\n")
            #expect(wrong.status == 5)
            #expect(wrong.stderr.contains("the code is wrong, has expired or was already used"))
            let code = try stack.outboxCode(to: email, type: "signup")
            let verified = try stack.authctl(["verify", "--email", email], input: code + "\n")
            #expect(verified.status == 0, "\(verified.stderr)")
            #expect(verified.stderr.contains("Signed in as \(email)"))
            #expect(watcher.waitForOutput { $0.contains(#""event":"SIGNED_IN""#) })
            let reused = try stack.authctl(["verify", "--email", email], input: code + "\n")
            #expect(reused.status == 5)
            #expect(try stack.statusJSON()["state"] as? String == "signed_in") // a refused code leaves the session alone

            try stack.setConfirmEmail(false)
            let second = "auto-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let auto = try stack.authctl(["signup", "--email", second, "--password-stdin", "--json"], input: password + "\n")
            #expect(auto.status == 0, "\(auto.stderr)")
            let result = try JSONSerialization.jsonObject(with: Data(auto.stdout.utf8)) as? [String: Any]
            #expect(result?["confirmation_sent"] as? Bool == false)
            #expect(((result?["status"] as? [String: Any])?["user"] as? [String: Any])?["email"] as? String == second)
            let taken = try stack.authctl(["signup", "--email", second, "--password-stdin"], input: password + "\n")
            #expect(taken.status == 5)
            #expect(taken.stderr.contains("already exists"))
            #expect(watcher.waitForOutput { $0.components(separatedBy: #""event":"SIGNED_IN""#).count == 3 })
            try stack.expectNoSecretPrinted([password, code], besides: [watcher])
        }
    }

    @Test func oneTimeCodesByEmailAndBySMS() async throws {
        try await Stack.running("otp", lifetime: 3600) { stack in
            try stack.startDaemon()
            let watcher = try stack.watch(["--json"])
            defer { watcher.stop() }
            #expect(watcher.waitForOutput { $0.contains("INITIAL_SESSION") })
            let email = "otp-\(UUID().uuidString.prefix(6).lowercased())@example.com"

            let unknown = try stack.authctl(["login", "--otp", "--email", email, "--send-only"])
            #expect(unknown.status == 5) // no account and no --create-user
            #expect(unknown.stderr.contains("does not allow it"))
            let sent = try stack.authctl(["login", "--otp", "--email", email, "--create-user", "--send-only"])
            #expect(sent.status == 0, "\(sent.stderr)")
            #expect(sent.stderr.contains("A code was sent by email to \(email)") && sent.stderr.contains("authctl verify --email \(email) (it asks for the code)"))
            let code = try stack.outboxCode(to: email, type: "signup")
            let signedIn = try stack.authctl(["verify", "--email", email], input: code + "\n")
            #expect(signedIn.status == 0, "\(signedIn.stderr)")
            #expect(watcher.waitForOutput { $0.contains(#""event":"SIGNED_IN""#) })
            #expect(claims(of: try stack.authctl(["token"]).stdout.trimmingCharacters(in: .newlines))["email"] as? String == email)

            // A magic-link code for the account that now exists, entered through the prompt's stdin path.
            _ = try stack.authctl(["login", "--otp", "--email", email, "--send-only"])
            let magic = try stack.outboxCode(to: email, type: "magiclink")
            #expect(try stack.authctl(["verify", "--email", email, "--type", "magiclink"], input: magic + "\n").status == 0)

            let phone = "+1555\(Int.random(in: 1_000_000...9_999_999))"
            let sms = try stack.authctl(["login", "--otp", "--phone", phone, "--create-user", "--send-only"])
            #expect(sms.status == 0, "\(sms.stderr)")
            #expect(sms.stderr.contains("by sms"))
            let smsCode = try stack.outboxCode(to: String(phone.dropFirst()), type: "sms", channel: "sms")
            let byPhone = try stack.authctl(["verify", "--phone", phone, "--json"], input: smsCode + "\n")
            #expect(byPhone.status == 0, "\(byPhone.stderr)")
            let status = try JSONSerialization.jsonObject(with: Data(byPhone.stdout.utf8)) as? [String: Any]
            #expect((status?["user"] as? [String: Any])?["phone"] as? String == String(phone.dropFirst()))
            #expect(watcher.waitForOutput { $0.components(separatedBy: #""event":"SIGNED_IN""#).count == 4 })
            try stack.expectNoSecretPrinted([code, magic, smsCode], besides: [watcher])
        }
    }

    @Test func anExpiredCodeIsRefusedAndNothingChanges() async throws {
        try await offPool {
            let stack = try Stack(name: "otp-expiry")
            defer { stack.tearDown() }
            // Codes live a millisecond: this one is past it by the time another process (curl)
            // has read it from the outbox and a third (authctl) hands it in.
            try stack.startDevServer(lifetime: 3600, extra: ["--otp-lifetime", "0.001"])
            try stack.startDaemon()
            let email = "late-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            #expect(try stack.authctl(["login", "--otp", "--email", email, "--create-user", "--send-only"]).status == 0)
            let code = try stack.outboxCode(to: email, type: "signup")
            let late = try stack.authctl(["verify", "--email", email], input: code + "\n")
            #expect(late.status == 5)
            #expect(late.stderr.contains("has expired"))
            #expect(try stack.statusJSON()["state"] as? String == "signed_out")
        }
    }

    /// A project with its CAPTCHA on: sign-up, password sign-in, codes and recovery are refused
    /// with a message that says how to get through, until a solved CAPTCHA's token comes with
    /// them (from a file: never on a command line); the refresh grant is exempt, so the session
    /// lives on without one.
    @Test func aProjectWithACaptchaNeedsItsTokenToSignInButNotToRefresh() async throws {
        try await offPool {
            let stack = try Stack(name: "captcha")
            defer { stack.tearDown() }
            try stack.startDevServer(lifetime: 3600, extra: ["--captcha-token", "solved-captcha"])
            try stack.startDaemon()
            let email = "captcha-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let password = "captcha-pw-\(UUID().uuidString)"
            let solved = stack.directory.appendingPathComponent("captcha-token").path
            let guessed = stack.directory.appendingPathComponent("guessed-token").path
            let spaced = stack.directory.appendingPathComponent("spaced-token").path
            try "solved-captcha\n".write(toFile: solved, atomically: true, encoding: .utf8)
            try "guessed".write(toFile: guessed, atomically: true, encoding: .utf8)
            try "two words".write(toFile: spaced, atomically: true, encoding: .utf8)

            let bare = try stack.authctl(["signup", "--email", email, "--password-stdin"], input: password + "\n")
            #expect(bare.status == 5)
            #expect(bare.stderr.contains("protects this with a CAPTCHA") && bare.stderr.contains("--captcha-token-file FILE")
                    && bare.stderr.contains("authctl login --provider NAME"), "\(bare.stderr)")
            let wrong = try stack.authctl(["signup", "--email", email, "--password-stdin", "--captcha-token-file", guessed], input: password + "\n")
            #expect(wrong.status == 5)
            #expect(wrong.stderr.contains("the CAPTCHA token was refused") && wrong.stderr.contains("invalid-input-response"), "\(wrong.stderr)")
            #expect(try stack.statusJSON()["state"] as? String == "signed_out", "a refused sign-up stored nothing")
            let created = try stack.authctl(["signup", "--email", email, "--password-stdin", "--captcha-token-file", solved], input: password + "\n")
            #expect(created.status == 0, "\(created.stderr)")

            // Refused while signed in: the session stays.
            let refused = try stack.authctl(["login", "--email", email, "--password-stdin"], input: password + "\n")
            #expect(refused.status == 5 && refused.stderr.contains("--captcha-token-file"), "\(refused.stderr)")
            #expect(try stack.statusJSON()["state"] as? String == "signed_in", "a refused sign-in ended the session")
            #expect(try stack.authctl(["logout"]).status == 0)
            // The token may come on standard input, the password then from the terminal only.
            let json = try stack.authctl(["login", "--email", email, "--captcha-token-file", "-", "--json"], input: "solved-captcha\n")
            #expect(json.status == 1 && json.stderr.contains("no terminal"), "\(json.stderr)")
            let both = try stack.authctl(["login", "--email", email, "--password-stdin", "--captcha-token-file", "-"], input: password + "\n")
            #expect(both.status == 64, "two secrets on one standard input")
            let signedIn = try stack.authctl(["login", "--email", email, "--password-stdin", "--captcha-token-file", solved, "--json"],
                                             input: password + "\n")
            #expect(signedIn.status == 0, "\(signedIn.stderr)")
            #expect(signedIn.stdout.contains(#""state":"signed_in""#))

            // The refresh grant needs no CAPTCHA: a token that must last the whole lifetime (which
            // no token does once it is any time old) is refreshed.
            let grants = try stack.refreshGrants()
            let fresh = try stack.authctl(["token", "--min-valid", "3600"])
            #expect(fresh.status == 0, "\(fresh.stderr)")
            #expect(try stack.refreshGrants() == grants + 1)

            #expect(try stack.authctl(["login", "--otp", "--email", email, "--send-only"]).status == 5)
            let code = try stack.authctl(["login", "--otp", "--email", email, "--send-only", "--captcha-token-file", solved])
            #expect(code.status == 0, "\(code.stderr)")
            #expect(try stack.authctl(["reset-password", "--email", email, "--send-only"]).status == 5)
            #expect(try stack.authctl(["reset-password", "--email", email, "--send-only", "--captcha-token-file", solved]).status == 0)

            // A token no provider makes is refused before anything is sent; a browser sign-in needs none.
            let malformed = try stack.authctl(["login", "--email", email, "--password-stdin", "--captcha-token-file", spaced], input: password + "\n")
            #expect(malformed.status == 1 && malformed.stderr.contains("does not hold a CAPTCHA token"), "\(malformed.stderr)")
            let browser = try stack.authctl(["login", "--provider", "github", "--captcha-token-file", solved])
            #expect(browser.status == 64 && browser.stderr.contains("needs no CAPTCHA"), "\(browser.stderr)")
            #expect(try stack.statusJSON()["state"] as? String == "signed_in", "refused attempts left the session alone")
            try stack.expectNoSecretPrinted([password, "solved-captcha"], besides: [])
        }
    }

    /// A project with asymmetric signing keys: `authctl claims` checks the token against the
    /// keys the server publishes, follows a rotation, and never prints the token. An HS256
    /// project's claims are shown, unverified, with the reason.
    @Test(arguments: ["ES256", "RS256", "HS256"])
    func claimsAreVerifiedWithTheProjectsPublishedKeys(_ algorithm: String) async throws {
        try await offPool {
            let stack = try Stack(name: "claims-\(algorithm.lowercased())")
            defer { stack.tearDown() }
            try stack.startDevServer(lifetime: 3600, extra: ["--signing-algorithm", algorithm])
            let email = "claims-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            try stack.signUp(email: email, password: "claims-password")
            try stack.startDaemon()
            #expect(try stack.authctl(["login", "--email", email, "--password-stdin"], input: "claims-password\n").status == 0)

            let first = try stack.authctl(["claims", "--json"])
            let report = try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any]
            let claims = report?["claims"] as? [String: Any]
            #expect(claims?["email"] as? String == email && claims?["role"] as? String == "authenticated", "\(first.stdout)")
            #expect(report?["algorithm"] as? String == algorithm)
            guard algorithm != "HS256" else {
                #expect(first.status == 1 && report?["verified"] as? Bool == false)
                #expect((report?["detail"] as? String)?.contains("only the server holds") == true, "\(first.stdout)")
                return
            }
            #expect(first.status == 0 && report?["verified"] as? Bool == true, "\(first.stdout) \(first.stderr)")
            let firstKey = report?["key_id"] as? String
            let people = try stack.authctl(["claims"])
            #expect(people.status == 0 && people.stdout.contains("Verified:   yes") && people.stdout.contains("Email:      \(email)"), "\(people.stdout)")

            // The project rotates its key; the next token is signed with the new one, which authd
            // fetches as soon as a token names it.
            let rotated = try JSONSerialization.jsonObject(with: Data(try stack.devPOST("/auth/v1/admin/dev/rotate-signing-key", "{}").utf8)) as? [String: Any]
            let newKey = try #require(rotated?["kid"] as? String)
            // A token that must last the whole lifetime is a new one, signed with the new key.
            #expect(try stack.authctl(["token", "--min-valid", "3600"]).status == 0)
            // authd fetches the key set again once at least 2 s (KeySetCache.minimumGap) have
            // passed since the last fetch; until then `claims` says the key is not published,
            // without fetching. Asked until it verifies (the bound only ends a failing test).
            var second = Completed(status: -1, stdout: "", stderr: "")
            var after: [String: Any]?
            let verified = try waitUntil(timeout: 60) {
                second = try stack.authctl(["claims", "--json"])
                after = try? JSONSerialization.jsonObject(with: Data(second.stdout.utf8)) as? [String: Any]
                return second.status == 0 && after?["verified"] as? Bool == true
            }
            #expect(verified && after?["key_id"] as? String == newKey && newKey != firstKey, "\(second.stdout)")
            try stack.expectNoSecretPrinted(["claims-password"], besides: [])
        }
    }

    /// Secure password change: the project wants a code before the password changes. authctl
    /// asks for it on the terminal (here there is none, and it says what to do instead); a
    /// script sends it first and passes it on standard input; a wrong or used code is refused.
    @Test func aProjectWithSecurePasswordChangeGetsItsCode() async throws {
        try await Stack.running("reauth", lifetime: 3600) { stack in
            let email = "reauth-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let old = "old-pw-\(UUID().uuidString)", new = "new-pw-\(UUID().uuidString)"
            try stack.signUp(email: email, password: old)
            try stack.devPOST("/auth/v1/admin/dev/settings", #"{"update_password_require_reauthentication":true,"reauthentication_window":0}"#)
            try stack.startDaemon()
            #expect(try stack.authctl(["login", "--email", email, "--password-stdin"], input: old + "\n").status == 0)

            // No terminal (setsid: none even when the tests run from one): no code is sent (the
            // server sends one a minute at most), and authctl says how a script does it.
            let asked = try runCommand("/usr/bin/setsid", ["--wait", Binaries.path("authctl"), "user", "update", "--password-stdin"],
                                       environment: stack.environment, input: new + "\n", timeout: 30)
            #expect(asked.status == 1)
            #expect(asked.stderr.contains("authctl user reauthenticate") && asked.stderr.contains("--code-stdin"), "\(asked.stderr)")
            #expect((try? stack.outboxCode(to: email, type: "reauthentication")) == nil, "a code was sent with no terminal to type it on")

            // A script sends the code first and passes it as the second line of standard input.
            let sent = try stack.authctl(["user", "reauthenticate", "--json"])
            #expect(sent.status == 0, "\(sent.stderr)")
            #expect(sent.stdout.contains(#""sent_to":"\#(email)""#) && sent.stdout.contains(#""channel":"email""#), "\(sent.stdout)")
            let code = try stack.outboxCode(to: email, type: "reauthentication")
            // The server sends one code a minute; authctl says so and to use the one sent.
            let again = try stack.authctl(["user", "reauthenticate"])
            #expect(again.status == 1 && again.stderr.contains("use that one") && again.stderr.contains("only request this after"), "\(again.stderr)")
            let wrong = try stack.authctl(["user", "update", "--password-stdin", "--code-stdin"], input: new + "\n" + (code == "000000" ? "111111" : "000000") + "\n")
            #expect(wrong.status == 5 && wrong.stderr.contains("authctl user reauthenticate"), "\(wrong.stderr)")
            // A wrong code uses nothing up; the right one works once.
            let changed = try stack.authctl(["user", "update", "--password-stdin", "--code-stdin"], input: new + "\n" + code + "\n")
            #expect(changed.status == 0, "\(changed.stderr)")
            let reused = try stack.authctl(["user", "update", "--password-stdin", "--code-stdin"], input: "third-pw-1\n" + code + "\n")
            #expect(reused.status == 5, "a used code was accepted again")

            #expect(try stack.authctl(["logout"]).status == 0)
            #expect(try stack.authctl(["login", "--email", email, "--password-stdin"], input: new + "\n").status == 0)
            let misuse = try stack.authctl(["user", "update", "--code-stdin"], input: code + "\n")
            #expect(misuse.status == 64)
            try stack.expectNoSecretPrinted([old, new, code], besides: [])
        }
    }

    @Test func passwordRecoveryThenANewPassword() async throws {
        try await Stack.running("recovery", lifetime: 3600) { stack in
            let email = "lost-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let old = "old-pw-\(UUID().uuidString)", new = "new-pw-\(UUID().uuidString)"
            try stack.signUp(email: email, password: old)
            try stack.startDaemon()
            let watcher = try stack.watch(["--json"])
            defer { watcher.stop() }
            #expect(watcher.waitForOutput { $0.contains("INITIAL_SESSION") })

            let sent = try stack.authctl(["reset-password", "--email", email, "--send-only"])
            #expect(sent.status == 0, "\(sent.stderr)")
            let nobody = try stack.authctl(["reset-password", "--email", "nobody@example.com", "--send-only"])
            #expect(nobody.status == 0) // the server does not tell who has an account
            let code = try stack.outboxCode(to: email, type: "recovery")
            let recovered = try stack.authctl(["verify", "--type", "recovery", "--email", email], input: code + "\n")
            #expect(recovered.status == 0, "\(recovered.stderr)")
            #expect(watcher.waitForOutput { $0.contains(#""event":"PASSWORD_RECOVERY""#) })
            #expect(!watcher.stdout.contains(#""event":"SIGNED_IN""#))

            let same = try stack.authctl(["user", "update", "--password-stdin"], input: old + "\n")
            #expect(same.status == 1)
            #expect(same.stderr.contains("must differ"))
            let changed = try stack.authctl(["user", "update", "--password-stdin"], input: new + "\n")
            #expect(changed.status == 0, "\(changed.stderr)")
            #expect(watcher.waitForOutput { $0.contains(#""event":"USER_UPDATED""#) })

            #expect(try stack.authctl(["logout"]).status == 0)
            #expect(try stack.authctl(["login", "--email", email, "--password-stdin"], input: old + "\n").status == 5)
            #expect(try stack.authctl(["login", "--email", email, "--password-stdin"], input: new + "\n").status == 0)
            try stack.expectNoSecretPrinted([old, new, code], besides: [watcher])
        }
    }

    @Test func theUserRecordAndItsChanges() async throws {
        try await Stack.running("user", lifetime: 3600) { stack in
            let email = "me-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let password = "user-pw-\(UUID().uuidString)"
            _ = try stack.startSignedIn(email: email, password: password)
            let watcher = try stack.watch(["--json"])
            defer { watcher.stop() }
            #expect(watcher.waitForOutput { $0.contains("INITIAL_SESSION") })

            let shown = try stack.authctl(["user"])
            #expect(shown.status == 0, "\(shown.stderr)")
            #expect(shown.stdout.contains("Email:      \(email)") && shown.stdout.contains("Providers:  email"))
            let updated = try stack.authctl(["user", "update", "--data", "plan=pro", "--data", "seats=3"])
            #expect(updated.status == 0, "\(updated.stderr)")
            #expect(watcher.waitForOutput { $0.contains(#""event":"USER_UPDATED""#) })
            let json = try stack.authctl(["user", "--json"])
            let user = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            let metadata = user?["user_metadata"] as? [String: Any]
            #expect(metadata?["plan"] as? String == "pro")
            #expect(metadata?["seats"] as? Int == 3)

            // An email change needs the code sent to the new address when the project confirms addresses.
            try stack.setConfirmEmail(true)
            let newEmail = "moved-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let change = try stack.authctl(["user", "update", "--email", newEmail])
            #expect(change.status == 0, "\(change.stderr)")
            #expect(change.stderr.contains("A confirmation code was sent to \(newEmail)"))
            let code = try stack.outboxCode(to: newEmail, type: "email_change")
            #expect(try stack.authctl(["verify", "--type", "email_change", "--email", newEmail], input: code + "\n").status == 0)
            #expect((try stack.statusJSON()["user"] as? [String: Any])?["email"] as? String == newEmail)

            let nothing = try stack.authctl(["user", "update"])
            #expect(nothing.status == 64)
            _ = try stack.authctl(["logout"])
            let signedOut = try stack.authctl(["user"])
            #expect(signedOut.status == 4)
            #expect(signedOut.stderr.contains("authctl login"))
        }
    }

    @Test func idTokenSignInChecksAudienceAndNonce() async throws {
        try await Stack.running("idtoken", lifetime: 3600) { stack in
            try stack.startDaemon()
            let watcher = try stack.watch(["--json"])
            defer { watcher.stop() }
            #expect(watcher.waitForOutput { $0.contains("INITIAL_SESSION") })
            let nonce = try JSONSerialization.jsonObject(with: Data(try stack.authctl(["nonce", "--json"]).stdout.utf8)) as? [String: String]
            let raw = try #require(nonce?["nonce"]), hash = try #require(nonce?["nonce_sha256"])
            let digest = try runCommand("/usr/bin/python3", ["-c", "import hashlib,sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest())", raw],
                                        environment: stack.environment)
            #expect(digest.stdout.trimmingCharacters(in: .newlines) == hash)

            let email = "apple-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let token = try stack.file("id-token", contents: try stack.mintIDToken(provider: "apple", email: email, nonce: hash))
            let missing = try stack.authctl(["login", "--provider", "apple", "--id-token-file", token])
            #expect(missing.status == 5)
            #expect(missing.stderr.contains("carries a nonce but none was passed"))
            let hashed = try stack.authctl(["login", "--provider", "apple", "--id-token-file", token, "--nonce", hash])
            #expect(hashed.status == 5)
            #expect(hashed.stderr.contains("pass the raw nonce"))
            let foreign = try stack.file("foreign", contents: try stack.mintIDToken(provider: "google", email: email, audience: "com.example.ios"))
            let audience = try stack.authctl(["login", "--provider", "google", "--id-token-file", foreign])
            #expect(audience.status == 5)
            #expect(audience.stderr.contains("add that client ID to the provider's Client IDs"))
            let forged = try stack.file("forged", contents: "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJodHRwczovL2FwcGxlaWQuYXBwbGUuY29tIn0.c2lnbmF0dXJl")
            let bad = try stack.authctl(["login", "--provider", "apple", "--id-token-file", forged])
            #expect(bad.status == 5)
            #expect(bad.stderr.contains("the ID token is not valid"))
            #expect(try stack.statusJSON()["state"] as? String == "signed_out") // no partial session after refusals

            let good = try stack.authctl(["login", "--provider", "apple", "--id-token-file", token, "--nonce", raw])
            #expect(good.status == 0, "\(good.stderr)")
            #expect(watcher.waitForOutput { $0.contains(#""event":"SIGNED_IN""#) })
            #expect((try stack.statusJSON()["user"] as? [String: Any])?["email"] as? String == email)
            let user = try JSONSerialization.jsonObject(with: Data(try stack.authctl(["user", "--json"]).stdout.utf8)) as? [String: Any]
            #expect(((user?["app_metadata"] as? [String: Any])?["providers"] as? [String]) == ["apple"])
            try stack.expectNoSecretPrinted([try String(contentsOfFile: token, encoding: .utf8)], besides: [watcher])
        }
    }

    @Test func browserSignInThroughLoopbackAndCustomScheme() async throws {
        try await Stack.running("browser", lifetime: 3600) { stack in
            try stack.startDaemon()
            let watcher = try stack.watch(["--json"])
            defer { watcher.stop() }
            #expect(watcher.waitForOutput { $0.contains("INITIAL_SESSION") })
            // A browser stand-in that follows redirects like a browser does, all the way to the loopback listener.
            let follow = try stack.script("browser-follow", "exec curl -sSL -o /dev/null \"$1\"")
            var environment = stack.environment
            environment["BROWSER"] = follow

            let loopback = try stack.authctl(["login", "--provider", "github"], environment: environment)
            #expect(loopback.status == 0, "\(loopback.stderr)")
            #expect(loopback.stderr.contains("Opened your browser") && loopback.stderr.contains("Ctrl-C to cancel"))
            #expect(loopback.stderr.contains("redirect_to=http://127.0.0.1:"))
            #expect(loopback.stderr.contains("Signed in as github-user@example.com"))
            #expect(watcher.waitForOutput { $0.contains(#""event":"SIGNED_IN""#) })

            try stack.devPOST("/auth/v1/admin/dev/oauth", #"{"error":"access_denied","error_code":"provider_denied","error_description":"The user denied access"}"#)
            let denied = try stack.authctl(["login", "--provider", "google"], environment: environment)
            #expect(denied.status == 8)
            #expect(denied.stderr.contains("cancelled or denied at the provider (The user denied access)"))
            #expect((try stack.statusJSON()["user"] as? [String: Any])?["email"] as? String == "github-user@example.com")

            let disabled = try stack.authctl(["login", "--provider", "nosuchprovider", "--timeout", "3"], environment: environment)
            #expect(disabled.status == 8)
            #expect(disabled.stderr.contains("timed out"))

            // A custom scheme: the "browser" stops at the app's URL and hands it over as the desktop's
            // x-scheme-handler would, by running `authctl open-url`.
            let handOver = try stack.script("browser-scheme", """
                location=$(curl -sS -o /dev/null -w '%{redirect_url}' "$1")
                exec "\(Binaries.path("authctl"))" open-url "$location"
                """)
            environment["BROWSER"] = handOver
            try stack.devPOST("/auth/v1/admin/dev/oauth", #"{"email":"scheme-user@example.com"}"#)
            let scheme = try stack.authctl(["login", "--provider", "google", "--redirect-url", "authd://login-callback"], environment: environment)
            #expect(scheme.status == 0, "\(scheme.stderr)")
            #expect(scheme.stderr.contains("Signed in as scheme-user@example.com"))
            let stray = try stack.authctl(["open-url", "authd://login-callback?code=00000000-0000-0000-0000-000000000000"])
            #expect(stray.status == 8)
            #expect(stray.stderr.contains("no browser sign-in is waiting for authd://login-callback"))
            // An error handed over by open-url is tied to no sign-in (an app's address cannot carry
            // the flow's binding, and any web page can open it): the login waits on, until its
            // timeout here, and the error's words are shown nowhere.
            try stack.devPOST("/auth/v1/admin/dev/oauth", #"{"error":"server_error","error_description":"Provider is down"}"#)
            let refused = try stack.authctl(["login", "--provider", "google", "--redirect-url", "authd://login-callback", "--timeout", "5"],
                                            timeout: 40, environment: environment)
            #expect(refused.status == 8)
            #expect(refused.stderr.contains("timed out") && !refused.stderr.contains("Provider is down"), "\(refused.stderr)")

            // Headless: the URL is printed, and whoever opens it (here curl) completes the sign-in.
            let printed = try stack.script("open-printed", """
                "\(Binaries.path("authctl"))" login --provider github --no-browser 2> "$1" &
                for _ in $(seq 1 100); do grep -q 'authorize' "$1" && break; sleep 0.1; done
                curl -sSL -o /dev/null "$(grep -o 'http://[^ ]*authorize[^ ]*' "$1")"
                wait $!
                """)
            let headless = try runCommand(printed, [stack.directory.appendingPathComponent("headless.err").path], environment: stack.environment)
            #expect(headless.status == 0, "\(stack.file("headless.err"))")
            #expect(stack.file("headless.err").contains("Open this URL in a browser"))
            #expect(watcher.waitForOutput { $0.components(separatedBy: #""event":"SIGNED_IN""#).count == 4 })
        }
    }

    @Test func signOutScopesFromTheCommandLine() async throws {
        try await Stack.running("scopes", lifetime: 3600) { stack in
            let email = "scope-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let password = "scope-pw-\(UUID().uuidString)"
            _ = try stack.startSignedIn(email: email, password: password)
            // Another session of the same user elsewhere (another device); sign-up made one too.
            try stack.devPOST("/auth/v1/token?grant_type=password", #"{"email":"\#(email)","password":"\#(password)"}"#)
            #expect(try stack.devStats()["sessions"] as? Int == 3)
            let others = try stack.authctl(["logout", "--scope", "others"])
            #expect(others.status == 0, "\(others.stderr)")
            #expect(others.stderr.contains("every other session"))
            #expect(try stack.devStats()["sessions"] as? Int == 1)
            #expect(try stack.authctl(["status"]).status == 0) // still signed in here
            let global = try stack.authctl(["logout", "--scope", "global"])
            #expect(global.status == 0)
            #expect(try stack.devStats()["sessions"] as? Int == 0)
            #expect(try stack.authctl(["status"]).status == 4)
            #expect(try stack.authctl(["logout", "--scope", "everywhere"]).status == 64)
        }
    }
}
