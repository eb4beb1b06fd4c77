import AuthTestSupport
import Foundation
import Testing

/// No secret travels on authctl's command line, where every user of the computer can read it
/// (`/proc/PID/cmdline`): codes are typed without echo or read from standard input, a provider's
/// access token comes from a file; a secret given as an argument is refused before anything is
/// sent, and the messages that name the next command show no secret in it.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct SecretArgumentTests {
    @Test func secretsGivenAsArgumentsAreRefusedBeforeAnythingIsSent() async throws {
        try await offPool {
            // No daemon behind the socket: a command that tried to send would exit 3, not 64.
            var environment = ProcessInfo.processInfo.environment
            environment["AUTHD_SOCKET"] = FileManager.default.temporaryDirectory.appendingPathComponent("authd-none-\(UUID().uuidString)/s.sock").path
            let code = try runCommand(Binaries.path("authctl"), ["verify", "--email", "arg@example.com", "not-a-recorded-code"],
                                      environment: environment, timeout: 30)
            #expect(code.status == 64, "\(code.stderr)")
            #expect(code.stderr.contains("/proc/PID/cmdline") && code.stderr.contains("'authctl verify --email arg@example.com'"), "\(code.stderr)")
            #expect(!code.stderr.contains("not-a-recorded-code"), "the refusal repeats the code")
            let token = try runCommand(Binaries.path("authctl"), ["login", "--provider", "google", "--id-token-file", "/dev/null",
                                                                  "--access-token", "not-a-recorded-token"], environment: environment, timeout: 30)
            #expect(token.status == 64, "\(token.stderr)")
            #expect(token.stderr.contains("--access-token-file"), "\(token.stderr)")
            #expect(!token.stderr.contains("not-a-recorded-token"))
            let both = try runCommand(Binaries.path("authctl"), ["login", "--provider", "google", "--id-token-file", "-", "--access-token-file", "-"],
                                      environment: environment, timeout: 30)
            #expect(both.status == 64, "\(both.stderr)")
        }
    }

    @Test func codesComeFromStandardInputOrAPromptThatDoesNotEcho() async throws {
        try await Stack.running("code-input", lifetime: 3600) { stack in
            try stack.startDaemon()
            let email = "code-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let sent = try stack.authctl(["login", "--otp", "--email", email, "--create-user", "--send-only"])
            #expect(sent.status == 0, "\(sent.stderr)")
            #expect(sent.stderr.contains("Finish with: authctl verify --email \(email) (it asks for the code)"), "\(sent.stderr)")
            #expect(!sent.stderr.contains("CODE"))
            // `-`, as scripts written when the code was an argument may pass it, reads standard input.
            let code = try stack.outboxCode(to: email, type: "signup")
            let dash = try stack.authctl(["verify", "--email", email, "-"], input: code + "\n")
            #expect(dash.status == 0, "\(dash.stderr)")
            let empty = try stack.authctl(["verify", "--email", email], input: "\n")
            #expect(empty.status == 1)
            #expect(empty.stderr.contains("the code is empty"))

            // On a real pseudo-terminal the code is asked for and not echoed. The driver gets the
            // code on its standard input, not on its own command line.
            _ = try stack.authctl(["login", "--otp", "--email", email, "--send-only"])
            let magic = try stack.outboxCode(to: email, type: "magiclink")
            let driver = """
                import os, pty, sys, time
                code = sys.stdin.readline().strip().encode()
                pid, fd = pty.fork()
                if pid == 0:
                    os.execv(sys.argv[1], [sys.argv[1], "verify", "--email", sys.argv[2], "--type", "magiclink"])
                out = b""
                deadline = time.time() + 20
                while b"Code:" not in out and time.time() < deadline:
                    out += os.read(fd, 1024)
                os.write(fd, code + b"\\n")
                while time.time() < deadline:
                    try:
                        chunk = os.read(fd, 1024)
                    except OSError:
                        break
                    if not chunk:
                        break
                    out += chunk
                _, status = os.waitpid(pid, 0)
                print("exit=%d" % os.waitstatus_to_exitcode(status))
                print("echoed=%s" % (code in out))
                print("transcript=" + repr(out.replace(code, b"<code>")))
                """
            let result = try runCommand("/usr/bin/python3", ["-c", driver, Binaries.path("authctl"), email], environment: stack.environment,
                                        input: magic + "\n", timeout: 40)
            #expect(result.stdout.contains("exit=0"), "\(result.stdout) \(result.stderr)")
            #expect(result.stdout.contains("Signed in as \(email)"))
            #expect(result.stdout.contains("echoed=False"), "the code was echoed: \(result.stdout)")
        }
    }

    @Test func theProvidersAccessTokenComesFromAFile() async throws {
        try await Stack.running("at-file", lifetime: 3600) { stack in
            try stack.startDaemon()
            let email = "at-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let idToken = try stack.file("id-token", contents: try stack.mintIDToken(provider: "google", email: email))
            let missing = try stack.authctl(["login", "--provider", "google", "--id-token-file", idToken,
                                             "--access-token-file", stack.directory.appendingPathComponent("absent").path])
            #expect(missing.status == 1)
            #expect(missing.stderr.contains("cannot read an access token from"), "\(missing.stderr)")
            #expect(try stack.statusJSON()["state"] as? String == "signed_out")
            let accessToken = try stack.file("access-token", contents: "provider-access-token-\(UUID().uuidString)\n")
            let signedIn = try stack.authctl(["login", "--provider", "google", "--id-token-file", idToken, "--access-token-file", accessToken])
            #expect(signedIn.status == 0, "\(signedIn.stderr)")
            #expect((try stack.statusJSON()["user"] as? [String: Any])?["email"] as? String == email)
        }
    }
}
