"""A small OpenID provider on 127.0.0.1 for benchmarking oidc-agent offline: discovery, a token
endpoint answering the password and refresh grants, and empty JWKS. It prints its issuer URL on
the first line and serves until killed. Not a real provider: it checks nothing."""
import json
import secrets
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Provider(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _send(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        issuer = self.server.issuer
        if self.path.startswith("/.well-known/openid-configuration"):
            self._send(200, {
                "issuer": issuer,
                "authorization_endpoint": issuer + "authorize",
                "token_endpoint": issuer + "token",
                "userinfo_endpoint": issuer + "userinfo",
                "jwks_uri": issuer + "jwks",
                "scopes_supported": ["openid", "profile", "email", "offline_access"],
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token", "password"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            })
        elif self.path.startswith("/jwks"):
            self._send(200, {"keys": []})
        elif self.path.startswith("/userinfo"):
            self._send(200, {"sub": "bench"})
        else:
            self._send(404, {"error": "not_found"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        if self.path.startswith("/token"):
            self._send(200, {"access_token": "oidc-bench-" + secrets.token_urlsafe(24), "token_type": "Bearer",
                             "expires_in": 3600, "refresh_token": secrets.token_urlsafe(24), "scope": "openid"})
        else:
            self._send(404, {"error": "not_found"})


server = ThreadingHTTPServer(("127.0.0.1", 0), Provider)
server.issuer = "http://127.0.0.1:%d/" % server.server_address[1]
print(server.issuer, flush=True)
server.serve_forever()
