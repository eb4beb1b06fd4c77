"""An HTTP proxy for tests: tunnels CONNECT requests (the way async-http-client uses a proxy,
for http as for https) and appends each request line it took to LOG.

    connect_proxy.py PORT_FILE LOG    (writes its port to PORT_FILE once it listens)"""
import http.server
import os
import socket
import sys
import threading


class Tunnel(http.server.BaseHTTPRequestHandler):
    def do_CONNECT(self):
        host, port = self.path.rsplit(":", 1)
        upstream = socket.create_connection((host, int(port)), timeout=10)
        self.send_response(200, "Connection established")
        self.end_headers()
        with open(sys.argv[2], "a") as log:
            log.write("tunnelled CONNECT %s\n" % self.path)
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

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Tunnel)
with open(sys.argv[1] + ".tmp", "w") as handle:
    handle.write(str(server.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
server.serve_forever()
