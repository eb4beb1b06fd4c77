import AuthTestSupport
import Crypto
import Foundation
import Testing

/// Second factors through `authctl` and the real daemon, against the development server's MFA:
/// enroll and verify an authenticator app, tokens at `aal2`, and the two ways the server ends a
/// session that lacks the second factor.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct SecondFactorTests {
    @Test func enrollVerifyAndAskForAAL2() async throws {
        try await Stack.running("mfa", lifetime: 3600) { stack in
            let email = "mfa-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let password = "mfa-pw-\(UUID().uuidString)"
            try stack.startSignedIn(email: email, password: password)
            let watcher = try stack.watch(["--json"])
            defer { watcher.stop() }
            #expect(watcher.waitForOutput { $0.contains("INITIAL_SESSION") })
            var status = try stack.statusJSON()
            #expect(status["aal"] as? String == "aal1" && status["next_aal"] as? String == "aal1" && status["amr"] as? [String] == ["password"])

            let refused = try stack.authctl(["token", "--aal", "aal2"])
            #expect(refused.status == 9 && refused.stdout.isEmpty)
            #expect(refused.stderr.contains("authctl mfa verify"))
            #expect(try stack.authctl(["token", "--aal", "aal1"]).status == 0)
            #expect(try stack.authctl(["token", "--aal", "aal3"]).status == 64)

            let enrolled = try stack.authctl(["mfa", "enroll", "--name", "laptop app", "--no-verify", "--json"])
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
            let factor = try #require(try JSONSerialization.jsonObject(with: Data(enrolled.stdout.utf8)) as? [String: Any])
            let id = try #require(factor["factor_id"] as? String)
            let totp = try #require(factor["totp"] as? [String: Any])
            let secret = try #require(totp["secret"] as? String)
            #expect((totp["uri"] as? String)?.hasPrefix("otpauth://totp/") == true)
            #expect(enrolled.stderr.contains("authctl mfa verify --factor \(id)"))
            let listed = try stack.authctl(["mfa", "list"])
            #expect(listed.status == 0 && listed.stdout.contains(id) && listed.stdout.contains("unverified"))

            let wrong = try stack.authctl(["mfa", "verify", "--factor", id, "--code-stdin"], input: "000000\n")
            #expect(wrong.status == 5 && wrong.stderr.contains("the code is wrong"))
            #expect(try stack.statusJSON()["aal"] as? String == "aal1")

            let verified = try stack.authctl(["mfa", "verify", "--code-stdin", "--json"], input: TOTPCode.now(secret: secret) + "\n")
            #expect(verified.status == 0, "\(verified.stderr)")
            status = try #require(try JSONSerialization.jsonObject(with: Data(verified.stdout.utf8)) as? [String: Any])
            #expect(status["aal"] as? String == "aal2" && status["next_aal"] as? String == "aal2")
            #expect((status["amr"] as? [String])?.first == "totp")
            #expect(watcher.waitForOutput { $0.contains(#""event":"MFA_CHALLENGE_VERIFIED""#) })

            let raised = try stack.authctl(["token", "--aal", "aal2"])
            #expect(raised.status == 0)
            #expect(claims(of: raised.stdout.trimmingCharacters(in: .newlines))["aal"] as? String == "aal2")
            // A refresh keeps the level (a minimum of the whole lifetime always refreshes).
            let grants = try stack.refreshGrants()
            #expect(try stack.authctl(["token", "--min-valid", "3600"]).status == 0)
            #expect(try stack.refreshGrants() == grants + 1)
            #expect(try stack.statusJSON()["aal"] as? String == "aal2")
            let text = try stack.authctl(["status"])
            #expect(text.stdout.contains("Level:    aal2 (totp, password)"))
            let factors = try stack.authctl(["mfa", "--json"])
            let list = try #require(try JSONSerialization.jsonObject(with: Data(factors.stdout.utf8)) as? [String: Any])
            #expect(((list["factors"] as? [[String: Any]])?.first)?["status"] as? String == "verified")

            // Signed in again, the session starts at aal1 and says how to reach aal2 (no terminal
            // here to ask on); the exit status says the second factor is left to verify (authctl(1): 9).
            #expect(try stack.authctl(["logout"]).status == 0)
            let again = try stack.authctl(["login", "--email", email, "--password-stdin", "--json"], input: password + "\n")
            #expect(again.status == 9, "\(again.stderr)")
            #expect(again.stderr.contains("Signed in at aal1; the account has a second factor: verify it with 'authctl mfa verify'"))
            #expect(again.stderr.contains("authctl: the second factor was not verified: no terminal to ask for its code on"))
            let printed = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
            #expect(printed["state"] as? String == "signed_in" && printed["aal"] as? String == "aal1" && printed["next_aal"] as? String == "aal2")
            #expect(try stack.authctl(["status"]).stdout.contains("verify a second factor for aal2: authctl mfa verify"))
            // Removing a verified factor needs aal2.
            let early = try stack.authctl(["mfa", "unenroll", id])
            #expect(early.status == 9, "\(early.stderr)")
            #expect(try stack.authctl(["mfa", "verify", "--code-stdin"], input: TOTPCode.now(secret: secret, offset: 30) + "\n").status == 0)
            let removed = try stack.authctl(["mfa", "unenroll", id, "--json"])
            #expect(removed.status == 0, "\(removed.stderr)")
            // The refresh that follows brings the level down with the factor gone.
            #expect(waitUntil { (try? stack.statusJSON()["aal"] as? String) == "aal1" })
            try stack.expectNoSecretPrinted([password], besides: [watcher])
        }
    }

    @Test func aFactorVerifiedInAnotherAppEndsThisAAL1Session() async throws {
        try await Stack.running("mfa-elsewhere", lifetime: 3600) { stack in
            let email = "mfa2-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let password = "mfa2-pw-\(UUID().uuidString)"
            try stack.startSignedIn(email: email, password: password)
            let (id, secret) = try enrollAndVerifyAnApp(stack)
            // authd signs in again without verifying: aal1, with the user's verified factor known (exit 9: left to verify).
            #expect(try stack.authctl(["login", "--email", email, "--password-stdin"], input: password + "\n").status == 9)
            #expect(try stack.statusJSON()["next_aal"] as? String == "aal2")
            let watcher = try stack.watch(["--json"])
            defer { watcher.stop() }
            #expect(watcher.waitForOutput { $0.contains("INITIAL_SESSION") })

            // Another app signs in and verifies the factor: GoTrue ends the user's aal1 sessions.
            let other = try stack.passwordGrant(email: email, password: password)
            let challenge = try stack.bearerPOST("/auth/v1/factors/\(id)/challenge", "{}", token: other)
            let challengeID = try #require(challenge["id"] as? String)
            _ = try stack.bearerPOST("/auth/v1/factors/\(id)/verify",
                                     #"{"challenge_id":"\#(challengeID)","code":"\#(TOTPCode.now(secret: secret, offset: 30))"}"#, token: other)

            // The refresh finds the session gone. The wire keeps the server's code (a sign-out
            // elsewhere reads the same); the desktop notice says what most likely happened.
            let ended = try stack.authctl(["token", "--min-valid", "3600"])
            #expect(ended.status == 4)
            #expect(ended.stderr.contains("refresh_token_not_found"))
            #expect(try stack.statusJSON()["sign_out_reason"] as? String == "refresh_token_not_found")
            #expect(watcher.waitForOutput { $0.contains(#""reason":"refresh_token_not_found""#) })
        }
    }

    @Test func aProjectsLowAALLimitEndsAnUnverifiedSessionSayingWhy() async throws {
        try await Stack.running("mfa-low-aal", lifetime: 3600) { stack in
            let email = "mfa3-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let password = "mfa3-pw-\(UUID().uuidString)"
            try stack.startSignedIn(email: email, password: password)
            try enrollAndVerifyAnApp(stack)
            try stack.devPOST("/auth/v1/admin/dev/settings", #"{"allow_low_aal":2}"#)
            #expect(try stack.authctl(["login", "--email", email, "--password-stdin"], input: password + "\n").status == 9)
            // The low-AAL session's token expires at the end of the allowance: the daemon refreshes
            // by itself, and the server ends the session. The bound only ends a failing test.
            #expect(waitUntil(timeout: 30) { (try? stack.statusJSON()["sign_out_reason"] as? String) == "mfa_verification_required" })
            let token = try stack.authctl(["token"])
            #expect(token.status == 4 && token.stderr.contains("mfa_verification_required"))
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/zbarimg") && FileManager.default.isExecutableFile(atPath: "/usr/bin/script"),
                   "needs zbarimg (zbar-tools) and script (bsdutils): scripts/install-deps --tests"))
    func theQRCodeDrawnOnTheTerminalScansAsTheFactorsURI() async throws {
        try await Stack.running("mfa-qr", lifetime: 3600) { stack in
            try stack.startSignedIn(email: "mfa-qr-\(UUID().uuidString.prefix(6).lowercased())@example.com", password: "mfa-qr-pw-\(UUID().uuidString)")
            // On a terminal (script(1) gives it one) the factor's URI is drawn as a QR code.
            let command = "\(Binaries.path("authctl")) mfa enroll --no-verify --name qr"
            let drawn = try runCommand("/usr/bin/script", ["-qec", command, "/dev/null"], environment: stack.environment)
            #expect(drawn.status == 0, "\(drawn.stdout)")
            // A terminal ends its lines with CR LF, which Swift takes as one character.
            let lines = drawn.stdout.split(whereSeparator: \.isNewline).map(String.init)
            let uri = try #require(lines.first { $0.hasPrefix("URI:") }?
                .dropFirst(4).trimmingCharacters(in: .whitespacesAndNewlines))
            // Back from half blocks to modules, then to a picture a QR reader scans.
            var modules: [[Bool]] = []
            for line in lines {
                guard let start = line.range(of: "\u{1B}[97;40m"), let end = line.range(of: "\u{1B}[0m") else { continue }
                let cells = line[start.upperBound..<end.lowerBound]
                modules.append(cells.map { $0 == "█" || $0 == "▀" })
                modules.append(cells.map { $0 == "█" || $0 == "▄" })
            }
            #expect(modules.count > 20 && modules.allSatisfy { $0.count == modules[0].count })
            let scale = 6
            var picture = "P1\n\(modules[0].count * scale) \(modules.count * scale)\n"
            for row in modules {
                let line = row.flatMap { light in Array(repeating: light ? "0" : "1", count: scale) }.joined(separator: " ") + "\n"
                picture += String(repeating: line, count: scale)
            }
            let file = try stack.file("qr.pbm", contents: picture)
            let scanned = try runCommand("/usr/bin/zbarimg", ["--raw", "-q", file], environment: stack.environment)
            #expect(scanned.status == 0, "\(scanned.stderr)")
            #expect(scanned.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == uri)
        }
    }

    /// Enrolls an authenticator app for the signed-in user and verifies it, as `authctl` does;
    /// the factor's id and secret.
    @discardableResult
    func enrollAndVerifyAnApp(_ stack: Stack) throws -> (id: String, secret: String) {
        let enrolled = try stack.authctl(["mfa", "enroll", "--no-verify", "--json"])
        let factor = try #require(try JSONSerialization.jsonObject(with: Data(enrolled.stdout.utf8)) as? [String: Any])
        let id = try #require(factor["factor_id"] as? String)
        let secret = try #require((factor["totp"] as? [String: Any])?["secret"] as? String)
        #expect(try stack.authctl(["mfa", "verify", "--code-stdin"], input: TOTPCode.now(secret: secret) + "\n").status == 0)
        return (id, secret)
    }
}

