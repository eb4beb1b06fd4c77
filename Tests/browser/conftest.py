"""A live stack for each test: the development server, authd on a private socket, and headless
Chromium (Debian's chromium and chromium-driver) driven by Selenium.

Run under scripts/with-private-keyring (authd keeps the session in a real Secret Service):

    scripts/with-private-keyring .build/python-venv/bin/pytest -q -p no:cacheprovider Tests/browser

Screenshots of every state each test passes through go to $AUTHD_BROWSER_SCREENSHOTS/<test>/
(a folder under pytest's temporary directory when unset; the summary says where).
"""
import logging
import os
import pathlib
import shutil

import pytest

import chromium
import page_stack
from page_stack import Daemon, DevServer, contains_secret

# Selenium's and urllib3's debug lines carry what is typed: keep them out of any captured output.
for name in ("selenium", "urllib3"):
    logging.getLogger(name).setLevel(logging.WARNING)

_SCREENSHOTS = {}


def pytest_configure(config):
    config.addinivalue_line("markers", "network_log: the test reads Chromium's network events (DevTools' Network domain)")
    if os.environ.get("AUTHD_PRIVATE_KEYRING") != "1":
        raise pytest.UsageError("run the browser tests under scripts/with-private-keyring: authd stores sessions in the keyring")
    missing = chromium.chromium_missing()
    if missing is not None and os.environ.get("AUTHD_REQUIRE_BROWSER") == "1":
        raise pytest.UsageError(f"AUTHD_REQUIRE_BROWSER=1, but {missing}")


def pytest_collection_modifyitems(config, items):
    missing = chromium.chromium_missing()
    if missing is None:
        return
    for item in items:
        item.add_marker(pytest.mark.skip(reason=missing))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, "report_" + report.when, report)


def pytest_terminal_summary(terminalreporter):
    if "root" in _SCREENSHOTS:
        terminalreporter.write_line(f"sign-in page screenshots: {_SCREENSHOTS['root']}")


@pytest.fixture(scope="session")
def screenshots_root(tmp_path_factory):
    given = os.environ.get("AUTHD_BROWSER_SCREENSHOTS")
    root = pathlib.Path(given) if given else tmp_path_factory.mktemp("screenshots")
    root.mkdir(parents=True, exist_ok=True)
    _SCREENSHOTS["root"] = root
    return root


class Stack:
    """The development server and authd of one test, and the secrets the test used, which no
    log may hold."""

    def __init__(self, directory: pathlib.Path):
        self.directory = directory
        self.secrets = []
        self.server = None
        self.daemon = None

    def start(self, *server_args):
        self.server = DevServer(self.directory, *server_args)
        self.daemon = Daemon(self.directory, self.server.url)
        # One keyring serves the whole run, and authd keeps a profile's session under its name:
        # a session an earlier test left (one that failed before signing out) is dropped first.
        if self.daemon.status()["state"] != "signed_out":
            self.daemon.call("session.signOut", {"scope": "local"})
        assert self.daemon.status()["state"] == "signed_out"
        return self

    def secret(self, value: str) -> str:
        self.secrets.append(value)
        return value

    def leaked(self):
        """The logs (by file name) that hold one of the test's secrets."""
        found = []
        for path in sorted(self.directory.glob("*.log")) + sorted(self.directory.glob("*.out")):
            text = path.read_text(errors="replace")
            if any(contains_secret(text, secret) for secret in self.secrets):
                found.append(path.name)
        return found

    def stop(self):
        if self.daemon is not None and self.daemon.process.poll() is None:
            try:
                self.daemon.call("session.signOut", {"scope": "local"})   # nothing left in the keyring
            except Exception:
                pass
        for part in (self.daemon, self.server):
            if part is not None:
                part.stop()


@pytest.fixture
def stack(request, screenshots_root):
    directory = page_stack.make_temp_dir("authd-browser-")
    stack = Stack(directory)
    try:
        yield stack.start()
    finally:
        stack.stop()
        leaked = stack.leaked()
        failed = getattr(request.node, "report_call", None) is not None and request.node.report_call.failed
        if failed and not leaked and (directory / "authd.log").exists():
            # A log that holds no secret of the test can sit beside the screenshots.
            target = screenshots_root / request.node.name
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy(directory / "authd.log", target / "authd.log")
        page_stack.remove_dir(directory)
        assert not leaked, f"a password, code or token of this test is in {leaked}"


@pytest.fixture
def driver(stack, request):
    directory = page_stack.make_temp_dir("authd-chromium-")
    try:
        driver = chromium.start_chromium(directory, network_log=request.node.get_closest_marker("network_log") is not None)
    except BaseException:
        page_stack.remove_dir(directory)
        raise
    try:
        yield driver
    finally:
        driver.quit()
        page_stack.remove_dir(directory)


@pytest.fixture
def page(driver, request, screenshots_root):
    from sign_in_page import Page
    return Page(driver, screenshots_root / request.node.name)


class App:
    """An app that asks authd for the sign-in page and waits for its end, as apps do: events
    subscribed first, then the page begun (authd opening no browser), then the wait."""

    def __init__(self, stack: Stack):
        self.stack = stack
        self.events = None
        self.waiters = []

    def begin(self, **params) -> dict:
        if self.events is None:
            self.events = page_stack.Events(self.stack.daemon)
        page = self.stack.daemon.begin_page(**params)
        assert page["browser_opened"] is False
        assert page["expires_in"] > 0
        assert page["url"].startswith("http://127.0.0.1:") and "/sign-in/open/" in page["url"]
        page["waiter"] = page_stack.Waiter(self.stack.daemon, page["flow_id"])
        self.waiters.append(page["waiter"])
        return page

    def close(self):
        for waiter in self.waiters:
            waiter.close()
        if self.events is not None:
            self.events.close()


@pytest.fixture
def app(stack):
    app = App(stack)
    try:
        yield app
    finally:
        app.close()
