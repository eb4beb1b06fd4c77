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
    if (service == NULL) fail(error, "no Secret Service on the session bus", error_message);
    return service;
}

/* Searches without unlocking; reports whether matching items exist and whether all are locked. */
static authd_secret_status authd_find(SecretService *service, const char *profile, GList **items_out, char **error_message) {
    GError *error = NULL;
    GHashTable *attributes = authd_attributes(profile);
    GList *items = secret_service_search_sync(service, authd_schema(), attributes,
                                              SECRET_SEARCH_ALL | SECRET_SEARCH_LOAD_SECRETS, NULL, &error);
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

/* The D-Bus path of the default collection and whether it is locked, in two calls on the
 * service's own connection (ReadAlias, then the collection's Locked property), per the Secret
 * Service API. libsecret's SecretCollection would do the same with seven: a proxy for the
 * collection costs a name-owner lookup, all of its properties and two signal matches added and
 * removed again, on every store. */
static authd_secret_status authd_default_collection(SecretService *service, gchar **path_out, gboolean *locked_out,
                                                    char **error_message) {
    GDBusProxy *proxy = G_DBUS_PROXY(service);
    GDBusConnection *bus = g_dbus_proxy_get_connection(proxy);
    const gchar *name = g_dbus_proxy_get_name(proxy);
    GError *error = NULL;
    GVariant *alias = g_dbus_connection_call_sync(bus, name, g_dbus_proxy_get_object_path(proxy),
                                                  "org.freedesktop.Secret.Service", "ReadAlias",
                                                  g_variant_new("(s)", SECRET_COLLECTION_DEFAULT), G_VARIANT_TYPE("(o)"),
                                                  G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
    if (alias == NULL) return fail(error, NULL, error_message);
    gchar *path = NULL;
    g_variant_get(alias, "(o)", &path);
    g_variant_unref(alias);
    /* "/" is the API's way of saying that no collection has the alias. */
    if (g_strcmp0(path, "/") == 0) {
        g_free(path);
        return fail(NULL, "the Secret Service has no default collection (keyring)", error_message);
    }
    GVariant *property = g_dbus_connection_call_sync(bus, name, path, "org.freedesktop.DBus.Properties", "Get",
                                                     g_variant_new("(ss)", "org.freedesktop.Secret.Collection", "Locked"),
                                                     G_VARIANT_TYPE("(v)"), G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
    if (property == NULL) {
        g_free(path);
        return fail(error, NULL, error_message);
    }
    GVariant *value = NULL;
    g_variant_get(property, "(v)", &value);
    g_variant_unref(property);
    if (!g_variant_is_of_type(value, G_VARIANT_TYPE_BOOLEAN)) {
        g_variant_unref(value);
        g_free(path);
        return fail(NULL, "the keyring's default collection did not say whether it is locked", error_message);
    }
    *locked_out = g_variant_get_boolean(value);
    g_variant_unref(value);
    *path_out = path;
    return AUTHD_SECRET_OK;
}

static authd_secret_status authd_secret_store_once(const char *profile, const char *label, const char *secret, char **error_message) {
    SecretService *service = authd_service(error_message);
    if (service == NULL) return AUTHD_SECRET_UNAVAILABLE;
    gchar *collection = NULL;
    gboolean locked = FALSE;
    authd_secret_status status = authd_default_collection(service, &collection, &locked, error_message);
    if (status != AUTHD_SECRET_OK || locked) {
        g_free(collection);
        g_object_unref(service);
        return status != AUTHD_SECRET_OK ? status : AUTHD_SECRET_LOCKED;
    }
    /* Stored into the collection just checked, by its path, rather than whatever the alias names
     * by now. */
    GError *error = NULL;
    GHashTable *attributes = authd_attributes(profile);
    gboolean stored = secret_password_storev_sync(authd_schema(), attributes, collection, label, secret, NULL, &error);
    g_hash_table_unref(attributes);
    g_free(collection);
    g_object_unref(service);
    if (!stored) return fail(error, "the keyring refused to store the session", error_message);
    return AUTHD_SECRET_OK;
}

static authd_secret_status authd_secret_lookup_once(const char *profile, char **secret_out, char **error_message) {
    *secret_out = NULL;
    SecretService *service = authd_service(error_message);
    if (service == NULL) return AUTHD_SECRET_UNAVAILABLE;
    GList *items = NULL;
    authd_secret_status status = authd_find(service, profile, &items, error_message);
    if (status == AUTHD_SECRET_OK) {
        status = AUTHD_SECRET_LOCKED;
        for (GList *node = items; node != NULL; node = node->next) {
            SecretItem *item = node->data;
            if (secret_item_get_locked(item)) continue;
            SecretValue *value = secret_item_get_secret(item);
            if (value == NULL) continue;
            const gchar *text = secret_value_get_text(value);
            if (text != NULL) {
                *secret_out = g_strdup(text);
                status = AUTHD_SECRET_OK;
            }
            secret_value_unref(value);
            if (status == AUTHD_SECRET_OK) break;
        }
    }
    g_list_free_full(items, g_object_unref);
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
