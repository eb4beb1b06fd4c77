"""What the browser tests (and the first-paint benchmark) run against, without pytest: the
development server, authd on a private socket, a raw JSON-RPC connection to it, and Chromium
driven by Selenium.

Nothing here prints a password, a code or a token: errors name what failed, never the value.
"""
import base64
import hashlib
import hmac
import json
import os
import pathlib
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("AUTHD_BIN_DIR") or ROOT / ".build" / "debug")
ANON_KEY = "browser-tests-anon-key"
PROFILE = "Notes"
CHROMIUM = os.environ.get("AUTHD_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("AUTHD_CHROMEDRIVER", "/usr/bin/chromedriver")
# Every wait in these tests: long enough for a loaded 2-core machine, reached only by a failure.
BOUND = 60.0


class StackError(Exception):
    """A process of the stack did not start, or answered what it should not."""


def binary(name: str) -> str:
    path = BIN / name
    if not os.access(path, os.X_OK):
        raise StackError(f"{path} is missing: build it first ('swift build')")
    return str(path)


def wait_until(predicate, what: str, timeout: float = BOUND, poll: float = 0.05):
    """Polls `predicate` until it answers something true; only a failure waits the whole bound."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise StackError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(poll)


def unique_email(tag: str) -> str:
    return f"{tag}-{uuid.uuid4().hex[:8]}@example.com"


def new_password() -> str:
    return "pw-" + uuid.uuid4().hex


# MARK: TOTP (RFC 6238: HMAC-SHA1, 6 digits, 30 s), as an authenticator app computes it

def totp(secret_base32: str, at: float = None) -> str:
    key = base64.b32decode(secret_base32 + "=" * (-len(secret_base32) % 8), casefold=True)
    counter = int((time.time() if at is None else at) // 30)
    mac = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    value = struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF
    return f"{value % 1_000_000:06d}"


# MARK: the development server

class DevServer:
    """authd-dev-server on a free loopback port; its REST API and its admin endpoints."""

    def __init__(self, directory: pathlib.Path, *args: str):
        self.output_path = directory / "dev-server.out"
        with open(self.output_path, "w") as out:
            self.process = subprocess.Popen(
                [binary("authd-dev-server"), "--port", "0", "--anon-key", ANON_KEY, *args],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            wait_until(lambda: self.process.poll() is not None or "listening on" in self.output_path.read_text(),
                       "the development server to listen")
            if self.process.poll() is not None:
                raise StackError("the development server stopped: " + self.output_path.read_text()[-2000:])
            self.url = self.output_path.read_text().split("listening on ", 1)[1].split()[0]
        except BaseException:
            self.stop()
            raise

    def request(self, method: str, path: str, body=None, token: str = None):
        """A JSON request to /auth/v1/PATH; answers (status, decoded body). Never raises for a status."""
        headers = {"apikey": ANON_KEY, "Content-Type": "application/json"}
        if token:
            headers["Authorization"] = "Bearer " + token
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + "/auth/v1" + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=BOUND) as answer:
                status, text = answer.status, answer.read()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read()
        return status, (json.loads(text) if text else None)

    def call(self, method: str, path: str, body=None, token: str = None):
        """As `request`, but a status other than 2xx is an error (naming the path and status only)."""
        status, answer = self.request(method, path, body, token)
        if not 200 <= status < 300:
            code = answer.get("error_code") or answer.get("code") if isinstance(answer, dict) else None
            raise StackError(f"{method} {path} answered {status} ({code})")
        return answer

    def admin(self, path: str, body=None):
        return self.call("GET" if body is None else "POST", "/admin/dev/" + path, body)

    def settings(self, **values):
        self.admin("settings", values)

    def outbox(self, to: str) -> list:
        return self.admin("outbox?to=" + urllib.request.quote(to))["messages"]

    def wait_for_code(self, to: str, type_: str, after: int = 0) -> str:
        """The code of the first message of `type_` to `to` past the first `after` such messages."""
        seen = []

        def found():
            messages = self.outbox(to)
            seen[:] = [m.get("type") for m in messages]
            messages = [m for m in messages if m.get("type") == type_]
            return messages[after]["code"] if len(messages) > after else None
        try:
            return wait_until(found, f"a '{type_}' message to {to} in the development server's outbox")
        except StackError as error:
            raise StackError(f"{error} (the outbox holds messages of types {seen})") from None

    def sign_up(self, email: str, password: str) -> dict:
        """A confirmed user (the project auto-confirms unless told otherwise); its session."""
        return self.call("POST", "/signup", {"email": email, "password": password})

    def sign_in(self, email: str, password: str):
        """The password grant, as any client makes it: (status, answer)."""
        return self.request("POST", "/token?grant_type=password", {"email": email, "password": password})

    def enrol_verified_totp(self, access_token: str) -> str:
        """A TOTP factor, enrolled and verified as an authenticator app's owner would; its secret."""
        factor = self.call("POST", "/factors", {"factor_type": "totp", "friendly_name": "Phone"}, token=access_token)
        secret = factor["totp"]["secret"]
        challenge = self.call("POST", f"/factors/{factor['id']}/challenge", {}, token=access_token)
        self.call("POST", f"/factors/{factor['id']}/verify", {"challenge_id": challenge["id"], "code": totp(secret)}, token=access_token)
        return secret

    def stop(self):
        stop(self.process)


def stop(process: subprocess.Popen, grace: float = 10):
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(grace)


# MARK: authd and its socket

class RPCError(Exception):
    def __init__(self, method: str, error: dict):
        self.reason = (error.get("data") or {}).get("reason")
        self.message = error.get("message", "")
        super().__init__(f"{method}: {self.reason}: {self.message}")


class Connection:
    """One raw JSON-RPC 2.0 connection to authd: one JSON object per line."""

    def __init__(self, path: str, timeout: float = BOUND):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buffer = b""
        self.next_id = 0

    def send(self, method: str, params: dict) -> int:
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + "\n"
        self.sock.sendall(line.encode())
        return self.next_id

    def read(self):
        """The next message, or None when authd closed the connection."""
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def call(self, method: str, params: dict):
        request = self.send(method, params)
        while True:
            message = self.read()
            if message is None:
                raise StackError(f"authd closed the connection before answering {method}")
            if message.get("id") != request:
                continue   # an event, or an answer to something else
            if "error" in message:
                raise RPCError(method, message["error"])
            return message["result"]

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class Daemon:
    """authd with one profile on the development server, on a socket of its own."""

    def __init__(self, directory: pathlib.Path, server_url: str, profile: str = PROFILE, *args: str):
        self.socket = str(directory / "run" / "authd.sock")
        self.log_path = directory / "authd.log"
        env = dict(os.environ, AUTHD_SOCKET=self.socket, XDG_CONFIG_HOME=str(directory / "config"),
                   # Nothing may open a browser but the test: open_browser is false on every page.
                   BROWSER="/bin/false")
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(
                [binary("authd"), "--profile", profile, "--url", server_url, "--anon-key", ANON_KEY, "--log-level", "debug", *args],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        try:
            wait_until(lambda: self.process.poll() is not None or self._answers(), "authd to answer on its socket")
            if self.process.poll() is not None:
                raise StackError("authd stopped: " + self.log_path.read_text()[-2000:])
        except BaseException:
            self.stop()
            raise

    def _answers(self) -> bool:
        try:
            self.call("hello", {"client": "browser-tests", "protocol_version": "1.0"})
            return True
        except OSError:
            return False

    def call(self, method: str, params: dict = None):
        """One call on a connection of its own."""
        connection = Connection(self.socket)
        try:
            return connection.call(method, params or {})
        finally:
            connection.close()

    def begin_page(self, **params) -> dict:
        """A sign-in page for the test to open: authd opens no browser."""
        return self.call("session.beginInteractiveSignIn", dict(params, open_browser=False))

    def status(self) -> dict:
        return self.call("session.status")

    def stop(self):
        stop(self.process)


class Waiter:
    """An app waiting for a page's end (`session.waitForInteractiveSignIn`) on a connection and
    thread of its own, as an app does while the user is in the browser."""

    def __init__(self, daemon: Daemon, flow_id: str):
        self.result = None
        self.error = None
        self.connection = Connection(daemon.socket, timeout=None)
        self.thread = threading.Thread(target=self._run, args=(flow_id,), daemon=True)
        self.thread.start()

    def _run(self, flow_id):
        try:
            self.result = self.connection.call("session.waitForInteractiveSignIn", {"flow_id": flow_id})
        except BaseException as error:   # recorded for the test's thread to raise
            self.error = error

    def answered(self) -> bool:
        return not self.thread.is_alive()

    def wait(self, timeout: float = BOUND) -> dict:
        """The status the wait answered; raises what it was refused with."""
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise StackError(f"session.waitForInteractiveSignIn did not answer within {timeout:.0f} s")
        if self.error is not None:
            raise self.error
        return self.result

    def close(self):
        self.connection.close()
        self.thread.join(5)


class Events:
    """The profile's events (`events.subscribe`), collected on a thread of their own."""

    def __init__(self, daemon: Daemon):
        self.events = []
        self.condition = threading.Condition()
        self.connection = Connection(daemon.socket, timeout=None)
        self.connection.call("events.subscribe", {})
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            while True:
                message = self.connection.read()
                if message is None:
                    return
                if "id" not in message and message.get("method") == "event":
                    with self.condition:
                        self.events.append(message.get("params", {}))
                        self.condition.notify_all()
        except OSError:
            return

    def wait_for(self, predicate, what: str, timeout: float = BOUND) -> dict:
        deadline = time.monotonic() + timeout
        with self.condition:
            while True:
                for event in self.events:
                    if predicate(event):
                        return event
                left = deadline - time.monotonic()
                if left <= 0:
                    names = [event.get("event") for event in self.events]
                    raise StackError(f"timed out waiting for {what}; events so far: {names}")
                self.condition.wait(left)

    def page_ended(self, flow_id: str) -> dict:
        return self.wait_for(lambda e: e.get("event") == "INTERACTIVE_SIGN_IN_ENDED" and e.get("flow_id") == flow_id,
                             f"INTERACTIVE_SIGN_IN_ENDED of page {flow_id}")

    def close(self):
        self.connection.close()
        self.thread.join(5)


def make_temp_dir(prefix: str) -> pathlib.Path:
    path = pathlib.Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(path, 0o700)
    return path


def remove_dir(path: pathlib.Path):
    shutil.rmtree(path, ignore_errors=True)


def contains_secret(text: str, secret: str) -> bool:
    """Whether `secret` appears in `text`; a code only as a number of its own."""
    if secret.isdigit():
        return re.search(r"(?<!\d)" + re.escape(secret) + r"(?!\d)", text) is not None
    return secret in text
