"""A stand-in for a socket served by somebody else: accepts every connection on argv[1] and, when
the client closes it (or after 5 s of silence), appends the number of bytes it sent to argv[2].

Shared by the Swift, Python, C and Node clients' tests of "another user's socket is sent nothing".
They run it with `python3 -c` (as uid 65534 too, who may not read the checkout) and wait for the
socket's path: it appears only once the server listens.
"""
import os, signal, socket, sys, threading

# The test runner may start it with SIGTERM blocked; stopping it must end it at once.
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
path, log = sys.argv[1], sys.argv[2]
listener = socket.socket(socket.AF_UNIX)
listener.bind(path + ".binding")
os.chmod(path + ".binding", 0o777)
listener.listen(16)
os.rename(path + ".binding", path)
lock = threading.Lock()


def serve(connection):
    connection.settimeout(5)
    total = 0
    try:
        while True:
            chunk = connection.recv(65536)
            if not chunk:
                break
            total += len(chunk)
    except OSError:
        pass
    connection.close()
    with lock, open(log, "a") as out:
        out.write("%d\n" % total)


while True:
    connection, _ = listener.accept()
    threading.Thread(target=serve, args=(connection,), daemon=True).start()
