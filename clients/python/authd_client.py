"""A client for authd, the per-user Supabase session daemon, using only the standard library.

    import authd_client
    client = authd_client.connect()
    token = client.token(min_validity=60)           # token.value is the bearer token
    for event in client.events():                   # INITIAL_SESSION first, then every change
        print(event.name, event.status["state"])

The refresh token never reaches this process: authd refreshes, the app only asks. Calls that
find the connection broken (authd restarted) connect again once by themselves; ``events()``
reconnects until it is closed and delivers a fresh INITIAL_SESSION with ``after_reconnect`` set.
"""
from __future__ import annotations

import dataclasses
import datetime
import json
import os
import socket
import struct
import sys
import threading
import time
import warnings
from typing import Any, Callable, Iterator, Optional

__all__ = [
    "PROTOCOL_VERSION", "connect", "Client", "Token", "Event", "AuthdError", "NotSignedIn", "Offline",
    "AccessDenied", "DaemonUnavailable", "KeyringUnavailable", "UnknownProfile", "TimedOut", "Rejected",
    "SignInRefused", "ProtocolError", "ForeignDaemon", "ProtocolVersionWarning", "socket_path",
]

#: The protocol version this module speaks (``major.minor``).
PROTOCOL_VERSION = "1.0"
_MAX_LINE = 1 << 20


class AuthdError(Exception):
    """Any failure talking to authd. ``str(error)`` says what to do; ``reason`` is authd's code."""

    transient = False
    #: The exit status ``authctl`` uses for the same failure (``sys.exit(error.exit_status)``):
    #: 3 daemon unavailable, 4 not signed in, 6 offline, 7 keyring, else 1.
    exit_status = 1

    def __init__(self, message: str, reason: Optional[str] = None):
        super().__init__(message)
        self.reason = reason


class NotSignedIn(AuthdError):
    """The profile has no session: sign in with ``authctl login``."""
    exit_status = 4


class Offline(AuthdError):
    """The token expired and the server cannot be reached (or fails); authd keeps the session and retries."""
    exit_status = 6
    transient = True


class AccessDenied(AuthdError):
    """authd refused this process: it runs as another user, or the user denied this app the profile."""


class DaemonUnavailable(AuthdError):
    """authd is not running, or the connection broke and could not be made again."""
    exit_status = 3
    transient = True


class KeyringUnavailable(AuthdError):
    """The keyring holding the session is locked or not running."""
    exit_status = 7
    transient = True


class UnknownProfile(AuthdError):
    """authd has no profile by that name."""


class TimedOut(AuthdError):
    """authd did not answer in time."""
    transient = True


class Rejected(AuthdError):
    """authd refused the request for another reason (see ``reason``)."""


class SignInRefused(Rejected):
    """The server refused a sign-in: wrong password or code, a refused ID token, a CAPTCHA token
    missing or refused (``reason`` says which); the message says what to do."""

    exit_status = 5


class MFARequired(Rejected):
    """The request needs a session verified with a second factor (``aal2``): a token asked for with
    ``aal="aal2"``, or a change to a user who has one. Verify one (``verify_factor``, ``authctl mfa
    verify``), then ask again."""

    exit_status = 9


class ProtocolError(AuthdError):
    """authd sent something this module cannot read."""


class ForeignDaemon(AuthdError):
    """The socket is served by a process of another user: not this user's authd, so nothing was sent to it.

    ``uid`` is the user id of the process that serves ``path``, ``expected_uid`` this process's.
    Waiting does not mend it: the socket path (``AUTHD_SOCKET``, ``XDG_RUNTIME_DIR``) is wrong, or
    somebody else created it.
    """

    def __init__(self, path: str, uid: int, expected_uid: int):
        super().__init__(f"{path} is served by a process of uid {uid}, not by you (uid {expected_uid}): it is not your "
                         "authd, so nothing was sent to it. Check AUTHD_SOCKET and XDG_RUNTIME_DIR, and who created that socket")
        self.path = path
        self.uid = uid
        self.expected_uid = expected_uid


