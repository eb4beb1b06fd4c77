import AuthProtocol
import AuthTestSupport
import Foundation
import Testing

/// Under `access = "ask"`, an app the user denied, or one still waiting, reaches nothing of the
/// session or the account by any method: not only the token. Through the real binaries, with the
/// development server counting what reaches it.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct AppGateTests {
    /// Sends every line of a file at once on one connection and prints each answer as it comes,
    /// for `seconds`; when a fourth argument names a file, sends its lines too, on the same
    /// connection, once it appears. A file, not the lines themselves: they hold passwords, and
    /// the secret scan fails on a password on any command line.
    static let client = """
        import json, os, socket, sys, time
        s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(0.2)
        s.sendall(open(sys.argv[2], "rb").read())
        end = time.time() + float(sys.argv[3]); data = b""
        later = sys.argv[4] if len(sys.argv) > 4 else None
        while time.time() < end:
            if later and os.path.exists(later): s.sendall(open(later, "rb").read()); later = None
            try: chunk = s.recv(65536)
            except socket.timeout: continue
            if not chunk: break
            data += chunk
            while b"\\n" in data:
                line, data = data.split(b"\\n", 1); print(line.decode(), flush=True)
        """

    /// Every method that reads or changes the session or the account, with parameters that would
    /// do harm if they got through: a new password, a sign-in as somebody else, a global sign-out.
    static let guarded: [(method: String, params: String)] = [
        (Methods.Status.name, "{}"),
        (Methods.GetUser.name, "{}"),
        (Methods.UpdateUser.name, #"{"password":"taken-over-password"}"#),
        (Methods.SignInWithPassword.name, #"{"email":"attacker@example.com","password":"attacker-password"}"#),
        (Methods.SignOut.name, #"{"scope":"global"}"#),
        (Methods.Subscribe.name, "{}"),
        (Methods.OAuthBegin.name, #"{"provider":"github","redirect_to":"http://127.0.0.1:9/callback"}"#),
        (Methods.OAuthComplete.name, #"{"callback_url":"http://127.0.0.1:9/callback?code=x"}"#),
        (Methods.OAuthWait.name, #"{"flow_id":"x"}"#),
        (Methods.SignUp.name, #"{"email":"attacker2@example.com","password":"attacker-password"}"#),
        (Methods.SendCode.name, #"{"email":"gate@example.com"}"#),
        (Methods.VerifyCode.name, #"{"email":"gate@example.com","code":"123456"}"#),
        (Methods.SignInWithIdToken.name, #"{"provider":"google","id_token":"x.y.z"}"#),
        (Methods.Reauthenticate.name, "{}"),
        (Methods.Claims.name, "{}"),
        (Methods.Token.name, "{}"),
    ]
    static let userToolOnly = [Methods.ListApps.name, Methods.DecideApp.name, Methods.SetDefaultProfile.name]

    static func lines(_ calls: [(method: String, params: String)]) -> String {
        calls.enumerated().map { #"{"jsonrpc":"2.0","id":\#($0.offset + 1),"method":"\#($0.element.method)","params":\#($0.element.params)}"# + "\n" }.joined()
    }

    @Test func aDeniedAppIsRefusedEveryMethodAndAWaitingOneGetsNothingUntilAllowed() async throws {
        try await Stack.running("gate", lifetime: 3600) { stack in
            try stack.signUp(email: "attacker@example.com", password: "attacker-password")
            try stack.startSignedIn(email: "gate@example.com", password: "gate-password",
                                    daemonArguments: ["--access", "ask", "--approval-timeout", "60"])
            let python = try FileManager.default.destinationOfSymbolicLink(atPath: "/usr/bin/python3")
            let denied = python.hasPrefix("/") ? python : "/usr/bin/" + python
            let waiting = stack.directory.appendingPathComponent("waiting-python").path
            try FileManager.default.copyItem(atPath: denied, toPath: waiting)
            #expect(try stack.authctl(["apps", "deny", denied]).status == 0)
            let before = try requests(stack)

            let calls = Self.guarded + Self.userToolOnly.map { ($0, #"{"app":"x","decision":"allow"}"#) }
            let requestFile = try stack.file("requests", contents: Self.lines(calls))
            let deniedApp = try Spawned(denied, ["-c", Self.client, stack.socketPath, requestFile, "6"],
                                        environment: stack.environment, in: stack.directory, name: "denied-app")
            let waitingApp = try Spawned(waiting, ["-c", Self.client, stack.socketPath, requestFile, "6"],
                                         environment: stack.environment, in: stack.directory, name: "waiting-app")
            #expect(deniedApp.waitForOutput(timeout: 20) { $0.split(separator: "\n").count >= calls.count }, "\(deniedApp.stdout)")
            let answers = deniedApp.stdout.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
            for (index, call) in calls.enumerated() {
                let answer = answers.first { ($0["id"] as? Int) == index + 1 }
                let reason = ((answer?["error"] as? [String: Any])?["data"] as? [String: Any])?["reason"] as? String
                let expected = Self.userToolOnly.contains(call.method) ? "access_denied" : "app_denied"
                #expect(reason == expected, "\(call.method) from a denied app: \(String(describing: answer))")
            }
            // The waiting app: nothing answered while the user has not decided (its requests wait).
            waitingApp.process.waitUntilExit()
            let waitingAnswers = waitingApp.stdout.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
            for answer in waitingAnswers {
                let reason = ((answer["error"] as? [String: Any])?["data"] as? [String: Any])?["reason"] as? String
                let method = calls[((answer["id"] as? Int) ?? 1) - 1].method
                #expect(Self.userToolOnly.contains(method) && reason == "access_denied", "a waiting app got an answer: \(answer)")
            }
            #expect(waitingAnswers.count == Self.userToolOnly.count, "\(waitingApp.stdout)")

            // Nothing reached the server on behalf of either app; the session is the one it was.
            let after = try requests(stack)
            for endpoint in ["PUT /user", "GET /user", "POST /token", "POST /logout", "POST /signup", "POST /otp", "POST /verify"] {
                #expect(after[endpoint, default: 0] == before[endpoint, default: 0], "\(endpoint): \(before) → \(after)")
            }
            let status = try stack.statusJSON()
            #expect((status["user"] as? [String: Any])?["email"] as? String == "gate@example.com", "\(status)")
            #expect(try stack.authctl(["login", "--email", "gate@example.com", "--password-stdin"], input: "gate-password\n").status == 0,
                    "the password was changed")

            // Once the user allows the waiting app, a call of it goes through.
            #expect(try stack.authctl(["apps", "allow", waiting]).status == 0)
            let allowed = try Spawned(waiting, ["-c", Self.client, stack.socketPath,
                                                try stack.file("status-request", contents: Self.lines([(Methods.Status.name, "{}")])), "10"],
                                      environment: stack.environment, in: stack.directory, name: "allowed-app")
            #expect(allowed.waitForOutput(timeout: 15) { $0.contains("\"result\"") }, "\(allowed.stdout)")
            allowed.stop()
        }
    }

    /// `authctl apps allow NAME` never lands on another program that shares the name: with a
    /// `python3` listed from another folder than the one on $PATH, the bare name is refused and
    /// the full paths named.
    @Test func aBareNameThatCouldMeanTwoProgramsIsRefused() async throws {
        try await Stack.running("ambiguous", lifetime: 3600) { stack in
            try stack.startSignedIn(email: "ambiguous@example.com", password: "ambiguous-password",
                                    daemonArguments: ["--access", "ask", "--approval-timeout", "60"])
            let folder = stack.directory.appendingPathComponent("bin")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let lookalike = folder.appendingPathComponent("python3").path
            try FileManager.default.copyItem(atPath: URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path, toPath: lookalike)
            let waiting = try Spawned(lookalike, ["-c", Self.client, stack.socketPath,
                                                  try stack.file("token-request", contents: Self.lines([(Methods.Token.name, "{}")])), "20"],
                                      environment: stack.environment, in: stack.directory, name: "lookalike")
            defer { waiting.stop() }
            var listed = false
            for _ in 0..<200 where !listed {
                listed = try stack.authctl(["apps"]).stdout.contains(lookalike)
                if !listed { usleep(50_000) }
            }
            #expect(listed)
            var plainPath = stack.environment
            plainPath["PATH"] = "/usr/bin:/bin"
            let allow = try stack.authctl(["apps", "allow", "python3"], environment: plainPath)
            #expect(allow.status == 64, "\(allow.stderr)")
            #expect(allow.stderr.contains("could mean") && allow.stderr.contains(lookalike), "\(allow.stderr)")
            #expect(try stack.authctl(["apps", "--json"]).stdout.contains("allowed") == false)
            // The full path decides, and only for that program.
            #expect(try stack.authctl(["apps", "allow", lookalike]).status == 0)
            #expect(waiting.waitForOutput(timeout: 15) { $0.contains("access_token") }, "\(waiting.stdout)")
        }
    }

    /// Denying an app that subscribed while it was allowed stops its events at once.
    @Test func aDeniedAppsSubscriptionGetsNothingMore() async throws {
        try await Stack.running("deny-events", lifetime: 3600) { stack in
            try stack.startSignedIn(email: "events@example.com", password: "events-password",
                                    daemonArguments: ["--access", "ask", "--approval-timeout", "60"])
            let python = URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path
            #expect(try stack.authctl(["apps", "allow", python]).status == 0)
            let afterLogout = stack.directory.appendingPathComponent("after-logout-request").path
            let subscriber = try Spawned(python, ["-c", Self.client, stack.socketPath,
                                                  try stack.file("subscribe-request", contents: Self.lines([(Methods.Subscribe.name, "{}")])), "60",
                                                  afterLogout],
                                         environment: stack.environment, in: stack.directory, name: "subscriber")
            defer { subscriber.stop() }
            #expect(subscriber.waitForOutput { $0.contains("INITIAL_SESSION") }, "\(subscriber.stdout)")
            #expect(try stack.authctl(["user", "update", "--data", "step=one"]).status == 0)
            #expect(subscriber.waitForOutput { $0.contains("USER_UPDATED") }, "events reach the allowed app: \(subscriber.stdout)")

            #expect(try stack.authctl(["apps", "deny", python]).status == 0)
            #expect(try stack.authctl(["user", "update", "--data", "step=two"]).status == 0)
            #expect(try stack.authctl(["logout"]).status == 0)
            // Each event was queued on the subscriber's connection (or dropped) before the command
            // that caused it returned. A request the app sends now is answered on that connection
            // after them: once the answer is in, any event that got through is in too.
            let request = #"{"jsonrpc":"2.0","id":2,"method":"\#(Methods.Status.name)","params":{}}"# + "\n"
            try FileManager.default.moveItem(atPath: try stack.file("after-logout-request.tmp", contents: request), toPath: afterLogout)
            #expect(subscriber.waitForOutput(timeout: 30) { $0.contains(#""id":2"#) }, "\(subscriber.stdout)")
            #expect(subscriber.stdout.contains("app_denied"), "\(subscriber.stdout)")
            #expect(subscriber.stdout.components(separatedBy: "USER_UPDATED").count == 2, "\(subscriber.stdout)")
            #expect(!subscriber.stdout.contains("SIGNED_OUT"), "\(subscriber.stdout)")
        }
    }

    /// Requests the development server answered, by method and path.
    private func requests(_ stack: Stack) throws -> [String: Int] {
        try stack.devStats()["requests"] as? [String: Int] ?? [:]
    }
}
