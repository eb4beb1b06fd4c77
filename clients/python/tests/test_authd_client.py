"""authd_client against a live authd and development server."""
import contextlib
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import warnings

import pytest

import authd_client


def test_token_status_and_redaction(stack):
    stack.start_daemon()
    stack.sign_up_and_in("py-token@example.com", "py-token-password")
    client = authd_client.connect(socket_path=stack.socket)
    assert "events" in client.daemon["capabilities"]
    token = client.token(min_validity=60)
    assert token.value.count(".") == 2
    assert token.authorization == "Bearer " + token.value
    assert token.value not in repr(token) and token.value not in str(token)
    status = client.status()
    assert status["state"] == "signed_in" and status["user"]["email"] == "py-token@example.com"
    assert token.value not in repr(status)
    assert token.value not in stack.output()


def test_typed_errors_say_what_to_do(stack):
    with pytest.raises(authd_client.DaemonUnavailable, match="systemctl --user enable --now authd.socket") as unavailable:
        authd_client.connect(socket_path=stack.socket)
    assert unavailable.value.exit_status == 3
    stack.start_daemon()
    with pytest.raises(authd_client.UnknownProfile, match="authctl profile add nope"):
        authd_client.connect(profile="nope", socket_path=stack.socket)
    client = authd_client.connect(profile=stack.profile, socket_path=stack.socket)
    with pytest.raises(authd_client.NotSignedIn, match="authctl login") as raised:
        client.token()
    assert raised.value.reason == "not_signed_in" and not raised.value.transient and raised.value.exit_status == 4


def test_a_connection_authd_closed_as_idle_is_opened_again(stack):
    stack.start_daemon("--idle-timeout", "1")
    stack.sign_up_and_in("py-idle@example.com", "py-idle-password")
    client = authd_client.connect(socket_path=stack.socket)
    first = client.token()
    time.sleep(1.6)  # authd has sent idle_timeout and closed the connection by now
    assert client.token().value == first.value
    assert "closing an idle connection" in stack.output()


_HELLO = {"protocol_version": "1.0", "daemon_version": "0.1.0", "capabilities": [], "profiles": ["default"], "default_profile": "default"}
_TOKEN = {"access_token": "header.payload.sig", "token_type": "bearer", "expires_at": 1800000000, "expires_in": 60, "scopes": ["all"]}


@contextlib.contextmanager
def _scripted_daemon(hang_up_on):
    """A stand-in authd on a real Unix socket that answers hello and session.token, and closes
    the connection unanswered on a request for `hang_up_on`, as an authd that stops does. Yields
    its socket path and the list of methods it reads, in order."""
    directory = tempfile.mkdtemp()
    path = os.path.join(directory, "s.sock")
    received = []
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(8)

    def serve():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with connection:
                buffer, hung_up = b"", False
                while not hung_up:
                    chunk = connection.recv(4096)
                    if not chunk:
                        break
                    buffer += chunk
                    while b"\n" in buffer and not hung_up:
                        line, buffer = buffer.split(b"\n", 1)
                        request = json.loads(line)
                        received.append(request["method"])
                        hung_up = request["method"] == hang_up_on
                        if not hung_up:
                            result = _HELLO if request["method"] == "hello" else _TOKEN
                            connection.sendall(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode() + b"\n")

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield path, received
    finally:
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        shutil.rmtree(directory)


def test_a_take_over_whose_answer_is_lost_is_not_sent_again():
    # authd may have spent the token: presented again, it can end the whole session.
    with _scripted_daemon("session.signInWithRefreshToken") as (path, received):
        client = authd_client.connect(socket_path=path)
        assert client.token().value == "header.payload.sig"  # the connection has been used
        with pytest.raises(authd_client.DaemonUnavailable):
            client.sign_in_with_refresh_token("app-refresh-token")
        assert received.count("session.signInWithRefreshToken") == 1, received
        assert received.count("hello") == 2, received  # on a connection opened for it
        assert client.token().value == "header.payload.sig"


