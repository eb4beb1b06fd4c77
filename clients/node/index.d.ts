/** Types for authd-client: bearer tokens from authd, the per-user Supabase session daemon. */

/** The protocol version this module speaks (`major.minor`). */
export const PROTOCOL_VERSION: string;

/** `$AUTHD_SOCKET`, else `$XDG_RUNTIME_DIR/authd/authd.sock`, else `/run/user/<uid>/authd/authd.sock`. */
export function socketPath(env?: Record<string, string | undefined>): string;

/** Options of `connect`. */
export interface ConnectOptions {
  /** The profile to ask about; authd's default profile when absent. */
  profile?: string | null;
  /** The socket; `socketPath()` when absent. */
  socketPath?: string | null;
  /** Shown in authd's logs only; authd identifies clients by what the kernel says. */
  clientName?: string | null;
}

/** Connects to authd and checks that the profile exists; throws ForeignDaemon for another user's socket. */
export function connect(options?: ConnectOptions): Promise<Client>;

/** authd's answer to `hello`. */
export interface DaemonInfo {
  protocol_version: string;
  daemon_version: string;
  capabilities: string[];
  profiles: string[];
  default_profile: string;
  [field: string]: unknown;
}

/** A profile's state, as `authctl status --json` shows it. Holds no token. */
export interface Status {
  state: string;
  profile: string;
  server?: string;
  user?: { id: string; email?: string; phone?: string; [field: string]: unknown };
  expires_at?: number;
  [field: string]: unknown;
}

/** A connection to authd for one profile. Calls may overlap; answers are matched by id. */
export class Client {
  /**
   * A client of `profile` (null: authd's default) at `socketPath` (null: `socketPath()`, so
   * `$AUTHD_SOCKET`, else `$XDG_RUNTIME_DIR/authd/authd.sock`); it connects at its first call.
   * `connect()` also checks at once that authd answers and has the profile.
   */
  constructor(profile?: string | null, socketPath?: string | null, clientName?: string | null);
  readonly profile: string | null;
  readonly path: string;
  readonly clientName: string;
  /** authd's last `hello`. */
  readonly daemon: DaemonInfo | null;
  /** A token valid for at least `minValidity` seconds (authd refreshes first, at most once, if needed). */
  token(options?: { minValidity?: number }): Promise<Token>;
  /** The profile's state (no token). */
  status(): Promise<Status>;
  /**
   * Opens authd's sign-in page in the user's browser and waits until the user has signed in there:
   * the status then. `onOpened` gets the page before the wait and must hand `page.url` to the
   * user's browser when `page.browserOpened` is false (it is required with `openBrowser: false`).
   * Aborting `signal`, or anything else that ends the wait early, closes the page; an aborted call
   * rejects with `signal.reason`. A page that ends without signing in rejects with `Rejected`
   * (`sign_in_cancelled`, `sign_in_failed`, `flow_expired`).
   */
  signInInteractively(options?: SignInInteractivelyOptions): Promise<Status>;
  /** Opens a sign-in page without waiting for it (`session.beginInteractiveSignIn`). */
  beginInteractiveSignIn(options?: BeginInteractiveSignInOptions): Promise<SignInPage>;
  /**
   * Waits until page `flowId`'s sign-in ends (up to ten minutes), on a connection of its own: the
   * status once signed in, else `Rejected`. Aborting `signal` ends the wait, not the page.
   */
  waitForInteractiveSignIn(flowId: string, options?: { signal?: AbortSignal }): Promise<Status>;
  /** Closes page `flowId` as its Cancel button does; false when it had ended, or another app opened it. */
  cancelInteractiveSignIn(flowId: string): Promise<boolean>;
  /** The profile's events, INITIAL_SESSION first, reconnecting until closed. */
  events(): EventStream;
  /** Closes the request connection; the next call opens a new one. */
  close(): void;
}

/** The forms a sign-in page can open on. */
export type InteractiveSignInMethod = 'password' | 'email_code' | 'phone_code' | 'sign_up' | 'forgot_password' | 'sso';

