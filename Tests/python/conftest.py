"""Starts the development server (authd-dev-server) on a free loopback port for each test."""
import os
import pathlib
import subprocess
import time
import uuid

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
ANON_KEY = "python-anon-key"


def _server_binary() -> str:
    path = os.environ.get("AUTHD_DEV_SERVER") or str(ROOT / ".build" / "debug" / "authd-dev-server")
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is missing: run 'swift build --product authd-dev-server' first")
    return path


@pytest.fixture
def dev_server(tmp_path):
    """Yields the auth base URL (http://127.0.0.1:PORT/auth/v1) of a fresh server."""
    yield from _serve(tmp_path)


@pytest.fixture(params=["ES256", "RS256"])
def asymmetric_dev_server(request, tmp_path):
    """A fresh server that signs with a published ES256 or RS256 key; yields (URL, algorithm)."""
    for base in _serve(tmp_path, "--signing-algorithm", request.param):
        yield base, request.param


def _serve(tmp_path, *extra):
    out = tmp_path / "dev-server.out"
    with open(out, "w") as stdout:
        process = subprocess.Popen(
            [_server_binary(), "--port", "0", "--anon-key", ANON_KEY, "--access-token-lifetime", "3600", *extra],
            stdout=stdout, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 15
        while "listening on" not in out.read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"development server did not start: {out.read_text()}")
            time.sleep(0.05)
        base = out.read_text().split("listening on ", 1)[1].split()[0]
        yield base + "/auth/v1"
    finally:
        process.terminate()
        process.wait(5)


@pytest.fixture
def email():
    return f"py-{uuid.uuid4().hex[:8]}@example.com"
