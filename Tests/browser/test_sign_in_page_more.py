"""authd's sign-in page in a real browser, end to end: second factors (a challenge, enrolment in
dark mode, a wrong code), a code asked for too soon, the page's policy, an app that cancels, and the
other ways in (a texted code, SSO, no account). As test_sign_in_page.py, against the development
server.
"""
import base64
import re
import urllib.parse
import uuid

import pytest

# Without Selenium the tests are skipped, saying why (AUTHD_REQUIRE_BROWSER=1: refused in conftest).
pytest.importorskip("selenium", reason="selenium is not installed (pip install selenium)")
from selenium.webdriver.common.by import By  # noqa: E402

import page_stack  # noqa: E402
from page_stack import new_password, totp, unique_email  # noqa: E402
from sign_in_page import DARK_BACKGROUND, LIGHT_BACKGROUND  # noqa: E402
from flows import no_console_problems, signed_in  # noqa: E402



def test_totp_second_factor_challenge(stack, app, page):
    email, password = unique_email("totp"), stack.secret(new_password())
    session = stack.server.sign_up(email, password)
    stack.secret(session["access_token"])
    secret = stack.secret(stack.server.enrol_verified_totp(session["access_token"]))
    flow = app.begin()
    page.open(flow["url"])
    page.fill("email", email)
    page.fill("password", password)
    page.press("Sign in", "Two-step verification")
    page.wait_for_focus("code")
    assert page.field("code").get_attribute("autocomplete") == "one-time-code"
    page.shot("totp-challenge")
    # Until the second step is done, the app's wait goes on.
    assert not flow["waiter"].answered()
    page.fill("code", stack.secret(totp(secret)))
    page.press("Verify", "You are signed in")
    status = signed_in(stack, app, flow, page, email)
    assert status["aal"] == "aal2" and status["amr"][0] == "totp", status


def test_totp_enrolment_from_the_page_in_dark_mode(stack, app, page):
    """An app that needs aal2, for an account without a second factor: the page offers one, shows
    the server's QR image and the key, and takes the first code; all in the dark colour scheme."""
    email, password = unique_email("enrol"), stack.secret(new_password())
    stack.server.sign_up(email, password)
    flow = app.begin(aal="aal2")
    page.open(flow["url"])
    assert page.background() == LIGHT_BACKGROUND
    page.emulate_dark()
    page.wait(lambda: page.background() == DARK_BACKGROUND, "the dark background")
    text = page.driver.execute_script("return getComputedStyle(document.querySelector('h1')).color")
    assert text == "rgb(231, 234, 238)", text
    page.shot("choose")
    page.fill("email", email)
    page.fill("password", password)
    page.press("Sign in", "Protect your account")
    page.shot("offer-enrolment")
    assert not flow["waiter"].answered()
    page.press("Use an authenticator app", "Set up your authenticator app")
    image = page.driver.find_element(By.CSS_SELECTOR, ".qr img")
    source = image.get_attribute("src")
    assert source.startswith("data:image/svg+xml;base64,"), source[:40]
    svg = base64.b64decode(source.split(",", 1)[1])
    assert b"<svg" in svg, "the image is not the server's SVG document"
    # The image was decoded and drawn (the policy allows data: images), at its size.
    drawn = page.driver.execute_script("const i = arguments[0]; return [i.complete, i.naturalWidth, i.getBoundingClientRect().width]", image)
    assert drawn[0] and drawn[1] > 0 and drawn[2] >= 150, drawn
    secret = stack.secret(re.sub(r"\s", "", page.driver.find_element(By.CSS_SELECTOR, "p.secret").text))
    is_base32 = re.fullmatch(r"[A-Z2-7]{16,}", secret) is not None   # (the key itself stays out of any message)
    assert is_base32, "the key shown is not base32"
    # Scanned off the screen, the QR code holds the key written under it. (Development servers
    # built before their QR codes were real drew a placeholder with nothing in it to scan.)
    if b"a placeholder, not a scannable QR code" not in svg:
        scanned = urllib.parse.urlsplit(page.scan_qr(image))
        assert scanned.scheme == "otpauth" and scanned.netloc == "totp", "the QR code is not a TOTP key's"
        same_key = urllib.parse.parse_qs(scanned.query).get("secret") == [secret]
        assert same_key, "the QR code holds another key than the one shown"
    page.wait_for_focus("code")
    page.shot("enroll-totp")
    # The widest page (the image and the key) fits a 320-pixel window too.
    page.emulate_width(320)
    page.wait(lambda: page.driver.execute_script("return innerWidth") == 320, "the narrow window")
    assert page.horizontal_overflow() is None, f"scrolls sideways {page.horizontal_overflow()}"
    page.shot("enroll-totp")
    page.emulate_width(None)
    page.fill("code", stack.secret(totp(secret)))
    page.press("Verify and turn on", "You are signed in")
    assert page.background() == DARK_BACKGROUND
    status = signed_in(stack, app, flow, page, email)
    assert status["aal"] == "aal2", status
    # The account has the factor now, verified.
    code, answer = stack.server.sign_in(email, password)
    stack.secret(answer.get("access_token", "") or "-")
    assert code == 200
    factors = [f for f in answer["user"].get("factors", []) if f["factor_type"] == "totp"]
    assert [f["status"] for f in factors] == ["verified"], factors