def test_a_token_request_whose_answer_is_lost_is_sent_once_more():
    # The other side of the rule, and proof that the daemon above would have seen a second send.
    with _scripted_daemon("session.token") as (path, received):
        client = authd_client.connect(socket_path=path)
        with pytest.raises(authd_client.DaemonUnavailable):
            client.token()
        assert received == ["hello", "session.token", "hello", "session.token"], received


def test_events_follow_sign_in_and_survive_a_daemon_restart(stack):
    stack.start_daemon()
    client = authd_client.connect(socket_path=stack.socket)
    stream = client.events()
    seen = []

    def follow():
        for event in stream:
            seen.append(event)

    reader = threading.Thread(target=follow, daemon=True)
    reader.start()
    wait_for(lambda: any(e.name == "INITIAL_SESSION" for e in seen))
    assert seen[0].status["state"] == "signed_out" and not seen[0].after_reconnect
    stack.sign_up_and_in("py-events@example.com", "py-events-password")
    wait_for(lambda: any(e.name == "SIGNED_IN" for e in seen))

    stack.stop_daemon()
    stack.start_daemon()
    wait_for(lambda: any(e.name == "INITIAL_SESSION" and e.after_reconnect for e in seen))
    again = [e for e in seen if e.after_reconnect][0]
    assert again.status["state"] == "signed_in" and again.status["user"]["email"] == "py-events@example.com"
    # The request connection broke with the first daemon; the next call reconnects by itself.
    assert client.token().value.count(".") == 2
    stream.close()
    reader.join(5)
    assert not reader.is_alive(), "close() did not end the event stream"


# Counts the bytes each connection sends (shared with the Swift, C and Node tests).
_COUNTING_SERVER = (pathlib.Path(__file__).resolve().parents[3] / "Tests/EndToEndTests/Helpers/counting-server.py").read_text()


@pytest.fixture
def open_directory():
    """A directory another user can reach (pytest's tmp_path sits in a private one)."""
    directory = pathlib.Path(tempfile.mkdtemp(prefix="authd-py-foreign-"))
    os.chmod(directory, 0o755)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def _counting_server(directory, as_uid=None):
    """A byte-counting server on ``directory/run/authd.sock``, run as ``as_uid`` (needs root) or as us."""
    run = directory / "run"
    run.mkdir()
    prefix = []
    if as_uid is not None:
        os.chown(run, as_uid, as_uid)
        prefix = ["setpriv", f"--reuid={as_uid}", f"--regid={as_uid}", "--clear-groups"]
    path, log = str(run / "authd.sock"), run / "received"
    process = subprocess.Popen(prefix + ["/usr/bin/python3", "-c", _COUNTING_SERVER, path, str(log)], env={"PATH": "/usr/bin:/bin"})
    wait_for(lambda: os.path.exists(path))
    return process, path, log


def _received(log, at_least):
    """The byte count of each closed connection, once there are ``at_least``."""
    counts = []
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        counts = [int(line) for line in log.read_text().split()] if log.exists() else []
        if len(counts) >= at_least:
            break
        time.sleep(0.05)
    return counts


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to serve a socket as another user")
def test_a_socket_served_by_another_user_is_sent_nothing(open_directory):
    server, path, log = _counting_server(open_directory, as_uid=65534)
    try:
        with pytest.raises(authd_client.ForeignDaemon, match="served by a process of uid 65534, not by you") as raised:
            authd_client.connect(socket_path=path)
        assert (raised.value.uid, raised.value.expected_uid, raised.value.path) == (65534, 0, path)
        assert not raised.value.transient
        counts = _received(log, 1)
        assert counts, "the client never reached the server"
        assert counts == [0] * len(counts), f"bytes sent to another user's server: {counts}"
    finally:
        server.terminate()
        server.wait(5)


