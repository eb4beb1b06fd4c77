"""A live stack for each test: the development server and authd on a private socket.

Run under scripts/with-private-keyring (authd keeps sessions in a real Secret Service), with the
module installed from its wheel into the interpreter running pytest (scripts/test does both).
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import urllib.request
import uuid

import pytest

import authd_client

ROOT = pathlib.Path(__file__).resolve().parents[3]
# The tests are of the module apps get, installed by pip: one imported from the source folder
# would pass even where the wheel leaves it out or ships another copy.
_INSTALLED_IN = pathlib.Path(sysconfig.get_paths()["purelib"]).resolve()
if pathlib.Path(authd_client.__file__).resolve().parent != _INSTALLED_IN:
    raise pytest.UsageError(
        f"authd_client was imported from {authd_client.__file__}, not from {_INSTALLED_IN}: install the wheel "
        f"into this Python first ({sys.executable} -m pip install --force-reinstall ./clients/python)")
BIN = pathlib.Path(os.environ.get("AUTHD_BIN_DIR") or ROOT / ".build" / "debug")
ANON_KEY = "py-client-anon-key"


def _binary(name: str) -> str:
    path = BIN / name
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is missing: run 'swift build' first")
    return str(path)


def _wait_for(predicate, what: str, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


class Stack:
    """A development server, an authd bound to a socket in a private directory, and authctl."""

    def __init__(self, directory: pathlib.Path, lifetime: int, server_args=()):
        self.directory = directory
        self.profile = "py-" + uuid.uuid4().hex[:8]
        self.anon_key = ANON_KEY
        self.socket = str(directory / "run" / "authd.sock")
        self.env = dict(os.environ, AUTHD_SOCKET=self.socket, XDG_CONFIG_HOME=str(directory / "config"))
        self.processes = []
        out = directory / "dev-server.out"
        self.server = self._spawn([_binary("authd-dev-server"), "--port", "0", "--anon-key", ANON_KEY,
                                   "--access-token-lifetime", str(lifetime), *server_args], out)
        _wait_for(lambda: "listening on" in out.read_text(), "the development server")
        self.url = out.read_text().split("listening on ", 1)[1].split()[0]
        self.daemon = None

    def _spawn(self, argv, out_path, env=None):
        with open(out_path, "a") as out:
            process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env or self.env)
        self.processes.append(process)
        return process

    def start_daemon(self, *extra):
        log = self.directory / "authd.log"
        self.daemon = self._spawn([_binary("authd"), "--profile", self.profile, "--url", self.url,
                                   "--anon-key", ANON_KEY, "--log-level", "debug", *extra], log)
        _wait_for(lambda: self.authctl("status").returncode != 3, "authd to listen")

    def stop_daemon(self):
        self.daemon.terminate()
        self.daemon.wait(10)

    def authctl(self, *args, input=None):
        return subprocess.run([_binary("authctl"), *args], env=self.env, input=input, capture_output=True, text=True, timeout=60)

    def sign_up(self, email: str, password: str):
        """Creates the account on the development server directly; authd stays signed out."""
        body = json.dumps({"email": email, "password": password}).encode()
        request = urllib.request.Request(self.url + "/auth/v1/signup", data=body, method="POST",
                                         headers={"Content-Type": "application/json", "apikey": ANON_KEY})
        urllib.request.urlopen(request, timeout=10).read()

    def sign_up_and_in(self, email: str, password: str):
        self.sign_up(email, password)
        login = self.authctl("login", "--email", email, "--password-stdin", input=password + "\n")
        assert login.returncode == 0, login.stderr

    def admin(self, path: str, body=None):
        """The development server's admin endpoints: POST ``body`` as JSON, or GET without one."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + "/auth/v1/admin/dev/" + path, data=data, method="GET" if body is None else "POST",
                                         headers={"Content-Type": "application/json"})
        text = urllib.request.urlopen(request, timeout=10).read()
        return json.loads(text) if text else None

    def output(self) -> str:
        return "\n".join(path.read_text() for path in self.directory.glob("*.log")) + (self.directory / "dev-server.out").read_text()

    def close(self):
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(5)
                except subprocess.TimeoutExpired:
                    process.kill()


@pytest.fixture
def stack_factory():
    stacks = []
    directory = pathlib.Path(tempfile.mkdtemp(prefix="authd-py-"))
    os.chmod(directory, 0o700)

    def make(lifetime: int = 3600, *server_args) -> Stack:
        path = directory / str(len(stacks))
        path.mkdir(mode=0o700)
        stack = Stack(path, lifetime, server_args)
        stacks.append(stack)
        return stack

    yield make
    for stack in stacks:
        stack.close()
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def stack(stack_factory):
    return stack_factory()
