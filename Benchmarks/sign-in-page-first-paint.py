#!/usr/bin/env python3
"""How long an app waits from `session.beginInteractiveSignIn` until the user sees the sign-in
page: the call's answer, the browser told to open the one-time link, the 303 to /sign-in, and
the page's first paint (the paint timing entries, `first-contentful-paint` or else
`first-paint`, made wall-clock times by `performance.timeOrigin`).

Headless Chromium (Debian's chromium and chromium-driver) driven by Selenium, already running,
opens each page in the same tab; authd (debug build unless AUTHD_BIN_DIR says otherwise) runs
against the development server. The first page after authd starts is reported apart (cold).
Run on a private keyring:

    scripts/with-private-keyring .build/python-venv/bin/python Benchmarks/sign-in-page-first-paint.py [--runs 10] [--json FILE]
"""
import argparse
import http.server
import json
import os
import pathlib
import statistics
import sys
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "Tests" / "browser"))
import chromium  # noqa: E402
import page_stack  # noqa: E402


def one_page(daemon, driver):
    """(total, begin call, browser to navigation start, navigation start to first paint), in ms."""
    driver.get("about:blank")
    started = time.time()
    page = daemon.begin_page()
    answered = time.time()
    driver.get(page["url"])
    painted = chromium.first_paint_wall_time(driver)
    origin = driver.execute_script("return performance.timeOrigin") / 1000.0
    # Navigation timing: until the page's last byte (the 303 and /sign-in, both answered by
    # authd's page server), then the browser's own work until the paint.
    served = driver.execute_script("return performance.getEntriesByType('navigation')[0].responseEnd") / 1000.0
    heading = driver.execute_script("const h = document.querySelector('h1'); return h && h.textContent")
    if heading != "Sign in":
        raise page_stack.StackError(f"the page opened on {heading!r}, not the first form")
    daemon.call("session.cancelInteractiveSignIn", {"flow_id": page["flow_id"]})
    return [(painted - started) * 1000, (answered - started) * 1000, (origin - answered) * 1000, (painted - origin) * 1000,
            served * 1000, (painted - origin - served) * 1000]


class FloorServer:
    """The same page from Python's http.server on 127.0.0.1 (the same site as authd's pages, so
    the browser treats it alike): a 303, then the document with the page's policy."""

    def __init__(self, html: bytes, policy: str):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path == "/open":
                    self.send_response(303)
                    self.send_header("Location", "/page")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Security-Policy", policy)
                self.send_header("Cache-Control", "no-store")
                self.send_header("Content-Length", str(len(html)))
                self.end_headers()
                self.wfile.write(html)

            def log_message(self, *args):
                pass
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/open"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def measure(self, driver):
        """(navigation start to first paint, of which served), in ms."""
        driver.get("about:blank")
        driver.get(self.url)
        painted = chromium.first_paint_wall_time(driver)
        origin = driver.execute_script("return performance.timeOrigin") / 1000.0
        served = driver.execute_script("return performance.getEntriesByType('navigation')[0].responseEnd")
        return [(painted - origin) * 1000, served]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def policy_of_a_page(daemon) -> str:
    """The Content-Security-Policy authd's page server sends (with every answer, a refusal too)."""
    page = daemon.begin_page()
    try:
        origin = page["url"].split("/sign-in/")[0]
        try:
            with urllib.request.urlopen(origin + "/sign-in", timeout=page_stack.BOUND) as answer:
                headers = answer.headers
        except urllib.error.HTTPError as refused:   # no cookie: 403, with the policy
            headers = refused.headers
        return headers["Content-Security-Policy"]
    finally:
        daemon.call("session.cancelInteractiveSignIn", {"flow_id": page["flow_id"]})


def describe(samples):
    return f"{statistics.median(samples):7.1f} ms ({min(samples):.1f}–{max(samples):.1f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="pages measured after the cold one (default 10)")
    parser.add_argument("--json", help="also write the samples here")
    arguments = parser.parse_args()
    if os.environ.get("AUTHD_PRIVATE_KEYRING") != "1":
        sys.exit("run under scripts/with-private-keyring")
    missing = chromium.chromium_missing()
    if missing:
        sys.exit(missing)

    directory = page_stack.make_temp_dir("authd-first-paint-")
    server = daemon = driver = None
    try:
        server = page_stack.DevServer(directory)
        daemon = page_stack.Daemon(directory, server.url)
        driver = chromium.start_chromium(directory)
        driver.get("about:blank")   # the browser is up before the first page is asked for
        cold = one_page(daemon, driver)
        warm = [one_page(daemon, driver) for _ in range(arguments.runs)]
        # The document as authd served it (the browser's copy), and the policy it came with.
        html = driver.execute_script("return '<!DOCTYPE html>\\n' + document.documentElement.outerHTML").encode()
        floor = FloorServer(html, policy_of_a_page(daemon))
        try:
            floors = [floor.measure(driver) for _ in range(arguments.runs)]
        finally:
            floor.close()
    finally:
        if driver is not None:
            driver.quit()
        for part in (daemon, server):
            if part is not None:
                part.stop()
        page_stack.remove_dir(directory)

    columns = list(zip(*warm))
    load = os.getloadavg()
    print(f"sign-in page, session.beginInteractiveSignIn to first paint ({os.cpu_count()} cores, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; authd from {page_stack.BIN})")
    print(f"  cold (first page since authd started): {cold[0]:.1f} ms "
          f"(call {cold[1]:.1f}, to the browser {cold[2]:.1f}, navigation to paint {cold[3]:.1f})")
    print(f"  median of {len(warm)}, min–max:")
    print(f"    total                                   {describe(columns[0])}")
    print(f"    session.beginInteractiveSignIn answered {describe(columns[1])}")
    print(f"    the browser starts the navigation       {describe(columns[2])}")
    print(f"    navigation start to first paint         {describe(columns[3])}")
    print(f"      of which the 303 and the page, served {describe(columns[4])}")
    print(f"      and the browser's work until painted  {describe(columns[5])}")
    print("  floor: the same page, 303 and all, from Python's http.server on 127.0.0.1:")
    print(f"    navigation start to first paint         {describe([f[0] for f in floors])}")
    print(f"      of which the 303 and the page, served {describe([f[1] for f in floors])}")
    if arguments.json:
        pathlib.Path(arguments.json).write_text(json.dumps({"cold": cold, "warm": warm, "floor_ms": floors, "columns": [
            "total_ms", "begin_call_ms", "to_navigation_start_ms", "navigation_to_first_paint_ms",
        "served_ms", "rendering_ms"]}, indent=1))


if __name__ == "__main__":
    main()
