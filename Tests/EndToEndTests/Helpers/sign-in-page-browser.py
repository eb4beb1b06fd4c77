#!/usr/bin/env python3
"""A scripted stand-in for the user's browser on authd's sign-in page, for tests that need the
page walked through without a real browser (the real one is Selenium's, in Tests/browser): it
opens the link as a browser does (the cookie kept by its path, redirects followed), reads each
page's forms, and submits the one its arguments ask for, with the headers a browser sends.

    sign-in-page-browser.py URL --email E --password-file F    signs in with email and password
    sign-in-page-browser.py URL --expect-email E --password-file F
                                                                the same, only if the page opened on
                                                                the password form with E filled in
    sign-in-page-browser.py URL --cancel                        presses Cancel

The page it ends on (its heading and text) goes to standard output; the exit status is 0 when
it reached the end it was sent to. Usable as $BROWSER: the URL is its first argument.
"""
import argparse
import html.parser
import http.cookiejar
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


class Page(html.parser.HTMLParser):
    """A page's heading, text, forms (action, fields with their values) and whether it reloads."""

    def __init__(self, text):
        super().__init__()
        self.heading, self.words, self.forms, self.reloads = "", [], [], False
        self._in_heading = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "h1":
            self._in_heading = True
        elif tag == "form":
            self.forms.append({"action": attrs.get("action", ""), "fields": {}})
        elif tag in ("input", "button") and self.forms and attrs.get("name"):
            self.forms[-1]["fields"][attrs["name"]] = attrs.get("value", "")
        elif tag == "meta" and attrs.get("http-equiv", "").lower() == "refresh":
            self.reloads = True

    def handle_endtag(self, tag):
        if tag == "h1":
            self._in_heading = False

    def handle_data(self, data):
        if self._in_heading:
            self.heading += data
        if data.strip():
            self.words.append(data.strip())

    def form(self, action_suffix):
        return next((form for form in self.forms if form["action"].endswith(action_suffix)), None)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--email")
    parser.add_argument("--expect-email")
    parser.add_argument("--password-file")
    parser.add_argument("--cancel", action="store_true")
    parser.add_argument("--timeout", type=float, default=60)
    arguments = parser.parse_args()
    origin = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(arguments.url))
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def fetch(url, form=None):
        headers = {"Sec-Fetch-Dest": "document", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Site": "none" if form is None else "same-origin"}
        data = None
        if form is not None:
            headers.update({"Origin": origin, "Content-Type": "application/x-www-form-urlencoded"})
            data = urllib.parse.urlencode(form).encode()
        try:
            with opener.open(urllib.request.Request(url, data=data, headers=headers), timeout=30) as answer:
                return Page(answer.read().decode())
        except urllib.error.HTTPError as refused:
            return Page(refused.read().decode())

    page = fetch(arguments.url)
    submitted = False
    deadline = time.monotonic() + arguments.timeout
    while time.monotonic() < deadline:
        if page.reloads:  # the waiting page: the operation is out
            time.sleep(0.2)
            page = fetch(origin + "/sign-in")
            continue
        if submitted:
            break
        if arguments.cancel and page.form("/cancel"):
            form = page.form("/cancel")
        elif arguments.password_file and page.form("/password"):
            form = page.form("/password")
            if arguments.expect_email is not None and form["fields"].get("email") != arguments.expect_email:
                print("the password form's email is %r, not %r" % (form["fields"].get("email"), arguments.expect_email))
                sys.exit(1)
            with open(arguments.password_file) as secret:
                form["fields"].update(email=arguments.email or arguments.expect_email, password=secret.read().strip())
        else:
            break
        page = fetch(origin + form["action"], form["fields"])
        submitted = True
    print(page.heading.strip())
    print(" ".join(page.words))
    wanted = ["Sign-in cancelled", "Sign-in stopped"] if arguments.cancel else ["You are signed in"]
    ended = page.heading.strip() in wanted
    sys.exit(0 if submitted and ended else 1)


if __name__ == "__main__":
    main()
