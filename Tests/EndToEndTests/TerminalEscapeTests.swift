import AuthTestSupport
import Foundation
import Testing

/// Whatever the server, the daemon or a browser callback puts in a text, authctl shows its control
/// characters as escapes: an ESC, OSC or CSI sequence (also as one C1 character), DEL, a carriage
/// return or a line break inside a field never reaches the terminal raw, in human output or JSON.
/// A stand-in daemon (ours, so it passes the clients' uid check) answers every method with such
/// texts in every field authctl prints.
@Suite struct TerminalEscapeTests {
    /// ESC ] 0 ; … BEL sets the window title; ESC [ 2 J clears the screen; U+009B is CSI in one
    /// character; then DEL, a carriage return and a line break that would forge a line, and a
    /// right-to-left override that would show the rest backwards.
    static let hostile = "\u{1B}]0;owned\u{07}\u{1B}[2J\u{9B}31m\u{7F}\r\nState:    forged\u{202E}gpj.exe"
    /// How authctl shows it.
    static let shown = #"\x1b]0;owned\x07\x1b[2J\u{9b}31m\x7f\x0d\x0aState:    forged\u{202e}gpj.exe"#

    @Test func humanOutputAndErrorsShowControlCharactersAsEscapes() async throws {
        try await offPool {
            let daemon = try HostileDaemon(name: "human")
            defer { daemon.stop() }
            // Each command, and the texts of the hostile value it must show.
            let commands: [(arguments: [String], input: String?, shows: Int)] = [
                (["status"], nil, 5),                           // user, server, problem, keyring detail, profile
                (["user"], nil, 4),                             // id, email, a metadata key, creation date
                (["watch"], nil, 3),                            // profile, user, reason
                (["login", "--email", "a@example.com", "--password-stdin"], "pw-for-a-hostile-daemon\n", 1), // the error
                (["login", "--otp", "--email", "a@example.com", "--send-only"], nil, 2), // channel, address
                (["logout"], nil, 1),                           // the server's detail
                (["nonce"], nil, 2),
                (["doctor"], nil, 2),                           // keyring detail, server detail
            ]
            for command in commands {
                let result = try daemon.authctl(command.arguments, input: command.input)
                let printed = result.stdout + result.stderr
                #expect(Self.rawControls(in: printed).isEmpty,
                        "authctl \(command.arguments.joined(separator: " ")) printed raw controls \(Self.rawControls(in: printed)): \(printed.debugDescription)")
                #expect(printed.components(separatedBy: Self.shown).count - 1 >= command.shows,
                        "authctl \(command.arguments.joined(separator: " ")) did not show the text escaped \(command.shows) times: \(printed.debugDescription)")
            }
        }
    }

    @Test func jsonOutputEscapesDELAndC1Too() async throws {
        try await offPool {
            let daemon = try HostileDaemon(name: "json")
            defer { daemon.stop() }
            for arguments in [["status", "--json"], ["user", "--json"], ["watch", "--json"], ["nonce", "--json"], ["doctor", "--json"]] {
                let result = try daemon.authctl(arguments)
                #expect(Self.rawControls(in: result.stdout + result.stderr).isEmpty,
                        "authctl \(arguments.joined(separator: " ")): \((result.stdout + result.stderr).debugDescription)")
                // Still JSON, one object a line, and the same text once decoded.
                let decoded = try result.stdout.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) }
                #expect(decoded.contains { "\($0)".contains("owned") }, "authctl \(arguments): \(result.stdout) \(result.stderr)")
                if arguments[0] == "user" {
                    #expect((decoded.first as? [String: Any])?["email"] as? String == Self.hostile)
                }
            }
        }
    }

    @Test func aTokenThatIsNotAJWTIsNotPrinted() async throws {
        try await offPool {
            let daemon = try HostileDaemon(name: "token")
            defer { daemon.stop() }
            // The front finds no plain token and hands the answer to authctl-full, which refuses it.
            let result = try daemon.authctl(["token"])
            #expect(result.status == 1, "\(result.stderr)")
            #expect(result.stdout.isEmpty, "\(result.stdout.debugDescription)")
            #expect(result.stderr.contains("characters no JWT has"))
            #expect(!result.stderr.contains("owned"), "the refused token was quoted")
        }
    }

    /// The control characters in `text` that are not line breaks, as `U+XXXX`.
    static func rawControls(in text: String) -> [String] {
        text.unicodeScalars.filter { $0 != "\n" && ($0.value < 0x20 || (0x7F...0x9F).contains($0.value) || (0x202A...0x202E).contains($0.value)) }
            .map { "U+" + String($0.value, radix: 16) }
    }
}

