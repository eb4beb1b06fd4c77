"""libauthd-client, installed by `make install` and used through pkg-config, against a live authd."""
import importlib.util
import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("python_client_tests", ROOT / "clients/python/tests/test_authd_client.py")
_python_tests = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_python_tests)
wait_for = _python_tests.wait_for

AUTHD_DAEMON_UNAVAILABLE, AUTHD_UNKNOWN_PROFILE, AUTHD_FOREIGN_DAEMON = 4, 6, 10


def run(program, *args, env=None):
    return subprocess.run([program, *args], capture_output=True, text=True, timeout=120, env=env)


def error_of(output):
    match = re.search(r"^error code=(\d+) exit=(\d+) transient=(\d) reason=(\S*) foreign_uid=(-?\d+) message=(.*)$", output, re.M)
    assert match, output
    code, exit_status, transient, reason, foreign_uid, message = match.groups()
    return int(code), int(exit_status), transient == "1", reason, int(foreign_uid), message


def test_the_token_and_status_are_authctls(stack, check_program):
    stack.start_daemon()
    stack.sign_up_and_in("c-token@example.com", "c-token-password")
    result = run(check_program, "token", stack.socket)
    assert result.returncode == 0, result.stdout + result.stderr
    token = re.search(r"^token (\S+) (\d+)$", result.stdout, re.M)
    assert token and token.group(1) == stack.authctl("token").stdout.strip()
    status = json.loads(re.search(r"^status (.*)$", result.stdout, re.M).group(1))
    assert status["state"] == "signed_in" and status["user"]["email"] == "c-token@example.com"
    assert token.group(1) not in json.dumps(status) and token.group(1) not in stack.output()


def test_a_null_error_is_allowed_everywhere(stack, check_program):
    result = run(check_program, "null-error", stack.socket)
    assert (result.returncode, result.stdout) == (0, "connect failed, subscribe failed\n"), result.stdout + result.stderr
    stack.start_daemon()
    result = run(check_program, "null-error", stack.socket)
    # AUTHD_NOT_SIGNED_IN (1) for the token, AUTHD_OK (0) for the status and the dispatch.
    assert (result.returncode, result.stdout) == (0, "connect connected, subscribe subscribed\ntoken 1, status 0\ndispatch 0\n"), \
        result.stdout + result.stderr


def test_typed_errors_carry_authctls_exit_statuses(stack, check_program):
    code, exit_status, transient, _, _, message = error_of(run(check_program, "token", stack.socket).stdout)
    assert (code, exit_status, transient) == (AUTHD_DAEMON_UNAVAILABLE, 3, True)
    assert "systemctl --user enable --now authd.socket" in message
    stack.start_daemon()
    code, exit_status, _, reason, _, message = error_of(run(check_program, "token", stack.socket, "nope").stdout)
    assert (code, exit_status, reason) == (AUTHD_UNKNOWN_PROFILE, 1, "unknown_profile") and "authctl profile add nope" in message
    result = run(check_program, "token", stack.socket, stack.profile)
    assert result.returncode == 4
    _, _, transient, reason, _, message = error_of(result.stdout)
    assert reason == "not_signed_in" and not transient and "authctl login" in message


def test_events_in_a_glib_main_loop_follow_sign_in_and_a_daemon_restart(stack, check_program):
    stack.start_daemon()
    watcher = subprocess.Popen([check_program, "watch", stack.socket], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(iter(watcher.stdout.readline, "")), daemon=True)
    reader.start()
    try:
        wait_for(lambda: any(line.startswith("event INITIAL_SESSION after_reconnect=0") for line in lines))
        assert '"state":"signed_out"' in next(line for line in lines if line.startswith("event INITIAL_SESSION"))
        stack.sign_up_and_in("c-events@example.com", "c-events-password")
        wait_for(lambda: any(line.startswith("event SIGNED_IN") for line in lines))
        stack.stop_daemon()
        stack.start_daemon()
        assert watcher.wait(30) == 0, "".join(lines) + watcher.stderr.read()
        reader.join(5)
        again = [line for line in lines if line.startswith("event INITIAL_SESSION after_reconnect=1")]
        assert len(again) == 1 and "c-events@example.com" in again[0] and '"state":"signed_in"' in again[0], lines
        token = stack.authctl("token").stdout.strip()
        assert token and token not in "".join(lines)
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.wait()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to serve a socket as another user")
def test_a_socket_served_by_another_user_is_sent_nothing(check_program):
    directory = pathlib.Path(tempfile.mkdtemp(prefix="authd-c-foreign-"))
    os.chmod(directory, 0o755)
    server, path, log = _python_tests._counting_server(directory, as_uid=65534)
    try:
        result = run(check_program, "token", path)
        code, exit_status, transient, _, foreign_uid, message = error_of(result.stdout)
        assert (code, exit_status, transient, foreign_uid) == (AUTHD_FOREIGN_DAEMON, 1, False, 65534)
        assert "served by a process of uid 65534, not by you" in message
        counts = _python_tests._received(log, 1)
        assert counts and counts == [0] * len(counts), f"bytes sent to another user's server: {counts}"
    finally:
        server.terminate()
        server.wait(5)
        shutil.rmtree(directory, ignore_errors=True)


