import AuthTestSupport
import Foundation
import Testing

/// Per-app access through the real binaries: a profile that asks holds an app's token request
/// until `authctl apps allow` or the desktop notification decides, remembers the decision across
/// a restart, and refuses a denied app. Serialized: one test runs a notification service on the
/// suite's session bus, which the other must not see.
@Suite(.serialized, .enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct AppAccessTests {
    /// A client app: one request on the socket, its answer printed.
    static let app = """
        import json, socket, sys
        s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(60)
        s.sendall(json.dumps({"jsonrpc": "2.0", "id": 1, "method": sys.argv[2], "params": json.loads(sys.argv[3])}).encode() + b"\\n")
        data = b""
        while not data.endswith(b"\\n"):
            chunk = s.recv(65536)
            if not chunk: break
            data += chunk
        answer = json.loads(data or b"{}")
        if "result" in answer: print("result " + ("token" if "access_token" in answer["result"] else json.dumps(answer["result"])))
        else: print("error " + json.dumps(answer.get("error")))
        """

    private func python(_ stack: Stack, _ method: String, _ params: String = "{}", name: String, interpreter: String = "/usr/bin/python3") throws -> Spawned {
        try Spawned(interpreter, ["-c", Self.app, stack.socketPath, method, params], environment: stack.environment, in: stack.directory, name: name)
    }

    private func apps(_ stack: Stack) throws -> [[String: Any]] {
        let result = try stack.authctl(["apps", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return object?["apps"] as? [[String: Any]] ?? []
    }

    @Test func anAppWaitsUntilAllowedIsRememberedAndCanBeDenied() async throws {
        try await Stack.running("apps", lifetime: 3600) { stack in
            let arguments = ["--access", "ask", "--approval-timeout", "60"]
            var daemon = try stack.startSignedIn(email: "apps@example.com", password: "apps-password", daemonArguments: arguments)
            let python = try FileManager.default.destinationOfSymbolicLink(atPath: "/usr/bin/python3")
            let executable = python.hasPrefix("/") ? python : "/usr/bin/" + python

            // The app's request waits, listed as pending.
            let first = try self.python(stack, "session.token", name: "app-1")
            var pending = false
            for _ in 0..<200 where !pending {
                pending = try apps(stack).contains { $0["app"] as? String == executable && $0["access"] as? String == "pending" }
                if !pending { usleep(50_000) }
            }
            let listed = try stack.authctl(["apps"]).stdout
            #expect(pending, "not listed as pending: \(listed)")
            #expect(first.stdout.isEmpty)
            #expect(try stack.authctl(["apps"]).stdout.contains(executable))

            // Another program of the user cannot let itself in.
            let impostor = try self.python(stack, "apps.decide", #"{"app":"\#(executable)","decision":"allow"}"#, name: "impostor")
            #expect(impostor.waitForOutput { $0.contains("error") })
            #expect(impostor.stdout.contains("only authctl can see, allow or deny apps or change the default profile"))

            // authctl allows it by the name on $PATH; the waiting request is answered at once.
            var plainPath = stack.environment
            plainPath["PATH"] = "/usr/bin:/bin"
            let allow = try stack.authctl(["apps", "allow", "python3"], environment: plainPath)
            #expect(allow.status == 0, "\(allow.stderr)")
            #expect(allow.stderr.contains("\(executable) is now allowed"))
            #expect(first.waitForOutput { $0.contains("result token") }, "\(first.stdout) \(first.stderr)")
            let status = try stack.authctl(["status"])
            #expect(status.stdout.contains("App:      \(executable): 1 token, last token"), "\(status.stdout)")

            // Remembered across a restart: no waiting.
            daemon.stop()
            daemon = try stack.startDaemon(extra: arguments)
            let second = try self.python(stack, "session.token", name: "app-2")
            #expect(second.waitForOutput(timeout: 10) { $0.contains("result token") }, "\(second.stdout) \(second.stderr)")

            // Denied: a clear error, with what to run to change it.
            #expect(try stack.authctl(["apps", "deny", executable]).status == 0)
            let third = try self.python(stack, "session.token", name: "app-3")
            #expect(third.waitForOutput(timeout: 10) { $0.contains("error") })
            #expect(third.stdout.contains("app_denied") && third.stdout.contains("authctl apps allow \(executable)"), "\(third.stdout)")
            let saved = try String(contentsOfFile: stack.directory.appendingPathComponent("state/authd/apps.json").path, encoding: .utf8)
            #expect(saved.contains(executable) && saved.contains("denied"))
            _ = daemon
        }
    }

    @Test func theDesktopNotificationAllowsOrDenies() async throws {
        let bus = try #require(ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"], "no session bus")
        try await Stack.running("notify", lifetime: 3600) { stack in
            try stack.startSignedIn(email: "notify@example.com", password: "notify-password", daemonArguments: ["--access", "ask", "--approval-timeout", "60"])
            let python = try FileManager.default.destinationOfSymbolicLink(atPath: "/usr/bin/python3")
            let executable = python.hasPrefix("/") ? python : "/usr/bin/" + python

            // Other tests' daemons share this bus and show their own notifications (their apps'
            // questions, sessions the server ended): this test answers only its own.
            let allowing = try FakeNotificationService(address: bus, reaction: .ignore)
            let first = try self.python(stack, "session.token", name: "notified-1")
            let shown = try #require(Self.question(on: allowing, profile: stack.profile))
            // The user clicks Allow: the waiting request is answered, and the choice is remembered.
            allowing.click("allow", on: shown.id)
            #expect(first.waitForOutput(timeout: 30) { $0.contains("result") }, "\(first.stdout) \(first.stderr)")
            #expect(first.stdout.contains("result token"), "\(first.stdout)")
            #expect(shown.appName == "authd" && shown.actions == ["allow", "Allow", "deny", "Deny"])
            #expect(shown.body.contains(executable) && shown.body.contains("'\(stack.profile)'"), "\(shown.body)")
            allowing.stop()
            #expect(try apps(stack).contains { $0["app"] as? String == executable && $0["access"] as? String == "allowed" })

            // Another executable, and the user clicks Deny: a clear refusal, remembered too.
            let other = stack.directory.appendingPathComponent("other-python").path
            try FileManager.default.copyItem(atPath: executable, toPath: other)
            let denying = try FakeNotificationService(address: bus, reaction: .ignore)
            let second = try self.python(stack, "session.token", name: "notified-2", interpreter: other)
            let asked = try #require(Self.question(on: denying, profile: stack.profile))
            #expect(asked.body.contains(other))
            denying.click("deny", on: asked.id)
            #expect(second.waitForOutput(timeout: 30) { $0.contains("error") }, "\(second.stdout) \(second.stderr)")
            #expect(second.stdout.contains("app_denied"), "\(second.stdout)")
            #expect(denying.shown.filter { $0.body.contains("'\(stack.profile)'") }.count == 1)
            denying.stop()
            #expect(try apps(stack).contains { $0["app"] as? String == other && $0["access"] as? String == "denied" })
        }
    }

    /// The question `service` was shown about `profile`, waiting up to 30 s for it.
    static func question(on service: FakeNotificationService, profile: String) -> FakeNotificationService.Shown? {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let shown = service.shown.first(where: { $0.actions.contains("allow") && $0.body.contains("'\(profile)'") }) { return shown }
            usleep(50_000)
        }
        return nil
    }
}
