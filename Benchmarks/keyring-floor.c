/* A floor for benchmark P4 (idle RSS): the least any daemon costs that keeps its secrets in the
 * libsecret keyring and talks to systemd, as authd must. It links the same two system libraries,
 * stores a secret and reads it back through the Secret Service (as authd does at sign-in and at
 * start), tells systemd it is ready, prints "ready" and waits to be killed. Whatever authd holds
 * above this figure is its own.
 *
 *   keyring-floor      (needs a Secret Service on the session bus) */
#include <libsecret/secret.h>
#include <stdio.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

static const SecretSchema schema = {
    .name = "org.authd.BenchmarkFloor",
    .flags = SECRET_SCHEMA_NONE,
    .attributes = {{"probe", SECRET_SCHEMA_ATTRIBUTE_STRING}, {NULL, 0}},
};

int main(void) {
    GError *error = NULL;
    if (!secret_password_store_sync(&schema, SECRET_COLLECTION_DEFAULT, "authd benchmark floor", "not a secret",
                                    NULL, &error, "probe", "p4", NULL)) {
        fprintf(stderr, "keyring-floor: store failed: %s\n", error ? error->message : "unknown error");
        return 1;
    }
    gchar *value = secret_password_lookup_sync(&schema, NULL, &error, "probe", "p4", NULL);
    if (value == NULL) {
        fprintf(stderr, "keyring-floor: lookup failed: %s\n", error ? error->message : "not found");
        return 1;
    }
    secret_password_free(value);
    sd_notify(0, "READY=1");
    printf("ready\n");
    fflush(stdout);
    for (;;) pause();
}
