/* A small program built against the installed libauthd-client with
 * `pkg-config --cflags --libs authd-client glib-2.0`, driven by test_c_client.py against a live
 * authd. Each mode prints what it saw; the test reads it.
 *
 *   authd-client-check token SOCKET [PROFILE]   the token, then the status's state (exit: authctl's status)
 *   authd-client-check watch SOCKET             events in a GLib main loop, until an INITIAL_SESSION after a reconnect
 *   authd-client-check hello SOCKET             hello on two connections, to a stand-in daemon
 *   authd-client-check null-error SOCKET        every call with a NULL error
 *   authd-client-check sign-in SOCKET OPEN_BROWSER TIMEOUT CALLBACK [BROWSER...]
 *       authd_client_sign_in_interactively on the password form; CALLBACK `none` (no callback),
 *       `show` (prints the page and starts BROWSER, its `%s` the page's address, when given) or
 *       `give-up` (prints it and gives up)
 *   authd-client-check page SOCKET PROFILE|- METHOD|- EMAIL|-
 *       begins a page (authd not opening a browser), cancels it, then waits for it as the
 *       default profile's client
 *   authd-client-check cancel-while-waiting SOCKET
 *       a page waited for on a thread while the main thread cancels it */
#include <authd-client.h>
#include <glib-unix.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A page as the tests may see it: never its address, which opens it (only whether it is local, and its length). */
static void print_page(const authd_sign_in_page *page) {
    printf("page flow_id=%s expires_in=%d browser_opened=%d url_local=%d url_length=%zu\n", page->flow_id, page->expires_in,
           page->browser_opened, strncmp(page->url, "http://127.0.0.1:", 17) == 0, strlen(page->url));
    fflush(stdout);
}

static int report(const authd_error *error) {
    printf("error code=%d exit=%d transient=%d reason=%s foreign_uid=%ld message=%s\n", error->code,
           authd_exit_status(error->code), error->transient, error->reason, error->foreign_uid, error->message);
    return authd_exit_status(error->code);
}

static int token(const char *socket, const char *profile) {
    authd_error error;
    authd_client *client = authd_client_connect(profile, socket, "c-check", &error);
    if (!client) return report(&error);
    authd_token token;
    if (authd_client_token(client, 60, &token, &error) != AUTHD_OK) {
        authd_client_free(client);
        return report(&error);
    }
    printf("token %s %lld\n", token.access_token, (long long)token.expires_at);
    authd_token_clear(&token);
    if (token.access_token != NULL) return 70;
    char *status = NULL;
    if (authd_client_status(client, &status, &error) != AUTHD_OK) {
        authd_client_free(client);
        return report(&error);
    }
    printf("status %s\n", status);
    free(status);
    authd_client_free(client);
    return 0;
}

typedef struct {
    GMainLoop *loop;
    authd_events *events;
    int code;
} watching;

static void on_event(const authd_event *event, void *data) {
    watching *w = data;
    printf("event %s after_reconnect=%d reason=%s flow_id=%s message=%s status=%s\n", event->name, event->after_reconnect, event->reason,
           event->flow_id, event->message, event->status_json);
    fflush(stdout);
    if (event->after_reconnect) g_main_loop_quit(w->loop);
}

static gboolean on_readable(gint fd, GIOCondition condition, gpointer data) {
    (void)fd;
    (void)condition;
    watching *w = data;
    authd_error error;
    if (authd_events_dispatch(w->events, on_event, w, &error) != AUTHD_OK) {
        w->code = report(&error);
        g_main_loop_quit(w->loop);
        return G_SOURCE_REMOVE;
    }
    return G_SOURCE_CONTINUE;
}

static gboolean on_timeout(gpointer data) {
    watching *w = data;
    printf("timed out\n");
    w->code = 2;
    g_main_loop_quit(w->loop);
    return G_SOURCE_REMOVE;
}

static int watch(const char *socket) {
    authd_error error;
    watching w = { .loop = g_main_loop_new(NULL, FALSE), .code = 0 };
    w.events = authd_events_subscribe(NULL, socket, "c-check", &error);
    if (!w.events) return report(&error);
    printf("subscribed\n");
    fflush(stdout);
    g_unix_fd_add(authd_events_fd(w.events), G_IO_IN, on_readable, &w);
    g_timeout_add_seconds(60, on_timeout, &w);
    g_main_loop_run(w.loop);
    authd_events_free(w.events);
    g_main_loop_unref(w.loop);
    return w.code;
}

/* Two connections, so that a warning about the protocol shows whether it comes once or per connection. */
static int hello(const char *socket) {
    for (int i = 0; i < 2; i++) {
        authd_error error;
        authd_client *client = authd_client_connect(NULL, socket, "c-check", &error);
        if (!client) return report(&error);
        printf("hello %s\n", authd_client_hello(client));
        fflush(stdout);
        authd_client_free(client);
    }
    return 0;
}

/* Every call with a NULL error, against whatever serves `socket`: nothing, or an authd nobody
 * is signed in to (then the token and status calls fail and succeed without an error to fill). */
static int null_error(const char *socket) {
    authd_client *client = authd_client_connect(NULL, socket, "c-check", NULL);
    authd_events *events = authd_events_subscribe(NULL, socket, "c-check", NULL);
    printf("connect %s, subscribe %s\n", client ? "connected" : "failed", events ? "subscribed" : "failed");
    if (client) {
        authd_token token;
        char *status = NULL;
        printf("token %d, status %d\n", authd_client_token(client, 60, &token, NULL), authd_client_status(client, &status, NULL));
        free(status);
    }
    if (events) printf("dispatch %d\n", authd_events_dispatch(events, NULL, NULL, NULL));
    authd_client_free(client);
    authd_events_free(events);
    return 0;
}

