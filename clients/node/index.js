'use strict';
/**
 * A client for authd, the per-user Supabase session daemon, for Node and Electron, with no
 * dependencies beyond Node itself.
 *
 *     const authd = require('authd-client');            // or: import * as authd from 'authd-client'
 *     const client = await authd.connect();
 *     const token = await client.token({ minValidity: 60 }); // token.value is the bearer token
 *     for await (const event of client.events()) {        // INITIAL_SESSION first, then every change
 *       console.log(event.name, event.status.state);
 *     }
 *
 * The refresh token never reaches this process: authd refreshes, the app only asks. A call that
 * finds the connection broken (authd restarted, or it closed an idle connection) connects again
 * once by itself; `events()` reconnects until it is closed and delivers a fresh INITIAL_SESSION
 * with `afterReconnect` set. The request connection does not keep Node running while no call is
 * waiting, so a script ends without `close()`.
 */
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const util = require('node:util');

/** The protocol version this module speaks (`major.minor`). */
const PROTOCOL_VERSION = '1.0';
const MAX_LINE = 1 << 20;
/** The first wait before an event stream reconnects, and the longest (milliseconds). */
const FIRST_DELAY_MS = 50;
/** Events kept for an app that is not reading them before the connection stops reading, and how
 * few must be left before it reads again. */
const EVENTS_PAUSED_AT = 1000;
const EVENTS_RESUMED_AT = 100;
const LONGEST_DELAY_MS = 2000;

/** Any failure talking to authd. `message` says what to do; `reason` is authd's stable code. */
class AuthdError extends Error {
  constructor(message, reason = null) {
    super(message);
    this.name = new.target.name;
    /** authd's reason code (`not_signed_in`, `offline`, …), or null. */
    this.reason = reason;
    /** True when waiting may help. */
    this.transient = new.target.transient === true;
    /** The exit status `authctl` uses for this error: 3 daemon unavailable, 4 not signed in,
     * 6 offline, 7 keyring, else 1. */
    this.exitStatus = new.target.exitStatus ?? 1;
  }
}

/** The profile has no session: sign in with `authctl login`. */
class NotSignedIn extends AuthdError { static exitStatus = 4; }

/** The token expired and the server cannot be reached (or fails); authd keeps the session and retries. */
class Offline extends AuthdError { static transient = true; static exitStatus = 6; }

/** authd refused this process: it runs as another user, or the user denied this app the profile. */
class AccessDenied extends AuthdError {}

/** authd is not running, or the connection broke and could not be made again. */
class DaemonUnavailable extends AuthdError { static transient = true; static exitStatus = 3; }

/** The keyring holding the session is locked or not running. */
class KeyringUnavailable extends AuthdError { static transient = true; static exitStatus = 7; }

/** authd has no profile by that name. */
class UnknownProfile extends AuthdError {}

/** authd did not answer in time. */
class TimedOut extends AuthdError { static transient = true; }

/** authd refused the request for another reason (see `reason`). */
class Rejected extends AuthdError {}

/** authd sent something this module cannot read. */
class ProtocolError extends AuthdError {}

/**
 * The socket belongs to another user: not this user's authd, so nothing was sent to it. `uid` owns
 * `path` (or its directory), `expectedUid` is this process's. Waiting does not mend it: the socket
 * path (`AUTHD_SOCKET`, `XDG_RUNTIME_DIR`) is wrong, or somebody else created it.
 */
class ForeignDaemon extends AuthdError {
  constructor(socketPath, uid, expectedUid, what = socketPath) {
    super(`${what} belongs to uid ${uid}, not to you (uid ${expectedUid}): it is not your authd, so nothing was sent ` +
      'to it. Check AUTHD_SOCKET and XDG_RUNTIME_DIR, and who created that socket');
    this.path = socketPath;
    this.uid = uid;
    this.expectedUid = expectedUid;
  }
}

const BY_REASON = {
  not_signed_in: NotSignedIn, offline: Offline, server_error: Offline, rate_limited: Offline,
  access_denied: AccessDenied, keyring_unavailable: KeyringUnavailable, unknown_profile: UnknownProfile,
  busy: DaemonUnavailable, app_denied: AccessDenied,
};
/** Reasons of the last line authd sends on a connection it closes; the call is sent again on a new one. */
const CONNECTION_CLOSED = new Set(['idle_timeout', 'too_slow']);

