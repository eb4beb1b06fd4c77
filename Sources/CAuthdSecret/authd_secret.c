/* The by-path calls (secret_service_encode_dbus_secret, _search_for_dbus_paths_sync,
 * _get_secrets_for_dbus_paths_sync) are in libsecret's "unstable" secret-paths.h, unchanged
 * since 0.7. */
#define SECRET_API_SUBJECT_TO_CHANGE 1
#include "authd_secret.h"
#include <libsecret/secret.h>
#include <string.h>

static const SecretSchema *authd_schema(void) {
    static const SecretSchema schema = {
        "dev.authd.Session", SECRET_SCHEMA_NONE,
        {
            { "profile", SECRET_SCHEMA_ATTRIBUTE_STRING },
            { NULL, 0 },
        }
    };
    return &schema;
}

static GHashTable *authd_attributes(const char *profile) {
    GHashTable *attributes = g_hash_table_new(g_str_hash, g_str_equal);
    g_hash_table_insert(attributes, (gpointer)"profile", (gpointer)profile);
    return attributes;
}

/* Not part of the public status set: an object vanished while we used it (another client
 * deleted an item mid-call). The public functions retry the whole operation on this. */
#define AUTHD_SECRET_RETRY ((authd_secret_status)100)
#define AUTHD_SECRET_ATTEMPTS 3

static authd_secret_status fail(GError *error, const char *fallback, char **error_message) {
    if (error != NULL && g_error_matches(error, SECRET_ERROR, SECRET_ERROR_NO_SUCH_OBJECT)) {
        g_error_free(error);
        return AUTHD_SECRET_RETRY;
    }
    /* A raw D-Bus call's error carries the remote error's name ("GDBus.Error:org.freedesktop…:")
     * before its message; libsecret's own calls strip it. */
    if (error != NULL) g_dbus_error_strip_remote_error(error);
    if (error_message != NULL) {
        *error_message = g_strdup(error != NULL ? error->message : fallback);
    }
    if (error != NULL) g_error_free(error);
    /* libsecret caches the service proxy, bound to the keyring daemon it first reached; after that
     * daemon died it would fail forever. Drop the cache so the next call finds the new one. */
    secret_service_disconnect();
    return AUTHD_SECRET_UNAVAILABLE;
}

/* The Secret Service proxy with a session open. Collections are not preloaded: loading every
 * item of the collection races with other clients deleting theirs. libsecret caches it. */
static SecretService *authd_service(char **error_message) {
    GError *error = NULL;
    SecretService *service = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, NULL, &error);
    if (service == NULL && fail(error, "no Secret Service on the session bus", error_message) == AUTHD_SECRET_RETRY) {
        /* fail() leaves a vanished object to be retried, with no message; a service that cannot
         * be reached is unavailable, and says so. */
        secret_service_disconnect();
        if (error_message != NULL) *error_message = g_strdup("no Secret Service on the session bus");
    }
    return service;
}

/* The items of `profile`, as proxies, without unlocking or loading their secrets (a sign-out
 * deletes them). */
static authd_secret_status authd_find(SecretService *service, const char *profile, GList **items_out, char **error_message) {
    GError *error = NULL;
    GHashTable *attributes = authd_attributes(profile);
    GList *items = secret_service_search_sync(service, authd_schema(), attributes,
                                              SECRET_SEARCH_ALL, NULL, &error);
    g_hash_table_unref(attributes);
    if (error != NULL) return fail(error, NULL, error_message);
    *items_out = items;
    return items == NULL ? AUTHD_SECRET_NOT_FOUND : AUTHD_SECRET_OK;
}

authd_secret_status authd_secret_connect(char **error_message) {
    SecretService *service = authd_service(error_message);
    if (service == NULL) return AUTHD_SECRET_UNAVAILABLE;
    g_object_unref(service);
    return AUTHD_SECRET_OK;
}

/* The default collection, by the alias path libsecret itself uses for SECRET_COLLECTION_DEFAULT. */
#define AUTHD_DEFAULT_COLLECTION "/org/freedesktop/secrets/aliases/default"

/* The attributes an item gets from secret_password_store with authd's schema: the profile and
 * the schema's name, which lookups through the schema match on. */