/* The browser to start on an open page (argv, with "%s" for the address), or none. */
typedef struct {
    char **argv;
    int argc;
    int give_up;
} opening;

static int on_opened(const authd_sign_in_page *page, void *data) {
    opening *o = data;
    print_page(page);
    if (o->argc > 0) {
        char **argv = calloc((size_t)o->argc + 1, sizeof *argv);
        for (int i = 0; i < o->argc; i++) argv[i] = strcmp(o->argv[i], "%s") == 0 ? page->url : o->argv[i];
        GError *failure = NULL;
        if (!g_spawn_async(NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, &failure)) {
            printf("browser not started: %s\n", failure->message);
            g_error_free(failure);
            free(argv);
            return 1;
        }
        free(argv);
    }
    return o->give_up;
}

static int sign_in(const char *socket, int open_browser, int timeout, const char *callback, char **browser, int browser_count) {
    authd_error error;
    authd_client *client = authd_client_connect(NULL, socket, "c-check", &error);
    if (!client) return report(&error);
    opening o = { .argv = browser, .argc = browser_count, .give_up = strcmp(callback, "give-up") == 0 };
    char *status = NULL;
    authd_code code = authd_client_sign_in_interactively(client, "password", NULL, NULL, open_browser, timeout,
                                                         strcmp(callback, "none") == 0 ? NULL : on_opened, &o, &status, &error);
    authd_client_free(client);
    if (code != AUTHD_OK) return report(&error);
    printf("status %s\n", status);
    free(status);
    return 0;
}

static const char *or_null(const char *argument) { return strcmp(argument, "-") == 0 ? NULL : argument; }

static int page(const char *socket, const char *profile, const char *method, const char *email) {
    authd_error error;
    authd_client *client = authd_client_connect(or_null(profile), socket, "c-check", &error);
    if (!client) return report(&error);
    authd_sign_in_page opened;
    if (authd_client_begin_interactive_sign_in(client, or_null(method), or_null(email), NULL, 0, &opened, &error) != AUTHD_OK) {
        authd_client_free(client);
        return report(&error);
    }
    print_page(&opened);
    int cancelled = -1;
    authd_code code = authd_client_cancel_interactive_sign_in(client, opened.flow_id, &cancelled, &error);
    authd_client_free(client);
    if (code != AUTHD_OK) { authd_sign_in_page_clear(&opened); return report(&error); }
    printf("cancelled %d\n", cancelled);
    authd_client *plain = authd_client_connect(NULL, socket, "c-check", &error);
    if (!plain) { authd_sign_in_page_clear(&opened); return report(&error); }
    char *status = NULL;
    code = authd_client_wait_for_interactive_sign_in(plain, opened.flow_id, 15, &status, &error);
    authd_client_free(plain);
    authd_sign_in_page_clear(&opened);
    if (opened.flow_id != NULL || opened.url != NULL) return 70;
    if (code != AUTHD_OK) return report(&error);
    printf("status %s\n", status);
    free(status);
    return 0;
}

typedef struct {
    authd_client *client;
    const char *flow_id;
    authd_code code;
    authd_error error;
    char *status;
} waiting;

static gpointer wait_on_thread(gpointer data) {
    waiting *w = data;
    w->code = authd_client_wait_for_interactive_sign_in(w->client, w->flow_id, 60, &w->status, &w->error);
    return NULL;
}

/* The wait touches nothing of the client but its settings: the main thread cancels through the
 * same client meanwhile (or first: the wait then answers at once). */
static int cancel_while_waiting(const char *socket) {
    authd_error error;
    authd_client *client = authd_client_connect(NULL, socket, "c-check", &error);
    if (!client) return report(&error);
    authd_sign_in_page opened;
    if (authd_client_begin_interactive_sign_in(client, NULL, NULL, NULL, 0, &opened, &error) != AUTHD_OK) {
        authd_client_free(client);
        return report(&error);
    }
    print_page(&opened);
    waiting w = { .client = client, .flow_id = opened.flow_id };
    GThread *thread = g_thread_new("wait", wait_on_thread, &w);
    int cancelled = -1;
    authd_code code = authd_client_cancel_interactive_sign_in(client, opened.flow_id, &cancelled, &error);
    g_thread_join(thread);
    authd_sign_in_page_clear(&opened);
    authd_client_free(client);
    if (code != AUTHD_OK) return report(&error);
    printf("cancelled %d\n", cancelled);
    if (w.code == AUTHD_OK) {
        printf("status %s\n", w.status);
        free(w.status);
        return 0;
    }
    return report(&w.error);
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "token") == 0) return token(argv[2], argc > 3 ? argv[3] : NULL);
    if (argc == 3 && strcmp(argv[1], "watch") == 0) return watch(argv[2]);
    if (argc == 3 && strcmp(argv[1], "hello") == 0) return hello(argv[2]);
    if (argc == 3 && strcmp(argv[1], "null-error") == 0) return null_error(argv[2]);
    if (argc >= 6 && strcmp(argv[1], "sign-in") == 0) return sign_in(argv[2], atoi(argv[3]), atoi(argv[4]), argv[5], argv + 6, argc - 6);
    if (argc == 6 && strcmp(argv[1], "page") == 0) return page(argv[2], argv[3], argv[4], argv[5]);
    if (argc == 3 && strcmp(argv[1], "cancel-while-waiting") == 0) return cancel_while_waiting(argv[2]);
    fprintf(stderr, "usage: authd-client-check token|watch|hello|null-error|cancel-while-waiting SOCKET [PROFILE], "
            "sign-in SOCKET OPEN_BROWSER TIMEOUT none|show|give-up [BROWSER...], page SOCKET PROFILE METHOD EMAIL\n");
    return 64;
}
