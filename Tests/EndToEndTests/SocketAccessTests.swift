import AuthTestSupport
import Foundation
import Testing

/// Who may talk to the daemon, and how the password is asked for.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct SocketAccessTests {
    @Test func theSocketAndItsDirectoryArePrivate() async throws {
        try await Stack.running("modes", lifetime: 3600) { stack in
            try stack.startDaemon()
            let directory = (stack.socketPath as NSString).deletingLastPathComponent
            let directoryMode = try FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int
            let socketMode = try FileManager.default.attributesOfItem(atPath: stack.socketPath)[.posixPermissions] as? Int
            #expect(directoryMode == 0o700)
            #expect(socketMode == 0o600)
        }
    }

    /// authd moves its socket into place with rename(), which would replace anything: a file that
    /// is not a socket stays, and authd says why it will not start.
    @Test func aFileAtTheSocketPathIsNeverReplaced() async throws {
        try await Stack.running("not-a-socket", lifetime: 3600) { stack in
            let directory = (stack.socketPath as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try Data("precious".utf8).write(to: URL(fileURLWithPath: stack.socketPath))
            let daemon = try Spawned(Binaries.path("authd"), ["--url", stack.serverURL, "--anon-key", "k"], environment: stack.environment,
                                     in: stack.directory, name: "authd-not-a-socket")
            defer { daemon.stop() }
            let deadline = Date().addingTimeInterval(20)
            while !daemon.process.hasEnded, Date() < deadline { usleep(20_000) }
            #expect(daemon.process.hasEnded, "authd started with a regular file at its socket path")
            #expect(daemon.stderr.contains("is not a socket; refusing to replace it"), "\(daemon.stderr)")
            #expect(try String(contentsOfFile: stack.socketPath, encoding: .utf8) == "precious")
            #expect(!FileManager.default.fileExists(atPath: stack.socketPath + ".new"))
        }
    }

    @Test(.enabled(if: getuid() == 0, "needs root to run a client as another user"))
    func aPeerWithAnotherUIDIsRefusedBeforeItsRequestIsRead() async throws {
        try await Stack.running("peer", lifetime: 3600) { stack in
            let daemon = try stack.startDaemon()
            // Loosen the permissions on purpose, so that only the daemon's own check stands in the way.
            let directory = (stack.socketPath as NSString).deletingLastPathComponent
            chmod(stack.directory.path, 0o711)
            chmod(directory, 0o711)
            chmod(stack.socketPath, 0o777)
            let client = """
                import socket, sys
                s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1])
                try:
                    s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"hello"}\\n')
                except OSError:
                    pass
                try:
                    data = s.recv(65536)
                    print("reply=" + repr(data))
                except socket.timeout:
                    print("timed out: the connection was left open")
                except ConnectionResetError:
                    print("reply=b''")
                """
            let result = try runCommand("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", client,
                                                             stack.socketPath], environment: ["PATH": "/usr/bin:/bin"], timeout: 20)
            // One line saying why, then the close; never an answer to the hello it sent.
            #expect(result.stdout.contains(#""reason":"access_denied""#), "\(result.stdout) \(result.stderr)")
            #expect(result.stdout.contains("this client runs as uid 65534"))
            #expect(!result.stdout.contains("protocol_version"))
            let log = daemon.stderr
            #expect(log.contains("refused connection from another user"))
            #expect(log.contains("client.uid=65534"))
            #expect(log.contains("client.pid="))
            // The request was never read: no hello is logged from the refused pid (the harness's own
            // hello, sent while waiting for the daemon, is).
            let refusal = log.split(separator: "\n").first { $0.contains("refused connection from another user") }
            let refusedPID = refusal?.split(separator: " ").first { $0.hasPrefix("client.pid=") }
            #expect(refusedPID != nil)
            if let refusedPID {
                #expect(!log.split(separator: "\n").contains { $0.contains("rpc.method=hello") && $0.contains(refusedPID) })
            }
            #expect(try stack.authctl(["status"]).status == 4) // the owner is still served
        }
    }

    @Test func thePasswordPromptDoesNotEcho() async throws {
        try await Stack.running("prompt", lifetime: 3600) { stack in
            try stack.signUp(email: "prompt@example.com", password: "prompt-secret-1")
            try stack.startDaemon()
            // A real pseudo-terminal: authctl opens /dev/tty, turns echo off and reads the password.
            // The driver gets the password on its standard input, never on its command line.
            let driver = """
                import os, pty, sys, time
                password = sys.stdin.readline().strip().encode()
                pid, fd = pty.fork()
                if pid == 0:
                    os.execv(sys.argv[1], [sys.argv[1], "login", "--email", "prompt@example.com"])
                out = b""
                deadline = time.time() + 20
                while b"Password for" not in out and time.time() < deadline:
                    out += os.read(fd, 1024)
                os.write(fd, password + b"\\n")
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
                print("transcript=" + repr(out))
                """
            let result = try runCommand("/usr/bin/python3", ["-c", driver, Binaries.path("authctl")], environment: stack.environment,
                                        input: "prompt-secret-1\n", timeout: 40)
            #expect(result.stdout.contains("exit=0"), "\(result.stdout) \(result.stderr)")
            #expect(result.stdout.contains("Password for prompt@example.com"))
            #expect(result.stdout.contains("Signed in as prompt@example.com"))
            #expect(!result.stdout.contains("prompt-secret-1"), "the password was echoed")
        }
    }

    @Test func withoutATerminalLoginAsksForPasswordStdin() async throws {
        try await Stack.running("notty", lifetime: 3600) { stack in
            try stack.startDaemon()
            let result = try runCommand("/usr/bin/setsid", ["--wait", Binaries.path("authctl"), "login", "--email", "a@example.com"],
                                        environment: stack.environment, timeout: 20)
            #expect(result.status == 1)
            #expect(result.stderr.contains("--password-stdin"))
        }
    }
}

