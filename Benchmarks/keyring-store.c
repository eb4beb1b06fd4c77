/* The keyring half of benchmark P7's floor: what any program pays to keep a refreshed session in
 * the libsecret keyring before using it, as authd must (write-ahead: a rotated refresh token that
 * is not stored first is lost with the process). It connects to the Secret Service once (a
 * daemon stays connected), then stores a session of the size authd stores N times, each into
 * the default collection, replacing the one before, and prints each store's time in
 * milliseconds, one per line. P7's floor is curl's refresh POST plus the median of these.
 *
 *   keyring-store N      (needs a Secret Service on the session bus) */
#include <libsecret/secret.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const SecretSchema schema = {
    .name = "org.authd.BenchmarkFloor",
    .flags = SECRET_SCHEMA_NONE,
    .attributes = {{"probe", SECRET_SCHEMA_ATTRIBUTE_STRING}, {NULL, 0}},
};

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    int count = argc > 1 ? atoi(argv[1]) : 15;
    GError *error = NULL;
    SecretService *service = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, NULL, &error);
    if (service == NULL) {
        fprintf(stderr, "keyring-store: no Secret Service: %s\n", error ? error->message : "unknown error");
        return 1;
    }
    /* A session as authd stores it: two tokens, the expiry and the user, about 1.5 KB of JSON. */
    char session[1600];
    memset(session, 'x', sizeof session - 1);
    session[sizeof session - 1] = '\0';
    for (int i = 0; i < count; i++) {
        session[0] = (char)('a' + i % 26);
        double start = now_ms();
        if (!secret_password_store_sync(&schema, SECRET_COLLECTION_DEFAULT, "authd benchmark floor", session, NULL, &error,
                                        "probe", "p7", NULL)) {
            fprintf(stderr, "keyring-store: store failed: %s\n", error ? error->message : "unknown error");
            return 1;
        }
        printf("%.3f\n", now_ms() - start);
    }
    secret_password_clear_sync(&schema, NULL, NULL, "probe", "p7", NULL);
    g_object_unref(service);
    return 0;
}