class ProtocolVersionWarning(UserWarning):
    """authd speaks another major protocol version than this module."""


_BY_REASON = {
    "not_signed_in": NotSignedIn, "offline": Offline, "server_error": Offline, "rate_limited": Offline,
    "access_denied": AccessDenied, "keyring_unavailable": KeyringUnavailable, "unknown_profile": UnknownProfile,
    "busy": DaemonUnavailable, "app_denied": AccessDenied,
    "invalid_credentials": SignInRefused, "sign_in_rejected": SignInRefused, "captcha_required": SignInRefused,
    "code_rejected": SignInRefused, "id_token_rejected": SignInRefused, "mfa_required": MFARequired,
}
#: Reasons of the last line authd sends on a connection it closes; the call is sent again on a new one.
_CONNECTION_CLOSED = ("idle_timeout", "too_slow")


@dataclasses.dataclass(frozen=True)
class Token:
    """A bearer token and its expiry. Its repr never shows the token."""

    value: str = dataclasses.field(repr=False)
    expires_at: datetime.datetime

    @property
    def authorization(self) -> str:
        """The ``Authorization`` header value: ``Bearer <token>``."""
        return "Bearer " + self.value

    def __str__(self) -> str:
        return f"Token(redacted, expires {self.expires_at.isoformat()})"


@dataclasses.dataclass(frozen=True)
class Event:
    """One auth-state change. Holds no token."""

    name: str
    """``INITIAL_SESSION``, ``SIGNED_IN``, ``SIGNED_OUT``, ``TOKEN_REFRESHED``, ``USER_UPDATED``, … (unknown names pass through)."""
    profile: str
    status: dict
    """The profile's state after the change, as ``authctl status --json`` shows it."""
    reason: Optional[str] = None
    """For SIGNED_OUT, why; for REFRESH_FAILING, the trouble; for INTERACTIVE_SIGN_IN_ENDED, how the
    sign-in page ended (``signed_in``, ``cancelled``, ``expired``, ``failed``)."""
    after_reconnect: bool = False
    """True for the INITIAL_SESSION that follows a reconnect: events may have been missed meanwhile."""
    flow_id: Optional[str] = None
    """For INTERACTIVE_SIGN_IN_ENDED, the page that ended (``begin_interactive_sign_in``'s ``flow_id``)."""
    message: Optional[str] = None
    """For INTERACTIVE_SIGN_IN_ENDED with reason ``failed``, why, in plain words."""


def socket_path(environ=os.environ) -> str:
    """``$AUTHD_SOCKET``, else ``$XDG_RUNTIME_DIR/authd/authd.sock``, else ``/run/user/<uid>/authd/authd.sock``."""
    if environ.get("AUTHD_SOCKET"):
        return environ["AUTHD_SOCKET"]
    runtime = environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"
    return os.path.join(runtime, "authd", "authd.sock")


def _protocol_warning(daemon_version: str) -> Optional[str]:
    try:
        daemon, client = int(daemon_version.split(".")[0]), int(PROTOCOL_VERSION.split(".")[0])
    except ValueError:
        return f"authd reports protocol version {daemon_version!r}, which this client (protocol {PROTOCOL_VERSION}) cannot read; calls may fail"
    if daemon > client:
        return f"authd speaks protocol {daemon_version}, newer than this client's {PROTOCOL_VERSION}: update the client module (calls may fail)"
    if daemon < client:
        return f"authd speaks protocol {daemon_version}, older than this client's {PROTOCOL_VERSION}: update authd (calls may fail)"
    return None