/// The daemon's memory stays its own: not dumpable, no core dumps.
@Suite struct ProcessHardeningTests {
    @Test(.enabled(if: getuid() == 0, "needs root to run the daemon and a client as another user"))
    func anotherProcessOfTheSameUserCannotReadTheDaemonsProc() async throws {
        try await offPool {
            // A world-traversable copy of the daemon, run as uid 65534, with a socket directory of its own.
            let (root, home) = try nobodysHome("dump")
            defer { try? FileManager.default.removeItem(at: root) }
            let script = """
                # Copied here, by a process that forks nothing meanwhile: a copy written from the
                # test process could be held open by a child another test forks (ETXTBSY on exec).
                cp "$2" "$1/../authd" && set -- "$1" "$1/../authd"
                cd "$1"
                setpriv --reuid=65534 --regid=65534 --clear-groups env -i HOME="$1" AUTHD_SOCKET="$1/run/authd.sock" \
                    "$2" --profile dump --url http://127.0.0.1:9 --anon-key k >"$1/authd.err" 2>&1 &
                daemon=$!
                for _ in $(seq 100); do [ -S "$1/run/authd.sock" ] && break; sleep 0.1; done
                setpriv --reuid=65534 --regid=65534 --clear-groups sleep 10 &
                control=$!
                sleep 0.2
                as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
                as_nobody cat /proc/$control/environ >/dev/null 2>&1 && echo "control: readable"
                as_nobody cat /proc/$daemon/environ >/dev/null 2>&1 && echo "daemon: readable" || echo "daemon: refused"
                grep "Max core file size" /proc/$daemon/limits
                kill -KILL $daemon $control
                wait
                """
            let result = try runCommand("/bin/bash", ["-c", script, "dump", home, Binaries.path("authd")], environment: ["PATH": "/usr/bin:/bin"], timeout: 60)
            #expect(result.stdout.contains("control: readable"), "the check cannot tell: \(result.stdout) \(result.stderr)")
            #expect(result.stdout.contains("daemon: refused"), "\(result.stdout) \(result.stderr)")
            #expect(result.stdout.contains(try #require(try? Regex(#"Max core file size\s+0\s+0"#))), "\(result.stdout)")
        }
    }
}
