"""An HTTP proxy for tests: tunnels CONNECT requests (the way async-http-client uses a proxy,
for http as for https) and appends to LOG a line for every connection it accepts and for each
request line it took, so that a test can also show that nothing at all reached it.

    connect_proxy.py PORT_FILE LOG [UPSTREAM]    (writes its port to PORT_FILE once it listens)

With UPSTREAM (host:port), every tunnel goes there whatever host it names: a test can then use
a made-up host name that only this proxy knows how to reach."""
import http.server
import os
import socket
import sys
import threading

LOG = sys.argv[2]
UPSTREAM = sys.argv[3] if len(sys.argv) > 3 else None


def record(line):
    with open(LOG, "a") as log:
        log.write(line + "\n")


class Tunnel(http.server.BaseHTTPRequestHandler):
    def do_CONNECT(self):
        host, port = (UPSTREAM or self.path).rsplit(":", 1)
        upstream = socket.create_connection((host, int(port)), timeout=10)
        self.send_response(200, "Connection established")
        self.end_headers()
        record("tunnelled CONNECT %s" % self.path)
        client = self.connection

        def pump(source, sink):
            try:
                while True:
                    data = source.recv(65536)
                    if not data:
                        break
                    sink.sendall(data)
            except OSError:
                pass
            finally:
                try:
                    sink.shutdown(socket.SHUT_WR)
                except OSError:
                    pass

        other = threading.Thread(target=pump, args=(upstream, client), daemon=True)
        other.start()
        pump(client, upstream)
        other.join(10)
        upstream.close()
        self.close_connection = True

    def do_GET(self):
        # A client that proxies plain http without CONNECT sends the whole URL here.
        record("refused %s %s" % (self.command, self.path))
        self.send_error(502)

    do_POST = do_GET

    def log_message(self, *args):
        pass


class RecordingServer(http.server.ThreadingHTTPServer):
    def verify_request(self, request, client_address):
        record("accepted connection from %s:%d" % client_address[:2])
        return True


server = RecordingServer(("127.0.0.1", 0), Tunnel)
with open(sys.argv[1] + ".tmp", "w") as handle:
    handle.write(str(server.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
server.serve_forever()