/** A bearer token and its expiry. Printing, inspecting or serialising it never shows the token. */
class Token {
  #value;
  constructor(value, expiresAt) {
    this.#value = value;
    /** When the token expires (a `Date`). */
    this.expiresAt = expiresAt;
    Object.freeze(this);
  }

  /** The JWT to send as the bearer token. */
  get value() { return this.#value; }

  /** The `Authorization` header value: `Bearer <token>`. */
  get authorization() { return 'Bearer ' + this.#value; }

  toString() { return `Token(redacted, expires ${this.expiresAt.toISOString()})`; }

  toJSON() { return { redacted: true, expiresAt: this.expiresAt.toISOString() }; }

  [util.inspect.custom]() { return this.toString(); }
}

/** One auth-state change. Holds no token. */
class AuthEvent {
  constructor(params, afterReconnect) {
    /** `INITIAL_SESSION`, `SIGNED_IN`, `SIGNED_OUT`, `TOKEN_REFRESHED`, `USER_UPDATED`, … (unknown names pass through). */
    this.name = typeof params.event === 'string' ? params.event : '';
    this.profile = typeof params.profile === 'string' ? params.profile : '';
    /** The profile's state after the change, as `authctl status --json` shows it. */
    this.status = params.status && typeof params.status === 'object' ? params.status : {};
    /** For SIGNED_OUT, why; for REFRESH_FAILING, the trouble; for INTERACTIVE_SIGN_IN_ENDED, how the
     * page ended (`signed_in`, `cancelled`, `expired`, `failed`); else null. */
    this.reason = typeof params.reason === 'string' ? params.reason : null;
    /** True for the INITIAL_SESSION that follows a reconnect: events may have been missed meanwhile. */
    this.afterReconnect = afterReconnect;
    /** For INTERACTIVE_SIGN_IN_ENDED, the page that ended (`SignInPage.flowId`); else null. */
    this.flowId = typeof params.flow_id === 'string' ? params.flow_id : null;
    /** For INTERACTIVE_SIGN_IN_ENDED that failed, why in plain words; else null. */
    this.message = typeof params.message === 'string' ? params.message : null;
    Object.freeze(this);
  }
}

/**
 * One of authd's sign-in pages, as `beginInteractiveSignIn` answered. Printing, inspecting or
 * serialising it never shows its address: the address opens the page, once, and is for the
 * user's browser only.
 */
class SignInPage {
  #url;
  constructor(result) {
    /** Names the page for the wait and the cancel, and in its INTERACTIVE_SIGN_IN_ENDED event. Not a secret. */
    this.flowId = result.flow_id;
    this.#url = result.url;
    /** Seconds the page stays open unless it ends first. */
    this.expiresIn = result.expires_in;
    /** Whether authd started the user's browser on `url`: false when asked not to, or when it could
     * not (no display, no `$BROWSER`); then open or show `url` yourself. */
    this.browserOpened = result.browser_opened === true;
    Object.freeze(this);
  }

  /** The address that opens the page, good once, in one browser: hand it to nobody but the user's browser. */
  get url() { return this.#url; }

  toString() { return `SignInPage(${this.flowId}, address redacted, browser ${this.browserOpened ? 'opened' : 'not opened'})`; }

  toJSON() { return { flowId: this.flowId, url: 'redacted', expiresIn: this.expiresIn, browserOpened: this.browserOpened }; }

  [util.inspect.custom]() { return this.toString(); }
}

/** `$AUTHD_SOCKET`, else `$XDG_RUNTIME_DIR/authd/authd.sock`, else `/run/user/<uid>/authd/authd.sock`. */
function socketPath(env = process.env) {
  if (env.AUTHD_SOCKET) return env.AUTHD_SOCKET;
  const runtime = env.XDG_RUNTIME_DIR || `/run/user/${process.getuid()}`;
  return path.join(runtime, 'authd', 'authd.sock');
}

const warned = new Set();

/** Warns once per process (not per connection) when authd speaks another major version. */
function warnAboutProtocol(daemonVersion) {
  const daemon = Number.parseInt(String(daemonVersion).split('.')[0], 10);
  const client = Number.parseInt(PROTOCOL_VERSION.split('.')[0], 10);
  let message = null;
  if (!/^\d+(\.\d+)*$/.test(String(daemonVersion))) {
    message = `authd reports protocol version ${JSON.stringify(daemonVersion)}, which this client (protocol ${PROTOCOL_VERSION}) cannot read; calls may fail`;
  } else if (daemon > client) {
    message = `authd speaks protocol ${daemonVersion}, newer than this client's ${PROTOCOL_VERSION}: update the client module (calls may fail)`;
  } else if (daemon < client) {
    message = `authd speaks protocol ${daemonVersion}, older than this client's ${PROTOCOL_VERSION}: update authd (calls may fail)`;
  }
  if (message === null || warned.has(message)) return;
  warned.add(message);
  process.emitWarning(message, { type: 'ProtocolVersionWarning', code: 'AUTHD_PROTOCOL_VERSION' });
}

/**
 * Throws ForeignDaemon unless the socket and its directory belong to this user and the directory
 * is closed to others. Node cannot read a Unix socket's peer credentials (SO_PEERCRED), so this
 * checks, before connecting, who could have made the socket: a file in a directory that only this
 * user may write was bound by this user (or by root). Checked before the first byte is written:
 * whoever could put a socket at the path would otherwise be asked for tokens and believed.
 */
function checkOwnedByUs(socketFile) {
  const expected = process.getuid();
  let socketStat;
  try {
    socketStat = fs.lstatSync(socketFile);
  } catch (error) {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') throw notRunning(socketFile);
    throw new DaemonUnavailable(`cannot inspect ${socketFile} (${error.code}), so nothing was sent to it`);
  }
  if (!socketStat.isSocket()) {
    throw new DaemonUnavailable(`${socketFile} is not a socket, so nothing was sent to it; check AUTHD_SOCKET`);
  }
  if (socketStat.uid !== expected) throw new ForeignDaemon(socketFile, socketStat.uid, expected);
  const directory = path.dirname(socketFile);
  let directoryStat;
  try {
    directoryStat = fs.statSync(directory);
  } catch (error) {
    throw new DaemonUnavailable(`cannot inspect ${directory} (${error.code}), so nothing was sent to the socket in it`);
  }
  if (directoryStat.uid !== expected) throw new ForeignDaemon(socketFile, directoryStat.uid, expected, directory);
  if ((directoryStat.mode & 0o022) !== 0) {
    throw new AccessDenied(`${directory} is writable by other users (mode ${(directoryStat.mode & 0o777).toString(8)}), so ` +
      `another user could replace the socket; nothing was sent to it. Keep the socket in a private directory`, 'access_denied');
  }
}

function notRunning(socketFile) {
  return new DaemonUnavailable(`authd is not running (nothing listens on ${socketFile}). Start it with ` +
    "'systemctl --user enable --now authd.socket' (after 'make install'), or run 'authd' in a terminal");
}

/** One newline-framed JSON-RPC connection: calls matched to answers by id, events queued. */
class Connection {
  constructor(socket, socketFile) {
    this.socket = socket;
    this.path = socketFile;
    this.buffered = [];
    this.bufferedLength = 0;
    this.nextId = 0;
    this.pending = new Map();
    this.events = [];
    this.eventWaiter = null;
    this.closedWith = null;
    this.keepsAlive = true;
    this.hello = null;
    socket.on('data', (chunk) => this.#received(chunk));
    socket.on('error', () => {});
    socket.on('close', () => this.#closed(new DaemonUnavailable('authd closed the connection')));
  }

  /** Connects, checks who owns the socket, and says hello. */
  static async open(socketFile, clientName, { keepsAlive }) {
    checkOwnedByUs(socketFile);
    const socket = await new Promise((resolve, reject) => {
      const attempt = net.createConnection({ path: socketFile });
      attempt.once('connect', () => { attempt.removeAllListeners('error'); resolve(attempt); });
      attempt.once('error', (error) => {
        attempt.destroy();
        if (['ENOENT', 'ECONNREFUSED', 'ENOTDIR'].includes(error.code)) reject(notRunning(socketFile));
        else reject(new DaemonUnavailable(`cannot talk to authd at ${socketFile}: ${error.code || error.message}`));
      });
    });
    const connection = new Connection(socket, socketFile);
    connection.keepsAlive = keepsAlive;
    connection.#holdProcess();
    try {
      connection.hello = await connection.call('hello', { client: clientName, protocol_version: PROTOCOL_VERSION }, 15000);
      if (connection.hello === null || typeof connection.hello !== 'object' || Array.isArray(connection.hello)) {
        throw new ProtocolError("authd's answer to hello is not an object");
      }
    } catch (error) {
      connection.close(error);
      throw error;
    }
    warnAboutProtocol(connection.hello.protocol_version);
    return connection;
  }

  /** Sends one call and waits for its answer (or throws the typed error it carries). */
  call(method, params, timeoutMs) {
    if (this.closedWith) return Promise.reject(this.closedWith);
    this.nextId += 1;
    const id = this.nextId;
    const line = JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n';
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.close(new TimedOut("authd did not answer in time; check 'journalctl --user -u authd'"));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.#holdProcess();
      // A write to a connection authd already refused fails; its reason is still read below.
      this.socket.write(line, () => {});
    });
  }

  /** The next event's params, or null once the connection is closed. */
  nextEvent() {
    if (this.events.length > 0) {
      // Reading again once the app caught up (see #handle).
      if (this.events.length <= EVENTS_RESUMED_AT && this.socket.isPaused()) this.socket.resume();
      return Promise.resolve(this.events.shift());
    }
    if (this.closedWith) return Promise.resolve(null);
    return new Promise((resolve) => { this.eventWaiter = resolve; });
  }

  /** Closes the connection; waiting calls fail with `error`. */
  close(error = new DaemonUnavailable('the connection to authd was closed')) {
    this.#closed(error);
    this.socket.destroy();
  }

  /** Keeps Node running only while a call waits (or always, for an event stream). */
  #holdProcess() {
    if (this.keepsAlive || this.pending.size > 0) this.socket.ref();
    else this.socket.unref();
  }

  #received(chunk) {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      this.buffered.push(chunk.subarray(start, newline));
      const line = Buffer.concat(this.buffered);
      this.buffered = [];
      this.bufferedLength = 0;
      start = newline + 1;
      if (line.length > MAX_LINE) {
        this.close(new ProtocolError(`authd sent a line longer than ${MAX_LINE} bytes`));
        return;
      }
      this.#handle(line);
      if (this.closedWith) return;
    }
    if (start < chunk.length) {
      this.buffered.push(chunk.subarray(start));
      this.bufferedLength += chunk.length - start;
      if (this.bufferedLength > MAX_LINE) this.close(new ProtocolError(`authd sent a line longer than ${MAX_LINE} bytes`));
    }
  }

