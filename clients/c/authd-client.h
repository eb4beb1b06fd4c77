/* authd-client: bearer tokens from authd, the per-user Supabase session daemon, for C programs
 * (GTK and GLib apps, and anything that can call C: Vala, Rust, GJS through GObject…).
 *
 *     authd_error error;
 *     authd_client *client = authd_client_connect(NULL, NULL, "my-app", &error);
 *     authd_token token;
 *     if (client && authd_client_token(client, 60, &token, &error) == AUTHD_OK) {
 *         use(token.access_token);             // the bearer token
 *         authd_token_clear(&token);
 *     } else {
 *         fprintf(stderr, "%s\n", error.message); // says what to do
 *     }
 *     authd_client_free(client);
 *
 * The refresh token never reaches this process: authd refreshes, the app only asks. Calls block
 * (each waits for authd's answer; a token request of an app the user has not decided on waits
 * up to 300 s) and reconnect once by themselves when authd restarted. Events come through a file
 * descriptor to watch in any main loop (see authd_events_subscribe). Link with
 * `pkg-config --cflags --libs authd-client`. A client or event stream is used from one thread
 * at a time. */
#ifndef AUTHD_CLIENT_H
#define AUTHD_CLIENT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The protocol version this library speaks (major.minor). */
#define AUTHD_PROTOCOL_VERSION "1.0"

/** What went wrong; the same vocabulary as the Swift, Python and Node clients. */
typedef enum {
    AUTHD_OK = 0,
    /** The profile has no session: sign in with `authctl login`. */
    AUTHD_NOT_SIGNED_IN,
    /** The token expired and the server cannot be reached (or fails); authd keeps the session. */
    AUTHD_OFFLINE,
    /** authd refused this process, or the user denied this app the profile. */
    AUTHD_ACCESS_DENIED,
    /** authd is not running, or the connection broke and could not be made again. */
    AUTHD_DAEMON_UNAVAILABLE,
    /** The keyring holding the session is locked or not running. */
    AUTHD_KEYRING_UNAVAILABLE,
    /** authd has no profile by that name. */
    AUTHD_UNKNOWN_PROFILE,
    /** authd did not answer in time. */
    AUTHD_TIMED_OUT,
    /** authd refused the request for another reason (see `reason`). */
    AUTHD_REJECTED,
    /** authd sent something this library cannot read. */
    AUTHD_PROTOCOL_ERROR,
    /** The socket is served by a process of another user: nothing was sent to it. */
    AUTHD_FOREIGN_DAEMON,
} authd_code;

/** A failure: its code, authd's reason, and a message that says what to do. Every function that
 * takes one also accepts NULL. */
typedef struct {
    authd_code code;
    /** 1 when waiting may help (offline, daemon unavailable, keyring, timed out). */
    int transient;
    /** authd's stable reason code (`not_signed_in`, `min_validity_too_long`, …), or "". */
    char reason[64];
    /** What went wrong and what to do; never holds a token. */
    char message[512];
    /** For AUTHD_FOREIGN_DAEMON: the uid that serves the socket; else -1. */
    long foreign_uid;
} authd_error;

/** The exit status `authctl` uses for `code`: 0, 3 (daemon unavailable), 4 (not signed in),
 * 6 (offline), 7 (keyring), else 1. */
int authd_exit_status(authd_code code);

/** The socket's path: $AUTHD_SOCKET, else $XDG_RUNTIME_DIR/authd/authd.sock, else
 * /run/user/<uid>/authd/authd.sock. Returns a string to free(), or NULL without memory. */
char *authd_socket_path(void);

/** A connection to authd for one profile. */
typedef struct authd_client authd_client;

/** Connects to authd (`socket_path`, or authd_socket_path() when NULL), checks that a process of
 * this user serves the socket (SO_PEERCRED; nothing is sent otherwise) and that `profile` exists
 * (NULL: authd's default profile). `client_name` is shown in authd's logs only. Returns NULL and
 * fills `error` on failure. */
authd_client *authd_client_connect(const char *profile, const char *socket_path, const char *client_name, authd_error *error);

/** Closes the connection and frees the client (NULL is ignored). */
void authd_client_free(authd_client *client);

/** A bearer token. */
typedef struct {
    /** The JWT, NUL-terminated; authd_token_clear wipes and frees it. */
    char *access_token;
    /** When it expires, in seconds since 1970. */
    int64_t expires_at;
} authd_token;

/** A token valid for at least `min_validity` seconds (authd refreshes first, at most once, if
 * needed; a minimum near the token's lifetime may still fall short: read `expires_at`).
 * Returns AUTHD_OK and fills `token`, or an error code and fills `error`. */
authd_code authd_client_token(authd_client *client, int min_validity, authd_token *token, authd_error *error);

/** Wipes the token's text and frees it. */
void authd_token_clear(authd_token *token);

/** The profile's state as a JSON object (as `authctl status --json` shows it; no token), in a
 * string to free(). Returns AUTHD_OK, or an error code and fills `error`. */
authd_code authd_client_status(authd_client *client, char **status_json, authd_error *error);

/** The daemon's latest answer to hello, as a JSON object in a string the client owns (valid until
 * the next call or authd_client_free). */
const char *authd_client_hello(const authd_client *client);

/** One auth-state change. Holds no token; its strings live until the callback returns. */
typedef struct {
    /** INITIAL_SESSION, SIGNED_IN, SIGNED_OUT, TOKEN_REFRESHED, USER_UPDATED, … */
    const char *name;
    const char *profile;
    /** For SIGNED_OUT, why; for REFRESH_FAILING, the trouble; else "". */
    const char *reason;
    /** The profile's state after the change, as a JSON object. */
    const char *status_json;
    /** 1 for the INITIAL_SESSION that follows a reconnect: events may have been missed. */
    int after_reconnect;
} authd_event;

/** Called for each event. */
typedef void (*authd_event_callback)(const authd_event *event, void *user_data);

/** A subscription to a profile's events. */
typedef struct authd_events authd_events;

/** Subscribes to the profile's events on a connection of its own. Returns NULL and fills `error`
 * on failure. Watch authd_events_fd() for input in your main loop and call
 * authd_events_dispatch() when it is readable; the descriptor stays the same for the life of the
 * subscription, across reconnects. With GLib:
 *
 *     g_unix_fd_add(authd_events_fd(events), G_IO_IN, on_readable, events);
 *     // on_readable: authd_events_dispatch(events, on_event, data, &error); return G_SOURCE_CONTINUE;
 */
authd_events *authd_events_subscribe(const char *profile, const char *socket_path, const char *client_name, authd_error *error);

/** The descriptor to watch for input (POLLIN, G_IO_IN). */
int authd_events_fd(const authd_events *events);

/** Reads what arrived and calls `callback` for each event. When authd goes away the subscription
 * reconnects by itself (after 50 ms, doubling to 2 s; the descriptor turns readable when it is
 * time to try again) and delivers a fresh INITIAL_SESSION with after_reconnect set; only that
 * reconnect waits, for authd's greeting and the subscription's answer (at most 15 s each).
 * Returns AUTHD_OK, or an error that waiting will not mend (another user's socket, access denied,
 * unknown profile): the subscription has ended then. The callback must not free `events`. */
authd_code authd_events_dispatch(authd_events *events, authd_event_callback callback, void *user_data, authd_error *error);

/** Ends the subscription and frees it (NULL is ignored). */
void authd_events_free(authd_events *events);

#ifdef __cplusplus
}
#endif

#endif