/// A stand-in authd on a socket of its own that answers every method with `TerminalEscapeTests.hostile`
/// in each text field: status, user record, events, errors, codes, sign-out, nonce, doctor's checks.
final class HostileDaemon: @unchecked Sendable {
    // Unchecked: used from one test at a time.
    let directory: URL
    let socketPath: String
    private let process: Spawned

    private static let program = #"""
        import json, os, signal, socket, sys, threading
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
        evil = sys.argv[2]
        user = {"id": evil, "email": evil, "created_at": evil, "user_metadata": {evil: 1}, "app_metadata": {"providers": ["email"]}}
        status = {"profile": evil, "server": evil, "state": "signed_in", "user": {"id": evil, "email": evil}, "expires_at": 4000000000,
                  "degraded": {"reason": "offline", "detail": evil, "retry_at": 4000000000}, "keyring": "ok", "keyring_detail": evil}
        results = {
            "hello": {"protocol_version": "1.0", "daemon_version": "0", "capabilities": [], "profiles": ["p"], "default_profile": "p"},
            "session.status": status,
            "apps.list": {"apps": [], "policies": {}},
            "user.get": {"profile": "p", "user": user},
            "events.subscribe": {"subscribed": True},
            "session.token": {"access_token": "eyJ" + evil, "token_type": "bearer", "expires_at": 4000000000, "expires_in": 3600},
            "session.signOut": {"server_confirmed": False, "server_detail": evil, "status": dict(status, state="signed_out")},
            "session.sendCode": {"channel": evil, "sent_to": evil},
            "session.makeNonce": {"nonce": evil, "nonce_sha256": evil},
            "daemon.checkServer": {"server": evil, "reachable": False, "detail": evil},
        }
        errors = {"session.signInWithPassword": {"code": -32000, "message": evil, "data": {"reason": "invalid_credentials"}}}
        listener = socket.socket(socket.AF_UNIX)
        # Listening before it appears at its path: the test waits for the path, then connects.
        listener.bind(sys.argv[1] + ".binding")
        listener.listen(8)
        os.rename(sys.argv[1] + ".binding", sys.argv[1])
        def serve(connection):
            with connection, connection.makefile("rwb") as stream:
                for line in stream:
                    request = json.loads(line)
                    method, answer = request.get("method"), {"jsonrpc": "2.0", "id": request.get("id")}
                    if method == "session.signInWithRefreshToken":
                        return  # closed unanswered, as by an authd that stops while the call is out
                    if method in errors:
                        answer["error"] = errors[method]
                    else:
                        answer["result"] = results.get(method, {})
                    stream.write(json.dumps(answer).encode() + b"\n")
                    if method == "events.subscribe":
                        event = {"event": "REFRESH_FAILING", "profile": evil, "reason": evil, "status": status}
                        stream.write(json.dumps({"jsonrpc": "2.0", "method": "event", "params": event}).encode() + b"\n")
                        stream.flush()
                        return  # watch ends when the connection does
                    stream.flush()
        while True:
            threading.Thread(target=serve, args=(listener.accept()[0],), daemon=True).start()
        """#

    init(name: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("authd-hostile-\(name)-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        chmod(directory.path, 0o700)
        socketPath = directory.appendingPathComponent("authd.sock").path
        process = try Spawned("/usr/bin/python3", ["-c", Self.program, socketPath, TerminalEscapeTests.hostile],
                              environment: ["PATH": "/usr/bin:/bin"], in: directory, name: "hostile-daemon")
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socketPath) {
            guard Date() < deadline, !process.process.hasEnded else { throw StackError("the stand-in daemon did not start: \(process.stderr)") }
            usleep(20_000)
        }
    }

    func authctl(_ arguments: [String], input: String? = nil) throws -> Completed {
        var environment = ProcessInfo.processInfo.environment
        environment["AUTHD_SOCKET"] = socketPath
        environment["XDG_CONFIG_HOME"] = directory.appendingPathComponent("config").path
        return try runCommand(Binaries.path("authctl"), arguments, environment: environment, input: input, timeout: 30)
    }

    func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
