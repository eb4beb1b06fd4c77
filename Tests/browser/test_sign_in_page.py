"""authd's sign-in page in a real browser, end to end, the first-factor ways: an app asks authd
for the page over the socket, Chromium opens the one-time link, a user fills in the forms (with the
mouse, or with the keyboard alone), and the app learns the end (session.waitForInteractiveSignIn,
the INTERACTIVE_SIGN_IN_ENDED event, session.status), against the development server.
"""

import pytest

# Without Selenium the tests are skipped, saying why (AUTHD_REQUIRE_BROWSER=1: refused in conftest).
pytest.importorskip("selenium", reason="selenium is not installed (pip install selenium)")
from selenium.webdriver.common.by import By  # noqa: E402

from page_stack import new_password, unique_email  # noqa: E402
from flows import signed_in  # noqa: E402


def test_password_sign_in(stack, app, page):
    email, password = unique_email("password"), stack.secret(new_password())
    stack.server.sign_up(email, password)
    flow = app.begin()
    page.open(flow["url"])
    assert page.heading() == "Sign in"
    # A password manager knows the fields: whose account, and its current password.
    assert page.field("email").get_attribute("autocomplete") == "username"
    assert page.field("password").get_attribute("autocomplete") == "current-password"
    page.shot("choose")
    page.fill("email", email)
    page.fill("password", password)
    page.press("Sign in", "You are signed in")
    signed_in(stack, app, flow, page, email)


def test_wrong_password_shows_the_error_at_the_field_then_signs_in(stack, app, page):
    email, password = unique_email("wrong"), stack.secret(new_password())
    stack.server.sign_up(email, password)
    flow = app.begin(email=email)
    page.open(flow["url"])
    # The address the app named is filled in, and the focus waits in the password field.
    assert page.field("email").get_attribute("value") == email
    page.wait_for_focus("password")
    page.fill("password", stack.secret(new_password()))
    page.press("Sign in", "Sign in", condition=page.error, what="the error")
    page.shot("wrong-password")
    assert page.error() == "Wrong email or password."
    field = page.field("password")
    # Under the password field, announced, pointed to by the field, which has the focus again and is empty.
    error = page.driver.find_element("id", "error")
    assert error.get_attribute("role") == "alert"
    assert error.find_element("xpath", "..").find_elements("css selector", "input[name=password]"), "the error is not next to the password"
    assert field.get_attribute("aria-invalid") == "true"
    assert "error" in field.get_attribute("aria-describedby").split()
    page.wait_for_focus("password")
    assert field.get_attribute("value") == ""
    assert page.field("email").get_attribute("value") == email
    assert not flow["waiter"].answered(), "a wrong password ended the page"
    assert stack.daemon.status()["state"] == "signed_out"

    page.fill("password", password)
    page.press("Sign in", "You are signed in")
    signed_in(stack, app, flow, page, email)


def test_sign_up_with_email_confirmation(stack, app, page):
    stack.server.settings(mailer_autoconfirm=False)
    email, password = unique_email("sign-up"), stack.secret(new_password())
    flow = app.begin()
    page.open(flow["url"])
    page.press("Create an account", "Create an account")
    page.shot("sign-up")
    page.fill("email", email)
    page.fill("new_password", password)
    page.press("Create account", "Check your inbox")
    assert email in page.lead()
    page.shot("check-inbox")
    code = stack.secret(stack.server.wait_for_code(email, "signup"))
    page.fill("code", code)
    page.press("Confirm", "You are signed in")
    signed_in(stack, app, flow, page, email)
    # The account is there, confirmed, with that password.
    assert stack.server.sign_in(email, password)[0] == 200


def test_sign_in_with_an_emailed_code(stack, app, page):
    email = unique_email("code")
    stack.server.sign_up(email, stack.secret(new_password()))
    flow = app.begin()
    page.open(flow["url"])
    page.press("Email me a code instead", "Sign in with a code")
    page.shot("request-code")
    page.fill("email", email)
    page.press("Email me a code", "Enter your code")
    assert email in page.lead()
    page.shot("enter-code")
    page.fill("code", stack.secret(stack.server.wait_for_code(email, "magiclink")))
    page.press("Sign in", "You are signed in")
    signed_in(stack, app, flow, page, email)


