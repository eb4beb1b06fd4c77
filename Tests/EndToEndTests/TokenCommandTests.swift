import AuthTestSupport
import Foundation
import Testing

/// `authctl token` through the front (which sends the request itself and hands any answer it
/// does not print to the whole authctl on a pipe) against the whole authctl run directly (the
/// authd executable under the name authctl-full), which asks authd itself: the same token, the
/// same JSON, and for every refusal the same message and exit code.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct TokenCommandTests {
    /// The whole authctl on its own: the ordinary path, no front and no handed-over answer. The
    /// authd executable is authctl when its name begins with "authctl": a link so named.
    private func full(_ stack: Stack, _ arguments: [String]) throws -> Completed {
        let link = stack.directory.appendingPathComponent("authctl-full").path
        if !FileManager.default.fileExists(atPath: link) {
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: Binaries.path("authd"))
        }
        return try runCommand(link, arguments, environment: stack.environment, timeout: 60)
    }

    @Test func signedInTheFrontPrintsWhatAuthctlFullPrintsAndIsTheOnlyAppSeen() async throws {
        try await Stack.running("token", lifetime: 3600) { stack in
            try stack.signUp(email: "token@example.com", password: "token-password")
            try stack.startDaemon()
            let login = try stack.authctl(["login", "--email", "token@example.com", "--password-stdin"], input: "token-password\n")
            #expect(login.status == 0, "\(login.stderr)")

            let plain = try stack.authctl(["token"])
            let options = try stack.authctl(["token", "--profile", stack.profile, "--min-valid=60", "--socket", stack.socketPath])
            let jsonTakenAt = Date()
            let json = try stack.authctl(["token", "--json"])
            let unknown = try stack.authctl(["token", "--profile", "nope"])
            let escaped = try stack.authctl(["token", "--profile", #"we"ird\name"#])

            // Every token request so far came from one executable, the front, whatever the
            // options and answers: an app policy of `ask` must see one app, not two.
            let apps = try stack.authctl(["apps", "--json"])
            let listed = try #require(try JSONSerialization.jsonObject(with: Data(apps.stdout.utf8)) as? [String: Any])
            let executables = (listed["apps"] as? [[String: Any]] ?? []).compactMap { $0["executable"] as? String }
            #expect(executables.count == 1 && executables.allSatisfy { $0.hasSuffix("/authctl") }, "\(executables)")

            let reference = try full(stack, ["token"])
            #expect(plain.status == 0 && options.status == 0 && reference.status == 0)
            #expect(plain.stdout == reference.stdout && options.stdout == reference.stdout)
            #expect(plain.stdout.split(separator: ".").count == 3 && plain.stdout.hasSuffix("\n"))

            // --json: the front's answer, formatted by authctl-full, is what authctl-full prints,
            // but for `expires_in`, which counts down between the two runs. (No output in the
            // failure messages: it holds the token.)
            let referenceJSON = try full(stack, ["token", "--json"])
            // The two runs are this far apart (many seconds when the whole suite loads the machine).
            let apart = Int(Date().timeIntervalSince(jsonTakenAt).rounded(.up))
            #expect(json.status == 0 && referenceJSON.status == 0)
            let fields = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            let referenceFields = try #require(try JSONSerialization.jsonObject(with: Data(referenceJSON.stdout.utf8)) as? [String: Any])
            #expect(fields.keys.sorted() == ["access_token", "expires_at", "expires_in", "token_type"])
            #expect(fields.keys.sorted() == referenceFields.keys.sorted())
            for key in ["access_token", "expires_at", "token_type"] {
                #expect(fields[key] as? NSObject == referenceFields[key] as? NSObject, "\(key) differs")
            }
            let left = try #require(fields["expires_in"] as? Int), referenceLeft = try #require(referenceFields["expires_in"] as? Int)
            #expect(left > 3500 && left - referenceLeft >= 0 && left - referenceLeft <= apart + 1, "\(left) \(referenceLeft) \(apart)")

            // An unknown profile, and one whose name needs escaping in JSON: the same refusal.
            for (front, name) in [(unknown, "nope"), (escaped, #"we"ird\name"#)] {
                let reference = try full(stack, ["token", "--profile", name])
                #expect(front.status != 0 && front.status == reference.status)
                #expect(front.stderr == reference.stderr && front.stderr.contains("no profile named '\(name)'"), "\(front.stderr)")
            }
        }
    }

    @Test func withoutADaemonOrSignedOutTheFrontSaysWhatAuthctlFullSays() async throws {
        try await Stack.running("token-signed-out", lifetime: 3600) { stack in
            let front = try stack.authctl(["token"])
            let reference = try full(stack, ["token"])
            #expect(front.status == 3 && reference.status == 3)
            #expect(front.stderr == reference.stderr && front.stderr.contains("authd is not running"), "\(front.stderr)")

            try stack.startDaemon()
            let signedOut = try stack.authctl(["token"])
            let referenceSignedOut = try full(stack, ["token"])
            #expect(signedOut.status == 4 && referenceSignedOut.status == 4)
            #expect(signedOut.stderr == referenceSignedOut.stderr && signedOut.stderr.contains("authctl login"), "\(signedOut.stderr)")
            #expect(signedOut.stdout.isEmpty)
        }
    }

    @Test func optionsTheFrontDoesNotKnowReachAuthctlFull() async throws {
        try await Stack.running("token-usage", lifetime: 3600) { stack in
            let help = try stack.authctl(["token", "--help"])
            #expect(help.status == 0 && help.stdout.contains("USAGE: authctl token"), "\(help.stdout)")
            #expect(!help.stdout.contains("answer-fd"))
            let typo = try stack.authctl(["token", "--min-vaild", "5"])
            #expect(typo.status == 64 && typo.stderr.contains("Unknown option '--min-vaild'"), "\(typo.stderr)")
            let negative = try stack.authctl(["token", "--min-valid=-1"])
            #expect(negative.status == 64 && negative.stderr.contains("--min-valid must not be negative"), "\(negative.stderr)")
        }
    }
}
