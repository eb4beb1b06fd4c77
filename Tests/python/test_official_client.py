"""The development server checked by a client nobody here wrote: supabase-auth from PyPI."""
import base64
import json

import pytest
from supabase_auth import SyncGoTrueClient
from supabase_auth.errors import AuthApiError

from conftest import ANON_KEY

PASSWORD = "python-password-1"


def client(url: str) -> SyncGoTrueClient:
    # No auto-refresh timer: the test decides when to refresh.
    return SyncGoTrueClient(url=url, headers={"apikey": ANON_KEY}, auto_refresh_token=False, persist_session=True)


def claims(jwt: str) -> dict:
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def test_sign_up_signs_in_at_once_with_auto_confirm(dev_server, email):
    response = client(dev_server).sign_up({"email": email, "password": PASSWORD, "options": {"data": {"name": "Py"}}})
    assert response.session is not None
    assert response.user.email == email
    assert response.user.user_metadata["name"] == "Py"
    assert response.session.token_type == "bearer"
    assert response.session.expires_in == 3600
    assert claims(response.session.access_token)["email"] == email
    assert claims(response.session.access_token)["session_id"]


def test_sign_in_with_password_and_wrong_password(dev_server, email):
    auth = client(dev_server)
    auth.sign_up({"email": email, "password": PASSWORD})
    with pytest.raises(AuthApiError) as wrong:
        auth.sign_in_with_password({"email": email, "password": "not-the-password"})
    assert wrong.value.code == "invalid_credentials"
    assert wrong.value.status == 400
    assert wrong.value.message == "Invalid login credentials"
    response = auth.sign_in_with_password({"email": email, "password": PASSWORD})
    assert response.user.email == email
    assert response.session.refresh_token


def test_refresh_rotates_and_the_parent_token_returns_the_current_one(dev_server, email):
    auth = client(dev_server)
    first = auth.sign_up({"email": email, "password": PASSWORD}).session
    second = auth.refresh_session(first.refresh_token).session
    assert second.refresh_token != first.refresh_token
    assert second.user.email == email
    # A crash before saving `second` means presenting `first` again: the server answers with `second`'s token.
    again = client(dev_server).refresh_session(first.refresh_token).session
    assert again.refresh_token == second.refresh_token


def test_reusing_an_older_refresh_token_revokes_the_session(dev_server, email):
    auth = client(dev_server)
    r0 = auth.sign_up({"email": email, "password": PASSWORD}).session.refresh_token
    r1 = auth.refresh_session(r0).session.refresh_token
    r2 = auth.refresh_session(r1).session.refresh_token
    with pytest.raises(AuthApiError) as reuse:
        client(dev_server).refresh_session(r0)
    assert reuse.value.code == "refresh_token_already_used"
    assert reuse.value.status == 400
    with pytest.raises(AuthApiError) as revoked:
        client(dev_server).refresh_session(r2)
    assert revoked.value.code == "refresh_token_not_found"


def test_get_user_and_sign_out(dev_server, email):
    auth = client(dev_server)
    session = auth.sign_up({"email": email, "password": PASSWORD}).session
    user = auth.get_user(session.access_token).user
    assert user.email == email
    assert user.identities[0].provider == "email"
    auth.sign_out({"scope": "local"})
    assert auth.get_session() is None
    with pytest.raises(AuthApiError) as gone:
        client(dev_server).get_user(session.access_token)
    assert gone.value.code == "session_not_found"
    assert gone.value.status == 403
    with pytest.raises(AuthApiError) as refresh:
        client(dev_server).refresh_session(session.refresh_token)
    assert refresh.value.code == "refresh_token_not_found"


def test_global_sign_out_ends_every_session_of_the_user(dev_server, email):
    one = client(dev_server)
    one.sign_up({"email": email, "password": PASSWORD})
    two = client(dev_server)
    other = two.sign_in_with_password({"email": email, "password": PASSWORD}).session
    one.sign_out({"scope": "global"})
    with pytest.raises(AuthApiError) as ended:
        client(dev_server).refresh_session(other.refresh_token)
    assert ended.value.code == "refresh_token_not_found"


