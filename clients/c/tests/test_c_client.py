"""libauthd-client, installed by `make install` and used through pkg-config, against a live authd."""
import importlib.util
import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
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
