import AuthTestSupport
import Foundation
import Testing

/// The whole system as a user meets it: real processes, real HTTP, the real keyring and socket.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct EndToEndTests {
    @Test func signInServeSurviveSIGKILLRefreshAfterExpiryAndSignOut() async throws {
        try await offPool {
            let stack = try Stack(name: "main")
            defer { stack.tearDown() }
            // Long enough that the first refresh (due at half the lifetime) cannot start before the
            // status check below, even when the whole suite shares two cores: with 8 s it once did.
            let lifetime = 20
            try stack.startDevServer(lifetime: lifetime)
            let email = "e2e-\(UUID().uuidString.prefix(6).lowercased())@example.com"
            let password = "pw-\(UUID().uuidString)"
            try stack.signUp(email: email, password: password)
            try stack.startDaemon()

            let before = try stack.authctl(["token"])
            #expect(before.status == 4, "\(before.stderr) daemon: \(stack.daemons.last?.stderr ?? "")")
            #expect(before.stderr.contains("not signed in") && before.stderr.contains("authctl login"))

            let wrong = try stack.authctl(["login", "--email", email, "--password-stdin"], input: "not-the-password\n")
            #expect(wrong.status == 5)
            #expect(wrong.stderr == "authctl: wrong email or password\n")

            let watcher = try stack.watch(["--json"])
            defer { watcher.stop() }
            #expect(watcher.waitForOutput { $0.contains("INITIAL_SESSION") })
            #expect(stack.daemons.count == 1)

            let login = try stack.authctl(["login", "--email", email, "--password-stdin"], input: password + "\n")
            #expect(login.status == 0, "\(login.stderr)")
            let status = try stack.authctl(["status"])
            #expect(status.status == 0)
            #expect(status.stdout.contains("signed in as \(email)"))
            let statusJSON = try stack.authctl(["status", "--json"])
            let parsed = try JSONSerialization.jsonObject(with: Data(statusJSON.stdout.utf8)) as? [String: Any]
            #expect(parsed?["state"] as? String == "signed_in")

            let first = try stack.authctl(["token"])
            #expect(first.status == 0)
            let firstToken = first.stdout.trimmingCharacters(in: .newlines)
            #expect(claims(of: firstToken)["email"] as? String == email)
            #expect(first.stdout == firstToken + "\n") // only the token

            // Crash the daemon: the new one restores the session from the keyring, no sign-in needed.
            stack.daemons.last?.signal(SIGKILL)
            stack.daemons.last?.process.waitUntilExit()
            watcher.process.waitUntilExit()
            #expect(watcher.process.terminationStatus == 3) // the watcher notices the daemon is gone
            #expect(watcher.stderr.contains("authd closed the connection"))
            #expect(watcher.stdout.contains("SIGNED_IN"))
            try stack.startDaemon()
            let watcherAfterRestart = try stack.watch(["--json"], name: "watch-2")
            defer { watcherAfterRestart.stop() }
            #expect(watcherAfterRestart.waitForOutput { $0.contains("INITIAL_SESSION") })
            let restored = try stack.authctl(["token"])
            #expect(restored.status == 0, "\(restored.stderr)")
            #expect(claims(of: restored.stdout.trimmingCharacters(in: .newlines))["email"] as? String == email)

            // Past the first token's lifetime, a token request still gets a valid token (a new one):
            // the daemon refreshed on its own meanwhile, and the first token's `exp` has passed
            // (the bounds only end a failing test).
            #expect(watcherAfterRestart.waitForOutput(timeout: 120) { $0.contains("TOKEN_REFRESHED") }, "\(watcherAfterRestart.stdout)")
            let firstExpiry = claims(of: firstToken)["exp"] as? Double ?? 0
            #expect(waitUntil(timeout: TimeInterval(lifetime) + 60) { Date().timeIntervalSince1970 > firstExpiry })
            let later = try stack.authctl(["token"])
            #expect(later.status == 0, "\(later.stderr)")
            let laterToken = later.stdout.trimmingCharacters(in: .newlines)
            #expect(laterToken != firstToken)
            let exp = claims(of: laterToken)["exp"] as? Double ?? 0
            #expect(exp > Date().timeIntervalSince1970)
            let json = try stack.authctl(["token", "--json", "--min-valid", "2"])
            let tokenJSON = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            #expect(tokenJSON?["token_type"] as? String == "bearer")
            #expect((tokenJSON?["expires_in"] as? Int ?? 0) >= 2)

            let logout = try stack.authctl(["logout"])
            #expect(logout.status == 0, "\(logout.stderr)")
            let after = try stack.authctl(["token"])
            #expect(after.status == 4)
            #expect(after.stderr.contains("not signed in"))
            let afterStatus = try stack.authctl(["status"])
            #expect(afterStatus.status == 4)
            #expect(afterStatus.stdout.contains("signed out (user_signed_out)"))

            #expect(watcherAfterRestart.waitForOutput { $0.contains("SIGNED_OUT") })
            func events(_ text: String) -> [String] {
                text.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
                    .compactMap { $0["event"] as? String }
            }
            let beforeCrash = events(watcher.stdout)
            #expect(Array(beforeCrash.prefix(2)) == ["INITIAL_SESSION", "SIGNED_IN"])
            #expect(!beforeCrash.contains("SIGNED_OUT"))
            let afterRestart = events(watcherAfterRestart.stdout)
            #expect(afterRestart.first == "INITIAL_SESSION")
            #expect(afterRestart.contains("TOKEN_REFRESHED"))
            #expect(afterRestart.last == "SIGNED_OUT")

            // No secret in anything the daemon, the dev server, the watcher or authctl's diagnostics printed.
            // (authctl token's stdout is the one place a token is asked for, so it is left out.)
            let printed = stack.allOutput().replacingOccurrences(of: first.stdout, with: "")
                .replacingOccurrences(of: restored.stdout, with: "").replacingOccurrences(of: later.stdout, with: "")
                .replacingOccurrences(of: json.stdout, with: "") + watcher.stdout + watcher.stderr
                + watcherAfterRestart.stdout + watcherAfterRestart.stderr
            for secret in [password, firstToken, laterToken, restored.stdout.trimmingCharacters(in: .newlines)] {
                #expect(!printed.contains(secret), "a secret leaked into the output")
            }
            #expect(!printed.contains("eyJ"), "something that looks like a JWT leaked into the output")
            #expect(!printed.contains("refresh_token\""))
        }
    }

    @Test func afterASleepPastExpiryManyWaitingClientsShareOneRefresh() async throws {
        // Tokens of 20 s: on a loaded machine twenty clients may take seconds to be served, and
        // the refreshed token must outlive that, or its own scheduled refresh would count too.
        try await Stack.running("suspend", lifetime: 20) { stack in
            let daemon = try stack.startSignedIn(email: "suspend@example.com", password: "suspend-password", daemonArguments: ["--refresh-lead", "1"])
            let before = try stack.refreshGrants()
            // Freeze the daemon past the token's expiry, as a laptop asleep would be. The token it
            // holds expires before `expires_at` + 1 (whole seconds, rounded down); a refresh that
            // slipped in before the freeze is the one refresh the clients share (the bounds only
            // end a failing test).
            let expiresAt = try #require(try stack.statusJSON()["expires_at"] as? Int)
            daemon.signal(SIGSTOP)
            #expect(waitUntil(timeout: 120) { Date().timeIntervalSince1970 >= Double(expiresAt + 1) })
            // Twenty clients connect and send their requests to the frozen daemon; the kernel queues them.
            let clients = try (0..<20).map {
                try Spawned(Binaries.path("authctl"), ["token", "--min-valid", "2"], environment: stack.environment, in: stack.directory, name: "token-\($0)")
            }
            // Each has made its socket, which it connects at once (the kernel queues the
            // connection, or, once the listener's queue is full, `connect` waits for the frozen
            // daemon). The bound only ends a failing test.
            #expect(waitUntil(timeout: 60) { clients.allSatisfy { holdsASocket($0.process.processIdentifier) } },
                    "not every client made its socket")
            daemon.signal(SIGCONT)
            let deadline = Date().addingTimeInterval(30)
            for client in clients {
                while client.process.isRunning, Date() < deadline { usleep(10_000) }
            }
            let served = Date()
            let tokens = clients.map { $0.stdout.trimmingCharacters(in: .whitespacesAndNewlines) }
            #expect(clients.allSatisfy { !$0.process.isRunning && $0.process.terminationStatus == 0 }, "\(clients.map(\.stderr))")
            #expect(Set(tokens).count == 1)
            #expect((claims(of: tokens[0])["exp"] as? Double ?? 0) > served.timeIntervalSince1970, "the shared token is the refreshed one")
            #expect(try stack.refreshGrants() - before == 1, "every waiting client must share one refresh")
        }
    }

    @Test func anUnreachableServerKeepsTheSessionAndSaysWhy() async throws {
        try await Stack.running("offline", lifetime: 4) { stack in
            try stack.startSignedIn(email: "offline@example.com", password: "offline-password")

            stack.stopDevServer()
            // A scheduled refresh fails (one at a time: no token can come after that), and then the
            // token it holds expires, before `expires_at` + 1 (whole seconds, rounded down).
            // The bounds only end a failing test.
            var seen: [String: Any] = [:]
            #expect(try waitUntil(timeout: 60) {
                seen = try stack.statusJSON()
                return (seen["degraded"] as? [String: Any])?["reason"] as? String == "offline"
            }, "\(seen)")
            let expiresAt = try #require(seen["expires_at"] as? Int)
            #expect(waitUntil(timeout: 60) { Date().timeIntervalSince1970 >= Double(expiresAt + 1) })
            let token = try stack.authctl(["token"])
            #expect(token.status == 6)
            #expect(token.stderr.contains("cannot reach \(stack.serverURL)/auth/v1"))
            #expect(token.stderr.contains("the session is kept"))
            let status = try stack.authctl(["status"])
            #expect(status.status == 0)
            #expect(status.stdout.contains("signed in as offline@example.com"))
            #expect(status.stdout.contains("Problem:  offline"))

            // A restart while the server is still away: the stored session is kept, not dropped.
            stack.daemons.last?.stop()
            try stack.startDaemon()
            let again = try stack.authctl(["status", "--json"])
            let parsed = try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any]
            #expect(["signed_in", "refreshing"].contains(parsed?["state"] as? String ?? ""))
            #expect((parsed?["user"] as? [String: Any])?["email"] as? String == "offline@example.com")

            let login = try stack.authctl(["login", "--email", "offline@example.com", "--password-stdin"], input: "offline-password\n")
            #expect(login.status == 6)
            #expect(login.stderr.contains("cannot reach"))
        }
    }

    @Test func malformedInputToTheLiveDaemonNeverStopsIt() async throws {
        try await Stack.running("garbage", lifetime: 3600) { stack in
            try stack.startDaemon()
            let lines = ["garbage", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}", String(repeating: "[", count: 10_000),
                         "{\"jsonrpc\":\"2.0\",\"id\":1e400,\"method\":\"hello\"}", "\u{FF}\u{FE}invalid utf8"]
            for line in lines {
                let result = try runCommand("/usr/bin/python3", ["-c", """
                    import socket, sys
                    s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1])
                    s.sendall(sys.argv[2].encode('utf-8', 'surrogateescape') + b'\\n')
                    print(s.recv(65536).decode('utf-8', 'replace'))
                    """, stack.socketPath, line], environment: stack.environment)
                #expect(result.stdout.contains("\"error\""), "\(line.prefix(40)): \(result.stdout) \(result.stderr)")
            }
            #expect(try stack.authctl(["status"]).status == 4) // still alive and answering
            #expect(stack.daemons.last?.process.isRunning == true)
        }
    }

    @Test func noSecretServiceIsAClearErrorAndSignInStillWorksFromMemory() async throws {
        try await Stack.running("nokeyring", lifetime: 3600) { stack in
            try stack.signUp(email: "nokeyring@example.com", password: "nokeyring-password")
            stack.daemonEnvironmentOverrides = ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(stack.directory.path)/no-such-bus"]
            try stack.startDaemon()
            let token = try stack.authctl(["token"])
            #expect(token.status == 7)
            #expect(token.stderr.contains("keyring (Secret Service) is not available"))
            let login = try stack.authctl(["login", "--email", "nokeyring@example.com", "--password-stdin"], input: "nokeyring-password\n")
            #expect(login.status == 0, "\(login.stderr)")
            let status = try stack.authctl(["status", "--json"])
            let parsed = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            #expect(parsed?["state"] as? String == "signed_in")
            #expect(parsed?["keyring"] as? String == "unavailable")
            #expect(try stack.authctl(["token"]).status == 0)
        }
    }

    @Test func aLockedKeyringIsReportedNotMistakenForSignedOut() async throws {
        try await Stack.running("locked", lifetime: 3600) { stack in
            // Locking is one-way without a prompter, so this runs on a private bus of its own.
            try stack.signUp(email: "locked@example.com", password: "locked-password")
            let script = """
                set -e
                printf '{"version":1}' | secret-tool store --label="authd session (locked)" xdg:schema dev.authd.Session profile locked
                dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets \
                  org.freedesktop.Secret.Service.Lock array:objpath:/org/freedesktop/secrets/collection/login >/dev/null
                "$1" --profile locked --url "$2" --anon-key e2e-anon-key --log-level trace 2>"$3/locked-authd.err" &
                daemon=$!
                for _ in $(seq 1 100); do [ -S "$AUTHD_SOCKET" ] && break; sleep 0.1; done
                # A token request waits for the stored session to be read; status then shows the outcome.
                "$4" token && echo "token-exit=0" || echo "token-exit=$?"
                "$4" status --json || true
                # A sign-in into a locked keyring: the store must be refused as locked, without a prompt.
                printf 'locked-password\n' | "$4" login --email locked@example.com --password-stdin \
                  && echo "login-exit=0" || echo "login-exit=$?"
                kill $daemon
                for _ in $(seq 1 50); do kill -0 $daemon 2>/dev/null || break; sleep 0.1; done
                if kill -0 $daemon 2>/dev/null; then echo "daemon-still-running"; kill -9 $daemon; else echo "daemon-stopped"; fi
                cat "$3/locked-authd.err" >&2
                """
            let result = try stack.runOnOwnKeyring(script, arguments: [Binaries.path("authd"), stack.serverURL, stack.directory.path, Binaries.path("authctl")])
            #expect(result.stdout.contains("\"state\":\"keyring_unavailable\""), "\(result.stdout) \(result.stderr)")
            #expect(result.stdout.contains("the keyring is locked"))
            #expect(result.stdout.contains("token-exit=7"))
            // The sign-in still counts (served from memory), and the daemon found the keyring locked
            // before writing: storing into a locked collection would ask the desktop for an unlock
            // prompt and fail as "not available" where there is none.
            #expect(result.stdout.contains("login-exit=0"), "\(result.stdout) \(result.stderr)")
            let writeFailures = result.stderr.split(separator: "\n").filter { $0.contains("keyring write failed") }
            #expect(!writeFailures.isEmpty && writeFailures.allSatisfy { $0.contains("error=the keyring is locked") }, "\(result.stderr)")
        }
    }

    @Test func aKeyringWithoutADefaultCollectionIsReportedAndTheSignInStillCounts() async throws {
        try await Stack.running("nodefault", lifetime: 3600) { stack in
            // Deleting the only collection is one-way too, so this runs on a private bus of its own.
            try stack.signUp(email: "nodefault@example.com", password: "nodefault-password")
            let script = """
                set -e
                dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets/collection/login \
                  org.freedesktop.Secret.Collection.Delete >/dev/null
                "$1" --profile nodefault --url "$2" --anon-key e2e-anon-key --log-level trace 2>"$3/nodefault-authd.err" &
                daemon=$!
                for _ in $(seq 1 600); do [ -S "$AUTHD_SOCKET" ] && break; sleep 0.1; done
                printf 'nodefault-password\\n' | "$4" login --email nodefault@example.com --password-stdin \
                  && echo "login-exit=0" || echo "login-exit=$?"
                "$4" token >/dev/null && echo "token-exit=0" || echo "token-exit=$?"
                kill $daemon
                for _ in $(seq 1 50); do kill -0 $daemon 2>/dev/null || break; sleep 0.1; done
                cat "$3/nodefault-authd.err" >&2
                """
            let result = try stack.runOnOwnKeyring(script, arguments: [Binaries.path("authd"), stack.serverURL, stack.directory.path, Binaries.path("authctl")])
            // The session is served from memory, and the write's failure names the missing collection.
            #expect(result.stdout.contains("login-exit=0"), "\(result.stdout) \(result.stderr)")
            #expect(result.stdout.contains("token-exit=0"), "\(result.stdout) \(result.stderr)")
            let writeFailures = result.stderr.split(separator: "\n").filter { $0.contains("keyring write failed") }
            #expect(!writeFailures.isEmpty && writeFailures.allSatisfy { $0.contains("has no default collection") }, "\(result.stderr)")
        }
    }

    @Test func authctlSaysTheDaemonIsNotRunningAndHowToStartIt() async throws {
        try await offPool {
            var environment = ProcessInfo.processInfo.environment
            environment["AUTHD_SOCKET"] = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-\(UUID().uuidString)/authd.sock").path
            for arguments in [["status"], ["token"], ["logout"], ["watch"]] {
                let result = try runCommand(Binaries.path("authctl"), arguments, environment: environment, timeout: 30)
                #expect(result.status == 3, "\(arguments)")
                #expect(result.stderr.contains("authd is not running"))
                #expect(result.stderr.contains("systemctl --user enable --now authd.socket"))
            }
        }
    }

    @Test func aSecondDaemonOnTheSameSocketRefusesToStart() async throws {
        try await Stack.running("twice", lifetime: 3600) { stack in
            try stack.startDaemon()
            let second = try runCommand(Binaries.path("authd"), ["--url", stack.serverURL, "--anon-key", "k"], environment: stack.environment, timeout: 20)
            #expect(second.status == 75)
            #expect(second.stderr.contains("another authd is already running"))
            #expect(try stack.authctl(["status"]).status == 4) // the first one still serves
        }
    }

    @Test func sigtermStopsTheDaemonGracefullyEvenWithASubscriberConnected() async throws {
        try await Stack.running("sigterm", lifetime: 3600) { stack in
            let daemon = try stack.startDaemon()
            let watcher = try stack.watch()
            defer { watcher.stop() }
            #expect(watcher.waitForOutput { $0.contains("INITIAL_SESSION") })
            daemon.signal(SIGTERM)
            // Alone it stops in a fraction of a second; the bound is for a CI machine whose two
            // cores run the whole suite at once. Asked of the kernel (`hasEnded`), not of
            // Foundation's `isRunning`, which lagged by seconds there.
            let deadline = Date().addingTimeInterval(20)
            while !daemon.process.hasEnded, Date() < deadline { usleep(20_000) }
            #expect(daemon.process.hasEnded, "authd did not stop within 20 s of SIGTERM")
            daemon.stop()
            #expect(daemon.process.terminationStatus == 0)
            #expect(daemon.stderr.contains("stopped"))
            #expect(!FileManager.default.fileExists(atPath: stack.socketPath)) // the socket is removed
        }
    }

    @Test func ofDaemonsStartedAtTheSameMomentExactlyOneServes() async throws {
        try await Stack.running("race", lifetime: 3600) { stack in
            let daemons = try (0..<5).map {
                try Spawned(Binaries.path("authd"), ["--url", stack.serverURL, "--anon-key", "k"], environment: stack.environment,
                            in: stack.directory, name: "racer-\($0)")
            }
            defer { daemons.forEach { $0.stop() } }
            // Four give up at once: the winner holds the socket's lock for as long as it runs.
            // Asked of the kernel (`hasEnded`); the bound only ends a failing test.
            #expect(waitUntil(timeout: 30) { daemons.filter { $0.process.hasEnded }.count >= 4 },
                    "\(daemons.map { "\($0.process.exitStatus.map(String.init) ?? "running"): \($0.stderr)" })")
            for loser in daemons where loser.process.hasEnded {
                #expect(loser.process.terminationStatus == 75, "\(loser.stderr)")
                #expect(loser.stderr.contains("another authd is already running"))
            }
            #expect(try stack.authctl(["status"]).status == 4) // the winner serves
            // And it is the one left: still running after answering, and listening.
            let running = daemons.filter { !$0.process.hasEnded }
            #expect(running.count == 1)
            #expect(running.first?.stderr.contains("listening") == true, "\(running.first?.stderr ?? "")")
        }
    }

    @Test func badConfigurationIsRefusedWithExitCode78() async throws {
        try await offPool {
            var environment = ProcessInfo.processInfo.environment
            environment["AUTHD_SOCKET"] = "/tmp/unused-\(UUID().uuidString).sock"
            let insecure = try runCommand(Binaries.path("authd"), ["--url", "http://example.com", "--anon-key", "k"], environment: environment, timeout: 20)
            #expect(insecure.status == 78)
            #expect(insecure.stderr.contains("plain http:// is only allowed for a loopback server"))
            let secret = try runCommand(Binaries.path("authd"), ["--url", "https://x.supabase.co", "--anon-key", "sb_secret_123"], environment: environment, timeout: 20)
            #expect(secret.status == 78)
            #expect(!secret.stderr.contains("sb_secret_123"))
        }
    }
}
