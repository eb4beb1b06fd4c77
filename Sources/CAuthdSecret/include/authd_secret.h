#ifndef AUTHD_SECRET_H
#define AUTHD_SECRET_H

/* A small, non-variadic wrapper over libsecret for authd's session entries.
 * Every entry is stored under the schema "dev.authd.Session" with one attribute,
 * "profile". None of these functions prompts: a locked collection is reported as
 * AUTHD_SECRET_LOCKED instead of popping an unlock dialog from a background daemon. */

typedef enum {
    AUTHD_SECRET_OK = 0,
    AUTHD_SECRET_NOT_FOUND = 1,
    AUTHD_SECRET_LOCKED = 2,
    AUTHD_SECRET_UNAVAILABLE = 3,
} authd_secret_status;

/* Stores `secret` (UTF-8 text) for `profile` in the default collection, replacing any earlier entry. */
authd_secret_status authd_secret_store(const char *profile, const char *label, const char *secret, char **error_message);

/* Looks up the entry of `profile`; on AUTHD_SECRET_OK `*secret_out` is set (free with authd_secret_free). */
authd_secret_status authd_secret_lookup(const char *profile, char **secret_out, char **error_message);

/* Removes the entry of `profile`; AUTHD_SECRET_OK also when there was none. */
authd_secret_status authd_secret_clear(const char *profile, char **error_message);

/* Connects to the Secret Service and opens its transfer session, which libsecret keeps for the
 * calls above; AUTHD_SECRET_OK when connected. Optional: it only moves that work earlier, since
 * each call above connects by itself when it has to. */
authd_secret_status authd_secret_connect(char **error_message);

/* Frees a string returned by the functions above; wipes it first, since it may hold a secret. */
void authd_secret_free(char *string);

#endif
