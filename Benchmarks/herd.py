"""A thundering herd past expiry, for ConcurrentRequestsTests and benchmark P5.

    herd.py SOCKET COUNT PID LEAD

Opens COUNT connections to authd (process PID), freezes it until a second past the token's
expiry, sends one token request on each, thaws it and times every answer (from the thaw).
Prints one JSON object: answered, tokens (distinct), errors (the first three), error_count,
p50_ms, p99_ms, and frozen_early: whether the freeze began before the daemon's scheduled refresh
(LEAD seconds before expiry), which the number of refreshes depends on."""
import json
import os
import resource
import selectors
import signal
import socket
import sys
import time

path, count, pid, lead = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
probe = socket.socket(socket.AF_UNIX)
probe.connect(path)
probe.sendall(b'{"jsonrpc":"2.0","id":0,"method":"session.status","params":{}}\n')
expires_at = json.loads(probe.makefile().readline())["result"]["expires_at"]
probe.close()
sockets = []
for _ in range(count):
    client = socket.socket(socket.AF_UNIX)
    client.connect(path)
    sockets.append(client)
time.sleep(0.5)
os.kill(pid, signal.SIGSTOP)
frozen_early = time.time() < expires_at - lead
time.sleep(max(1, expires_at + 1 - time.time()))
for i, client in enumerate(sockets):
    client.sendall(json.dumps({"jsonrpc": "2.0", "id": i, "method": "session.token", "params": {"min_validity": 1}}).encode() + b"\n")
selector = selectors.DefaultSelector()
for client in sockets:
    client.setblocking(False)
    selector.register(client, selectors.EVENT_READ, bytearray())
thawed = time.monotonic()
os.kill(pid, signal.SIGCONT)
latencies, tokens, errors, pending = [], set(), [], len(sockets)
deadline = thawed + 60
while pending and time.monotonic() < deadline:
    for key, _ in selector.select(timeout=1):
        buffer = key.data
        chunk = key.fileobj.recv(65536)
        buffer.extend(chunk)
        if b"\n" in buffer or not chunk:
            latencies.append(time.monotonic() - thawed)
            selector.unregister(key.fileobj)
            pending -= 1
            answer = json.loads(bytes(buffer).split(b"\n")[0] or b"{}")
            if "result" in answer:
                tokens.add(answer["result"]["access_token"])
            else:
                errors.append(answer.get("error"))
latencies.sort()


def pick(q):
    return round(latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000, 1) if latencies else None


print(json.dumps({"answered": len(latencies), "tokens": len(tokens), "errors": errors[:3], "error_count": len(errors),
                  "frozen_early": frozen_early, "p50_ms": pick(0.5), "p99_ms": pick(0.99)}))
