"""A proxy for tests, HTTP and SOCKS5 on one port: tunnels CONNECT requests (the way authd uses
an HTTP proxy, for http as for https) and SOCKS5 CONNECTs without authentication, and appends to
LOG a line for every connection it accepts and for each request it took, so that a test can also
show that nothing at all reached it. A tunnel to a host whose name starts with "refused." is
refused (HTTP 403, or SOCKS5's "connection not allowed").

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


def relay(client, upstream):
    """Copies both ways until both sides have finished."""
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


def read_exactly(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise OSError("closed")
        data += chunk
    return data


def socks5(client):
    """One SOCKS5 client: no authentication, CONNECT to a domain name or an IPv4 address."""
    version, count = read_exactly(client, 2)
    methods = read_exactly(client, count)
    if version != 5 or 0 not in methods:
        # Logged before answering, so that a test reading the log after its failure finds the line.
        record("socks refused: no acceptable method")
        client.sendall(b"\x05\xff")
        return
    client.sendall(b"\x05\x00")
    _, command, _, kind = read_exactly(client, 4)
    if kind == 3:
        host = read_exactly(client, read_exactly(client, 1)[0]).decode()
    elif kind == 1:
        host = socket.inet_ntoa(read_exactly(client, 4))
    else:
        client.sendall(b"\x05\x08\x00\x01\x00\x00\x00\x00\x00\x00")
        return
    port = int.from_bytes(read_exactly(client, 2), "big")
    target = "%s:%d" % (host, port)
    if command != 1 or host.startswith("refused."):
        record("socks refused CONNECT %s" % target)
        client.sendall(b"\x05\x02\x00\x01\x00\x00\x00\x00\x00\x00")
        return
    upstream_host, upstream_port = (UPSTREAM or target).rsplit(":", 1)
    upstream = socket.create_connection((upstream_host, int(upstream_port)), timeout=10)
    client.sendall(b"\x05\x00\x00\x01\x7f\x00\x00\x01" + upstream.getsockname()[1].to_bytes(2, "big"))
    record("socks tunnelled CONNECT %s" % target)
    relay(client, upstream)


class Tunnel(http.server.BaseHTTPRequestHandler):
    def do_CONNECT(self):
        if self.path.startswith("refused."):
            record("refused CONNECT %s" % self.path)
            self.send_error(403)
            return
        host, port = (UPSTREAM or self.path).rsplit(":", 1)
        upstream = socket.create_connection((host, int(port)), timeout=10)
        self.send_response(200, "Connection established")
        self.end_headers()
        record("tunnelled CONNECT %s" % self.path)
        relay(self.connection, upstream)
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

    def finish_request(self, request, client_address):
        # SOCKS5 greetings start with the version byte 5; HTTP with a letter.
        if request.recv(1, socket.MSG_PEEK) == b"\x05":
            try:
                socks5(request)
            except OSError:
                pass
            return
        super().finish_request(request, client_address)


server = RecordingServer(("127.0.0.1", 0), Tunnel)
with open(sys.argv[1] + ".tmp", "w") as handle:
    handle.write(str(server.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
server.serve_forever()