/// The code an authenticator app shows for a base32 secret (RFC 6238: SHA-1, 6 digits, 30 s).
enum TOTPCode {
    /// The code for now plus `offset` seconds. Recorded for the secret scan; the secret is not:
    /// `authctl mfa enroll` shows it to the user who asked, by design.
    static func now(secret: String, offset: TimeInterval = 0) -> String {
        let counter = UInt64((Date().timeIntervalSince1970 + offset) / 30)
        let key = SymmetricKey(data: base32(secret))
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: withUnsafeBytes(of: counter.bigEndian) { Data($0) }, using: key))
        let start = Int(mac[19] & 0x0F)
        let value = (UInt32(mac[start] & 0x7F) << 24 | UInt32(mac[start + 1]) << 16 | UInt32(mac[start + 2]) << 8 | UInt32(mac[start + 3])) % 1_000_000
        let digits = String(value)
        let code = String(repeating: "0", count: 6 - digits.count) + digits
        SecretScan.record(secrets: [code])
        return code
    }

    private static func base32(_ text: String) -> Data {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var bits = 0, value = 0
        var bytes: [UInt8] = []
        for character in text.uppercased() where character != "=" {
            guard let index = alphabet.firstIndex(of: character) else { continue }
            value = (value << 5) | index
            bits += 5
            if bits >= 8 {
                bytes.append(UInt8((value >> (bits - 8)) & 0xFF))
                bits -= 8
            }
        }
        return Data(bytes)
    }
}