  #handle(line) {
    let message;
    try {
      message = JSON.parse(line.toString('utf8'));
    } catch {
      this.close(new ProtocolError('authd sent a line that is not JSON'));
      return;
    }
    if (message === null || typeof message !== 'object' || Array.isArray(message)) {
      this.close(new ProtocolError('authd sent a line that is not a JSON object'));
      return;
    }
    if (!('id' in message) && message.method === 'event') {
      const params = message.params && typeof message.params === 'object' ? message.params : {};
      if (this.eventWaiter) {
        const waiter = this.eventWaiter;
        this.eventWaiter = null;
        waiter(params);
      } else {
        this.events.push(params);
        // An app that stopped reading its events: stop reading too, so that authd, not this
        // process, notices (it closes a connection whose output is left unread, and the stream
        // then reconnects with a fresh INITIAL_SESSION).
        if (this.events.length >= EVENTS_PAUSED_AT) this.socket.pause();
      }
      return;
    }
    const error = message.error;
    if (message.id === null || message.id === undefined) {
      if (error && typeof error === 'object') {
        const reason = error.data && typeof error.data === 'object' ? error.data.reason : undefined;
        const text = typeof error.message === 'string' ? error.message : 'authd closed the connection';
        // authd closes this connection (idle, output left unread, or it refused us): every call
        // waiting on it gets the reason; a closed one is opened again by the next call.
        if (CONNECTION_CLOSED.has(reason)) this.close(new DaemonUnavailable(text, reason));
        else this.close(new (BY_REASON[reason] || Rejected)(text, reason || null));
      }
      return;
    }
    const waiting = this.pending.get(message.id);
    if (!waiting) return;
    this.pending.delete(message.id);
    clearTimeout(waiting.timer);
    this.#holdProcess();
    if (error !== undefined && error !== null) {
      const reason = error.data && typeof error.data === 'object' ? error.data.reason : undefined;
      const text = typeof error.message === 'string' ? error.message : 'authd refused the request';
      waiting.reject(new (BY_REASON[reason] || Rejected)(text, reason || null));
    } else if (!('result' in message)) {
      waiting.reject(new ProtocolError("authd's answer has neither result nor error"));
    } else {
      waiting.resolve(message.result);
    }
  }

  #closed(error) {
    if (this.closedWith) return;
    this.closedWith = error;
    for (const waiting of this.pending.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(error);
    }
    this.pending.clear();
    if (this.eventWaiter) {
      const waiter = this.eventWaiter;
      this.eventWaiter = null;
      waiter(null);
    }
  }
}

