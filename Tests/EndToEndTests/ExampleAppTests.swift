import AuthTestSupport
import Foundation
import Testing

/// The two example apps in Examples/ against a live authd and the development server: each prints
/// the user's profile, and prints it again when `authctl user update` makes authd send USER_UPDATED.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct ExampleAppTests {
    static let root = Binaries.repositoryRoot.path
    /// Built by its own manifest, as an app outside authd is: `scripts/check-client-package`.
    static let swiftExample = root + "/Examples/swift-profile/.build/debug/authd-example-profile"

    @Test(arguments: [
        ("swift", [swiftExample]),
        ("python", ["/usr/bin/python3", root + "/Examples/python-profile/profile.py"]),
    ])
    func printsTheProfileAndAgainOnUserUpdated(_ language: String, _ command: [String]) async throws {
        if language == "swift" { try Self.requireSwiftExample() }
        try await Stack.running("example-\(language)", lifetime: 3600) { stack in
            try stack.startSignedIn(email: "\(language)-example@example.com", password: "example-password")
            var environment = stack.environment
            environment["SUPABASE_ANON_KEY"] = "e2e-anon-key"
            environment["PYTHONPATH"] = Self.root + "/clients/python"
            let app = try Spawned(command[0], Array(command.dropFirst()) + [stack.profile], environment: environment,
                                  in: stack.directory, name: "example-\(language)")
            defer { app.stop() }
            #expect(app.waitForOutput { $0.contains("user \(language)-example@example.com id=") }, "\(app.stdout) \(app.stderr)")
            let update = try stack.authctl(["user", "update", "--data", "nickname=ada"])
            #expect(update.status == 0, "\(update.stderr)")
            #expect(app.waitForOutput { $0.contains(#""nickname":"ada""#) }, "\(app.stdout) \(app.stderr)")
            let lines = app.stdout.split(separator: "\n")
            #expect(lines.count == 2, "\(lines)")
            // Asked for directly, so that the token is not in the transcript the scan reads.
            let token = try runCommand(Binaries.path("authctl"), ["token"], environment: stack.environment).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(token.split(separator: ".").count == 3)
            try stack.expectNoSecretPrinted([token, "example-password"], besides: [app])
        }
    }

    private static func requireSwiftExample() throws {
        guard FileManager.default.isExecutableFile(atPath: swiftExample) else {
            throw StackError("\(swiftExample) is missing: build the example package with scripts/check-client-package")
        }
    }

    @Test func withoutTheAnonKeyTheExampleSaysWhatToSet() async throws {
        try await Stack.running("example-nokey", lifetime: 3600) { stack in
            try Self.requireSwiftExample()
            let result = try runCommand(Self.swiftExample, [], environment: stack.environment)
            #expect(result.status == 1)
            #expect(result.stderr.contains("set SUPABASE_ANON_KEY"))
        }
    }
}