def outbox_code(url: str, address: str) -> str:
    import urllib.request
    with urllib.request.urlopen(f"{url}/admin/dev/outbox?to={address}") as answer:
        return json.load(answer)["messages"][-1]["code"]


def post_admin(url: str, path: str, body: dict) -> dict:
    import urllib.request
    request = urllib.request.Request(f"{url}{path}", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as answer:
        text = answer.read()
        return json.loads(text) if text else {}


def test_verify_otp_signs_in_once(dev_server, email):
    auth = client(dev_server)
    auth.sign_in_with_otp({"email": email})
    code = outbox_code(dev_server, email)
    with pytest.raises(AuthApiError) as wrong:
        auth.verify_otp({"email": email, "token": "000000", "type": "email"})
    assert wrong.value.code == "otp_expired"
    response = auth.verify_otp({"email": email, "token": code, "type": "email"})
    assert response.user.email == email
    assert claims(response.session.access_token)["amr"][0]["method"] == "otp"
    with pytest.raises(AuthApiError):
        client(dev_server).verify_otp({"email": email, "token": code, "type": "email"})


def test_sign_in_with_id_token_and_its_nonce(dev_server, email):
    import hashlib
    raw = "python-raw-nonce"
    id_token = post_admin(dev_server, "/admin/dev/id_token",
                          {"provider": "google", "email": email, "nonce": hashlib.sha256(raw.encode()).hexdigest()})["id_token"]
    with pytest.raises(AuthApiError) as mismatch:
        client(dev_server).sign_in_with_id_token({"provider": "google", "token": id_token, "nonce": "not-it"})
    assert mismatch.value.status == 400
    assert "Nonces mismatch" in mismatch.value.message
    response = client(dev_server).sign_in_with_id_token({"provider": "google", "token": id_token, "nonce": raw})
    assert response.user.email == email
    assert response.user.app_metadata["providers"] == ["google"]


def test_exchange_code_for_session_after_the_browser_redirect(dev_server, email):
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    post_admin(dev_server, "/admin/dev/oauth", {"email": email})
    auth = SyncGoTrueClient(url=dev_server, headers={"apikey": ANON_KEY}, auto_refresh_token=False, flow_type="pkce")
    start = auth.sign_in_with_oauth({"provider": "github", "options": {"redirect_to": "http://127.0.0.1:5999/callback"}})
    opener = urllib.request.build_opener(NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as redirect:
        opener.open(start.url)
    assert redirect.value.code == 302
    location = redirect.value.headers["Location"]
    assert location.startswith("http://127.0.0.1:5999/callback?code=")
    response = auth.exchange_code_for_session({"auth_code": location.split("code=", 1)[1]})
    assert response.user.email == email
    assert response.session.provider_token


def test_a_captcha_protects_sign_up_password_sign_in_and_codes_but_not_refresh_or_id_tokens(dev_server, email):
    post_admin(dev_server, "/admin/dev/settings", {"captcha_token": "solved-captcha"})
    auth = client(dev_server)
    with pytest.raises(AuthApiError) as missing:
        auth.sign_up({"email": email, "password": PASSWORD})
    assert (missing.value.status, missing.value.code) == (400, "captcha_failed")
    assert missing.value.message == "captcha protection: request disallowed (no captcha_token found)"
    with pytest.raises(AuthApiError) as wrong:
        auth.sign_up({"email": email, "password": PASSWORD, "options": {"captcha_token": "guessed"}})
    assert wrong.value.code == "captcha_failed"
    assert "invalid-input-response" in wrong.value.message
    session = auth.sign_up({"email": email, "password": PASSWORD, "options": {"captcha_token": "solved-captcha"}}).session
    assert session is not None

    with pytest.raises(AuthApiError) as password:
        client(dev_server).sign_in_with_password({"email": email, "password": PASSWORD})
    assert password.value.code == "captcha_failed"
    signed_in = client(dev_server).sign_in_with_password(
        {"email": email, "password": PASSWORD, "options": {"captcha_token": "solved-captcha"}})
    assert signed_in.user.email == email

    with pytest.raises(AuthApiError) as otp:
        client(dev_server).sign_in_with_otp({"email": email})
    assert otp.value.code == "captcha_failed"
    client(dev_server).sign_in_with_otp({"email": email, "options": {"captcha_token": "solved-captcha"}})
    code = outbox_code(dev_server, email)
    # /verify is not behind the CAPTCHA, nor are the refresh and id_token grants.
    assert client(dev_server).verify_otp({"email": email, "token": code, "type": "email"}).user.email == email
    assert client(dev_server).refresh_session(signed_in.session.refresh_token).session.refresh_token
    id_token = post_admin(dev_server, "/admin/dev/id_token", {"provider": "google", "email": email})["id_token"]
    assert client(dev_server).sign_in_with_id_token({"provider": "google", "token": id_token}).user.email == email

    with pytest.raises(AuthApiError) as recover:
        client(dev_server).reset_password_for_email(email)
    assert recover.value.code == "captcha_failed"
    client(dev_server).reset_password_for_email(email, {"captcha_token": "solved-captcha"})


def test_secure_password_change_needs_the_code_reauthenticate_sends(dev_server, email):
    post_admin(dev_server, "/admin/dev/settings", {"update_password_require_reauthentication": True, "reauthentication_window": 0})
    auth = client(dev_server)
    auth.sign_up({"email": email, "password": PASSWORD})
    with pytest.raises(AuthApiError) as needed:
        auth.update_user({"password": "python-password-2"})
    assert (needed.value.status, needed.value.code) == (400, "reauthentication_needed")
    auth.reauthenticate()
    code = outbox_code(dev_server, email)
    with pytest.raises(AuthApiError) as wrong:
        auth.update_user({"password": "python-password-2", "nonce": "000000" if code != "000000" else "111111"})
    assert (wrong.value.status, wrong.value.code) == (422, "reauthentication_not_valid")
    assert wrong.value.message == "Nonce has expired or is invalid"
    assert auth.update_user({"password": "python-password-2", "nonce": code}).user.email == email
    # The code was used up.
    with pytest.raises(AuthApiError) as again:
        auth.update_user({"password": "python-password-3", "nonce": code})
    assert again.value.code == "reauthentication_not_valid"
    assert client(dev_server).sign_in_with_password({"email": email, "password": "python-password-2"}).session


def test_get_claims_verifies_with_the_published_keys_and_follows_a_rotation(asymmetric_dev_server, email):
    url, algorithm = asymmetric_dev_server
    auth = client(url)
    session = auth.sign_up({"email": email, "password": PASSWORD}).session
    verified = auth.get_claims()
    assert verified["headers"]["alg"] == algorithm
    assert verified["claims"]["email"] == email
    kid = post_admin(url, "/admin/dev/rotate-signing-key", {})["kid"]
    rotated = client(url).refresh_session(session.refresh_token).session
    again = client(url).get_claims(rotated.access_token)
    assert again["headers"]["kid"] == kid
    # A token whose signature was tampered with is refused.
    head, body, signature = rotated.access_token.split(".")
    forged = f"{head}.{body}.{signature[:-4]}{'AAAA' if signature[-4:] != 'AAAA' else 'BBBB'}"
    from supabase_auth.errors import AuthInvalidJwtError
    with pytest.raises(AuthInvalidJwtError):
        client(url).get_claims(forged)


def totp_code(secret: str, at: float | None = None) -> str:
    """RFC 6238 as authenticator apps compute it: HMAC-SHA1 of the 30-second counter, 6 digits."""
    import hashlib
    import hmac
    import struct
    import time
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    counter = int((time.time() if at is None else at) // 30)
    mac = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    return "%06d" % ((struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF) % 1_000_000)


def test_totp_code_matches_rfc_6238():
    secret = base64.b32encode(b"12345678901234567890").decode().rstrip("=")
    assert totp_code(secret, 59) == "287082"


def test_mfa_totp_enroll_verify_list_and_unenroll(dev_server, email):
    auth = client(dev_server)
    first = auth.sign_up({"email": email, "password": PASSWORD}).session
    before = auth.mfa.get_authenticator_assurance_level()
    assert (before.current_level, before.next_level) == ("aal1", "aal1")

    enrolled = auth.mfa.enroll({"factor_type": "totp", "friendly_name": "py-authenticator"})
    assert enrolled.type == "totp"
    assert enrolled.friendly_name == "py-authenticator"
    assert enrolled.totp.qr_code.startswith("data:image/svg+xml;utf-8,") and "<svg" in enrolled.totp.qr_code
    assert enrolled.totp.uri.startswith("otpauth://totp/") and f"secret={enrolled.totp.secret}" in enrolled.totp.uri
    unverified = auth.mfa.list_factors()
    assert [f.status for f in unverified.all] == ["unverified"] and unverified.totp == []

    challenge = auth.mfa.challenge({"factor_id": enrolled.id})
    assert challenge.factor_type == "totp" and challenge.expires_at > 0
    right = totp_code(enrolled.totp.secret)
    with pytest.raises(AuthApiError) as wrong:
        auth.mfa.verify({"factor_id": enrolled.id, "challenge_id": challenge.id, "code": "000000" if right != "000000" else "111111"})
    assert (wrong.value.status, wrong.value.code) == (422, "mfa_verification_failed")
    assert wrong.value.message == "Invalid TOTP code entered"

    verified = auth.mfa.challenge_and_verify({"factor_id": enrolled.id, "code": totp_code(enrolled.totp.secret)})
    assert verified.refresh_token != first.refresh_token
    assert claims(verified.access_token)["session_id"] == claims(first.access_token)["session_id"]
    level = auth.mfa.get_authenticator_assurance_level()
    assert (level.current_level, level.next_level) == ("aal2", "aal2")
    assert [entry.method for entry in level.current_authentication_methods] == ["totp", "password"]
    factors = auth.mfa.list_factors()
    assert [(f.id, f.status, f.friendly_name) for f in factors.totp] == [(enrolled.id, "verified", "py-authenticator")]

    # A second sign-in is aal1: it may not remove a verified factor.
    other = client(dev_server)
    other.sign_in_with_password({"email": email, "password": PASSWORD})
    assert other.mfa.get_authenticator_assurance_level().next_level == "aal2"
    with pytest.raises(AuthApiError) as low:
        other.mfa.unenroll({"factor_id": enrolled.id})
    assert (low.value.status, low.value.code) == (422, "insufficient_aal")

    assert auth.mfa.unenroll({"factor_id": enrolled.id}).id == enrolled.id
    assert auth.mfa.list_factors().all == []
    refreshed = auth.refresh_session().session
    assert claims(refreshed.access_token)["aal"] == "aal1"


def test_mfa_verification_leaves_the_aal1_refresh_token_unusable(dev_server, email):
    auth = client(dev_server)
    first = auth.sign_up({"email": email, "password": PASSWORD}).session
    enrolled = auth.mfa.enroll({"factor_type": "totp"})
    verified = auth.mfa.challenge_and_verify({"factor_id": enrolled.id, "code": totp_code(enrolled.totp.secret)})
    # Not the parent of the new token (GoTrue skips a step): presenting it is reuse, and ends the session.
    with pytest.raises(AuthApiError) as reuse:
        client(dev_server).refresh_session(first.refresh_token)
    assert (reuse.value.status, reuse.value.code) == (400, "refresh_token_already_used")
    with pytest.raises(AuthApiError) as ended:
        client(dev_server).refresh_session(verified.refresh_token)
    assert ended.value.code == "refresh_token_not_found"


def test_mfa_phone_factor_with_the_code_from_the_outbox(dev_server, email):
    auth = client(dev_server)
    auth.sign_up({"email": email, "password": PASSWORD})
    enrolled = auth.mfa.enroll({"factor_type": "phone", "phone": "+15550003333"})
    assert enrolled.type == "phone" and enrolled.friendly_name == ""
    challenge = auth.mfa.challenge({"factor_id": enrolled.id, "channel": "sms"})
    assert challenge.factor_type == "phone"
    import urllib.request
    with urllib.request.urlopen(f"{dev_server}/admin/dev/outbox?to=15550003333") as answer:
        message = json.load(answer)["messages"][-1]
    assert (message["type"], message["channel"]) == ("mfa", "sms")
    with pytest.raises(AuthApiError) as soon:
        auth.mfa.challenge({"factor_id": enrolled.id})
    assert (soon.value.status, soon.value.code) == (429, "over_sms_send_rate_limit")
    auth.mfa.verify({"factor_id": enrolled.id, "challenge_id": challenge.id, "code": message["code"]})
    level = auth.mfa.get_authenticator_assurance_level()
    assert level.current_level == "aal2"
    assert level.current_authentication_methods[0].method == "mfa/phone"
    assert [f.phone for f in auth.mfa.list_factors().phone] == ["15550003333"]


def test_sign_in_anonymously_then_convert_with_an_email(dev_server, email):
    auth = client(dev_server)
    response = auth.sign_in_anonymously()
    assert response.user.is_anonymous is True
    assert response.user.email == ""
    assert response.user.identities == []
    assert claims(response.session.access_token)["is_anonymous"] is True
    assert claims(response.session.access_token)["amr"][0]["method"] == "anonymous"
    user_id = response.user.id
    # The project auto-confirms emails, so the anonymous user becomes permanent at once.
    updated = auth.update_user({"email": email}).user
    assert updated.id == user_id
    assert updated.is_anonymous is False
    assert updated.email == email
    assert auth.get_user().user.is_anonymous is False
    refreshed = auth.refresh_session().session
    assert claims(refreshed.access_token)["is_anonymous"] is False
    assert refreshed.user.id == user_id


def test_sign_in_anonymously_with_data_and_convert_by_the_email_change_code(dev_server, email):
    post_admin(dev_server, "/admin/dev/settings", {"mailer_autoconfirm": False})
    auth = client(dev_server)
    response = auth.sign_in_anonymously({"options": {"data": {"nickname": "guest"}}})
    assert response.user.is_anonymous is True
    assert response.user.user_metadata == {"nickname": "guest"}
    # Anonymous users can't set only a password: they'd have nothing to sign in with.
    with pytest.raises(AuthApiError) as alone:
        auth.update_user({"password": PASSWORD})
    assert alone.value.code == "validation_failed"
    assert alone.value.status == 422
    pending = auth.update_user({"email": email}).user
    assert pending.is_anonymous is True
    assert pending.new_email == email
    verified = auth.verify_otp({"email": email, "token": outbox_code(dev_server, email), "type": "email_change"})
    assert verified.user.id == response.user.id
    assert verified.user.is_anonymous is False
    assert verified.user.email == email
    assert claims(verified.session.access_token)["is_anonymous"] is False


def test_disabled_anonymous_sign_ins_raise_the_api_error(dev_server):
    post_admin(dev_server, "/admin/dev/settings", {"anonymous_users": False})
    import urllib.request
    with urllib.request.urlopen(urllib.request.Request(f"{dev_server}/settings", headers={"apikey": ANON_KEY})) as answer:
        assert json.load(answer)["external"]["anonymous_users"] is False
    auth = client(dev_server)
    with pytest.raises(AuthApiError) as disabled:
        auth.sign_in_anonymously()
    assert disabled.value.code == "anonymous_provider_disabled"
    assert disabled.value.status == 422
    assert disabled.value.message == "Anonymous sign-ins are disabled"
    assert auth.get_session() is None


def browser_redirect(url: str) -> str:
    """GETs `url` as a browser would and answers the Location of its redirect, not followed."""
    import urllib.error
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    with pytest.raises(urllib.error.HTTPError) as redirect:
        urllib.request.build_opener(NoRedirect).open(url)
    assert redirect.value.code in (302, 303)
    return redirect.value.headers["Location"]


def pkce_client(url: str) -> SyncGoTrueClient:
    return SyncGoTrueClient(url=url, headers={"apikey": ANON_KEY}, auto_refresh_token=False, flow_type="pkce")


APP_CALLBACK = "http://127.0.0.1:5999/callback"


def test_link_identity_through_the_provider_then_unlink_it(dev_server, email):
    auth = pkce_client(dev_server)
    user_id = auth.sign_up({"email": email, "password": PASSWORD}).user.id
    assert [i.provider for i in auth.get_user_identities().identities] == ["email"]
    post_admin(dev_server, "/admin/dev/oauth", {"email": f"gh-{email}"})
    start = auth.link_identity({"provider": "github", "options": {"redirect_to": APP_CALLBACK}})
    assert start.url.startswith(f"{dev_server}/callback?state=")
    location = browser_redirect(start.url)
    assert location.startswith(f"{APP_CALLBACK}?code=")
    linked = auth.exchange_code_for_session({"auth_code": location.split("code=", 1)[1]})
    assert linked.user.id == user_id
    assert linked.user.email == email
    assert [i.provider for i in linked.user.identities] == ["email", "github"]
    assert linked.user.app_metadata["providers"] == ["email", "github"]
    identities = auth.get_user_identities().identities
    github = next(i for i in identities if i.provider == "github")
    assert github.identity_data["email"] == f"gh-{email}"
    assert github.user_id == user_id

    auth.unlink_identity(github)
    left = auth.get_user_identities().identities
    assert [i.provider for i in left] == ["email"]
    with pytest.raises(AuthApiError) as last:
        auth.unlink_identity(left[0])
    assert last.value.code == "single_identity_not_deletable"
    assert last.value.status == 422


def test_linking_another_users_identity_comes_back_as_identity_already_exists(dev_server, email):
    import urllib.parse
    post_admin(dev_server, "/admin/dev/oauth", {"email": f"owner-{email}"})
    owner = pkce_client(dev_server)
    start = owner.sign_in_with_oauth({"provider": "github", "options": {"redirect_to": APP_CALLBACK}})
    owner.exchange_code_for_session({"auth_code": browser_redirect(start.url).split("code=", 1)[1]})

    auth = pkce_client(dev_server)
    auth.sign_up({"email": email, "password": PASSWORD})
    location = browser_redirect(auth.link_identity({"provider": "github", "options": {"redirect_to": APP_CALLBACK}}).url)
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(location).query)
    assert query["error_code"] == ["identity_already_exists"]
    assert query["error_description"] == ["Identity is already linked to another user"]
    assert [i.provider for i in auth.get_user_identities().identities] == ["email"]


def test_sign_in_with_sso_by_domain_and_by_provider_id_then_exchange_the_code(dev_server):
    provider = post_admin(dev_server, "/admin/dev/sso", {"domains": ["corp.example"], "email": "ada@corp.example"})
    auth = pkce_client(dev_server)
    start = auth.sign_in_with_sso({"domain": "corp.example", "options": {"redirect_to": APP_CALLBACK}})
    location = browser_redirect(start.url)
    assert location.startswith(f"{APP_CALLBACK}?code=")
    response = auth.exchange_code_for_session({"auth_code": location.split("code=", 1)[1]})
    assert response.user.email == "ada@corp.example"
    assert response.user.app_metadata["provider"] == f"sso:{provider['id']}"
    assert [i.provider for i in response.user.identities] == [f"sso:{provider['id']}"]
    amr = claims(response.session.access_token)["amr"]
    assert [(entry["method"], entry.get("provider")) for entry in amr] == [("sso/saml", provider["id"])]
    # The IdP owns the password of an SSO user.
    with pytest.raises(AuthApiError) as managed:
        auth.update_user({"password": "another-password-1"})
    assert managed.value.code == "user_sso_managed"
    assert managed.value.status == 422

    again = pkce_client(dev_server)
    start = again.sign_in_with_sso({"provider_id": provider["id"], "options": {"redirect_to": APP_CALLBACK}})
    second = again.exchange_code_for_session({"auth_code": browser_redirect(start.url).split("code=", 1)[1]})
    assert second.user.id == response.user.id


def test_sign_in_with_sso_for_an_unknown_domain_raises_the_api_error(dev_server):
    auth = pkce_client(dev_server)
    with pytest.raises(AuthApiError) as disabled:
        auth.sign_in_with_sso({"domain": "corp.example"})
    assert disabled.value.code == "saml_provider_disabled"
    post_admin(dev_server, "/admin/dev/sso", {"domains": ["corp.example"], "email": "ada@corp.example"})
    with pytest.raises(AuthApiError) as unknown:
        auth.sign_in_with_sso({"domain": "nowhere.example", "options": {"redirect_to": APP_CALLBACK}})
    assert unknown.value.code == "sso_provider_not_found"
    assert unknown.value.status == 404
    assert unknown.value.message == "No SSO provider assigned for this domain"


# Email links that come back to the app (the development server's DevEmailLinks.swift): the
# outbox message carries the link the email would and its token hash; a test "clicks" the link
# without following the redirect, as the browser would hand the redirect to the app.

def pkce_client(url: str) -> SyncGoTrueClient:
    return SyncGoTrueClient(url=url, headers={"apikey": ANON_KEY}, auto_refresh_token=False, flow_type="pkce")


def last_message(url: str, address: str) -> dict:
    import urllib.request
    with urllib.request.urlopen(f"{url}/admin/dev/outbox?to={address}") as answer:
        return json.load(answer)["messages"][-1]


def click(link: str) -> str:
    """Opens an email's link with no apikey, as a mail client would; returns where it redirects (303)."""
    import urllib.error
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    with pytest.raises(urllib.error.HTTPError) as redirect:
        urllib.request.build_opener(NoRedirect).open(link)
    assert redirect.value.code == 303
    return redirect.value.headers["Location"]


def query_of(location: str) -> dict:
    import urllib.parse
    return urllib.parse.parse_qs(urllib.parse.urlsplit(location).query, keep_blank_values=True)


def fragment_of(location: str) -> dict:
    import urllib.parse
    return urllib.parse.parse_qs(urllib.parse.urlsplit(location).fragment, keep_blank_values=True)


def test_a_pkce_magic_link_comes_back_with_a_code_the_client_exchanges(dev_server, email):
    import hashlib
    client(dev_server).sign_up({"email": email, "password": PASSWORD})
    auth = pkce_client(dev_server)
    auth.sign_in_with_otp({"email": email, "options": {"email_redirect_to": "http://127.0.0.1:5999/welcome",
                                                       "should_create_user": False}})
    message = last_message(dev_server, email)
    assert message["type"] == "magiclink"
    # GoTrue's {{ .TokenHash }}: pkce_ and the hex SHA-224 of the address and the code.
    assert message["token_hash"] == "pkce_" + hashlib.sha224((email + message["code"]).encode()).hexdigest()
    assert message["link"] == (f"{dev_server}/verify?token={message['token_hash']}&type=magiclink"
                               "&redirect_to=http://127.0.0.1:5999/welcome")
    location = click(message["link"])
    assert location.startswith("http://127.0.0.1:5999/welcome?code=")
    code = query_of(location)["code"][0]

    with pytest.raises(AuthApiError) as wrong:
        auth.exchange_code_for_session({"auth_code": code, "code_verifier": "not-the-verifier-" + "x" * 40})
    assert (wrong.value.status, wrong.value.code) == (400, "bad_code_verifier")
    response = auth.exchange_code_for_session({"auth_code": code})
    assert response.user.email == email
    assert claims(response.session.access_token)["amr"][0]["method"] == "magiclink"
    assert auth.get_user().user.email == email

    # The link was used: it comes back with GoTrue's error, in the query and the fragment.
    used = click(message["link"])
    assert query_of(used)["error_code"] == ["otp_expired"]
    assert fragment_of(used) == {"error": ["access_denied"], "error_code": ["otp_expired"],
                                 "error_description": ["Email link is invalid or has expired"], "sb": [""]}


def test_an_implicit_magic_link_puts_a_session_the_client_can_take_in_the_fragment(dev_server, email):
    client(dev_server).sign_up({"email": email, "password": PASSWORD})
    client(dev_server).sign_in_with_otp({"email": email, "options": {"email_redirect_to": "myapp://signed-in"}})
    message = last_message(dev_server, email)
    assert not message["token_hash"].startswith("pkce_")
    location = click(message["link"])
    assert location.startswith("myapp://signed-in#")
    fragment = fragment_of(location)
    assert fragment["token_type"] == ["bearer"] and fragment["type"] == ["magiclink"]
    assert fragment["expires_in"] == ["3600"]
    auth = client(dev_server)
    session = auth.set_session(fragment["access_token"][0], fragment["refresh_token"][0]).session
    assert session.user.email == email
    assert auth.get_user().user.email == email


def test_verify_otp_with_the_token_hash_of_the_email(dev_server, email):
    auth = client(dev_server)
    auth.sign_in_with_otp({"email": email})
    token_hash = last_message(dev_server, email)["token_hash"]
    response = auth.verify_otp({"token_hash": token_hash, "type": "email"})
    assert response.user.email == email
    assert response.user.email_confirmed_at is not None
    assert auth.get_session().access_token == response.session.access_token
    with pytest.raises(AuthApiError) as used:
        client(dev_server).verify_otp({"token_hash": token_hash, "type": "email"})
    assert (used.value.status, used.value.code) == (403, "otp_expired")
    assert used.value.message == "Email link is invalid or has expired"


def test_resend_sends_the_sign_up_confirmation_again(dev_server, email):
    post_admin(dev_server, "/admin/dev/settings", {"mailer_autoconfirm": False})
    auth = client(dev_server)
    auth.sign_up({"email": email, "password": PASSWORD})
    first = last_message(dev_server, email)
    # GoTrue's SMTP_MAX_FREQUENCY: not again within a minute.
    with pytest.raises(AuthApiError) as soon:
        auth.resend({"type": "signup", "email": email})
    assert (soon.value.status, soon.value.code) == (429, "over_email_send_rate_limit")
    assert soon.value.message.startswith("For security purposes, you can only request this after ")
    post_admin(dev_server, "/admin/dev/settings", {"smtp_max_frequency": 0})
    sent = auth.resend({"type": "signup", "email": email, "options": {"email_redirect_to": "http://127.0.0.1:5999/confirmed"}})
    assert sent.user is None and sent.session is None
    second = last_message(dev_server, email)
    assert second["type"] == "signup" and second["token_hash"] != first["token_hash"]
    assert second["link"].endswith("&type=signup&redirect_to=http://127.0.0.1:5999/confirmed")
    if first["code"] != second["code"]:
        with pytest.raises(AuthApiError) as replaced:
            client(dev_server).verify_otp({"email": email, "token": first["code"], "type": "signup"})
        assert replaced.value.code == "otp_expired"
    assert auth.verify_otp({"email": email, "token": second["code"], "type": "signup"}).user.email == email

    with pytest.raises(AuthApiError) as wrong_type:
        auth.resend({"type": "recovery", "email": email})
    assert (wrong_type.value.status, wrong_type.value.code) == (400, "validation_failed")
    assert wrong_type.value.message == "Missing one of these types: signup, email_change, sms, phone_change"
    with pytest.raises(AuthApiError) as no_phone:
        auth.resend({"type": "sms", "email": email})
    assert no_phone.value.message == "Type provided requires a phone number"


def test_a_pkce_sign_up_confirmation_link(dev_server, email):
    post_admin(dev_server, "/admin/dev/settings", {"mailer_autoconfirm": False})
    auth = pkce_client(dev_server)
    bare = auth.sign_up({"email": email, "password": PASSWORD, "options": {"email_redirect_to": "http://127.0.0.1:5999/confirmed"}})
    assert bare.session is None
    location = click(last_message(dev_server, email)["link"])
    assert location.startswith("http://127.0.0.1:5999/confirmed?code=")
    response = auth.exchange_code_for_session({"auth_code": query_of(location)["code"][0]})
    assert response.user.email_confirmed_at is not None
    assert claims(response.session.access_token)["amr"][0]["method"] == "email/signup"


def test_reset_password_for_email_in_pkce_mode_comes_back_with_a_code(dev_server, email):
    client(dev_server).sign_up({"email": email, "password": PASSWORD})
    auth = pkce_client(dev_server)
    events = []
    auth.on_auth_state_change(lambda event, session: events.append(event))
    auth.reset_password_for_email(email, {"redirect_to": "http://127.0.0.1:5999/reset"})
    message = last_message(dev_server, email)
    assert message["type"] == "recovery"
    assert message["link"].endswith("&type=recovery&redirect_to=http://127.0.0.1:5999/reset")
    location = click(message["link"])
    assert location.startswith("http://127.0.0.1:5999/reset?code=")
    response = auth.exchange_code_for_session({"auth_code": query_of(location)["code"][0]})
    assert response.user.email == email
    # The client remembered that the verifier was for a recovery.
    assert "PASSWORD_RECOVERY" in events
    assert claims(response.session.access_token)["amr"][0]["method"] == "recovery"
    auth.update_user({"password": "python-password-2"})
    assert client(dev_server).sign_in_with_password({"email": email, "password": "python-password-2"}).session