static GVariant *authd_item_properties(const char *profile, const char *label) {
    GVariantBuilder attributes;
    g_variant_builder_init(&attributes, G_VARIANT_TYPE("a{ss}"));
    g_variant_builder_add(&attributes, "{ss}", "profile", profile);
    g_variant_builder_add(&attributes, "{ss}", "xdg:schema", authd_schema()->name);
    GVariantBuilder properties;
    g_variant_builder_init(&properties, G_VARIANT_TYPE("a{sv}"));
    g_variant_builder_add(&properties, "{sv}", "org.freedesktop.Secret.Item.Label", g_variant_new_string(label));
    g_variant_builder_add(&properties, "{sv}", "org.freedesktop.Secret.Item.Attributes", g_variant_builder_end(&attributes));
    return g_variant_builder_end(&properties);
}

/* Withdraws a prompt the service handed back instead of storing: nothing is shown until a client
 * calls Prompt, and authd never does. */
static void authd_dismiss_prompt(GDBusConnection *bus, const gchar *service_name, const gchar *prompt) {
    GVariant *reply = g_dbus_connection_call_sync(bus, service_name, prompt, "org.freedesktop.Secret.Prompt", "Dismiss",
                                                  NULL, NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL, NULL);
    if (reply != NULL) g_variant_unref(reply);
}

/* One CreateItem call on the default collection's alias path, replacing the profile's item: a
 * refresh owes this write before its token is used (benchmark P7), so it makes one D-Bus round
 * trip where libsecret's store after a lock check made three. The call never prompts: a locked
 * collection answers with an IsLocked error (gnome-keyring) or with a prompt to unlock it (the
 * Secret Service API allows either), and both are reported as locked, the prompt dismissed
 * unseen, rather than popping an unlock dialog from a background daemon. */