def test_a_newer_protocol_is_warned_about_once_and_unknown_fields_ignored(tmp_path, check_program):
    path = str(tmp_path / "fake.sock")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(4)

    def serve():
        for _ in range(2):
            connection, _ = listener.accept()
            with connection, connection.makefile("rwb") as stream:
                request = json.loads(stream.readline())
                result = {"protocol_version": "2.0", "daemon_version": "9", "capabilities": ["teleport"], "profiles": ["default"],
                          "default_profile": "default", "motd": "hi \u00e9"}
                stream.write((json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}) + "\n").encode())
                stream.flush()
                stream.readline()

    threading.Thread(target=serve, daemon=True).start()
    result = run(check_program, "hello", path)
    listener.close()
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count('"capabilities": ["teleport"]') == 2
    assert result.stderr.splitlines() == [
        "authd-client: authd speaks protocol 2.0, newer than this library's 1.0: update the library (calls may fail)"]


def test_the_golden_token_request_and_answers(tmp_path, check_program):
    fixture = _python_tests._fixture
    requests, listener = _python_tests.golden_daemon(str(tmp_path / "fixtures.sock"))
    result = run(check_program, "token", str(tmp_path / "fixtures.sock"), "work")
    listener.close()
    expected = fixture("request-token")
    sent = next(request for request in requests if request["method"] == "session.token")
    assert dict(sent, id=expected["id"]) == expected
    token = fixture("result-token")["result"]
    assert f"token {token['access_token']} {token['expires_at']}\n" in result.stdout
    # The status call got the golden not-signed-in error: authctl's exit status 4, its message.
    assert result.returncode == 4
    _, _, transient, reason, _, message = error_of(result.stdout)
    assert (reason, transient, message) == ("not_signed_in", False, fixture("error-not-signed-in")["error"]["message"])


# authd's own sign-in page, walked by the Python tests' stand-in browser.
AUTHD_TIMED_OUT, AUTHD_REJECTED = 7, 8
BROWSER = _python_tests.BROWSER
PAGE = re.compile(r"^page flow_id=(\S+) expires_in=(\d+) browser_opened=(\d) url_local=(\d) url_length=(\d+)$", re.M)


def _page(output):
    """The page the check program printed: flow_id, expires_in, browser_opened, url_local, url_length."""
    match = PAGE.search(output)
    assert match, output
    flow_id, *numbers = match.groups()
    return (flow_id, *map(int, numbers))