def test_asking_for_the_email_again_too_soon_says_when_to_retry(stack, app, page):
    stack.server.settings(mailer_autoconfirm=False, smtp_max_frequency=60)
    email, password = unique_email("limit"), stack.secret(new_password())
    flow = app.begin(method="sign_up")
    page.open(flow["url"])
    # The app asked for the sign-up form first.
    assert page.heading() == "Create an account"
    page.fill("email", email)
    page.fill("new_password", password)
    page.press("Create account", "Check your inbox")
    code = stack.secret(stack.server.wait_for_code(email, "signup"))
    page.press("Send the email again", "Check your inbox", condition=page.error, what="the error")
    page.shot("sent-moments-ago")
    message = page.error()
    found = re.fullmatch(r"A code was sent moments ago: use that one\. You can send another in (\d+) seconds?\.", message)
    assert found and 1 <= int(found.group(1)) <= 60, message
    assert len([m for m in stack.server.outbox(email) if m["type"] == "signup"]) == 1, "a second email went out"
    # Asked again: still held back, and nothing goes to the server meanwhile.
    page.press("Send the email again", "Check your inbox", condition=page.error, what="the error")
    assert page.error().startswith("A code was sent moments ago"), page.error()
    assert len([m for m in stack.server.outbox(email) if m["type"] == "signup"]) == 1, "a second email went out"
    page.fill("code", code)
    page.press("Confirm", "You are signed in")
    signed_in(stack, app, flow, page, email)


def test_the_page_breaks_no_rule_of_its_content_security_policy(stack, app, page):
    """No console error, no refusal under the page's policy, on the first pages; and the check
    can see one: a stylesheet the policy does not allow, added by the test, is reported."""
    flow = app.begin()
    page.open(flow["url"])
    for way, heading in (("Create an account", "Create an account"), ("I already have an account", "Sign in"),
                         ("Email me a code instead", "Sign in with a code"), ("Sign in another way", "Sign in"),
                         ("Forgot password?", "Reset your password")):
        page.press(way, heading)
    no_console_problems(page)
    page.driver.execute_script("const s = document.createElement('style'); s.textContent = 'body{color:red}'; document.head.append(s)")
    page.wait(lambda: any(re.search(r"content.security.policy", e["message"], re.I) for e in page.console_problems()),
              "Chromium to report the refused stylesheet")
    assert page.driver.execute_script("return getComputedStyle(document.body).color") != "rgb(255, 0, 0)"


