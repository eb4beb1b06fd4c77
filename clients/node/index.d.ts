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
  /** The profile's events, INITIAL_SESSION first, reconnecting until closed. */
  events(): EventStream;
  /** Closes the request connection; the next call opens a new one. */
  close(): void;
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
  readonly reason: string | null;
  /** True for the INITIAL_SESSION that follows a reconnect: events may have been missed meanwhile. */
  readonly afterReconnect: boolean;
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
