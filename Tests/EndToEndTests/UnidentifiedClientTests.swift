import AuthTestSupport
import Foundation
import Testing

/// A client whose executable authd cannot read is never merged into one "unknown" app that a
/// single decision could let in: under `access = "ask"` each such client is refused on its own,
/// saying why, while an identified client of the same user waits for the user's decision.
@Suite struct UnidentifiedClientTests {
    @Test(.enabled(if: getuid() == 0, "needs root to run the daemon and its clients as another user"))
    func aClientAuthdCannotIdentifyIsRefusedOnItsOwnUnderAsk() async throws {
        try await offPool {
            // The daemon and its clients run as uid 65534, without capabilities: a client that made
            // itself non-dumpable cannot have its /proc/<pid>/exe read, as under a hardened kernel.
            let (root, home) = try nobodysHome("unidentified")
            defer { try? FileManager.default.removeItem(at: root) }
            let client = """
                import ctypes, json, socket, sys
                if sys.argv[2] == "hidden":
                    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
                s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(3)
                s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"session.token","params":{}}\\n')
                try: print(sys.argv[2] + ": " + s.recv(65536).decode().strip())
                except socket.timeout: print(sys.argv[2] + ": no answer")
                """
            let script = """
                cp "$2" "$1/../authd" && set -- "$1" "$1/../authd" "$3"
                home="$1"; cd "$home"
                as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups env -i HOME="$home" PATH=/usr/bin:/bin "$@"; }
                # Not through the function: $! must be the daemon itself (setpriv and env exec it), not a subshell.
                setpriv --reuid=65534 --regid=65534 --clear-groups env -i HOME="$home" PATH=/usr/bin:/bin "$2" --profile hidden \
                    --url http://127.0.0.1:9 --anon-key k --access ask --socket "$1/run/authd.sock" --log-level debug >"$1/authd.err" 2>&1 &
                daemon=$!
                for _ in $(seq 100); do [ -S "$1/run/authd.sock" ] && break; sleep 0.1; done
                as_nobody python3 -c "$3" "$1/run/authd.sock" hidden &
                as_nobody python3 -c "$3" "$1/run/authd.sock" hidden &
                # One more waits for the user's decision while authd is asked to stop.
                as_nobody python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session.token\"}\n"); time.sleep(12)' "$1/run/authd.sock" &
                as_nobody python3 -c "$3" "$1/run/authd.sock" visible
                wait %2 %3
                kill -TERM $daemon
                for _ in $(seq 50); do kill -0 $daemon 2>/dev/null || break; sleep 0.1; done
                kill -0 $daemon 2>/dev/null && echo "stopped: no" || echo "stopped: yes"
                kill -KILL $daemon 2>/dev/null
                cat "$1/authd.err" >&2
                """
            let result = try runCommand("/bin/bash", ["-c", script, "unidentified", home, Binaries.path("authd"), client],
                                        environment: ["PATH": "/usr/bin:/bin"], timeout: 60)
            let hidden = result.stdout.split(separator: "\n").filter { $0.hasPrefix("hidden: ") }
            #expect(hidden.count == 2, "\(result.stdout) \(result.stderr)")
            for answer in hidden {
                #expect(answer.contains(#""reason":"app_denied""#) && answer.contains("cannot tell which program this is"), "\(answer)")
                #expect(answer.contains("/exe"), "the refusal says what could not be read: \(answer)")
            }
            // The identified client of the same user is asked about, not refused.
            #expect(result.stdout.contains("visible: no answer"), "\(result.stdout)")
            #expect(result.stderr.components(separatedBy: "refused a client authd cannot identify").count == 3, "\(result.stderr)")
            #expect(result.stderr.contains("an app waits for access to a profile"), "\(result.stderr)")
            // A request waiting for the user's decision does not hold up a stop.
            #expect(result.stdout.contains("stopped: yes"), "\(result.stdout)")
        }
    }

    /// A program can make any path show in its /proc/<pid>/exe by bind-mounting itself there in a
    /// mount namespace of its own (unprivileged, in a user namespace): here Python shown as the
    /// authd executable (which is also the whole authctl), asking to allow itself. authd compares
    /// the file behind the path with the file the program runs, and refuses it as the user's tool.
    @Test(.enabled(if: getuid() == 0, "needs unshare with mount namespaces"))
    func aProgramBindMountedOverAuthctlsPathIsNotAuthctl() async throws {
        try await Stack.running("impersonation", lifetime: 3600) { stack in
            try stack.startDaemon(extra: ["--access", "ask"])
            let client = """
                import socket, sys
                s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(10)
                s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"apps.decide","params":{"app":"/tmp/evil","decision":"allow"}}\\n')
                print(s.recv(65536).decode().strip())
                """
            let python = URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path
            let result = try runCommand("/usr/bin/unshare", ["-rm", "/bin/sh", "-c", #"mount --bind "$1" "$2" && exec "$2" -c "$3" "$4""#, "impostor",
                                                            python, Binaries.path("authd"), client, stack.socketPath],
                                        environment: ["PATH": "/usr/bin:/bin"], timeout: 30)
            #expect(result.stdout.contains(#""reason":"access_denied""#), "\(result.stdout) \(result.stderr)")
            #expect(!result.stdout.contains(#""access":"allowed""#))
            // The real authctl still decides.
            #expect(try stack.authctl(["apps", "deny", "/tmp/evil"]).status == 0)
        }
    }
    /// A program in a mount namespace of its own sees files the user's programs do not, so its
    /// path names none of them even when, as here, it leads to the very file it runs (the real
    /// Python, nothing bound over it): a Flatpak started without its scope, or bwrap, looks like
    /// this. Under `ask` it is refused as unidentified, saying why, and never listed as Python.
    @Test(.enabled(if: getuid() == 0, "needs unshare with mount namespaces"))
    func aProgramInAMountNamespaceOfItsOwnIsUnidentified() async throws {
        try await Stack.running("namespaced", lifetime: 3600) { stack in
            try stack.startDaemon(extra: ["--access", "ask"])
            let client = """
                import socket, sys
                s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(10)
                s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"session.token","params":{}}\\n')
                print(s.recv(65536).decode().strip())
                """
            let result = try runCommand("/usr/bin/unshare", ["-rm", "/usr/bin/python3", "-c", client, stack.socketPath],
                                        environment: ["PATH": "/usr/bin:/bin"], timeout: 30)
            #expect(result.stdout.contains(#""reason":"app_denied""#), "\(result.stdout) \(result.stderr)")
            #expect(result.stdout.contains("mount namespace or root of its own"), "\(result.stdout)")
            let listed = try stack.authctl(["apps", "--json"])
            #expect(listed.status == 0 && !listed.stdout.contains("python"), "\(listed.stdout)")
        }
    }
}
