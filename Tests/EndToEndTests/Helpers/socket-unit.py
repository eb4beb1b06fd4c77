"""A stand-in for a systemd socket unit with Restart=always, for tests.

Binds the socket and keeps it. Whenever a connection waits and no daemon runs, starts the
command with the listening socket as fd 3 and LISTEN_FDS=1, LISTEN_PID=<its pid>, as systemd
does. Unlike systemd-socket-activate, which hands the socket over once and is gone, this keeps
listening across daemon exits, so clients queue in the backlog while the daemon restarts.
Writes the running daemon's pid to PIDFILE. Usage: socket-unit.py SOCKET PIDFILE COMMAND...
"""
import os
import select
import socket
import sys

path, pidfile, command = sys.argv[1], sys.argv[2], sys.argv[3:]
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
if os.path.exists(path):
    os.unlink(path)
listener.bind(path)
os.chmod(path, 0o600)
listener.listen(64)
print("listening", flush=True)
while True:
    select.select([listener], [], [])
    pid = os.fork()
    if pid == 0:
        os.dup2(listener.fileno(), 3)
        os.set_inheritable(3, True)
        environment = dict(os.environ, LISTEN_FDS="1", LISTEN_PID=str(os.getpid()))
        os.execve(command[0], command, environment)
    with open(pidfile, "w") as handle:
        handle.write(str(pid))
    _, status = os.waitpid(pid, 0)
    print(f"daemon {pid} ended with status {status}", flush=True)