/** The name a client gives authd when it was given none: the script's, else node's. */
function defaultClientName() {
  return path.basename(process.argv[1] || process.argv0 || 'node');
}

/**
 * A connection to authd for one profile. Calls may overlap; answers are matched by id. Made
 * without arguments it asks about the default profile at `socketPath()`, as `connect()` does;
 * unlike `connect()`, it connects only at the first call.
 */
class Client {
  constructor(profile = null, socketFile = null, clientName = null) {
    /** The profile this client asks about; null for authd's default profile. */
    this.profile = profile ?? null;
    /** The socket this client connects to: `socketPath()` unless one was given. */
    this.path = socketFile || socketPath();
    /** Shown in authd's logs only; authd identifies clients by what the kernel says. */
    this.clientName = clientName || defaultClientName();
    this.connection = null;
    this.connecting = null;
    this.lastHello = null;
  }

  /** authd's last `hello`: `protocol_version`, `daemon_version`, `capabilities`, `profiles`, `default_profile`. */
  get daemon() { return this.connection ? this.connection.hello : this.lastHello; }

  /** A token valid for at least `minValidity` seconds (authd refreshes first, at most once, if needed). */
  async token({ minValidity = 0 } = {}) {
    // Under a profile that asks, an app not decided yet waits for the user (two minutes by default).
    const result = await this.#call('session.token', this.#params({ min_validity: minValidity }), 300000);
    if (result === null || typeof result !== 'object' || typeof result.access_token !== 'string'
      || typeof result.expires_at !== 'number') {
      throw new ProtocolError("authd's token answer lacks access_token or expires_at");
    }
    return new Token(result.access_token, new Date(result.expires_at * 1000));
  }

