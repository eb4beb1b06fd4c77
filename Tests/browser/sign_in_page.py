"""authd's sign-in page as a user sees it in Chromium: what it says, its fields and buttons, and
pictures of each state it passes through."""
import base64
import json
import pathlib
import re
import shutil
import subprocess
import tempfile
import uuid

from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.support.ui import WebDriverWait

from page_stack import BOUND

# The light and dark page backgrounds (the stylesheet's --bg), as getComputedStyle writes them.
LIGHT_BACKGROUND = "rgb(245, 246, 248)"
DARK_BACKGROUND = "rgb(15, 18, 22)"


class PageError(AssertionError):
    pass


class Page:
    """One browser tab on a sign-in page."""

    def __init__(self, driver, shots: pathlib.Path, mode: str = "light"):
        self.driver = driver
        self.shots = shots
        self.mode = mode
        self.count = 0
        self.console = []   # every browser log entry read so far

    # MARK: getting there

    def open(self, url: str):
        """Opens the page's one-time link, as a browser given it by authd would."""
        self.driver.get(url)
        self.wait_for_heading()

    def wait(self, condition, what: str, timeout: float = BOUND):
        """Waits for `condition`; while the browser moves between documents, what it answers
        (a stale element, a node no longer in the document, a script context gone) is no answer yet."""
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.05,
                                 ignored_exceptions=(WebDriverException,)).until(lambda _: condition())
        except TimeoutException as error:
            raise PageError(f"timed out after {timeout:.0f} s waiting for {what}; the page says: {self.summary()}") from error

    def summary(self) -> str:
        try:
            return f"{self.driver.current_url.split('?')[0]} h1={self.heading()!r} error={self.error()!r}"
        except WebDriverException as error:
            return f"(unreadable: {error.msg})"

    def heading(self):
        headings = self.driver.find_elements(By.TAG_NAME, "h1")
        return headings[0].text if headings else None

    def wait_for_heading(self, text: str = None):
        """Waits until the page has a heading (`text`, when given) and is no longer the waiting
        page ("One moment", which reloads itself until the operation is done)."""
        def shown():
            heading = self.heading()
            if heading is None or heading == "One moment":
                return None
            return heading if text is None or heading == text else None
        return self.wait(shown, f"the heading {text!r}" if text else "a heading")

    def after(self, act, heading: str = None, condition=None, what: str = None):
        """Does `act` (which submits a form), waits until the browser shows another document, then
        for `heading` (and `condition`)."""
        marker = uuid.uuid4().hex
        self.driver.execute_script("window.authdTestDocument = arguments[0]", marker)
        act()
        self.wait(lambda: self.driver.execute_script("return window.authdTestDocument") != marker, "the form's answer")
        self.wait_for_heading(heading)
        if condition is not None:
            self.wait(condition, what or "the page")

    # MARK: what is on it

    def error(self):
        errors = self.driver.find_elements(By.ID, "error")
        return errors[0].text if errors else None

    def field(self, name: str):
        return self.driver.find_element(By.CSS_SELECTOR, f"input[name='{name}']:not([type=hidden])")

    def button(self, label: str):
        for button in self.driver.find_elements(By.TAG_NAME, "button"):
            if button.text.strip() == label:
                return button
        labels = [b.text for b in self.driver.find_elements(By.TAG_NAME, "button")]
        raise PageError(f"no button {label!r} on the page ({self.summary()}); buttons: {labels}")

    def buttons(self):
        return [b.text.strip() for b in self.driver.find_elements(By.TAG_NAME, "button")]

    def lead(self) -> str:
        leads = self.driver.find_elements(By.CSS_SELECTOR, ".lead")
        return leads[0].text if leads else ""

    def active(self):
        return self.driver.switch_to.active_element

    def wait_for_focus(self, name: str):
        """Waits until the field `name` has the focus (the browser applies `autofocus` as it
        renders, a moment after the document is there)."""
        self.wait(lambda: self.active().get_attribute("name") == name, f"the focus in the field {name!r}")

    def active_describes(self) -> str:
        """The focused element: its tag, name and text (to say where the focus is)."""
        element = self.active()
        return f"<{element.tag_name} name={element.get_attribute('name')!r}> {element.text!r}"

    # MARK: doing things, with the mouse and the keyboard

    def fill(self, name: str, value: str):
        field = self.field(name)
        field.clear()
        field.send_keys(value)

    def press(self, label: str, heading: str = None, condition=None, what: str = None):
        """Clicks the button `label` and waits for the answer."""
        button = self.button(label)
        self.after(button.click, heading, condition, what)

    def keys(self, *keys):
        """Keys typed into whatever has the focus, as a user at the keyboard types them."""
        ActionChains(self.driver).send_keys(*keys).perform()

    def tab_to(self, label: str, limit: int = 40, backwards: bool = False):
        """Tabs (or Shift+Tabs) until the button `label` has the focus."""
        for _ in range(limit):
            element = self.active()
            if element.tag_name == "button" and element.text.strip() == label:
                return
            if backwards:
                ActionChains(self.driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
            else:
                self.keys(Keys.TAB)
        raise PageError(f"{limit} presses of {'Shift+' if backwards else ''}Tab did not reach {label!r}; "
                        f"the focus is on {self.active_describes()}")

    def enter(self, heading: str = None, condition=None, what: str = None):
        """Presses Enter where the focus is, and waits for the form's answer."""
        self.after(lambda: self.keys(Keys.ENTER), heading, condition, what)

    # MARK: how it looks

    def emulate_dark(self):
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        self.mode = self._wide_mode = "dark"

    def emulate_width(self, width: int, height: int = 900):
        """A window `width` CSS pixels wide (320: a 640-pixel window at 200 % zoom); None: the
        window's own width again."""
        if width is None:
            self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
            self.mode = self._wide_mode
            return
        self._wide_mode = getattr(self, "_wide_mode", None) or self.mode
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        self.mode = "narrow" if width < 480 else self.mode

    def background(self) -> str:
        return self.driver.execute_script("return getComputedStyle(document.body).backgroundColor")

    def horizontal_overflow(self):
        """(scrollWidth, innerWidth) when the page scrolls sideways, else None."""
        widths = self.driver.execute_script(
            "return [document.scrollingElement.scrollWidth, window.innerWidth]")
        return None if widths[0] <= widths[1] else tuple(widths)

    def shot(self, name: str):
        """A picture of the whole page (down to 32 pixels under its content), named in order."""
        self.count += 1
        metrics = self.driver.execute_script(
            "const last = document.querySelector('footer') || document.body.lastElementChild;"
            "const bottom = last ? last.getBoundingClientRect().bottom + window.scrollY : 0;"
            "return [document.documentElement.clientWidth, document.documentElement.scrollHeight, bottom]")
        width, full, bottom = metrics
        # main is as tall as the window (the body is a flex box); cut 32 pixels under the footer.
        height = min(full, int(bottom) + 32) if bottom else full
        picture = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
        self.shots.mkdir(parents=True, exist_ok=True)
        path = self.shots / f"{self.count:02d}-{name}-{self.mode}.png"
        path.write_bytes(base64.b64decode(picture["data"]))
        return path

    def scan_qr(self, element) -> str:
        """What the QR code `element` shows says, read by zbarimg (zbar-tools) off a picture of it
        at twice its size, as a phone's camera would read it off the screen."""
        zbarimg = shutil.which("zbarimg")
        if zbarimg is None:
            raise PageError("zbarimg is missing (Debian: apt-get install zbar-tools; scripts/install-deps --tests installs it)")
        box = self.driver.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.x, r.y, r.width, r.height]", element)
        picture = self.driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "clip": {"x": box[0], "y": box[1], "width": box[2], "height": box[3], "scale": 2}})
        with tempfile.TemporaryDirectory() as directory:
            path = pathlib.Path(directory) / "qr.png"
            path.write_bytes(base64.b64decode(picture["data"]))
            scanned = subprocess.run([zbarimg, "--raw", "-q", str(path)], capture_output=True, text=True, timeout=BOUND)
        if scanned.returncode != 0:
            raise PageError(f"zbarimg read no QR code in the image (exit {scanned.returncode})")
        return scanned.stdout.strip()

    # MARK: what the browser reported

    def read_console(self):
        """The browser log entries since the last read (console messages, CSP refusals, failed loads)."""
        entries = self.driver.get_log("browser")
        self.console.extend(entries)
        return entries

    def console_problems(self):
        """Entries that are errors or warnings, or that mention the Content-Security-Policy."""
        self.read_console()
        return [e for e in self.console
                if e.get("level") in ("SEVERE", "WARNING") or re.search(r"content.security.policy", e.get("message", ""), re.I)]

    def requests_sent(self):
        """The URLs of the documents the browser asked for, in order (with the network log on)."""
        urls = []
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.requestWillBeSent" and message["params"].get("type") == "Document":
                urls.append(message["params"]["request"]["url"])
        return urls