def test_keyboard_only_sign_in_with_an_emailed_code(stack, app, page):
    """Tab, Shift+Tab, Enter and typing only: no click anywhere."""
    email = unique_email("keys")
    stack.server.sign_up(email, stack.secret(new_password()))
    flow = app.begin()
    page.open(flow["url"])
    # The first field has the focus as the page opens.
    page.wait_for_focus("email")
    # Forward past the way wanted, to the last one, then back with Shift+Tab.
    page.tab_to("Create an account")
    page.tab_to("Email me a code instead", backwards=True)
    # The focus is visible on the button (a ring, not just the browser's default).
    outline = page.driver.execute_script("const s = getComputedStyle(document.activeElement); return [s.outlineStyle, s.outlineWidth]")
    assert outline[0] != "none" and outline[1] != "0px", outline
    page.shot("focus-on-email-me-a-code")
    page.enter("Sign in with a code")
    page.wait_for_focus("email")
    page.keys(email)
    page.enter("Enter your code")
    page.wait_for_focus("code")
    page.shot("enter-code")
    page.keys(stack.secret(stack.server.wait_for_code(email, "magiclink")))
    page.enter("You are signed in")
    signed_in(stack, app, flow, page, email)


@pytest.mark.network_log
def test_oauth_through_the_development_servers_provider(stack, app, page):
    # The simulated provider signs in this identity, a user the server has not seen before.
    email = unique_email("oauth")
    stack.server.admin("oauth", {"email": email})
    flow = app.begin()
    page.open(flow["url"])
    page_origin = flow["url"].split("/sign-in/")[0]
    page.read_console()
    page.requests_sent()   # what came before the click
    page.press("Continue with GitHub", "You are signed in")
    # The button led to the provider (the development server's /authorize), which sent the
    # browser back to the page's return address, and on to the page.
    went = [url.split("?")[0] for url in page.requests_sent()]
    authorize = stack.server.url + "/auth/v1/authorize"
    assert authorize in went, went
    after = went[went.index(authorize) + 1:]
    assert after and after[0].startswith(page_origin + "/sign-in/return/"), went
    assert after[-1] == page_origin + "/sign-in", went
    status = signed_in(stack, app, flow, page, email)
    assert status["amr"][0] == "oauth", status
    assert stack.daemon.call("session.claims")["claims"]["app_metadata"]["provider"] == "github"


def test_a_provider_that_refuses_says_so_and_the_page_goes_on(stack, app, page):
    stack.server.admin("oauth", {"error": "access_denied", "error_description": "The user denied access"})
    flow = app.begin()
    page.open(flow["url"])
    page.press("Continue with Google", "Sign in", condition=page.error, what="the error")
    page.shot("provider-refused")
    assert page.error() == "The sign-in was cancelled at the provider."
    # The page goes on: the app still waits, and another way still signs in.
    assert not flow["waiter"].answered()
    assert stack.daemon.status()["state"] == "signed_out"
    email = unique_email("after-refusal")
    stack.server.admin("oauth", {"email": email})
    page.press("Continue with Google", "You are signed in")
    signed_in(stack, app, flow, page, email)


def test_forgot_password_then_sign_in_with_the_new_one_in_a_narrow_window(stack, app, page):
    """Recovery by emailed code, then a new password; every page of it 320 pixels wide (a
    640-pixel window at 200 % zoom) and none scrolls sideways."""
    email, old, new = unique_email("recover"), stack.secret(new_password()), stack.secret(new_password())
    stack.server.sign_up(email, old)
    page.emulate_width(320)
    flow = app.begin()
    page.open(flow["url"])

    def narrow(name, shot=True):
        assert page.driver.execute_script("return innerWidth") == 320
        assert page.horizontal_overflow() is None, f"{name}: scrolls sideways {page.horizontal_overflow()}"
        if shot:
            page.shot(name)

    narrow("choose")
    page.press("Forgot password?", "Reset your password")
    narrow("forgot-password")
    page.fill("email", email)
    page.press("Send me a code", "Reset your password", condition=lambda: "emailed a code" in page.lead())
    assert email in page.lead()
    narrow("recovery-code")
    page.fill("code", stack.secret(stack.server.wait_for_code(email, "recovery")))
    page.press("Continue", "Choose a new password")
    assert email in page.lead()
    # The page tells a password manager whose new password this is.
    username = page.driver.find_element(By.CSS_SELECTOR, "input[autocomplete=username]")
    assert username.get_attribute("value") == email
    assert page.field("new_password").get_attribute("autocomplete") == "new-password"
    narrow("new-password")
    page.fill("new_password", new)
    page.press("Set password", "You are signed in")
    narrow("signed-in", shot=False)
    signed_in(stack, app, flow, page, email)

    # The new password is the account's now, and the old one is not.
    assert stack.server.sign_in(email, old)[0] == 400
    stack.daemon.call("session.signOut", {"scope": "local"})
    assert stack.daemon.status()["state"] == "signed_out"
    again = app.begin()
    page.open(again["url"])
    page.fill("email", email)
    page.fill("password", new)
    page.press("Sign in", "You are signed in")
    narrow("signed-in", shot=False)
    signed_in(stack, app, again, page, email)
