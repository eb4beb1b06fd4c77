import AuthTestSupport
import Foundation
import Testing

/// authd connects to the keyring early in its start (benchmark P6), but only once it is really
/// starting: a command line that asks for help or the version, or that ArgumentParser refuses,
/// must not connect, since on a desktop D-Bus would start a keyring daemon for it.
struct EarlyKeyringConnectionTests {
    @Test func helpVersionAndUsageErrorsNeverConnectToTheSessionBusButTheDaemonDoes() async throws {
        try await offPool {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("authd-early-\(UUID().uuidString.prefix(6))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            // A stand-in session bus that counts the connections it accepts.
            let listener = """
                import socket, sys, time
                server = socket.socket(socket.AF_UNIX); server.bind(sys.argv[1]); server.listen(16); server.settimeout(0.1)
                count = 0
                open(sys.argv[2], "w").write("0")
                while True:
                    try:
                        client, _ = server.accept(); client.close(); count += 1
                        open(sys.argv[2], "w").write(str(count))
                    except socket.timeout:
                        pass
                """
            let script = """
                set -u
                python3 -c "$LISTENER" "$1/bus" "$1/count" & listener=$!
                # SIGKILL: the test runner's children may inherit an ignored SIGTERM.
                trap 'kill -KILL $listener' EXIT
                for _ in $(seq 1 1200); do [ -S "$1/bus" ] && break; sleep 0.05; done
                export DBUS_SESSION_BUS_ADDRESS="unix:path=$1/bus" XDG_RUNTIME_DIR="$1" AUTHD_SOCKET="$1/authd.sock"
                # Help, the version, usage errors, and a configuration refused (none at all; a
                # URL with a password) after the command line's checks.
                for arguments in --version --help -h -help --help-hidden --version=1 --bogus "--approval-timeout 0" "" \
                                 "--url https://u:p@x.supabase.co --anon-key k"; do
                    "$2" $arguments >/dev/null 2>&1
                done
                sleep 1
                echo "after-help=$(cat "$1/count")"
                "$2" --url http://127.0.0.1:9 --anon-key k --log-level critical 2>/dev/null & daemon=$!
                for _ in $(seq 1 900); do [ "$(cat "$1/count")" != 0 ] && break; sleep 0.1; done
                kill $daemon; wait $daemon 2>/dev/null
                echo "after-daemon=$(cat "$1/count")"
                """
            var environment = ProcessInfo.processInfo.environment
            environment["LISTENER"] = listener
            environment["XDG_CONFIG_HOME"] = directory.appendingPathComponent("config").path
            let result = try runCommand("/bin/bash", ["-c", script, "early", directory.path, Binaries.path("authd")],
                                        environment: environment, timeout: 180)
            #expect(result.stdout.contains("after-help=0"), "\(result.stdout) \(result.stderr)")
            // The listener does count: the daemon itself connects.
            #expect(result.stdout.contains("after-daemon=") && !result.stdout.contains("after-daemon=0"), "\(result.stdout) \(result.stderr)")
        }
    }
}