def test_a_wrong_second_factor_code_then_cancel_keeps_the_first_step(stack, app, page):
    """Cancelled on the second factor's page: the app learns it was cancelled, and the session
    the password made (aal1) stays, as the page says."""
    email, password = unique_email("stop"), stack.secret(new_password())
    session = stack.server.sign_up(email, password)
    stack.secret(session["access_token"])
    secret = stack.secret(stack.server.enrol_verified_totp(session["access_token"]))
    flow = app.begin()
    page.open(flow["url"])
    page.fill("email", email)
    page.fill("password", password)
    page.press("Sign in", "Two-step verification")
    wrong = "000000" if totp(secret) != "000000" else "111111"
    page.fill("code", wrong)
    page.press("Verify", "Two-step verification", condition=page.error, what="the error")
    page.shot("wrong-totp-code")
    assert page.error() == "That code is wrong. Enter the current code."
    assert page.field("code").get_attribute("aria-invalid") == "true"
    page.wait_for_focus("code")
    page.press("Cancel sign-in", "Sign-in stopped")
    assert email in page.lead()
    page.shot("stopped")
    with pytest.raises(page_stack.RPCError) as refused:
        flow["waiter"].wait()
    assert refused.value.reason == "sign_in_cancelled", refused.value
    ended = app.events.page_ended(flow["flow_id"])
    assert ended["reason"] == "cancelled", ended
    status = stack.daemon.status()
    assert status["state"] == "signed_in" and status["user"]["email"] == email, status
    assert status["aal"] == "aal1" and status["next_aal"] == "aal2", status
    no_console_problems(page)


def test_an_app_that_cancels_ends_the_page_in_the_browser(stack, app, page):
    flow = app.begin()
    page.open(flow["url"])
    assert stack.daemon.call("session.cancelInteractiveSignIn", {"flow_id": flow["flow_id"]}) == {"cancelled": True}
    with pytest.raises(page_stack.RPCError) as refused:
        flow["waiter"].wait()
    assert refused.value.reason == "sign_in_cancelled", refused.value
    assert app.events.page_ended(flow["flow_id"])["reason"] == "cancelled"
    # The tab still open shows the end, and its forms are gone.
    page.after(page.driver.refresh, "Sign-in cancelled")
    assert page.buttons() == []
    page.shot("cancelled")
    assert stack.daemon.status()["state"] == "signed_out"
    no_console_problems(page)


def test_sign_in_with_a_texted_code(stack, app, page):
    phone = "+1555" + str(uuid.uuid4().int % 10**7).rjust(7, "0")
    flow = app.begin(method="phone_code")
    page.open(flow["url"])
    assert page.heading() == "Sign in with a text message"
    assert page.field("phone").get_attribute("autocomplete") == "tel"
    page.fill("phone", phone)
    page.press("Text me a code", "Enter your code")
    page.shot("enter-texted-code")
    page.fill("code", stack.secret(stack.server.wait_for_code(phone, "sms")))
    page.press("Sign in", "You are signed in")
    signed_in(stack, app, flow, page, phone=phone)


def test_single_sign_on_through_the_development_servers_identity_provider(stack, app, page):
    domain = "acme-" + uuid.uuid4().hex[:6] + ".test"
    email = f"ada@{domain}"
    stack.server.admin("sso", {"domains": [domain], "email": email})
    stack.server.settings(saml_enabled=True)
    flow = app.begin()
    page.open(flow["url"])
    page.press("Continue with SSO", "Sign in with SSO")
    page.shot("sso-domain")
    page.fill("domain", domain)
    page.press("Continue", "You are signed in")
    status = signed_in(stack, app, flow, page, email)
    assert status["amr"][0] == "sso/saml", status


def test_continue_without_an_account(stack, app, page):
    flow = app.begin()
    page.open(flow["url"])
    page.press("Continue without an account", "You are signed in")
    signed_in(stack, app, flow, page, anonymous=True)
