import AuthTestSupport
import Foundation
import Testing

/// authd started the way systemd starts it: `systemd-socket-activate` holds the socket and runs
/// the daemon on the first connection, passing the socket (`LISTEN_FDS`) and a `NOTIFY_SOCKET`
/// the test listens on.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct SocketActivationTests {
    /// Whether process `pid` is still systemd-socket-activate (not yet the program it execs on
    /// the first connection) and is blocked in `epoll_wait`, where it waits for that connection.
    static func waitsForAConnection(_ pid: Int32) -> Bool {
        guard (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe"))?.hasSuffix("/systemd-socket-activate") == true,
              let call = (try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8))?.split(separator: " ").first.flatMap({ Int($0) })
        else { return false }
        #if arch(x86_64)
        let epollWaits: Set<Int> = [232, 281, 441] // epoll_wait, epoll_pwait, epoll_pwait2
        #else
        let epollWaits: Set<Int> = [22, 441] // epoll_pwait, epoll_pwait2 (arm64)
        #endif
        return epollWaits.contains(call)
    }

    @Test func startedOnTheFirstConnectionItAnswersReportsReadyStatusWatchdogAndStopping() async throws {
        try await Stack.running("activation", lifetime: 3600) { stack in
            try stack.signUp(email: "activated@example.com", password: "activated-password")
            let notify = try NotifyListener(in: stack.directory)
            try FileManager.default.createDirectory(atPath: (stack.socketPath as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            var environment = stack.environment
            environment["NOTIFY_SOCKET"] = notify.path
            environment["WATCHDOG_USEC"] = "1000000"
            let passed = ["NOTIFY_SOCKET", "WATCHDOG_USEC", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "HOME", "XDG_CONFIG_HOME"]
            // Through bash, which records the activator's pid (the daemon's, once it has exec'd) and
            // exits with its status: Foundation's Process did not reap other children while the
            // activator was its direct child, and the test signals the daemon itself.
            let pidFile = stack.directory.appendingPathComponent("authd.pid").path
            let activator = try Spawned("/bin/bash", ["-c", #"systemd-socket-activate "$@" & echo $! >"$0"; wait $!"#, pidFile,
                                        "-l", stack.socketPath] + passed.flatMap { ["-E", $0] } +
                                        [Binaries.path("authd"), "--profile", stack.profile, "--url", stack.serverURL, "--anon-key", "e2e-anon-key", "--log-level", "trace"],
                                        environment: environment, in: stack.directory, name: "activator")
            defer { activator.stop() }
            // Nothing runs until a client connects: the activator listens, and waits in epoll for
            // the connection on which it would exec the daemon in its place.
            let waiting = waitUntil {
                FileManager.default.fileExists(atPath: stack.socketPath) && recordedPID(in: pidFile).map(Self.waitsForAConnection) == true
            }
            #expect(waiting, "systemd-socket-activate did not wait for a connection: \(activator.stderr)")
            #expect(!activator.stderr.contains("listening on the socket systemd passed"), "the daemon started before anyone connected")

            let status = try stack.authctl(["status", "--json"], timeout: 15)
            #expect(status.status == 4, "not signed in yet: \(status.stdout) \(status.stderr)")
            #expect(status.stdout.contains(#""state":"signed_out""#))
            #expect(notify.waitFor { $0.contains("READY=1") }, "\(notify.messages) \(activator.stderr)")
            #expect(notify.assignments.contains("STATUS=sign-in needed: authctl login"), "\(notify.messages)")

            let login = try stack.authctl(["login", "--email", "activated@example.com", "--password-stdin"], input: "activated-password\n")
            #expect(login.status == 0, "\(login.stderr)")
            #expect(notify.waitFor { $0.hasPrefix("STATUS=signed in as activated@example.com, token valid") }, "\(notify.messages)")
            #expect(notify.waitFor { $0 == "WATCHDOG=1" }, "\(notify.messages)")
            let token = try stack.authctl(["token"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(token.split(separator: ".").count == 3)

            let daemon = try #require(recordedPID(in: pidFile))
            kill(daemon, SIGTERM)
            #expect(notify.waitFor { $0.contains("STOPPING=1") }, "\(notify.messages)")
            activator.process.waitUntilExit()
            #expect(activator.process.terminationStatus == 0, "\(activator.stderr)")
            // The socket belongs to the service manager: it stays for the next activation.
            #expect(FileManager.default.fileExists(atPath: stack.socketPath))
            #expect(!notify.messages.joined().contains(token), "a token reached the service manager")
            #expect(activator.stderr.contains("listening on the socket systemd passed"))
        }
    }
}
