"""What every browser test checks at the end of a flow: the page, the app's answer, the event,
the status, and a clean browser log."""

def signed_in(stack, app, flow, page, email: str = None, phone: str = None, anonymous: bool = False) -> dict:
    """The page says so, and the app learns it: the wait answers, the event says signed_in, and
    the profile's status is signed in as that user (`email`, `phone`, or a new anonymous one).
    The browser reported no error meanwhile. Answers the status."""
    page.wait_for_heading("You are signed in")
    page.shot("signed-in")

    def is_the_user(status):
        user = status.get("user") or {}
        if anonymous:
            return user.get("is_anonymous") is True
        if phone:
            return user.get("phone", "").lstrip("+") == phone.lstrip("+")
        return user.get("email") == email
    waited = flow["waiter"].wait()
    assert waited["state"] == "signed_in" and is_the_user(waited), waited
    ended = app.events.page_ended(flow["flow_id"])
    assert ended["reason"] == "signed_in" and not ended.get("message"), ended
    status = stack.daemon.status()
    assert status["state"] == "signed_in" and is_the_user(status), status
    no_console_problems(page)
    # Named as the user knows the account: the address, or the number as typed (with its +).
    shown = email or phone or "a new anonymous user"
    assert f"Signed in as {shown}." in page.lead(), page.summary()
    return status


def no_console_problems(page):
    problems = page.console_problems()
    assert not problems, problems