def test_the_servers_uid_is_checked_before_anything_is_sent(tmp_path, monkeypatch):
    server, path, log = _counting_server(tmp_path)
    try:
        # Served by us; this process pretends to be another user, as if the socket were not ours.
        monkeypatch.setattr(authd_client.os, "getuid", lambda: os.geteuid() + 1)
        with pytest.raises(authd_client.ForeignDaemon) as raised:
            authd_client.connect(socket_path=path)
        assert (raised.value.uid, raised.value.expected_uid) == (os.geteuid(), os.geteuid() + 1)
        counts = _received(log, 1)
        assert counts == [0], f"bytes sent: {counts}"
    finally:
        server.terminate()
        server.wait(5)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a client as another user")
def test_a_client_of_another_user_refuses_authd_before_authd_refuses_it(stack):
    stack.start_daemon()
    run = os.path.dirname(stack.socket)
    for path, mode in ((stack.directory.parent, 0o711), (stack.directory, 0o711), (run, 0o711), (stack.socket, 0o777)):
        os.chmod(path, mode)
    script = ("import authd_client, sys\n"
              "try:\n    authd_client.connect(socket_path=sys.argv[1])\n"
              "except authd_client.ForeignDaemon as error:\n    print('foreign:', error.uid, error.expected_uid)\n")
    # A copy uid 65534 can read: the checkout (and its virtualenv) may sit in a private directory.
    module_dir = stack.directory / "module"
    module_dir.mkdir(mode=0o755)
    os.chmod(module_dir, 0o755)
    shutil.copy(authd_client.__file__, module_dir / "authd_client.py")
    os.chmod(module_dir / "authd_client.py", 0o644)
    result = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, stack.socket],
                            env={"PYTHONPATH": str(module_dir), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=30)
    assert "foreign: 0 65534" in result.stdout, result.stdout + result.stderr
    # authd, for its part, still refuses the connection before reading from it. The client may
    # have closed before authd accepted the connection, so the line can come after the client ended.
    deadline = time.monotonic() + 15
    while "refused connection from another user" not in stack.output() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "refused connection from another user" in stack.output()


def test_a_newer_protocol_is_warned_about_and_unknown_fields_ignored(tmp_path):
    path = str(tmp_path / "fake.sock")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(1)

    def serve():
        connection, _ = listener.accept()
        with connection, connection.makefile("rwb") as stream:
            for line in stream:
                request_id = __import__("json").loads(line)["id"]
                result = ('{"protocol_version":"2.0","daemon_version":"9","capabilities":["teleport"],"profiles":["default"],'
                          '"default_profile":"default","motd":"hi"}')
                stream.write(('{"jsonrpc":"2.0","id":%d,"result":%s}\n' % (request_id, result)).encode())
                stream.flush()

    threading.Thread(target=serve, daemon=True).start()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        client = authd_client.connect(socket_path=path)
    assert [str(w.message) for w in caught if issubclass(w.category, authd_client.ProtocolVersionWarning)] == [
        "authd speaks protocol 2.0, newer than this client's 1.0: update the client module (calls may fail)"]
    assert client.daemon["capabilities"] == ["teleport"]
    listener.close()


def wait_for(predicate, timeout=30):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


FIXTURES = pathlib.Path(__file__).resolve().parents[3] / "Tests/AuthProtocolTests/Fixtures"


def _fixture(name):
    """A golden fixture shared with the Swift, C and Node clients' tests."""
    return __import__("json").loads((FIXTURES / f"{name}.json").read_text())


