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
 * at a time (but see authd_client_wait_for_interactive_sign_in). An app without sign-in forms of
 * its own has authd's sign-in page open in the user's browser (authd_client_sign_in_interactively). */
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

/* ---- authd's own sign-in page ----
 * authd serves it on 127.0.0.1 and opens it in the user's browser; it offers every way the project
 * allows, and a second factor when the account has one. Its session becomes the profile's
 * (SIGNED_IN on the event stream). A page that ends without signing in fails its wait with
 * AUTHD_REJECTED and `reason` "sign_in_cancelled", "sign_in_failed" or "flow_expired". */

/** A sign-in page, as authd_client_begin_interactive_sign_in answered; authd_sign_in_page_clear frees it. */
typedef struct {
    /** Names the page for the wait and the cancel, and in its INTERACTIVE_SIGN_IN_ENDED event. Not a secret. */
    char *flow_id;
    /** The address that opens the page: good once, in one browser. Hand it to nobody but the
     * user's browser, and never log it. */
    char *url;
    /** Seconds the page stays open unless it ends first (600). */
    int expires_in;
    /** 1 when authd started the user's browser on `url`; 0 when asked not to or when it could not
     * (no display, no $BROWSER): then open or show `url` yourself. */
    int browser_opened;
} authd_sign_in_page;

/** Opens a sign-in page (session.beginInteractiveSignIn) and fills `page`. `method` is the form
 * shown first ("password", "email_code", "phone_code", "sign_up", "forgot_password", "sso"; NULL:
 * the page's own first form), `email` the address to fill in (or NULL), `aal` "aal2" to have the
 * page offer a second factor to an account that has none (or NULL). With `open_browser` 0 authd
 * does not start the browser: the caller opens `page->url` (through a portal, say). A `method`,
 * `email` or `aal` authd does not take is AUTHD_REJECTED with reason "" and a message naming it.
 * Returns AUTHD_OK, or an error code and fills `error`. */
authd_code authd_client_begin_interactive_sign_in(authd_client *client, const char *method, const char *email, const char *aal,
                                                  int open_browser, authd_sign_in_page *page, authd_error *error);

/** Waits until page `flow_id`'s sign-in ends (session.waitForInteractiveSignIn): AUTHD_OK with the
 * status in `*status_json` (to free()) once signed in, at once when it has ended already; else
 * AUTHD_REJECTED ("sign_in_cancelled", "sign_in_failed", "flow_expired"), or AUTHD_TIMED_OUT after
 * `timeout` seconds (0: the page's lifetime and 30 s more). It blocks, on a connection of its own,
 * and touches nothing else of the client: another thread may use the client meanwhile, for
 * tokens, or to cancel the page, which makes this wait return. */
authd_code authd_client_wait_for_interactive_sign_in(authd_client *client, const char *flow_id, int timeout, char **status_json,
                                                     authd_error *error);

/** Closes page `flow_id`, as its Cancel button does (session.cancelInteractiveSignIn): its wait
 * fails with "sign_in_cancelled"; a session it signed in stays. `*cancelled` (may be NULL) is 0
 * when the page had ended already, or when another app opened it (only the app that opened a page
 * may close it). Returns AUTHD_OK, or an error code and fills `error`. */
authd_code authd_client_cancel_interactive_sign_in(authd_client *client, const char *flow_id, int *cancelled, authd_error *error);

/** Wipes the page's address and frees its strings (NULL is ignored). */
void authd_sign_in_page_clear(authd_sign_in_page *page);

/** Called by authd_client_sign_in_interactively once the page is open, before the wait: when
 * `page->browser_opened` is 0 it must hand `page->url` to the user's browser or show it ("if your
 * browser did not open, visit …"). Returns 0 to wait for the sign-in, anything else to give up
 * (the page is then closed). `page` lives until the callback returns. */
typedef int (*authd_sign_in_page_callback)(const authd_sign_in_page *page, void *user_data);

/** Opens the sign-in page in the user's browser and waits until the user has signed in there:
 * AUTHD_OK with the status in `*status_json` (to free()). `method`, `email`, `aal` and
 * `open_browser` are authd_client_begin_interactive_sign_in's; `opened` (may be NULL unless
 * `open_browser` is 0) is called once the page is open. Blocks up to `timeout` seconds (0: as long
 * as the page lives, ten minutes, and 30 s more), then AUTHD_TIMED_OUT. Whenever it fails after the
 * page opened (timed out, given up by `opened`, authd gone, or the page's own end) it closes the
 * page, so that none stays open for nobody; without `opened`, a page authd could not open in a
 * browser fails at once as AUTHD_REJECTED, reason "sign_in_failed". Only opening the page uses the
 * client's connection; the wait and the closing have connections of their own, so another thread
 * may use the client meanwhile: to give up from there, cancel the page (the flow_id `opened` got),
 * and this call fails with "sign_in_cancelled". */
authd_code authd_client_sign_in_interactively(authd_client *client, const char *method, const char *email, const char *aal,
                                              int open_browser, int timeout, authd_sign_in_page_callback opened, void *user_data,
                                              char **status_json, authd_error *error);

/** The daemon's latest answer to hello, as a JSON object in a string the client owns (valid until
 * the next call or authd_client_free). */
const char *authd_client_hello(const authd_client *client);

/** One auth-state change. Holds no token; its strings live until the callback returns. */
typedef struct {
    /** INITIAL_SESSION, SIGNED_IN, SIGNED_OUT, TOKEN_REFRESHED, USER_UPDATED, INTERACTIVE_SIGN_IN_ENDED, … */
    const char *name;
    const char *profile;
    /** For SIGNED_OUT, why; for REFRESH_FAILING, the trouble; for INTERACTIVE_SIGN_IN_ENDED, how the
     * page ended (signed_in, cancelled, expired, failed); else "". */
    const char *reason;
    /** The profile's state after the change, as a JSON object. */
    const char *status_json;
    /** 1 for the INITIAL_SESSION that follows a reconnect: events may have been missed. */
    int after_reconnect;
    /** For INTERACTIVE_SIGN_IN_ENDED, the page that ended (its flow_id); else "". (Members are
     * only ever added at the end: the library fills the event, an app only reads it.) */
    const char *flow_id;
    /** For INTERACTIVE_SIGN_IN_ENDED that failed, why in plain words; else "". */
    const char *message;
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
