import AuthTestSupport
import Foundation
import Testing

/// Many clients waiting on an expired token share one refresh.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct ConcurrentRequestsTests {
    /// Opens `count` connections, freezes the daemon past the token's expiry, sends one token
    /// request on each, thaws the daemon and times every answer (seconds from the thaw).
    static let client = """
        import json, os, resource, selectors, signal, socket, sys, time
        path, count, pid, asleep = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        sockets = []
        for _ in range(count):
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            sockets.append(s)
        time.sleep(1)
        os.kill(pid, signal.SIGSTOP)
        time.sleep(asleep)
        for i, s in enumerate(sockets):
            s.sendall(json.dumps({"jsonrpc": "2.0", "id": i, "method": "session.token", "params": {"min_validity": 1}}).encode() + b"\\n")
        selector = selectors.DefaultSelector()
        for s in sockets:
            s.setblocking(False)
            selector.register(s, selectors.EVENT_READ, bytearray())
        thawed = time.monotonic()
        os.kill(pid, signal.SIGCONT)
        latencies, tokens, errors, pending = [], set(), [], len(sockets)
        deadline = thawed + 60
        while pending and time.monotonic() < deadline:
            for key, _ in selector.select(timeout=1):
                buffer = key.data
                chunk = key.fileobj.recv(65536)
                buffer.extend(chunk)
                if b"\\n" in buffer or not chunk:
                    latencies.append(time.monotonic() - thawed)
                    selector.unregister(key.fileobj)
                    pending -= 1
                    answer = json.loads(bytes(buffer).split(b"\\n")[0] or b"{}")
                    if "result" in answer:
                        tokens.add(answer["result"]["access_token"])
                    else:
                        errors.append(answer.get("error"))
        latencies.sort()
        pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] if latencies else None
        print(json.dumps({"answered": len(latencies), "tokens": len(tokens), "errors": errors[:3], "error_count": len(errors),
                          "p50_ms": round(pick(0.5) * 1000, 1) if latencies else None,
                          "p99_ms": round(pick(0.99) * 1000, 1) if latencies else None}))
        """

    @Test func aThousandRequestsPastExpiryCauseExactlyOneRefresh() async throws {
        // Lifetime 8 s, refresh lead 1 s: the freeze starts well before the scheduled refresh at
        // 7 s and lasts past expiry, and the rotated token's own refresh is 7 s after the thaw,
        // long after the answers are in and the grants counted, even on a loaded CI machine.
        try await Stack.running("herd", lifetime: 8) { stack in
            let daemon = try stack.startSignedIn(email: "herd@example.com", password: "herd-password", daemonArguments: ["--refresh-lead", "1"])
            let before = try stack.refreshGrants()
            let result = try runCommand("/usr/bin/python3", ["-c", Self.client, stack.socketPath, "1000", String(daemon.process.processIdentifier), "9"],
                                        environment: stack.environment, timeout: 120)
            let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout) \(result.stderr)")
            let grants = try stack.refreshGrants() - before
            print("1000 concurrent token requests past expiry: \(report), refresh grants at the server: \(grants)")
            #expect(report["answered"] as? Int == 1000)
            #expect(report["error_count"] as? Int == 0, "\(report)")
            #expect(report["tokens"] as? Int == 1)
            #expect(grants == 1)
        }
    }
}