  /** The profile's state (no token): `state`, `user`, `expires_at`, `server`, … */
  async status() {
    return this.#call('session.status', this.#params({}), 300000);
  }

  /**
   * Opens authd's sign-in page in the user's browser and waits until the user has signed in there:
   * the status then (`SIGNED_IN` comes on the event stream too). For an app without sign-in forms
   * of its own: the page offers every way the project allows, and a second factor when the
   * account has one. `method` is the form shown first (`password`, `email_code`, `phone_code`,
   * `sign_up`, `forgot_password`, `sso`), `email` fills in the address, `aal: 'aal2'` has the page
   * offer a second factor to an account that has none. `onOpened(page)` (may return a promise)
   * gets the `SignInPage` before the wait: when `page.browserOpened` is false (`openBrowser:
   * false`, or authd could not start a browser) it must hand `page.url` to the user's browser, or
   * show it ("if your browser did not open, visit …"). Without `onOpened`, a page authd could not
   * open is closed and the call fails (`Rejected`, `sign_in_failed`).
   *
   * Aborting `signal` closes the page and rejects with `signal.reason`; so does anything else that
   * ends the wait early (`onOpened` throwing, authd gone), so that no page stays open for nobody.
   * A page that ends without signing in rejects with `Rejected`, `reason` `sign_in_cancelled`,
   * `sign_in_failed` or `flow_expired`.
   */
  async signInInteractively({ method, email, aal, openBrowser = true, onOpened, signal } = {}) {
    if (!openBrowser && typeof onOpened !== 'function') {
      throw new TypeError("signInInteractively({ openBrowser: false }) needs onOpened to hand the page's address to the user's browser");
    }
    signal?.throwIfAborted();
    const page = await this.beginInteractiveSignIn({ method, email, aal, openBrowser });
    try {
      if (onOpened) await onOpened(page);
      else if (!page.browserOpened) {
        throw new Rejected('authd could not start a browser on its sign-in page (no display or $BROWSER in its environment, ' +
          "or the browser did not start), and nothing was given to show the page's address: pass onOpened, or sign in with " +
          "'authctl login --email ADDRESS'", 'sign_in_failed');
      }
      // A little longer than the page lives, for authd to say that it expired.
      return await this.#waitForPage(page.flowId, (page.expiresIn + 30) * 1000, signal);
    } catch (error) {
      // Given up on (aborted, authd gone) or ended: the page must not stay open for nobody. A page
      // that ended already answers cancelled: false.
      await this.#call('session.cancelInteractiveSignIn', this.#params({ flow_id: page.flowId }), 15000).catch(() => {});
      throw error;
    }
  }

