import AuthTestSupport
import Foundation
import Testing

/// Per-app access through the real binaries: a profile that asks holds an app's token request
/// until `authctl apps allow`, remembers the decision across a restart, and refuses a denied app.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
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

    private func python(_ stack: Stack, _ method: String, _ params: String = "{}", name: String) throws -> Spawned {
        try Spawned("/usr/bin/python3", ["-c", Self.app, stack.socketPath, method, params], environment: stack.environment, in: stack.directory, name: name)
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
            #expect(impostor.stdout.contains("only authctl can allow or deny apps"))

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
}
