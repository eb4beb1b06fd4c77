/* A small program built against the installed libauthd-client with
 * `pkg-config --cflags --libs authd-client glib-2.0`, driven by test_c_client.py against a live
 * authd. Each mode prints what it saw; the test reads it.
 *
 *   authd-client-check token SOCKET [PROFILE]   the token, then the status's state (exit: authctl's status)
 *   authd-client-check watch SOCKET             events in a GLib main loop, until an INITIAL_SESSION after a reconnect
 *   authd-client-check hello SOCKET             hello on two connections, to a stand-in daemon
 *   authd-client-check null-error SOCKET        every call with a NULL error */
#include <authd-client.h>
#include <glib-unix.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>

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
    printf("event %s after_reconnect=%d reason=%s status=%s\n", event->name, event->after_reconnect, event->reason, event->status_json);
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

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "token") == 0) return token(argv[2], argc > 3 ? argv[3] : NULL);
    if (argc == 3 && strcmp(argv[1], "watch") == 0) return watch(argv[2]);
    if (argc == 3 && strcmp(argv[1], "hello") == 0) return hello(argv[2]);
    if (argc == 3 && strcmp(argv[1], "null-error") == 0) return null_error(argv[2]);
    fprintf(stderr, "usage: authd-client-check token|watch|hello|null-error SOCKET [PROFILE]\n");
    return 64;
}
