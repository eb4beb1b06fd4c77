import AuthTestSupport
import Foundation
import Testing

/// The keyring daemon dies mid-run and comes back.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct KeyringRestartTests {
    @Test func theSessionIsStoredAgainOnceTheKeyringIsBackAndNeverInPlaintext() async throws {
        try await Stack.running("keyring-restart", lifetime: 12) { stack in
            try stack.signUp(email: "restart@example.com", password: "restart-password")
            // Killing and restarting gnome-keyring must not touch the suite's shared keyring: own bus.
            let script = #"""
                set -e
                authd="$1"; authctl="$2"; url="$3"; work="$4"
                status_keyring() { "$authctl" status --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["keyring"])' || true; }
                "$authd" --profile restart --url "$url" --anon-key e2e-anon-key --refresh-lead 6 --log-level debug 2>"$work/restart-authd.err" &
                daemon=$!
                for _ in $(seq 1 100); do "$authctl" status >/dev/null 2>&1 && break || [ $? -ne 3 ] && break; sleep 0.1; done
                echo restart-password | "$authctl" login --email restart@example.com --password-stdin
                keyring=$(dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
                    org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets | awk '{print $2}')
                kill -9 "$keyring"
                for _ in $(seq 1 150); do [ "$(status_keyring)" = unavailable ] && break; sleep 0.1; done
                echo "while-dead=$(status_keyring) token-exit=$("$authctl" token >/dev/null 2>&1; echo $?)"
                printf 'authd-private-keyring' | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1
                for _ in $(seq 1 300); do [ "$(status_keyring)" = ok ] && break; sleep 0.1; done
                echo "after-restart=$(status_keyring)"
                # The session rotates every ~6 s (within the breaker's 10 a minute): a refresh may land between reading the token and
                # reading the keyring, so compare a few times; a session never stored never matches.
                for _ in 1 2 3 4 5; do
                    token=$("$authctl" token)
                    stored=$(secret-tool lookup xdg:schema dev.authd.Session profile restart)
                    matches=$(python3 -c 'import json,sys; s=json.loads(sys.argv[1])["session"]; print(s["accessToken"] == sys.argv[2])' "$stored" "$token")
                    [ "$matches" = True ] && break
                done
                echo "stored-matches=$matches"
                refresh=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["session"]["refreshToken"])' "$stored")
                hits=$(grep -rlF -e "$token" -e "$refresh" "$XDG_DATA_HOME" "$XDG_RUNTIME_DIR" "$work" "${XDG_CONFIG_HOME:-/nonexistent}" 2>/dev/null | wc -l)
                echo "plaintext-files=$hits"
                kill $daemon; wait $daemon || true
                """#
            let result = try stack.runOnOwnKeyring(script, arguments: [Binaries.path("authd"), Binaries.path("authctl"), stack.serverURL, stack.directory.path],
                                                   activation: false)
            let log = stack.file("restart-authd.err")
            #expect(result.stdout.contains("while-dead=unavailable token-exit=0"), "\(result.stdout) \(result.stderr) \(log)")
            #expect(result.stdout.contains("after-restart=ok"), "\(result.stdout) \(log)")
            #expect(result.stdout.contains("stored-matches=True"), "\(result.stdout)")
            #expect(result.stdout.contains("plaintext-files=0"), "\(result.stdout)")
        }
    }

    @Test func aKeyringThatWasUnreadableAtStartIsReadOnceItIsBack() async throws {
        try await Stack.running("keyring-late", lifetime: 3600) { stack in
            try stack.signUp(email: "late@example.com", password: "late-password")
            let script = #"""
                set -e
                authd="$1"; authctl="$2"; url="$3"; work="$4"
                field() { "$authctl" status --json 2>/dev/null | python3 -c "import json,sys; print(json.load(sys.stdin).get('$1'))" || true; }
                start_daemon() {
                    "$authd" --profile late --url "$url" --anon-key e2e-anon-key --log-level debug 2>>"$work/late-authd.err" &
                    daemon=$!
                    for _ in $(seq 1 100); do "$authctl" status >/dev/null 2>&1 && break || [ $? -ne 3 ] && break; sleep 0.1; done
                }
                start_daemon
                echo late-password | "$authctl" login --email late@example.com --password-stdin
                kill $daemon; wait $daemon || true
                keyring=$(dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
                    org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets | awk '{print $2}')
                kill -9 "$keyring"
                start_daemon
                echo "at-start=$(field state)"
                "$authctl" watch --json >"$work/late-watch.out" 2>&1 &
                watcher=$!
                # The watcher must be subscribed before the keyring comes back, or it only sees the
                # state after: starting authctl can take seconds on a loaded machine.
                for _ in $(seq 1 300); do grep -q INITIAL_SESSION "$work/late-watch.out" && break; sleep 0.1; done
                printf 'authd-private-keyring' | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1
                # Only status is asked (it never triggers a read): the daemon must look again by itself.
                for _ in $(seq 1 400); do [ "$(field state)" = signed_in ] && break; sleep 0.1; done
                echo "once-back=$(field state) keyring=$(field keyring)"
                echo "token-exit=$("$authctl" token >/dev/null 2>&1; echo $?)"
                # The session's INITIAL_SESSION reaches the watcher; then the daemon ends, and the
                # watcher with it once it has read everything the daemon sent before closing.
                for _ in $(seq 1 300); do [ "$(grep -c INITIAL_SESSION "$work/late-watch.out")" -ge 2 ] && break; sleep 0.1; done
                kill $daemon; wait $daemon || true
                # Bounded on its own, so that a watcher that never sees the close fails this step
                # rather than using up the whole script's time.
                for _ in $(seq 1 300); do kill -0 $watcher 2>/dev/null || break; sleep 0.1; done
                kill -0 $watcher 2>/dev/null && echo "watcher-still-running" && kill $watcher
                wait $watcher || true
                """#
            let result = try stack.runOnOwnKeyring(script, arguments: [Binaries.path("authd"), Binaries.path("authctl"), stack.serverURL, stack.directory.path],
                                                   activation: false, timeout: 120)
            let log = stack.file("late-authd.err")
            let events = stack.file("late-watch.out")
            #expect(result.stdout.contains("at-start=keyring_unavailable"), "\(result.stdout) \(result.stderr) \(log)")
            #expect(result.stdout.contains("once-back=signed_in keyring=ok"), "\(result.stdout) \(log)")
            #expect(result.stdout.contains("token-exit=0"), "\(result.stdout)")
            #expect(!result.stdout.contains("watcher-still-running"), "the watcher did not end when the daemon closed its stream")
            let names = events.split(separator: "\n").compactMap { line in
                ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?["event"] as? String
            }
            #expect(names == ["INITIAL_SESSION", "KEYRING_AVAILABLE", "INITIAL_SESSION"], "\(events)")
            #expect(events.contains("late@example.com"))
        }
    }
}