  /**
   * Opens a sign-in page (see `signInInteractively`) and returns it as a `SignInPage`. With
   * `openBrowser: false` authd does not start the browser: open `page.url` yourself (through a
   * portal, say). Wait for it with `waitForInteractiveSignIn`, close it with `cancelInteractiveSignIn`.
   */
  async beginInteractiveSignIn({ method, email, aal, openBrowser = true } = {}) {
    const params = this.#params({ method, email, open_browser: openBrowser, aal });
    const result = await this.#call('session.beginInteractiveSignIn', params, 120000);
    if (result === null || typeof result !== 'object' || typeof result.flow_id !== 'string' || typeof result.url !== 'string'
      || typeof result.expires_in !== 'number' || typeof result.browser_opened !== 'boolean') {
      throw new ProtocolError("authd's sign-in page answer lacks flow_id, url, expires_in or browser_opened");
    }
    return new SignInPage(result);
  }

  /**
   * Waits until page `flowId`'s sign-in ends (up to its ten minutes): the status once signed in, at
   * once when it has ended already; else `Rejected` (`sign_in_cancelled`, `sign_in_failed`,
   * `flow_expired`). Aborting `signal` ends the wait (not the page) with `signal.reason`.
   */
  async waitForInteractiveSignIn(flowId, { signal } = {}) {
    return this.#waitForPage(flowId, 630000, signal);
  }

  /** Closes page `flowId`, as its Cancel button does (its wait rejects with `sign_in_cancelled`);
   * false when it had ended already, or when another app opened it (only the app that opened a
   * page may close it). A session it signed in stays. */
  async cancelInteractiveSignIn(flowId) {
    const result = await this.#call('session.cancelInteractiveSignIn', this.#params({ flow_id: flowId }), 120000);
    return result !== null && typeof result === 'object' && result.cancelled === true;
  }

  /**
   * The profile's events, INITIAL_SESSION first, as an async iterator that runs until it is
   * closed (`close()`, or leaving a `for await`). Reconnects when authd goes away (50 ms doubling
   * to 2 s) and subscribes again; throws only for what waiting will not mend (unknown profile,
   * access denied, a socket of another user, no authd at the start).
   */
  events() { return new EventStream(this); }

  /** Closes the request connection; the next call opens a new one. */
  close() {
    if (this.connection) this.connection.close();
    this.connection = null;
  }

  /** The request connection, opened (and said hello on) when there is none. */
  async ensure() {
    if (this.connection && !this.connection.closedWith) return this.connection;
    if (!this.connecting) {
      this.connecting = Connection.open(this.path, this.clientName, { keepsAlive: false }).then((connection) => {
        this.connection = connection;
        this.lastHello = connection.hello;
        return connection;
      }).finally(() => { this.connecting = null; });
    }
    return this.connecting;
  }