static authd_secret_status authd_secret_store_once(const char *profile, const char *label, const char *secret, char **error_message) {
    SecretService *service = authd_service(error_message);
    if (service == NULL) return AUTHD_SECRET_UNAVAILABLE;
    GDBusProxy *proxy = G_DBUS_PROXY(service);
    GDBusConnection *bus = g_dbus_proxy_get_connection(proxy);
    const gchar *name = g_dbus_proxy_get_name(proxy);
    SecretValue *value = secret_value_new(secret, -1, "text/plain");
    /* Encrypted with the transfer session libsecret opened for this service. */
    GVariant *encoded = secret_service_encode_dbus_secret(service, value);
    secret_value_unref(value);
    if (encoded == NULL) {
        g_object_unref(service);
        return fail(NULL, "the keyring's transfer session could not encode the session", error_message);
    }
    GError *error = NULL;
    GVariant *reply = g_dbus_connection_call_sync(bus, name, AUTHD_DEFAULT_COLLECTION, "org.freedesktop.Secret.Collection", "CreateItem",
                                                  g_variant_new("(@a{sv}@(oayays)b)", authd_item_properties(profile, label), encoded, TRUE),
                                                  G_VARIANT_TYPE("(oo)"), G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
    authd_secret_status status = AUTHD_SECRET_OK;
    if (reply == NULL) {
        if (g_error_matches(error, SECRET_ERROR, SECRET_ERROR_IS_LOCKED)) {
            g_error_free(error);
            status = AUTHD_SECRET_LOCKED;
        } else if (g_error_matches(error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_METHOD) ||
                   g_error_matches(error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_OBJECT) ||
                   g_error_matches(error, SECRET_ERROR, SECRET_ERROR_NO_SUCH_OBJECT)) {
            /* Nothing answers at the alias path: no collection is the default. */
            g_error_free(error);
            status = fail(NULL, "the Secret Service has no default collection (keyring)", error_message);
        } else {
            status = fail(error, "the keyring refused to store the session", error_message);
        }
    } else {
        const gchar *prompt = NULL;
        g_variant_get(reply, "(&o&o)", NULL, &prompt);
        /* "/" is the API's way of saying that no prompt was needed: the item is stored. */
        if (g_strcmp0(prompt, "/") != 0) {
            authd_dismiss_prompt(bus, name, prompt);
            status = AUTHD_SECRET_LOCKED;
        }
        g_variant_unref(reply);
    }
    g_object_unref(service);
    return status;
}

/* Two D-Bus calls on the service itself, SearchItems and GetSecrets, by the items' paths: a
 * lookup is most of a cold start's wait (benchmark P6), and libsecret's search that loads the
 * secrets first makes a proxy for each item found, with its own round trips. */
static authd_secret_status authd_secret_lookup_once(const char *profile, char **secret_out, char **error_message) {
    *secret_out = NULL;
    SecretService *service = authd_service(error_message);
    if (service == NULL) return AUTHD_SECRET_UNAVAILABLE;
    GError *error = NULL;
    gchar **unlocked = NULL, **locked = NULL;
    GHashTable *attributes = authd_attributes(profile);
    gboolean searched = secret_service_search_for_dbus_paths_sync(service, authd_schema(), attributes, NULL, &unlocked, &locked, &error);
    g_hash_table_unref(attributes);
    authd_secret_status status;
    if (!searched) {
        status = fail(error, NULL, error_message);
    } else if (unlocked == NULL || unlocked[0] == NULL) {
        /* Searching unlocks nothing: a locked entry is reported, not prompted for. */
        status = locked != NULL && locked[0] != NULL ? AUTHD_SECRET_LOCKED : AUTHD_SECRET_NOT_FOUND;
    } else {
        GHashTable *values = secret_service_get_secrets_for_dbus_paths_sync(service, (const gchar **)unlocked, NULL, &error);
        if (values == NULL) {
            status = fail(error, NULL, error_message);
        } else {
            /* The first entry, in the service's order, that holds text. An entry missing from the
             * answer was deleted between the two calls (gnome-keyring skips such paths): search
             * again rather than call the keyring locked. */
            status = AUTHD_SECRET_LOCKED;
            for (gchar **path = unlocked; *path != NULL && status == AUTHD_SECRET_LOCKED; path++) {
                if (!g_hash_table_contains(values, *path)) {
                    status = AUTHD_SECRET_RETRY;
                    break;
                }
                SecretValue *value = g_hash_table_lookup(values, *path);
                const gchar *text = value != NULL ? secret_value_get_text(value) : NULL;
                if (text != NULL) {
                    *secret_out = g_strdup(text);
                    status = AUTHD_SECRET_OK;
                }
            }
            g_hash_table_unref(values);
        }
    }
    g_strfreev(unlocked);
    g_strfreev(locked);
    g_object_unref(service);
    return status;
}

static authd_secret_status authd_secret_clear_once(const char *profile, char **error_message) {
    SecretService *service = authd_service(error_message);
    if (service == NULL) return AUTHD_SECRET_UNAVAILABLE;
    GList *items = NULL;
    authd_secret_status status = authd_find(service, profile, &items, error_message);
    if (status == AUTHD_SECRET_NOT_FOUND) {
        g_object_unref(service);
        return AUTHD_SECRET_OK;
    }
    for (GList *node = items; node != NULL && status == AUTHD_SECRET_OK; node = node->next) {
        SecretItem *item = node->data;
        if (secret_item_get_locked(item)) { status = AUTHD_SECRET_LOCKED; break; }
        GError *error = NULL;
        if (!secret_item_delete_sync(item, NULL, &error)) status = fail(error, NULL, error_message);
    }
    g_list_free_full(items, g_object_unref);
    g_object_unref(service);
    return status;
}

void authd_secret_free(char *string) {
    if (string == NULL) return;
    memset(string, 0, strlen(string));
    g_free(string);
}

/* Runs `call` again while it reports that an object vanished under it, at most
 * AUTHD_SECRET_ATTEMPTS times in all. */
#define AUTHD_WITH_RETRIES(status, call) \
    for (int attempt = 0; attempt < AUTHD_SECRET_ATTEMPTS && ((status) = (call)) == AUTHD_SECRET_RETRY; attempt++) {}

/* Turns a retry that never settled into a plain "unavailable" with a message. */
static authd_secret_status settled(authd_secret_status status, char **error_message) {
    if (status != AUTHD_SECRET_RETRY) return status;
    if (error_message != NULL) *error_message = g_strdup("the keyring kept changing under the call; try again");
    return AUTHD_SECRET_UNAVAILABLE;
}

authd_secret_status authd_secret_store(const char *profile, const char *label, const char *secret, char **error_message) {
    authd_secret_status status;
    AUTHD_WITH_RETRIES(status, authd_secret_store_once(profile, label, secret, error_message));
    return settled(status, error_message);
}

authd_secret_status authd_secret_lookup(const char *profile, char **secret_out, char **error_message) {
    authd_secret_status status;
    AUTHD_WITH_RETRIES(status, authd_secret_lookup_once(profile, secret_out, error_message));
    return settled(status, error_message);
}

authd_secret_status authd_secret_clear(const char *profile, char **error_message) {
    authd_secret_status status;
    AUTHD_WITH_RETRIES(status, authd_secret_clear_once(profile, error_message));
    return settled(status, error_message);
}