def _check_served_by_us(sock: socket.socket, path: str) -> None:
    """Raises ForeignDaemon unless a process of this user listens on the connected ``sock``.

    Checked before the first byte is written: whoever could put a socket at the path would
    otherwise be asked for tokens and believed. Root is no exception.
    """
    try:
        credentials = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("iII"))
    except OSError as error:
        raise DaemonUnavailable(f"cannot tell who serves {path} (SO_PEERCRED: {error.strerror}), so nothing was sent to it") from None
    _pid, uid, _gid = struct.unpack("iII", credentials)
    expected = os.getuid()
    if uid != expected:
        raise ForeignDaemon(path, uid, expected)


class _Connection:
    """One newline-framed JSON-RPC connection. Not shared between threads."""

    def __init__(self, path: str, client_name: str):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.connect(path)
        except (FileNotFoundError, ConnectionRefusedError, NotADirectoryError):
            self.sock.close()
            raise DaemonUnavailable(
                f"authd is not running (nothing listens on {path}). Start it with "
                "'systemctl --user enable --now authd.socket' (after 'make install'), or run 'authd' in a terminal") from None
        except OSError as error:
            self.sock.close()
            raise DaemonUnavailable(f"cannot talk to authd at {path}: {error.strerror}") from None
        try:
            _check_served_by_us(self.sock, path)
        except BaseException:
            self.sock.close()
            raise
        self.buffer = b""
        self.next_id = 0
        self.pending_events: list = []
        self.hello = self.call("hello", {"client": client_name, "protocol_version": PROTOCOL_VERSION}, timeout=15)
        warning = _protocol_warning(str(self.hello.get("protocol_version", "")))
        if warning:
            warnings.warn(warning, ProtocolVersionWarning, stacklevel=4)

    def _read_line(self, timeout: Optional[float]) -> Optional[bytes]:
        while b"\n" not in self.buffer:
            if len(self.buffer) > _MAX_LINE:
                raise ProtocolError(f"authd sent a line longer than {_MAX_LINE} bytes")
            self.sock.settimeout(timeout)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                raise TimedOut("authd did not answer in time; check 'journalctl --user -u authd'") from None
            except (ConnectionResetError, OSError):
                return None
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

    def call(self, method: str, params: dict, timeout: float = 30) -> Any:
        self.next_id += 1
        request_id = self.next_id
        data = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode() + b"\n"
        try:
            self.sock.sendall(data)
        except OSError:
            # authd may have refused us (another user) and closed before we wrote: its reason
            # is still waiting to be read below.
            pass
        while True:
            line = self._read_line(timeout)
            if line is None:
                raise DaemonUnavailable("authd closed the connection")
            try:
                message = json.loads(line)
            except ValueError:
                raise ProtocolError("authd sent a line that is not JSON") from None
            if not isinstance(message, dict):
                raise ProtocolError("authd sent a line that is not a JSON object")
            if "id" not in message and message.get("method") == "event":
                self.pending_events.append(message.get("params", {}))
                continue
            if message.get("id") not in (request_id, None):
                continue
            error = message.get("error")
            if error is not None:
                reason = (error.get("data") or {}).get("reason")
                if message.get("id") is None and reason in _CONNECTION_CLOSED:
                    # authd closed this connection (idle, or output left unread); like any closed
                    # connection, the client opens a new one and sends the call again.
                    raise DaemonUnavailable(error.get("message", "authd closed the connection"), reason)
                raise _BY_REASON.get(reason, Rejected)(error.get("message", "authd refused the request"), reason)
            if "result" not in message:
                raise ProtocolError("authd's answer has neither result nor error")
            return message["result"]

    def next_event(self) -> Optional[dict]:
        if self.pending_events:
            return self.pending_events.pop(0)
        while True:
            line = self._read_line(None)
            if line is None:
                return None
            try:
                message = json.loads(line)
            except ValueError:
                raise ProtocolError("authd sent a line that is not JSON") from None
            if isinstance(message, dict) and "id" not in message and message.get("method") == "event":
                return message.get("params", {})

    def interrupt(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def close(self) -> None:
        self.sock.close()


class Client:
    """A connection to authd for one profile. Use from one thread at a time (``events()`` iterators may run on others)."""

    #: The first wait before an event stream reconnects, and the longest.
    FIRST_DELAY, LONGEST_DELAY = 0.05, 2.0

    def __init__(self, profile: Optional[str] = None, path: Optional[str] = None, client_name: Optional[str] = None):
        self.profile = profile
        self.path = path or socket_path()
        self.client_name = client_name or os.path.basename(sys.argv[0] or "python")
        self._connection: Optional[_Connection] = None
        self._ensure()
        if profile is not None and profile not in self.daemon.get("profiles", []):
            known = ", ".join(self.daemon.get("profiles", []))
            raise UnknownProfile(f"authd has no profile named {profile!r} (it has: {known}); "
                                 f"add it with 'authctl profile add {profile} --url URL --anon-key KEY'", "unknown_profile")

    @property
    def daemon(self) -> dict:
        """authd's last ``hello``: ``protocol_version``, ``daemon_version``, ``capabilities``, ``profiles``, ``default_profile``."""
        return self._ensure().hello

    def _ensure(self) -> _Connection:
        if self._connection is None:
            self._connection = _Connection(self.path, self.client_name)
        return self._connection

    def _call(self, method: str, params: dict, timeout: float, repeatable: bool = True) -> Any:
        if not repeatable:
            # A call that must not be sent twice goes on a connection opened for it: one idle
            # since its last use may have broken unseen, and a call lost with it could be neither
            # sent again nor told apart from one authd carried out.
            self.close()
        reused = self._connection is not None
        try:
            return self._ensure().call(method, params, timeout)
        except DaemonUnavailable:
            self.close()
            if not reused:
                raise
            return self._ensure().call(method, params, timeout)
        except (TimedOut, ProtocolError):
            self.close()
            raise

    def _params(self, **extra) -> dict:
        params = {key: value for key, value in extra.items() if value is not None}
        if self.profile is not None:
            params["profile"] = self.profile
        return params

    def token(self, min_validity: int = 0, aal: Optional[str] = None) -> Token:
        """A token valid for at least ``min_validity`` seconds (authd refreshes first if needed), from
        a session at assurance level ``aal`` or above when given (``"aal2"``: a second factor verified).

        Raises NotSignedIn, Offline, DaemonUnavailable, KeyringUnavailable, AccessDenied, MFARequired or Rejected.
        """
        # Under a profile that asks, an app not decided yet waits for the user (two minutes by default).
        result = self._call("session.token", self._params(min_validity=min_validity, aal=aal), timeout=300)
        expires = datetime.datetime.fromtimestamp(result["expires_at"], tz=datetime.timezone.utc)
        return Token(result["access_token"], expires)

    def status(self) -> dict:
        """The profile's state (no token): ``state``, ``user``, ``expires_at``, ``server``, …"""
        return self._call("session.status", self._params(), timeout=300)

    # Signing in and the signed-in user. Refusals by the server raise SignInRefused, whose message
    # says what to do (a CAPTCHA-protected project's missing token included).

    def sign_in(self, email: str, password: str, captcha_token: Optional[str] = None) -> dict:
        """Email and password sign-in; ``captcha_token`` for a project with a CAPTCHA. Returns the status."""
        return self._call("session.signInWithPassword", self._params(email=email, password=password, captcha_token=captcha_token), 120)

    def sign_up(self, password: str, email: Optional[str] = None, phone: Optional[str] = None, data: Optional[dict] = None,
                captcha_token: Optional[str] = None) -> dict:
        """Creates an account: ``status``, ``confirmation_sent`` (then ``verify_code``), ``sent_to``."""
        params = self._params(email=email, phone=phone, password=password, data=data, captcha_token=captcha_token)
        return self._call("session.signUp", params, 120)

    def send_code(self, email: Optional[str] = None, phone: Optional[str] = None, purpose: str = "sign_in",
                  create_user: bool = False, captcha_token: Optional[str] = None, redirect_to: Optional[str] = None) -> dict:
        """Has the server send a one-time code (``purpose`` ``sign_in`` or ``recovery``): ``sent_to``, ``channel``.
        With ``redirect_to`` (an email only) the emailed link leads back there and signs in through
        ``complete_browser_flow`` or ``wait_for_browser_flow`` with the answer's ``flow_id``."""
        params = self._params(email=email, phone=phone, purpose=purpose, create_user=create_user, captcha_token=captcha_token,
                              redirect_to=redirect_to)
        return self._call("session.sendCode", params, 120)

    def resend(self, email: Optional[str] = None, phone: Optional[str] = None, type: Optional[str] = None,
               redirect_to: Optional[str] = None, captcha_token: Optional[str] = None) -> dict:
        """Sends a confirmation again (``type`` signup, sms, email_change or phone_change): ``sent_to``, ``channel``."""
        params = self._params(email=email, phone=phone, type=type, redirect_to=redirect_to, captcha_token=captcha_token)
        return self._call("session.resend", params, 120)

    def begin_browser_sign_in(self, provider: str, redirect_to: str, scopes: Optional[str] = None) -> dict:
        """Starts a browser sign-in (PKCE): ``flow_id``, ``url`` to open, ``expires_in``."""
        return self._call("oauth.begin", self._params(provider=provider, redirect_to=redirect_to, scopes=scopes), 120)

    def begin_single_sign_on(self, redirect_to: str, domain: Optional[str] = None, provider_id: Optional[str] = None) -> dict:
        """Starts an enterprise SSO sign-in for an email ``domain`` (or ``provider_id``): ``flow_id``, ``url``, ``expires_in``."""
        return self._call("sso.begin", self._params(domain=domain, provider_id=provider_id, redirect_to=redirect_to), 120)

    def complete_browser_flow(self, callback_url: str, flow_id: Optional[str] = None) -> dict:
        """Hands over the URL the browser (or an emailed link) came back to; returns the status."""
        return self._call("oauth.complete", self._params(flow_id=flow_id, callback_url=callback_url), 120)

    def wait_for_browser_flow(self, flow_id: str) -> dict:
        """Waits until ``authctl open-url`` completes the flow; returns the status."""
        return self._call("oauth.wait", self._params(flow_id=flow_id), 310)

    def identities(self) -> list:
        """The identities linked to the user (``identity_id``, ``provider``, ``email``, …)."""
        return self._call("identities.list", self._params(), 120)["identities"]

    def begin_linking_identity(self, provider: str, redirect_to: str, scopes: Optional[str] = None) -> dict:
        """Starts linking ``provider``'s identity in a browser: ``flow_id``, ``url``, ``expires_in``."""
        return self._call("identities.link", self._params(provider=provider, redirect_to=redirect_to, scopes=scopes), 120)

    def unlink_identity(self, identity_id: str) -> dict:
        """Unlinks an identity (not the last one)."""
        return self._call("identities.unlink", self._params(identity_id=identity_id), 120)

    def verify_code(self, code: str, email: Optional[str] = None, phone: Optional[str] = None, type: Optional[str] = None) -> dict:
        """Signs in with a code that was sent; returns the status."""
        return self._call("session.verifyCode", self._params(email=email, phone=phone, code=code, type=type), 120)

    def sign_in_with_id_token(self, provider: str, id_token: str, access_token: Optional[str] = None,
                              nonce: Optional[str] = None) -> dict:
        """Signs in with an ID token from Apple or Google (``nonce`` is the raw one); returns the status."""
        params = self._params(provider=provider, id_token=id_token, access_token=access_token, nonce=nonce)
        return self._call("session.signInWithIdToken", params, 120)

    def sign_in_anonymously(self, data: Optional[dict] = None, captcha_token: Optional[str] = None) -> dict:
        """Signs in as a new anonymous user (the project must allow it); returns the status. Keep
        the user by giving it an email with ``update_user(email=...)``."""
        return self._call("session.signInAnonymously", self._params(data=data, captcha_token=captcha_token), 120)

    def sign_in_with_refresh_token(self, refresh_token: str) -> dict:
        """Moves a session this app kept into authd, which exchanges the refresh token, refreshes
        the session once more at once and from then on; returns the status (``degraded`` set when
        that second refresh is still to be retried). Stop refreshing before, and delete the app's
        copy of the tokens afterwards whatever the outcome: presenting it again makes the server
        end the whole session, authd's included. The call is never sent twice: on DaemonUnavailable
        or TimedOut authd may have taken the session over all the same, so read ``status()``
        before trying again, and try only if it does not show the app's user."""
        return self._call("session.signInWithRefreshToken", self._params(refresh_token=refresh_token), 120, repeatable=False)

    def sign_out(self, scope: str = "local") -> dict:
        """Signs out: ``local``, ``global`` or ``others``."""
        return self._call("session.signOut", self._params(scope=scope), 120)

    def user(self) -> dict:
        """The signed-in user as the server describes it."""
        return self._call("user.get", self._params(), 120)["user"]

    def update_user(self, email: Optional[str] = None, phone: Optional[str] = None, password: Optional[str] = None,
                    data: Optional[dict] = None, nonce: Optional[str] = None) -> dict:
        """Changes the signed-in user; ``nonce`` is the code ``reauthenticate`` sent, when the project asks
        for one (Rejected with reason ``reauthentication_needed``)."""
        params = self._params(email=email, phone=phone, password=password, data=data, nonce=nonce)
        return self._call("user.update", params, 120)["user"]

    def reauthenticate(self) -> dict:
        """Has the server send the code a password change needs: ``sent_to``, ``channel``."""
        return self._call("user.reauthenticate", self._params(), 120)

    def claims(self) -> dict:
        """The access token's ``claims`` and whether authd ``verified`` them with the project's keys (never the token)."""
        return self._call("session.claims", self._params(), 120)

    # Second factors. A wrong code raises SignInRefused; a change that needs aal2 raises MFARequired.

    def list_factors(self) -> dict:
        """The account's ``factors`` and the session's ``aal`` and ``next_aal``."""
        return self._call("mfa.factors", self._params(), 120)

    def enroll_factor(self, factor_type: str = "totp", friendly_name: Optional[str] = None, issuer: Optional[str] = None,
                      phone: Optional[str] = None) -> dict:
        """Enrolls a factor (``totp``, or ``phone`` with ``phone``): ``factor_id``, and for TOTP the ``totp``
        ``secret`` and ``uri``, shown this once. It raises nothing until ``verify_factor``."""
        params = self._params(factor_type=factor_type, friendly_name=friendly_name, issuer=issuer, phone=phone)
        return self._call("mfa.enroll", params, 120)

    def challenge_factor(self, factor_id: str, channel: Optional[str] = None) -> dict:
        """Starts a verification (a phone factor's code is sent now): ``challenge_id``, ``expires_at``."""
        return self._call("mfa.challenge", self._params(factor_id=factor_id, channel=channel), 120)

    def verify_factor(self, factor_id: str, code: str, challenge_id: Optional[str] = None) -> dict:
        """Verifies a code, raising the session to aal2 (MFA_CHALLENGE_VERIFIED); returns the status.
        A TOTP code needs no ``challenge_id``; a phone's belongs to the challenge that sent it."""
        return self._call("mfa.verify", self._params(factor_id=factor_id, code=code, challenge_id=challenge_id), 120)

    def unenroll_factor(self, factor_id: str) -> dict:
        """Removes a factor (a verified one only from an aal2 session)."""
        return self._call("mfa.unenroll", self._params(factor_id=factor_id), 120)

    # authd's own sign-in page, for an app without sign-in forms of its own: authd serves it on
    # 127.0.0.1 and opens it in the user's browser; it offers every way the project allows, and a
    # second factor when the account has one. How a page ends that did not sign in is a Rejected
    # whose ``reason`` says how: ``sign_in_cancelled``, ``sign_in_failed`` or ``flow_expired``.

    def sign_in_interactively(self, method: Optional[str] = None, email: Optional[str] = None, aal: Optional[str] = None,
                              open_browser: bool = True, opened: Optional[Callable[[dict], Any]] = None) -> dict:
        """Opens the sign-in page in the user's browser and waits until the user has signed in there;
        returns the status then (``SIGNED_IN`` comes on the event stream too). Up to ten minutes.

        ``method`` is the form shown first (``password``, ``email_code``, ``phone_code``, ``sign_up``,
        ``forgot_password``, ``sso``), ``email`` fills in the address, ``aal="aal2"`` has the page
        offer a second factor to an account that has none. ``opened(page)`` gets
        ``begin_interactive_sign_in``'s answer before the wait: when ``page["browser_opened"]`` is
        false (``open_browser=False``, or authd could not start a browser) it must hand
        ``page["url"]`` to the user's browser, or show it ("if your browser did not open, visit …");
        the address opens the page once and is for nobody else (never log it). Without ``opened``,
        a page authd could not open is cancelled and Rejected (``sign_in_failed``) is raised.

        Any exception while waiting (KeyboardInterrupt included, or one ``opened`` raised) cancels
        the page before it propagates, so that no page stays open for nobody. Only opening the page
        uses the client's connection: another thread may use the client during the wait, and
        give up by cancelling the page (``cancel_interactive_sign_in``).
        Raises Rejected (``sign_in_cancelled``, ``sign_in_failed``, ``flow_expired``), TimedOut,
        DaemonUnavailable, AccessDenied.
        """
        if not open_browser and opened is None:
            raise ValueError("sign_in_interactively(open_browser=False) needs opened= to hand the page's address to the user's browser")
        page = self.begin_interactive_sign_in(method=method, email=email, aal=aal, open_browser=open_browser)
        try:
            if opened is not None:
                opened(page)
            elif not page.get("browser_opened"):
                raise Rejected("authd could not start a browser on its sign-in page (no display or $BROWSER in its environment, "
                               "or the browser did not start), and nothing was given to show the page's address: pass opened=, "
                               "or sign in with 'authctl login --email ADDRESS'", "sign_in_failed")
            # A little longer than the page lives, for authd to say that it expired.
            return self._wait_for_page(page["flow_id"], page.get("expires_in", 600) + 30)
        except BaseException:
            # Given up on (interrupted, or authd gone): the page must not stay open for nobody. A
            # page that ended already answers cancelled: false. On a connection of its own, as the
            # wait was: another thread may be using the request connection meanwhile.
            connection = None
            try:
                connection = _Connection(self.path, self.client_name)
                connection.call("session.cancelInteractiveSignIn", self._params(flow_id=page["flow_id"]), 15)
            except AuthdError:
                pass
            finally:
                if connection is not None:
                    connection.close()
            raise

    def begin_interactive_sign_in(self, method: Optional[str] = None, email: Optional[str] = None, aal: Optional[str] = None,
                                  open_browser: bool = True) -> dict:
        """Opens a sign-in page (see ``sign_in_interactively``): ``flow_id`` (not a secret), ``url``
        (opens the page once: hand it only to the user's browser), ``expires_in`` (seconds) and
        ``browser_opened`` (whether authd started the browser; never with ``open_browser=False``).
        Wait for it with ``wait_for_interactive_sign_in``, close it with ``cancel_interactive_sign_in``."""
        params = self._params(method=method, email=email, open_browser=open_browser, aal=aal)
        return self._call("session.beginInteractiveSignIn", params, 120)

    def wait_for_interactive_sign_in(self, flow_id: str) -> dict:
        """Waits until page ``flow_id``'s sign-in ends (up to its ten minutes): the status once signed
        in, else Rejected (``sign_in_cancelled``, ``sign_in_failed``, ``flow_expired``); at once when
        it has ended already. The wait has a connection of its own, so that another thread may use
        this client meanwhile (for tokens, or to cancel the page)."""
        return self._wait_for_page(flow_id, 630)

    def cancel_interactive_sign_in(self, flow_id: str) -> bool:
        """Closes page ``flow_id``, as its Cancel button does (its waiter gets ``sign_in_cancelled``);
        False when it had ended already, or when another app opened it (only the app that opened a
        page may close it). A session it signed in stays."""
        return bool(self._call("session.cancelInteractiveSignIn", self._params(flow_id=flow_id), 120)["cancelled"])

    def _wait_for_page(self, flow_id: str, timeout: float) -> dict:
        # Not on the request connection, which the wait would hold for minutes: on one of its own,
        # which nothing else of the client touches, so that another thread may use the client.
        connection = None
        try:
            connection = _Connection(self.path, self.client_name)
            return connection.call("session.waitForInteractiveSignIn", self._params(flow_id=flow_id), timeout)
        finally:
            if connection is not None:
                connection.close()

    def events(self) -> Iterator[Event]:
        """The profile's events, INITIAL_SESSION first, until the generator is closed.

        Reconnects when authd goes away (50 ms doubling to 2 s) and subscribes again; raises only
        for what waiting will not mend (unknown profile, access denied, a socket served by another
        user, no authd at the start).
        """
        return _EventStream(self)

    def close(self) -> None:
        """Closes the request connection; the next call opens a new one."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _EventStream:
    """The iterator behind ``Client.events()``; ``close()`` (or leaving a ``with``) ends it from any thread."""

    def __init__(self, client: Client):
        self._client = client
        self._lock = threading.Lock()
        self._connection: Optional[_Connection] = None
        self._closed = False
        self._generator = self._run()

    def __iter__(self) -> "_EventStream":
        return self

    def __next__(self) -> Event:
        return next(self._generator)

    def __enter__(self) -> "_EventStream":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._connection is not None:
                self._connection.interrupt()

    def _run(self) -> Iterator[Event]:
        client, subscribed_once, delay = self._client, False, Client.FIRST_DELAY
        while not self._closed:
            connection = None
            try:
                connection = _Connection(client.path, client.client_name)
                with self._lock:
                    if self._closed:
                        break
                    self._connection = connection
                connection.call("events.subscribe", client._params(), timeout=15)
                reconnected, first, delay = subscribed_once, True, Client.FIRST_DELAY
                subscribed_once = True
                while True:
                    params = connection.next_event()
                    if params is None:
                        break
                    yield Event(name=params.get("event", ""), profile=params.get("profile", ""), status=params.get("status", {}),
                                reason=params.get("reason"), after_reconnect=reconnected and first,
                                flow_id=params.get("flow_id"), message=params.get("message"))
                    first = False
            except (DaemonUnavailable, TimedOut):
                if not subscribed_once and not self._closed:
                    raise
            finally:
                with self._lock:
                    self._connection = None
                if connection is not None:
                    connection.close()
            if self._closed:
                break
            time.sleep(delay)
            delay = min(delay * 2, Client.LONGEST_DELAY)


def connect(profile: Optional[str] = None, socket_path: Optional[str] = None, client_name: Optional[str] = None) -> Client:
    """Connects to authd (``$AUTHD_SOCKET`` or the runtime directory's socket) and checks the profile exists.

    Every connection first checks that a process of this user serves the socket (``SO_PEERCRED``),
    and raises ForeignDaemon without sending anything when not.

    ``client_name`` is shown in authd's logs only; authd identifies clients by what the kernel says.
    """
    return Client(profile, socket_path, client_name)
