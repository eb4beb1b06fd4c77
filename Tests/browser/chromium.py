"""Headless Chromium (Debian's chromium and chromium-driver) under Selenium, for the browser
tests and the first-paint benchmark."""
import os
import pathlib
import subprocess

from page_stack import BOUND, CHROMEDRIVER, CHROMIUM, wait_until

def chromium_missing():
    """Why Chromium cannot be driven here, or None."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            return f"{path} is missing (Debian: apt-get install {package})"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install selenium)"
    return None


def start_chromium(directory: pathlib.Path, width: int = 720, height: int = 1000, network_log: bool = False):
    """Headless Chromium under chromedriver, each given by path: with the driver's path given,
    Selenium skips Selenium Manager (its DriverFinder), which would otherwise download one."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = directory / "chromium-profile"
    profile.mkdir(parents=True, exist_ok=True)
    for argument in (
        "--headless=new", "--disable-gpu", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
        f"--window-size={width},{height}", "--hide-scrollbars", "--no-first-run", "--no-default-browser-check",
        # Passwords Chromium might offer to save stay out of the test's keyring.
        "--password-store=basic",
        # Nothing but the page: no updates, sync, or other background traffic to a network this machine lacks.
        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
        "--disable-default-apps", "--metrics-recording-only", "--disable-features=Translate,OptimizationHints,MediaRouter",
        "--lang=en-GB",
    ):
        options.add_argument(argument)
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")   # Chromium's sandbox refuses to run as root
    # The console (errors, refusals under the page's policy); and, when asked, the DevTools
    # network events (where the browser went).
    options.set_capability("goog:loggingPrefs", dict({"browser": "ALL"}, **({"performance": "ALL"} if network_log else {})))
    # chromedriver's own log would hold what the test types: it goes nowhere.
    service = Service(executable_path=CHROMEDRIVER, log_output=subprocess.DEVNULL,
                      env=dict(os.environ, NO_AT_BRIDGE="1"))
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(BOUND)
    return driver


def first_paint_wall_time(driver) -> float:
    """The wall-clock time (seconds since the epoch) of the page's first paint, from the paint
    timing entries and performance.timeOrigin."""
    def entries():
        return driver.execute_script(
            "const p = performance.getEntriesByType('paint');"
            "const byName = Object.fromEntries(p.map(e => [e.name, e.startTime]));"
            "const t = byName['first-contentful-paint'] ?? byName['first-paint'];"
            "return t === undefined ? null : [performance.timeOrigin, t];")
    origin, start = wait_until(entries, "a paint timing entry", poll=0.02)
    return (origin + start) / 1000.0