def golden_daemon(path):
    """A stand-in daemon on ``path`` answering from the golden fixtures, on every connection: hello,
    a token for a ``session.token`` with ``min_validity`` 60, the sign-in page's three methods (a
    wait answers the golden status), a subscription followed by the golden INTERACTIVE_SIGN_IN_ENDED,
    the not-signed-in error for anything else. Returns the requests it read (filled as they come)
    and its listener, to close. The C tests use it too."""
    json = __import__("json")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(4)
    requests = []
    results = {"session.beginInteractiveSignIn": "result-interactive-sign-in-begin",
               "session.cancelInteractiveSignIn": "result-interactive-sign-in-cancel",
               "session.waitForInteractiveSignIn": "result-status", "events.subscribe": "result-subscribe"}

    def serve(connection):
        with connection, connection.makefile("rwb") as stream:
            for line in stream:
                request = json.loads(line)
                requests.append(request)
                if request["method"] == "hello":
                    answer = {"jsonrpc": "2.0", "id": request["id"], "result": _fixture("result-hello")["result"]}
                elif request["method"] == "session.token" and request["params"].get("min_validity") == 60:
                    answer = dict(_fixture("result-token"), id=request["id"])
                elif request["method"] in results:
                    answer = {"jsonrpc": "2.0", "id": request["id"], "result": _fixture(results[request["method"]])["result"]}
                else:
                    answer = dict(_fixture("error-not-signed-in"), id=request["id"])
                stream.write((json.dumps(answer) + "\n").encode())
                if request["method"] == "events.subscribe":
                    stream.write((json.dumps(_fixture("event-interactive-sign-in-ended")) + "\n").encode())
                stream.flush()

    def accept():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=serve, args=(connection,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return requests, listener


def test_the_golden_token_request_and_answers(tmp_path):
    requests, listener = golden_daemon(str(tmp_path / "fixtures.sock"))
    client = authd_client.connect(profile="work", socket_path=str(tmp_path / "fixtures.sock"))
    token = client.token(min_validity=60)
    expected = _fixture("request-token")
    sent = next(request for request in requests if request["method"] == "session.token")
    assert dict(sent, id=expected["id"]) == expected
    result = _fixture("result-token")["result"]
    assert token.value == result["access_token"] and token.expires_at.timestamp() == result["expires_at"]
    with pytest.raises(authd_client.NotSignedIn) as raised:
        client.token()
    assert str(raised.value) == _fixture("error-not-signed-in")["error"]["message"]
    client.close()
    listener.close()


def test_typed_calls_sign_in_behind_a_captcha_verify_claims_and_change_a_password_with_a_code(stack_factory):
    stack = stack_factory(3600, "--captcha-token", "py-captcha", "--signing-algorithm", "ES256")
    stack.start_daemon()
    client = authd_client.connect(socket_path=stack.socket)
    email, password, new_password = "py-typed@example.com", "py-typed-password", "py-typed-password-2"
    with pytest.raises(authd_client.SignInRefused, match="--captcha-token-file") as refused:
        client.sign_up(password, email=email)
    assert refused.value.reason == "captcha_required" and refused.value.exit_status == 5
    created = client.sign_up(password, email=email, captcha_token="py-captcha")
    assert created["status"]["state"] == "signed_in" and not created["confirmation_sent"]
    claims = client.claims()
    assert claims["verified"] is True and claims["algorithm"] == "ES256" and claims["claims"]["email"] == email
    token = client.token()
    assert token.value not in repr(claims)

    assert client.sign_out()["status"]["state"] == "signed_out"
    with pytest.raises(authd_client.SignInRefused):
        client.sign_in(email, password)
    assert client.sign_in(email, password, captcha_token="py-captcha")["state"] == "signed_in"

    stack.admin("settings", {"update_password_require_reauthentication": True, "reauthentication_window": 0})
    with pytest.raises(authd_client.Rejected) as needed:
        client.update_user(password=new_password)
    assert needed.value.reason == "reauthentication_needed" and not isinstance(needed.value, authd_client.SignInRefused)
    assert client.reauthenticate() == {"sent_to": email, "channel": "email"}
    code = [m for m in stack.admin(f"outbox?to={email}")["messages"] if m["type"] == "reauthentication"][-1]["code"]
    assert client.update_user(password=new_password, nonce=code)["email"] == email
    assert client.user()["email"] == email
    for secret in (password, new_password, code, token.value):
        assert secret not in stack.output()


def _totp(secret: str, offset: int = 0) -> str:
    """The code an authenticator app shows for ``secret`` (RFC 6238: SHA-1, 6 digits, 30 s)."""
    import base64, hashlib, hmac, struct
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    digest = hmac.new(key, struct.pack(">Q", (int(time.time()) + offset) // 30), hashlib.sha1).digest()
    start = digest[19] & 0x0F
    return "%06d" % ((struct.unpack(">I", digest[start:start + 4])[0] & 0x7FFFFFFF) % 1_000_000)


def test_typed_second_factor_calls_raise_the_session_and_guard_aal2_tokens(stack):
    stack.start_daemon()
    client = authd_client.connect(socket_path=stack.socket)
    email, password = "py-mfa@example.com", "py-mfa-password"
    client.sign_up(password, email=email)
    assert client.status()["aal"] == "aal1"
    with pytest.raises(authd_client.MFARequired) as required:
        client.token(aal="aal2")
    assert required.value.reason == "mfa_required" and required.value.exit_status == 9
    assert "authctl mfa verify" in str(required.value)

    factor = client.enroll_factor("totp", friendly_name="py app")
    secret = factor["totp"]["secret"]
    assert factor["type"] == "totp" and factor["totp"]["uri"].startswith("otpauth://totp/")
    with pytest.raises(authd_client.SignInRefused) as wrong:
        client.verify_factor(factor["factor_id"], "000000")
    assert wrong.value.reason == "code_rejected"
    status = client.verify_factor(factor["factor_id"], _totp(secret))
    assert status["aal"] == "aal2" and status["amr"][0] == "totp"
    assert client.token(aal="aal2").value.count(".") == 2
    listed = client.list_factors()
    assert listed["aal"] == "aal2" and [f["status"] for f in listed["factors"]] == ["verified"]
    challenge = client.challenge_factor(factor["factor_id"])
    assert challenge["type"] == "totp" and challenge["challenge_id"]
    assert client.unenroll_factor(factor["factor_id"])["factor_id"] == factor["factor_id"]
    assert client.list_factors()["factors"] == []
    assert password not in stack.output()


def test_typed_calls_sign_in_anonymously_keep_the_user_and_take_over_an_apps_session(stack):
    stack.start_daemon()
    client = authd_client.connect(socket_path=stack.socket)
    status = client.sign_in_anonymously(data={"theme": "dark"})
    assert status["state"] == "signed_in" and status["user"]["is_anonymous"] is True
    anonymous_id = status["user"]["id"]
    assert client.claims()["claims"]["is_anonymous"] is True
    kept = client.update_user(email="py-kept@example.com")
    assert kept["id"] == anonymous_id and kept["is_anonymous"] is False
    wait_for(lambda: "is_anonymous" not in client.status()["user"])

    # An app's own session (the password grant it made itself) moves into authd.
    body = json.dumps({"email": "py-kept@example.com", "password": "py-kept-password"}).encode()
    client.update_user(password="py-kept-password")
    request = urllib.request.Request(stack.url + "/auth/v1/token?grant_type=password", data=body, method="POST",
                                     headers={"Content-Type": "application/json", "apikey": stack.anon_key})
    app_session = json.loads(urllib.request.urlopen(request, timeout=10).read())
    assert client.sign_out()["status"]["state"] == "signed_out"
    moved = client.sign_in_with_refresh_token(app_session["refresh_token"])
    assert moved["state"] == "signed_in" and moved["user"]["id"] == anonymous_id
    with pytest.raises(authd_client.SignInRefused, match="does not open a session") as refused:
        client.sign_in_with_refresh_token("not-a-session-token")
    assert refused.value.exit_status == 5
    assert client.status()["state"] == "signed_in"
    assert app_session["refresh_token"] not in stack.output()


# authd's own sign-in page. A scripted stand-in for the user's browser walks it (shared with the
# Swift end-to-end tests): given the page's address, or as authd's $BROWSER.
BROWSER = pathlib.Path(__file__).resolve().parents[3] / "Tests/EndToEndTests/Helpers/sign-in-page-browser.py"


def _password_file(stack, password):
    """A file holding ``password``, for the stand-in browser (never on a command line)."""
    path = stack.directory / "password"
    path.write_text(password + "\n")
    os.chmod(path, 0o600)
    return str(path)


def _browse(url, *args):
    """The stand-in browser's run on ``url``."""
    return subprocess.run([sys.executable, str(BROWSER), url, *args], capture_output=True, text=True, timeout=120)


def _browser_failure(browser, stack):
    """What a failed run of the stand-in browser saw (the heading it ended on, its last error) and
    what authd logged of its pages: never the page's address."""
    errors = browser.stderr.strip().splitlines()[-1:]
    logged = [line for line in stack.output().splitlines() if "sign-in page" in line]
    return "\n".join(browser.stdout.splitlines()[:1] + errors + logged)


class _Watchdog:
    """Cancels page ``flow_id`` (through a client of its own) unless the test is done with it within
    ``seconds``: a page nobody signs in to would otherwise keep a failing test waiting ten minutes."""

    def __init__(self, stack, flow_id, seconds=120):
        cancel = lambda: authd_client.connect(socket_path=stack.socket).cancel_interactive_sign_in(flow_id)
        self.timer = threading.Timer(seconds, cancel)
        self.timer.daemon = True
        self.timer.start()

    def done(self):
        self.timer.cancel()


class _Events:
    """A client's events, read on a thread of their own, for the test to wait for."""

    def __init__(self, client):
        self.stream, self.seen = client.events(), []

        def follow():
            for event in self.stream:
                self.seen.append(event)

        self.reader = threading.Thread(target=follow, daemon=True)
        self.reader.start()
        wait_for(lambda: any(event.name == "INITIAL_SESSION" for event in self.seen))

    def pages_ended(self):
        """The INTERACTIVE_SIGN_IN_ENDED events so far."""
        return [event for event in self.seen if event.name == "INTERACTIVE_SIGN_IN_ENDED"]

    def page_ended(self, flow_id):
        """The INTERACTIVE_SIGN_IN_ENDED of page ``flow_id``, once it came."""
        wait_for(lambda: any(event.flow_id == flow_id for event in self.pages_ended()))
        return next(event for event in self.pages_ended() if event.flow_id == flow_id)

    def close(self):
        self.stream.close()
        self.reader.join(5)


def test_a_sign_in_on_the_page_answers_the_wait_which_leaves_the_client_free(stack):
    stack.start_daemon()
    email, password = "py-page@example.com", "py-page-password"
    stack.sign_up(email, password)
    client = authd_client.connect(socket_path=stack.socket)
    events = _Events(client)
    page = client.begin_interactive_sign_in(method="password", email=email, open_browser=False)
    assert page["browser_opened"] is False and page["expires_in"] == 600 and page["url"].startswith("http://127.0.0.1:")
    outcome = {}

    def wait():
        try:
            outcome["status"] = client.wait_for_interactive_sign_in(page["flow_id"])
        except authd_client.AuthdError as error:
            outcome["error"] = error

    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    # The wait holds a connection of its own: the client's other calls are answered meanwhile.
    assert client.status()["state"] == "signed_out"
    assert waiter.is_alive() and not outcome
    browser = _browse(page["url"], "--email", email, "--password-file", _password_file(stack, password))
    assert browser.returncode == 0, _browser_failure(browser, stack)
    waiter.join(60)
    assert not waiter.is_alive() and "error" not in outcome, outcome
    assert outcome["status"]["state"] == "signed_in" and outcome["status"]["user"]["email"] == email
    ended = events.page_ended(page["flow_id"])
    assert (ended.reason, ended.message, ended.status["state"]) == ("signed_in", None, "signed_in")
    assert any(event.name == "SIGNED_IN" for event in events.seen)
    events.close()
    # An ended page is remembered a while: its wait answers at once, the cancel finds nothing open.
    assert client.wait_for_interactive_sign_in(page["flow_id"])["state"] == "signed_in"
    assert client.cancel_interactive_sign_in(page["flow_id"]) is False
    assert password not in stack.output() and page["url"] not in stack.output()


def test_sign_in_interactively_has_authd_open_the_browser(stack):
    email, password = "py-browser@example.com", "py-browser-password"
    # authd's environment names the stand-in as the user's browser, as a desktop session's would.
    stack.env["BROWSER"] = f"{BROWSER} %s --email {email} --password-file {_password_file(stack, password)}"
    stack.start_daemon()
    stack.sign_up(email, password)
    client = authd_client.connect(socket_path=stack.socket)
    pages, watchdogs = [], []

    def opened(page):
        pages.append(page)
        watchdogs.append(_Watchdog(stack, page["flow_id"]))

    status = client.sign_in_interactively(method="password", opened=opened)
    watchdogs[0].done()
    assert [page["browser_opened"] for page in pages] == [True]
    assert status["state"] == "signed_in" and status["user"]["email"] == email
    assert client.token().value.count(".") == 2
    assert password not in stack.output()


def test_the_cancel_call_ends_a_wait_and_bad_parameters_are_refused(stack):
    stack.start_daemon()
    client = authd_client.connect(socket_path=stack.socket)
    events = _Events(client)
    page = client.begin_interactive_sign_in(open_browser=False)
    outcome = {}

    def wait():
        try:
            outcome["status"] = client.wait_for_interactive_sign_in(page["flow_id"])
        except authd_client.AuthdError as error:
            outcome["error"] = error

    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    # From another thread while the wait is out (or before it is: it then answers at once), as an
    # app's own Cancel button would.
    assert client.cancel_interactive_sign_in(page["flow_id"]) is True
    waiter.join(30)
    assert not waiter.is_alive() and "status" not in outcome
    cancelled = outcome["error"]
    assert type(cancelled) is authd_client.Rejected and cancelled.reason == "sign_in_cancelled" and cancelled.exit_status == 1
    assert "cancelled" in str(cancelled)
    assert events.page_ended(page["flow_id"]).reason == "cancelled"
    events.close()
    assert client.cancel_interactive_sign_in(page["flow_id"]) is False
    assert client.status()["state"] == "signed_out"

    with pytest.raises(authd_client.Rejected, match="'method' must be one of password, email_code, phone_code, sign_up, "
                                                    "forgot_password, sso") as bad:
        client.begin_interactive_sign_in(method="magic-link", open_browser=False)
    assert bad.value.reason is None
    with pytest.raises(authd_client.Rejected, match="'aal' must be aal1 or aal2"):
        client.begin_interactive_sign_in(aal="aal3", open_browser=False)
    with pytest.raises(authd_client.Rejected, match="'flow_id' must be the flow_id session.beginInteractiveSignIn answered"):
        client.wait_for_interactive_sign_in("no such page")
    with pytest.raises(authd_client.Rejected, match="no sign-in page 'Pg4Xq2sL9aWmZt7c' is open") as unknown:
        client.wait_for_interactive_sign_in("Pg4Xq2sL9aWmZt7c")
    assert unknown.value.reason == "sign_in_failed"
    with pytest.raises(ValueError, match="needs opened="):
        client.sign_in_interactively(open_browser=False)


_INTERRUPTED_SIGN_IN = """
import faulthandler, signal, sys, authd_client
# SIGUSR1 prints where every thread is: the test asks for it when the app has not ended in time.
faulthandler.register(signal.SIGUSR1, all_threads=True)
# An app in a terminal, where Ctrl-C raises KeyboardInterrupt. A test run started in the
# background (a non-interactive shell's '&') inherits SIGINT ignored, which Python then keeps:
# this app would never hear the test's Ctrl-C (the cause of the 60 s failures seen under load).
signal.signal(signal.SIGINT, signal.default_int_handler)
client = authd_client.connect(socket_path=sys.argv[1])
try:
    client.sign_in_interactively(open_browser=False, opened=lambda page: print("opened", page["flow_id"], flush=True))
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def test_a_sign_in_given_up_on_closes_its_page(stack):
    stack.start_daemon()
    client = authd_client.connect(socket_path=stack.socket)
    events = _Events(client)
    # Ctrl-C in an app waiting for the page (a real SIGINT, in a process of its own).
    app = subprocess.Popen([sys.executable, "-c", _INTERRUPTED_SIGN_IN, stack.socket], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=stack.env)
    try:
        opened = app.stdout.readline().split()
        assert opened[:1] == ["opened"], app.stderr.read()
        app.send_signal(signal.SIGINT)
        try:
            out, err = app.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            # Not a bound a passing run comes near (the app's calls after a Ctrl-C give up within
            # 30 s): say where the app is stuck and what authd did meanwhile.
            app.send_signal(signal.SIGUSR1)
            time.sleep(1)
            app.kill()
            _, err = app.communicate(timeout=10)
            pytest.fail("the app did not end within 60 s of its SIGINT; its threads:\n%s\nauthd's last lines:\n%s"
                        % (err, "\n".join(stack.output().splitlines()[-60:])))
        assert (app.returncode, out) == (0, "interrupted\n"), err
    finally:
        if app.poll() is None:
            app.kill()
    flow_id = opened[1]
    assert events.page_ended(flow_id).reason == "cancelled"
    assert client.cancel_interactive_sign_in(flow_id) is False
    with pytest.raises(authd_client.Rejected) as cancelled:
        client.wait_for_interactive_sign_in(flow_id)
    assert cancelled.value.reason == "sign_in_cancelled"

    # Any exception while waiting does the same: here one the app's callback raised.
    flows = []

    def opened_then_failed(page):
        flows.append(page["flow_id"])
        raise RuntimeError("the app's window was closed")

    with pytest.raises(RuntimeError, match="window was closed"):
        client.sign_in_interactively(open_browser=False, opened=opened_then_failed)
    assert events.page_ended(flows[0]).reason == "cancelled"
    assert client.cancel_interactive_sign_in(flows[0]) is False
    events.close()


def test_a_page_no_browser_could_open_and_nobody_was_given_is_closed(stack):
    # An authd with no display and no $BROWSER cannot start a browser.
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"):
        stack.env.pop(name, None)
    stack.start_daemon()
    client = authd_client.connect(socket_path=stack.socket)
    events = _Events(client)
    with pytest.raises(authd_client.Rejected, match="pass opened=") as failed:
        client.sign_in_interactively(method="password")
    assert failed.value.reason == "sign_in_failed"
    wait_for(events.pages_ended)
    assert [event.reason for event in events.pages_ended()] == ["cancelled"]
    events.close()


def test_the_golden_sign_in_page_requests_and_answers(tmp_path):
    path = str(tmp_path / "fixtures.sock")
    requests, listener = golden_daemon(path)
    work = authd_client.connect(profile="work", socket_path=path)
    page = work.begin_interactive_sign_in(method="email_code", email="a@example.com", open_browser=False)
    assert page == _fixture("result-interactive-sign-in-begin")["result"]
    assert work.cancel_interactive_sign_in(page["flow_id"]) is True
    default = authd_client.connect(socket_path=path)
    assert default.wait_for_interactive_sign_in(page["flow_id"]) == _fixture("result-status")["result"]
    for method, name in (("session.beginInteractiveSignIn", "request-interactive-sign-in-begin"),
                         ("session.cancelInteractiveSignIn", "request-interactive-sign-in-cancel"),
                         ("session.waitForInteractiveSignIn", "request-interactive-sign-in-wait")):
        expected = _fixture(name)
        sent = next(request for request in requests if request["method"] == method)
        assert dict(sent, id=expected["id"]) == expected, method
    with default.events() as stream:
        event = next(stream)
    params = _fixture("event-interactive-sign-in-ended")["params"]
    assert (event.name, event.flow_id, event.reason, event.message) == ("INTERACTIVE_SIGN_IN_ENDED", params["flow_id"], "failed", params["message"])
    assert event.status == params["status"]
    work.close()
    default.close()
    listener.close()