/** Options of `beginInteractiveSignIn`. */
export interface BeginInteractiveSignInOptions {
  /** The form shown first; the page's own first form when absent. */
  method?: InteractiveSignInMethod;
  /** The email address to fill in. */
  email?: string;
  /** `aal2`: the page offers a second factor to an account that has none. */
  aal?: 'aal1' | 'aal2';
  /** Whether authd starts the user's browser (the default); false: the caller opens `page.url`. */
  openBrowser?: boolean;
}

/** Options of `signInInteractively`. */
export interface SignInInteractivelyOptions extends BeginInteractiveSignInOptions {
  /** Called with the open page before the wait; shows or opens `page.url` when `page.browserOpened` is false. */
  onOpened?: (page: SignInPage) => void | Promise<void>;
  /** Aborting it closes the page; the call rejects with `signal.reason`. */
  signal?: AbortSignal;
}

/** One of authd's sign-in pages. Printing, inspecting or serialising it never shows its address. */
export class SignInPage {
  /** Names the page for the wait, the cancel and its INTERACTIVE_SIGN_IN_ENDED event. Not a secret. */
  readonly flowId: string;
  /** The address that opens the page, good once: hand it to nobody but the user's browser. */
  readonly url: string;
  /** Seconds the page stays open unless it ends first. */
  readonly expiresIn: number;
  /** Whether authd started the user's browser on `url`; when false, open or show it yourself. */
  readonly browserOpened: boolean;
}

/** A bearer token and its expiry. Printing, inspecting or serialising it never shows the token. */
export class Token {
  /** The JWT to send as the bearer token. */
  readonly value: string;
  /** The `Authorization` header value: `Bearer <token>`. */
  readonly authorization: string;
  readonly expiresAt: Date;
}

/** One auth-state change. Holds no token. */
export class AuthEvent {
  readonly name: string;
  readonly profile: string;
  readonly status: Status;
  /** For SIGNED_OUT, why; for REFRESH_FAILING, the trouble; for INTERACTIVE_SIGN_IN_ENDED, how the page ended. */
  readonly reason: string | null;
  /** True for the INITIAL_SESSION that follows a reconnect: events may have been missed meanwhile. */
  readonly afterReconnect: boolean;
  /** For INTERACTIVE_SIGN_IN_ENDED, the page that ended (`SignInPage.flowId`); else null. */
  readonly flowId: string | null;
  /** For INTERACTIVE_SIGN_IN_ENDED that failed, why in plain words; else null. */
  readonly message: string | null;
}

/** The async iterator behind `Client.events()`. */
export class EventStream implements AsyncIterableIterator<AuthEvent> {
  [Symbol.asyncIterator](): EventStream;
  next(): Promise<IteratorResult<AuthEvent>>;
  return(value?: unknown): Promise<IteratorResult<AuthEvent>>;
  /** Ends the stream: a waiting `next()` resolves as done. */
  close(): void;
}

/** Any failure talking to authd. `message` says what to do; `reason` is authd's stable code. */
export class AuthdError extends Error {
  readonly reason: string | null;
  /** True when waiting may help. */
  readonly transient: boolean;
  /** The exit status `authctl` uses for this error: 3 daemon unavailable, 4 not signed in, 6 offline, 7 keyring, else 1. */
  readonly exitStatus: number;
}
export class NotSignedIn extends AuthdError {}
export class Offline extends AuthdError {}
export class AccessDenied extends AuthdError {}
export class DaemonUnavailable extends AuthdError {}
export class KeyringUnavailable extends AuthdError {}
export class UnknownProfile extends AuthdError {}
export class TimedOut extends AuthdError {}
export class Rejected extends AuthdError {}
export class ProtocolError extends AuthdError {}
/** The socket belongs to another user: nothing was sent to it. */
export class ForeignDaemon extends AuthdError {
  readonly path: string;
  readonly uid: number;
  readonly expectedUid: number;
}