def _watch(check_program, socket_path):
    """The check program's event watcher, and the lines it printed so far (filled as they come)."""
    watcher = subprocess.Popen([check_program, "watch", socket_path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    threading.Thread(target=lambda: lines.extend(iter(watcher.stdout.readline, "")), daemon=True).start()
    return watcher, lines


def _page_ended(lines, flow_id):
    """The watcher's INTERACTIVE_SIGN_IN_ENDED line for page ``flow_id``, once it came."""
    prefix = "event INTERACTIVE_SIGN_IN_ENDED after_reconnect=0 reason="
    ended = lambda: [line for line in lines if line.startswith(prefix) and f" flow_id={flow_id} " in line]
    wait_for(ended)
    return ended()[0]


def test_a_sign_in_on_the_page_by_authds_browser_and_by_the_apps(stack, check_program):
    email, password = "c-page@example.com", "c-page-password"
    password_file = _python_tests._password_file(stack, password)
    # authd's environment names the stand-in as the user's browser, as a desktop session's would.
    stack.env["BROWSER"] = f"{BROWSER} %s --email {email} --password-file {password_file}"
    stack.start_daemon()
    stack.sign_up(email, password)
    watcher, lines = _watch(check_program, stack.socket)
    try:
        wait_for(lambda: any(line.startswith("event INITIAL_SESSION") for line in lines))
        # The wait's timeout (90 s) only ends a failing test: the page is closed then, and the call fails.
        by_authd = run(check_program, "sign-in", stack.socket, "1", "90", "show")
        assert by_authd.returncode == 0, by_authd.stdout
        flow_id, expires_in, browser_opened, url_local, _ = _page(by_authd.stdout)
        assert (expires_in, browser_opened, url_local) == (600, 1, 1)
        status = json.loads(re.search(r"^status (.*)$", by_authd.stdout, re.M).group(1))
        assert status["state"] == "signed_in" and status["user"]["email"] == email
        assert "reason=signed_in flow_id=" + flow_id + " message= status=" in _page_ended(lines, flow_id)

        assert stack.authctl("logout").returncode == 0
        # authd asked not to start one: the app starts the browser on the page itself.
        by_app = run(check_program, "sign-in", stack.socket, "0", "90", "show",
                     sys.executable, str(BROWSER), "%s", "--email", email, "--password-file", password_file)
        assert by_app.returncode == 0, by_app.stdout
        second, _, browser_opened, _, _ = _page(by_app.stdout)
        assert browser_opened == 0 and second != flow_id
        assert json.loads(re.search(r"^status (.*)$", by_app.stdout, re.M).group(1))["state"] == "signed_in"
        assert "reason=signed_in" in _page_ended(lines, second)
    finally:
        watcher.kill()
        watcher.wait()
    assert password not in stack.output() and password not in "".join(lines)


def test_a_c_sign_in_given_up_closes_its_page_and_errors_are_typed(stack, check_program):
    # No display and no $BROWSER: authd cannot start a browser.
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"):
        stack.env.pop(name, None)
    stack.start_daemon()
    client = _python_tests.authd_client.connect(socket_path=stack.socket)
    events = _python_tests._Events(client)

    def closed_as_cancelled(flow_id):
        # Its end announced (only the app that opened a page may cancel it, so this test cannot
        # tell by cancelling), then its wait answers at once with how it ended.
        if events.page_ended(flow_id).reason != "cancelled":
            return False
        with pytest.raises(_python_tests.authd_client.Rejected) as cancelled:
            client.wait_for_interactive_sign_in(flow_id)
        return cancelled.value.reason == "sign_in_cancelled"

    # Nobody signs in within the timeout: AUTHD_TIMED_OUT, and the page is closed.
    timed_out = run(check_program, "sign-in", stack.socket, "0", "1", "show")
    code, _, transient, _, _, _ = error_of(timed_out.stdout)
    assert (code, transient) == (AUTHD_TIMED_OUT, True)
    assert closed_as_cancelled(_page(timed_out.stdout)[0])

    # The callback gives up (it could not show the address, say): the page is closed.
    given_up = run(check_program, "sign-in", stack.socket, "0", "0", "give-up")
    code, _, _, reason, _, _ = error_of(given_up.stdout)
    assert (code, reason) == (AUTHD_REJECTED, "sign_in_cancelled")
    assert closed_as_cancelled(_page(given_up.stdout)[0])

    # No callback, and authd could not open the page: it fails at once, and the page is closed.
    unopened = run(check_program, "sign-in", stack.socket, "1", "0", "none")
    code, _, _, reason, _, message = error_of(unopened.stdout)
    assert (code, reason) == (AUTHD_REJECTED, "sign_in_failed") and "no callback was given" in message
    wait_for(lambda: len(events.pages_ended()) == 3)
    assert [event.reason for event in events.pages_ended()] == ["cancelled"] * 3
    events.close()
    refused = run(check_program, "sign-in", stack.socket, "0", "0", "none")
    code, _, _, reason, _, message = error_of(refused.stdout)
    assert (code, reason) == (AUTHD_REJECTED, "") and "needs a callback" in message and "page flow_id" not in refused.stdout

    # Cancelled from another thread through the same client while the wait is out.
    cancelled = run(check_program, "cancel-while-waiting", stack.socket)
    assert "cancelled 1\n" in cancelled.stdout, cancelled.stdout
    code, exit_status, _, reason, _, message = error_of(cancelled.stdout)
    assert (code, exit_status, reason) == (AUTHD_REJECTED, 1, "sign_in_cancelled") and "cancelled" in message

    # A form authd does not have.
    bad = run(check_program, "page", stack.socket, "-", "magic-link", "-")
    code, _, _, reason, _, message = error_of(bad.stdout)
    assert (code, reason) == (AUTHD_REJECTED, "") and "'method' must be one of password, email_code" in message
    client.close()


def test_the_golden_sign_in_page_requests_and_answers(tmp_path, check_program):
    fixture = _python_tests._fixture
    path = str(tmp_path / "fixtures.sock")
    requests, listener = _python_tests.golden_daemon(path)
    watcher, lines = _watch(check_program, path)
    try:
        result = run(check_program, "page", path, "work", "email_code", "a@example.com")
        assert result.returncode == 0, result.stdout + result.stderr
        page = fixture("result-interactive-sign-in-begin")["result"]
        assert _page(result.stdout) == (page["flow_id"], page["expires_in"], 0, 1, len(page["url"]))
        assert "cancelled 1\n" in result.stdout
        assert json.loads(re.search(r"^status (.*)$", result.stdout, re.M).group(1)) == fixture("result-status")["result"]
        for method, name in (("session.beginInteractiveSignIn", "request-interactive-sign-in-begin"),
                             ("session.cancelInteractiveSignIn", "request-interactive-sign-in-cancel"),
                             ("session.waitForInteractiveSignIn", "request-interactive-sign-in-wait")):
            expected = fixture(name)
            sent = next(request for request in requests if request["method"] == method)
            assert dict(sent, id=expected["id"]) == expected, method
        event = fixture("event-interactive-sign-in-ended")["params"]
        line = _page_ended(lines, event["flow_id"])
        assert f"reason=failed flow_id={event['flow_id']} message={event['message']} status=" in line
    finally:
        watcher.kill()
        watcher.wait()
        listener.close()