  async #call(method, params, timeoutMs) {
    const reused = this.connection !== null && !this.connection.closedWith;
    const connection = await this.ensure();
    try {
      return await connection.call(method, params, timeoutMs);
    } catch (error) {
      if (error instanceof DaemonUnavailable) {
        if (this.connection === connection) this.connection = null;
        if (!reused) throw error;
        return (await this.ensure()).call(method, params, timeoutMs);
      }
      if (error instanceof TimedOut || error instanceof ProtocolError) {
        if (this.connection === connection) this.connection = null;
      }
      throw error;
    }
  }

  /** The wait for a page, on a connection of its own: on the shared one its timer (minutes)
   * would close every other call's connection when it fired, and an aborted wait could not end
   * without ending theirs. */
  async #waitForPage(flowId, timeoutMs, signal) {
    signal?.throwIfAborted();
    const connection = await Connection.open(this.path, this.clientName, { keepsAlive: false });
    const abort = () => connection.close(signal.reason);
    try {
      signal?.throwIfAborted();
      signal?.addEventListener('abort', abort, { once: true });
      return await connection.call('session.waitForInteractiveSignIn', this.#params({ flow_id: flowId }), timeoutMs);
    } finally {
      signal?.removeEventListener('abort', abort);
      connection.close();
    }
  }

  #params(extra) {
    const params = {};
    for (const [key, value] of Object.entries(extra)) if (value !== undefined && value !== null) params[key] = value;
    if (this.profile !== null) params.profile = this.profile;
    return params;
  }
}

/** The async iterator behind `Client.events()`; `close()` ends it from anywhere. */
class EventStream {
  #client;
  #connection = null;
  #closed = false;
  #wake = null;
  #generator;

  constructor(client) {
    this.#client = client;
    this.#generator = this.#run();
  }

  [Symbol.asyncIterator]() { return this; }

  next() { return this.#generator.next(); }

  async return(value) {
    this.close();
    return this.#generator.return(value);
  }

  /** Ends the stream: a waiting `next()` resolves as done. */
  close() {
    this.#closed = true;
    if (this.#connection) this.#connection.close();
    if (this.#wake) this.#wake();
  }

  async *#run() {
    const client = this.#client;
    let subscribedOnce = false;
    let delay = FIRST_DELAY_MS;
    while (!this.#closed) {
      let connection = null;
      try {
        connection = await Connection.open(client.path, client.clientName, { keepsAlive: true });
        if (this.#closed) break;
        this.#connection = connection;
        const params = client.profile !== null ? { profile: client.profile } : {};
        await connection.call('events.subscribe', params, 15000);
        const reconnected = subscribedOnce;
        let first = true;
        subscribedOnce = true;
        delay = FIRST_DELAY_MS;
        for (;;) {
          const event = await connection.nextEvent();
          if (event === null) break;
          yield new AuthEvent(event, reconnected && first);
          first = false;
        }
      } catch (error) {
        const mendable = error instanceof DaemonUnavailable || error instanceof TimedOut;
        if (!mendable || (!subscribedOnce && !this.#closed)) throw error;
      } finally {
        this.#connection = null;
        if (connection) connection.close();
      }
      if (this.#closed) break;
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.#wake = () => { clearTimeout(timer); resolve(); };
      });
      this.#wake = null;
      delay = Math.min(delay * 2, LONGEST_DELAY_MS);
    }
  }
}

/**
 * Connects to authd (`socketPath`, else `$AUTHD_SOCKET` or the runtime directory's socket) and
 * checks that the profile exists. Every connection first checks that the socket belongs to this
 * user, and throws ForeignDaemon without sending anything when not.
 */
async function connect({ profile = null, socketPath: socketFile = null, clientName = null } = {}) {
  const client = new Client(profile, socketFile, clientName);
  const connection = await client.ensure();
  const profiles = Array.isArray(connection.hello.profiles) ? connection.hello.profiles : [];
  if (profile !== null && !profiles.includes(profile)) {
    client.close();
    throw new UnknownProfile(`authd has no profile named ${JSON.stringify(profile)} (it has: ${profiles.join(', ')}); ` +
      `add it with 'authctl profile add ${profile} --url URL --anon-key KEY'`, 'unknown_profile');
  }
  return client;
}

module.exports = {
  PROTOCOL_VERSION, connect, socketPath, Client, Token, AuthEvent, EventStream, SignInPage,
  AuthdError, NotSignedIn, Offline, AccessDenied, DaemonUnavailable, KeyringUnavailable, UnknownProfile,
  TimedOut, Rejected, ProtocolError, ForeignDaemon,
};
