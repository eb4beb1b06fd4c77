/* authd-client: the C client of authd's JSON-RPC protocol (authd-protocol(7)). Only libc: one
 * request line out, one answer line back, with a JSON reader just big enough for answers. */
#define _GNU_SOURCE
#include "authd-client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define PUBLIC __attribute__((visibility("default")))
#define MAX_LINE (1 << 20)
#define HELLO_TIMEOUT_MS 15000
/* An undecided app waits for the user (authd up to 120 s by default). */
#define CALL_TIMEOUT_MS 300000
#define FIRST_DELAY_MS 50
#define LONGEST_DELAY_MS 2000

/* ---- errors ---- */

static void fail(authd_error *error, authd_code code, const char *reason, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

static void fail(authd_error *error, authd_code code, const char *reason, const char *format, ...) {
    if (!error) return;
    error->code = code;
    error->transient = code == AUTHD_OFFLINE || code == AUTHD_DAEMON_UNAVAILABLE || code == AUTHD_KEYRING_UNAVAILABLE
                       || code == AUTHD_TIMED_OUT;
    snprintf(error->reason, sizeof error->reason, "%s", reason ? reason : "");
    error->foreign_uid = -1;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(error->message, sizeof error->message, format, arguments);
    va_end(arguments);
}

static void clear_error(authd_error *error) {
    if (!error) return;
    memset(error, 0, sizeof *error);
    error->foreign_uid = -1;
}

/* The code of an error authd sent, by its reason (as the other clients map them). */
static authd_code code_for_reason(const char *reason) {
    static const struct { const char *reason; authd_code code; } table[] = {
        { "not_signed_in", AUTHD_NOT_SIGNED_IN }, { "offline", AUTHD_OFFLINE }, { "server_error", AUTHD_OFFLINE },
        { "rate_limited", AUTHD_OFFLINE }, { "access_denied", AUTHD_ACCESS_DENIED }, { "app_denied", AUTHD_ACCESS_DENIED },
        { "keyring_unavailable", AUTHD_KEYRING_UNAVAILABLE }, { "unknown_profile", AUTHD_UNKNOWN_PROFILE },
        { "busy", AUTHD_DAEMON_UNAVAILABLE }, { "idle_timeout", AUTHD_DAEMON_UNAVAILABLE }, { "too_slow", AUTHD_DAEMON_UNAVAILABLE },
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(reason, table[i].reason) == 0) return table[i].code;
    return AUTHD_REJECTED;
}

PUBLIC int authd_exit_status(authd_code code) {
    switch (code) {
    case AUTHD_OK: return 0;
    case AUTHD_DAEMON_UNAVAILABLE: return 3;
    case AUTHD_NOT_SIGNED_IN: return 4;
    case AUTHD_OFFLINE: return 6;
    case AUTHD_KEYRING_UNAVAILABLE: return 7;
    default: return 1;
    }
}

PUBLIC char *authd_socket_path(void) {
    const char *explicit_path = getenv("AUTHD_SOCKET");
    if (explicit_path && *explicit_path) return strdup(explicit_path);
    const char *runtime = getenv("XDG_RUNTIME_DIR");
    char *path = NULL;
    if (runtime && *runtime) {
        if (asprintf(&path, "%s/authd/authd.sock", runtime) < 0) return NULL;
    } else if (asprintf(&path, "/run/user/%u/authd/authd.sock", (unsigned)getuid()) < 0) {
        return NULL;
    }
    return path;
}

/* ---- JSON: just enough to read authd's answers ---- */

static const char *skip_space(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* The end of the string starting at `p` (at its opening quote), or NULL. */
static const char *skip_string(const char *p, const char *end) {
    if (p >= end || *p != '"') return NULL;
    for (p++; p < end; p++) {
        if (*p == '\\') { p++; continue; }
        if (*p == '"') return p + 1;
        if ((unsigned char)*p < 0x20) return NULL;
    }
    return NULL;
}

/* The end of the value starting at `p`, or NULL when it is not JSON. `depth` bounds nesting. */
static const char *skip_value(const char *p, const char *end, int depth) {
    p = skip_space(p, end);
    if (p >= end || depth > 64) return NULL;
    if (*p == '"') return skip_string(p, end);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        p = skip_space(p + 1, end);
        if (p < end && *p == close) return p + 1;
        for (;;) {
            if (close == '}') {
                p = skip_string(skip_space(p, end), end);
                if (!p) return NULL;
                p = skip_space(p, end);
                if (p >= end || *p != ':') return NULL;
                p++;
            }
            p = skip_value(p, end, depth + 1);
            if (!p) return NULL;
            p = skip_space(p, end);
            if (p >= end) return NULL;
            if (*p == close) return p + 1;
            if (*p != ',') return NULL;
            p++;
        }
    }
    const char *start = p;
    while (p < end && (strchr("+-.eE", *p) || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z'))) p++;
    if (p == start) return NULL;
    size_t length = (size_t)(p - start);
    if ((length == 4 && (!memcmp(start, "true", 4) || !memcmp(start, "null", 4))) || (length == 5 && !memcmp(start, "false", 5)))
        return p;
    return (*start == '-' || (*start >= '0' && *start <= '9')) ? p : NULL;
}

/* A span of the message: [start, end). */
typedef struct { const char *start, *end; } span;

/* The value of member `key` in the object `object` (a JSON object's span), unescaped keys only. */
static int member(span object, const char *key, span *value) {
    const char *p = skip_space(object.start, object.end), *end = object.end;
    if (p >= end || *p != '{') return 0;
    p = skip_space(p + 1, end);
    size_t key_length = strlen(key);
    while (p < end && *p == '"') {
        const char *key_end = skip_string(p, end);
        if (!key_end) return 0;
        int matches = (size_t)(key_end - p - 2) == key_length && !memcmp(p + 1, key, key_length);
        p = skip_space(key_end, end);
        if (p >= end || *p != ':') return 0;
        const char *value_start = skip_space(p + 1, end);
        const char *value_end = skip_value(value_start, end, 0);
        if (!value_end) return 0;
        if (matches) { value->start = value_start; value->end = value_end; return 1; }
        p = skip_space(value_end, end);
        if (p < end && *p == ',') p = skip_space(p + 1, end);
    }
    return 0;
}

static int is_kind(span value, char first) { return value.start < value.end && *value.start == first; }

static void put_utf8(char **out, unsigned code) {
    if (code < 0x80) { *(*out)++ = (char)code; return; }
    if (code < 0x800) { *(*out)++ = (char)(0xC0 | code >> 6); }
    else if (code < 0x10000) { *(*out)++ = (char)(0xE0 | code >> 12); *(*out)++ = (char)(0x80 | ((code >> 6) & 0x3F)); }
    else { *(*out)++ = (char)(0xF0 | code >> 18); *(*out)++ = (char)(0x80 | ((code >> 12) & 0x3F)); *(*out)++ = (char)(0x80 | ((code >> 6) & 0x3F)); }
    *(*out)++ = (char)(0x80 | (code & 0x3F));
}

static int hex4(const char *p, const char *end, unsigned *code) {
    if (end - p < 4) return 0;
    *code = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        unsigned digit = c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                       : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16;
        if (digit > 15) return 0;
        *code = *code << 4 | digit;
    }
    return 1;
}

/* The JSON string `value`, unescaped, in a string to free(); NULL when it is not a string (or
 * holds a NUL). */
static char *string_value(span value) {
    if (!is_kind(value, '"')) return NULL;
    const char *p = value.start + 1, *end = value.end - 1;
    char *text = malloc((size_t)(end - p) + 1), *out = text;
    if (!text) return NULL;
    while (p < end) {
        if (*p != '\\') { *out++ = *p++; continue; }
        p++;
        if (p >= end) goto bad;
        char c = *p++;
        switch (c) {
        case '"': case '\\': case '/': *out++ = c; break;
        case 'b': *out++ = '\b'; break;
        case 'f': *out++ = '\f'; break;
        case 'n': *out++ = '\n'; break;
        case 'r': *out++ = '\r'; break;
        case 't': *out++ = '\t'; break;
        case 'u': {
            unsigned code;
            if (!hex4(p, end, &code)) goto bad;
            p += 4;
            if (code >= 0xD800 && code < 0xDC00) {
                unsigned low;
                if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || !hex4(p + 2, end, &low) || low < 0xDC00 || low > 0xDFFF) goto bad;
                p += 6;
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
            } else if (code >= 0xDC00 && code < 0xE000) {
                goto bad;
            }
            if (code == 0) goto bad;
            put_utf8(&out, code);
            break;
        }
        default: goto bad;
        }
    }
    *out = '\0';
    return text;
bad:
    free(text);
    return NULL;
}

/* The integer `value`, when it is one (no fraction, no exponent). */
static int integer_value(span value, int64_t *number) {
    if (value.start >= value.end) return 0;
    char digits[32];
    size_t length = (size_t)(value.end - value.start);
    if (length >= sizeof digits) return 0;
    memcpy(digits, value.start, length);
    digits[length] = '\0';
    char *rest;
    errno = 0;
    long long parsed = strtoll(digits, &rest, 10);
    if (errno || *rest) return 0;
    *number = parsed;
    return 1;
}

/* A copy of `value`'s text, to free(). */
static char *copy_span(span value) { return strndup(value.start, (size_t)(value.end - value.start)); }

/* Appends `text` to `out` as a JSON string. `out` must hold 6 bytes per byte of text plus 3. */
static char *put_json_string(char *out, const char *text) {
    *out++ = '"';
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\') { *out++ = '\\'; *out++ = (char)*p; }
        else if (*p < 0x20) out += sprintf(out, "\\u%04x", *p);
        else *out++ = (char)*p;
    }
    *out++ = '"';
    *out = '\0';
    return out;
}

/* ---- one connection ---- */

typedef struct {
    int fd;
    char *buffer;       /* bytes read and not yet taken as lines */
    size_t used, capacity;
    long next_id;
    char *hello;        /* the hello answer's result object */
} connection;

/* The warnings printed so far, one bit per kind: each once per process, not per connection;
 * any thread may be the first. */
static int warned_about_protocol;
enum { WARNED_NEWER = 1, WARNED_OLDER = 2, WARNED_UNREADABLE = 4 };

static void warn_about_protocol(span hello) {
    span version;
    char *text = member(hello, "protocol_version", &version) ? string_value(version) : NULL;
    char *rest = NULL;
    long daemon = text && text[0] >= '0' && text[0] <= '9' ? strtol(text, &rest, 10) : -1;
    if (rest && *rest != '\0' && *rest != '.') daemon = -1;
    long client = strtol(AUTHD_PROTOCOL_VERSION, NULL, 10);
    int kind = daemon < 0 ? WARNED_UNREADABLE : daemon > client ? WARNED_NEWER : daemon < client ? WARNED_OLDER : 0;
    if (kind && !(__atomic_fetch_or(&warned_about_protocol, kind, __ATOMIC_RELAXED) & kind)) {
        if (kind == WARNED_NEWER)
            fprintf(stderr, "authd-client: authd speaks protocol %s, newer than this library's %s: update the library (calls may fail)\n",
                    text, AUTHD_PROTOCOL_VERSION);
        else if (kind == WARNED_OLDER)
            fprintf(stderr, "authd-client: authd speaks protocol %s, older than this library's %s: update authd (calls may fail)\n",
                    text, AUTHD_PROTOCOL_VERSION);
        else
            fprintf(stderr, "authd-client: authd reports a protocol version this library (protocol %s) cannot read; calls may fail\n",
                    AUTHD_PROTOCOL_VERSION);
    }
    free(text);
}

static void connection_close(connection *c) {
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    if (c->buffer) explicit_bzero(c->buffer, c->capacity);
    free(c->buffer);
    free(c->hello);
    c->buffer = c->hello = NULL;
    c->used = c->capacity = 0;
}

static int64_t now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Takes the next whole line out of the buffer into `*line` (to free()), reading until it
 * arrives or `deadline` (CLOCK_MONOTONIC ms; -1: do not wait, only what is buffered or readable
 * now). Returns 1 with a line, 0 when none came (timed out, or nothing without waiting), or an
 * error code with `error` filled. */
static int read_line(connection *c, int64_t deadline, char **line, authd_error *error) {
    for (;;) {
        char *newline = c->used ? memchr(c->buffer, '\n', c->used) : NULL;
        if (newline) {
            size_t length = (size_t)(newline - c->buffer);
            *line = strndup(c->buffer, length);
            if (!*line) { fail(error, AUTHD_PROTOCOL_ERROR, NULL, "out of memory"); return -AUTHD_PROTOCOL_ERROR; }
            explicit_bzero(c->buffer, length + 1);
            memmove(c->buffer, newline + 1, c->used - length - 1);
            c->used -= length + 1;
            return 1;
        }
        if (c->used > MAX_LINE) {
            fail(error, AUTHD_PROTOCOL_ERROR, NULL, "authd sent a line longer than %d bytes", MAX_LINE);
            return -AUTHD_PROTOCOL_ERROR;
        }
        if (deadline >= 0) {
            int64_t left = deadline - now_ms();
            if (left <= 0) {
                fail(error, AUTHD_TIMED_OUT, NULL, "authd did not answer in time; check 'journalctl --user -u authd'");
                return 0;
            }
            struct pollfd wait_for = { .fd = c->fd, .events = POLLIN };
            int ready = poll(&wait_for, 1, left > 60000 ? 60000 : (int)left);
            if (ready < 0 && errno != EINTR) { fail(error, AUTHD_DAEMON_UNAVAILABLE, NULL, "cannot wait for authd: %s", strerror(errno)); return -AUTHD_DAEMON_UNAVAILABLE; }
            if (ready <= 0) continue;
        }
        if (c->capacity - c->used < 65536) {
            size_t capacity = c->capacity ? c->capacity * 2 : 65536;
            char *grown = malloc(capacity);
            if (!grown) { fail(error, AUTHD_PROTOCOL_ERROR, NULL, "out of memory"); return -AUTHD_PROTOCOL_ERROR; }
            if (c->buffer) { memcpy(grown, c->buffer, c->used); explicit_bzero(c->buffer, c->capacity); free(c->buffer); }
            c->buffer = grown;
            c->capacity = capacity;
        }
        ssize_t got = recv(c->fd, c->buffer + c->used, c->capacity - c->used, deadline < 0 ? MSG_DONTWAIT : 0);
        if (got < 0 && (errno == EINTR)) continue;
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (deadline < 0) return 0;
            continue;
        }
        if (got <= 0) {
            fail(error, AUTHD_DAEMON_UNAVAILABLE, NULL, "authd closed the connection");
            return -AUTHD_DAEMON_UNAVAILABLE;
        }
        c->used += (size_t)got;
    }
}

/* The typed error in `error_value` (an answer's "error" member). */
static authd_code error_from(span error_value, authd_error *error) {
    span data, reason_value, message_value;
    char *reason = member(error_value, "data", &data) && member(data, "reason", &reason_value) ? string_value(reason_value) : NULL;
    char *message = member(error_value, "message", &message_value) ? string_value(message_value) : NULL;
    authd_code code = reason ? code_for_reason(reason) : AUTHD_REJECTED;
    fail(error, code, reason, "%s", message ? message : "authd refused the request");
    free(reason);
    free(message);
    return code;
}

/* A request line, newline included, to free(), its length in `*length`: the one writer of every
 * call (authctl's front, which includes this file, writes its token request with it too). NULL
 * when out of memory. `id` and `params_json` are JSON text. */
static char *request_text(const char *id, const char *method, const char *params_json, int *length) {
    char *request = NULL;
    *length = asprintf(&request, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"%s\",\"params\":%s}\n", id, method, params_json);
    return *length < 0 ? NULL : request;
}

/* The params of a `session.token` call, to free(): the minimum validity (left out unless
 * `given`) and the profile (NULL: authd's default). NULL when out of memory. */
static char *params_with_profile(const char *profile, const char *extra);
static char *token_params(const char *profile, int given, long min_validity) {
    char extra[48] = "";
    if (given) snprintf(extra, sizeof extra, "\"min_validity\":%ld", min_validity);
    return params_with_profile(profile, extra);
}

/* The access token (a JSON string's span, quotes included) and the expiry in the result object of
 * a `session.token` call; 0 when it lacks either: the one reader of token answers. */
static int token_in_result(span result, span *token, int64_t *expires_at) {
    span expiry;
    return member(result, "access_token", token) && is_kind(*token, '"') && member(result, "expires_at", &expiry)
           && integer_value(expiry, expires_at);
}

/* Sends one call and waits for its answer: AUTHD_OK with the result's text in `*result` (to
 * free()), or the typed error. Events on the connection are handed to `on_event` (may be NULL). */
static authd_code call(connection *c, const char *method, const char *params_json, int timeout_ms, char **result,
                       void (*on_event)(span params, void *context), void *context, authd_error *error) {
    long id = ++c->next_id;
    char id_text[24];
    snprintf(id_text, sizeof id_text, "%ld", id);
    int length;
    char *request = request_text(id_text, method, params_json, &length);
    if (!request) { fail(error, AUTHD_PROTOCOL_ERROR, NULL, "out of memory"); return AUTHD_PROTOCOL_ERROR; }
    /* A write to a connection authd already refused fails; its reason is still read below. */
    for (int sent = 0; sent < length;) {
        ssize_t wrote = send(c->fd, request + sent, (size_t)(length - sent), MSG_NOSIGNAL);
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) break;
        sent += (int)wrote;
    }
    free(request);
    int64_t deadline = now_ms() + timeout_ms;
    for (;;) {
        char *line = NULL;
        int got = read_line(c, deadline, &line, error);
        if (got == 0) return AUTHD_TIMED_OUT;
        if (got < 0) return (authd_code)-got;
        span message = { line, line + strlen(line) };
        const char *end = skip_value(line, message.end, 0);
        if (!end || skip_space(end, message.end) != message.end || !is_kind((span){ skip_space(line, message.end), message.end }, '{')) {
            free(line);
            fail(error, AUTHD_PROTOCOL_ERROR, NULL, "authd sent a line that is not a JSON object");
            return AUTHD_PROTOCOL_ERROR;
        }
        span id_value, method_value, params, error_value, result_value;
        int has_id = member(message, "id", &id_value);
        if (!has_id && member(message, "method", &method_value)) {
            char *name = string_value(method_value);
            if (name && strcmp(name, "event") == 0 && on_event && member(message, "params", &params)) on_event(params, context);
            free(name);
            free(line);
            continue;
        }
        int64_t answered = -1;
        int is_null = has_id && id_value.end - id_value.start == 4 && !memcmp(id_value.start, "null", 4);
        if (has_id && !is_null && (!integer_value(id_value, &answered) || answered != id)) { free(line); continue; }
        authd_code code = AUTHD_OK;
        if (member(message, "error", &error_value) && is_kind(error_value, '{')) {
            code = error_from(error_value, error);
        } else if (is_null || !has_id) {
            free(line);
            continue;
        } else if (member(message, "result", &result_value)) {
            *result = copy_span(result_value);
            if (!*result) {
                code = AUTHD_PROTOCOL_ERROR;
                fail(error, code, NULL, "out of memory");
            }
        } else {
            fail(error, AUTHD_PROTOCOL_ERROR, NULL, "authd's answer has neither result nor error");
            code = AUTHD_PROTOCOL_ERROR;
        }
        explicit_bzero(line, (size_t)(message.end - line));
        free(line);
        return code;
    }
}

/* Connects to `path` and checks who serves it; the descriptor in `*fd`. Returns AUTHD_OK or the
 * error. (authctl's front, which includes this file, connects through it too.) */
static authd_code socket_open(int *fd, const char *path, authd_error *error) {
    *fd = -1;
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof address.sun_path) {
        fail(error, AUTHD_DAEMON_UNAVAILABLE, NULL, "the socket path %s is too long", path);
        return AUTHD_DAEMON_UNAVAILABLE;
    }
    strcpy(address.sun_path, path);
    int socket_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (socket_fd < 0) { fail(error, AUTHD_DAEMON_UNAVAILABLE, NULL, "cannot make a socket: %s", strerror(errno)); return AUTHD_DAEMON_UNAVAILABLE; }
    if (connect(socket_fd, (struct sockaddr *)&address, sizeof address) != 0) {
        int code = errno;
        close(socket_fd);
        if (code == ENOENT || code == ECONNREFUSED || code == ENOTDIR)
            fail(error, AUTHD_DAEMON_UNAVAILABLE, NULL, "authd is not running (nothing listens on %s). Start it with "
                 "'systemctl --user enable --now authd.socket' (after 'make install'), or run 'authd' in a terminal", path);
        else
            fail(error, AUTHD_DAEMON_UNAVAILABLE, NULL, "cannot talk to authd at %s: %s", path, strerror(code));
        return AUTHD_DAEMON_UNAVAILABLE;
    }
    /* Checked before the first byte is written: whoever could put a socket at the path would
     * otherwise be asked for tokens and believed. Root is no exception. */
    struct ucred peer;
    socklen_t size = sizeof peer;
    if (getsockopt(socket_fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0) {
        fail(error, AUTHD_DAEMON_UNAVAILABLE, NULL, "cannot tell who serves %s (SO_PEERCRED: %s), so nothing was sent to it", path, strerror(errno));
        close(socket_fd);
        return AUTHD_DAEMON_UNAVAILABLE;
    }
    if (peer.uid != getuid()) {
        fail(error, AUTHD_FOREIGN_DAEMON, NULL, "%s is served by a process of uid %u, not by you (uid %u): it is not your authd, so "
             "nothing was sent to it. Check AUTHD_SOCKET and XDG_RUNTIME_DIR, and who created that socket",
             path, (unsigned)peer.uid, (unsigned)getuid());
        if (error) error->foreign_uid = (long)peer.uid;
        close(socket_fd);
        return AUTHD_FOREIGN_DAEMON;
    }
    *fd = socket_fd;
    return AUTHD_OK;
}

/* Connects to `path`, checks who serves it and says hello. Returns AUTHD_OK or the error. */
static authd_code connection_open(connection *c, const char *path, const char *client_name, authd_error *error) {
    memset(c, 0, sizeof *c);
    authd_code opened = socket_open(&c->fd, path, error);
    if (opened != AUTHD_OK) return opened;
    const char *name = client_name ? client_name : "c";
    char *params = malloc(strlen(name) * 6 + 64);
    if (!params) { connection_close(c); fail(error, AUTHD_PROTOCOL_ERROR, NULL, "out of memory"); return AUTHD_PROTOCOL_ERROR; }
    char *out = stpcpy(params, "{\"client\":");
    out = put_json_string(out, name);
    strcpy(out, ",\"protocol_version\":\"" AUTHD_PROTOCOL_VERSION "\"}");
    authd_code code = call(c, "hello", params, HELLO_TIMEOUT_MS, &c->hello, NULL, NULL, error);
    free(params);
    if (code != AUTHD_OK) { connection_close(c); return code; }
    warn_about_protocol((span){ c->hello, c->hello + strlen(c->hello) });
    return AUTHD_OK;
}

/* The params object of a call: `extra` members (JSON text, may be "") and the profile. */
static char *params_with_profile(const char *profile, const char *extra) {
    size_t size = strlen(extra) + (profile ? strlen(profile) * 6 : 0) + 32;
    char *params = malloc(size), *out = params;
    if (!params) return NULL;
    out = stpcpy(out, "{");
    out = stpcpy(out, extra);
    if (profile) {
        out = stpcpy(out, *extra ? ",\"profile\":" : "\"profile\":");
        out = put_json_string(out, profile);
    }
    strcpy(out, "}");
    return params;
}

/* Where a client or an event stream connects and as what: its own copies of the profile (NULL
 * for authd's default), the socket's path and the client's display name. */
typedef struct { char *profile, *path, *name; } destination;

/* Copies the three (the path from the environment when NULL); 0, or -1 when out of memory. */
static int destination_init(destination *d, const char *profile, const char *socket_path, const char *client_name) {
    d->profile = profile ? strdup(profile) : NULL;
    d->path = socket_path ? strdup(socket_path) : authd_socket_path();
    d->name = strdup(client_name ? client_name : "c");
    return d->path && d->name && (!profile || d->profile) ? 0 : -1;
}

static void destination_free(destination *d) {
    free(d->profile);
    free(d->path);
    free(d->name);
}

/* ---- the request client ---- */

struct authd_client {
    destination to;
    connection connection;
    /* The latest hello answer, kept while the connection is closed. */
    char *last_hello;
};

PUBLIC void authd_client_free(authd_client *client) {
    if (!client) return;
    connection_close(&client->connection);
    free(client->last_hello);
    destination_free(&client->to);
    free(client);
}

/* Opens the client's connection and keeps its hello. */
static authd_code client_open(authd_client *client, authd_error *error) {
    authd_code code = connection_open(&client->connection, client->to.path, client->to.name, error);
    if (code != AUTHD_OK) return code;
    char *hello = strdup(client->connection.hello);
    if (hello) {
        free(client->last_hello);
        client->last_hello = hello;
    }
    if (client->last_hello) return AUTHD_OK;
    connection_close(&client->connection);
    fail(error, AUTHD_PROTOCOL_ERROR, NULL, "out of memory");
    return AUTHD_PROTOCOL_ERROR;
}

static authd_code check_profile(const char *profile, const char *hello, authd_error *error) {
    span profiles;
    if (!profile) return AUTHD_OK;
    span answer = { hello, hello + strlen(hello) };
    if (member(answer, "profiles", &profiles) && is_kind(profiles, '[')) {
        const char *p = skip_space(profiles.start + 1, profiles.end);
        while (p < profiles.end && *p == '"') {
            const char *end = skip_string(p, profiles.end);
            char *name = end ? string_value((span){ p, end }) : NULL;
            int found = name && strcmp(name, profile) == 0;
            free(name);
            if (found) return AUTHD_OK;
            if (!end) break;
            p = skip_space(end, profiles.end);
            if (p < profiles.end && *p == ',') p = skip_space(p + 1, profiles.end);
        }
    }
    fail(error, AUTHD_UNKNOWN_PROFILE, "unknown_profile", "authd has no profile named '%s'; add it with "
         "'authctl profile add %s --url URL --anon-key KEY'", profile, profile);
    return AUTHD_UNKNOWN_PROFILE;
}

PUBLIC authd_client *authd_client_connect(const char *profile, const char *socket_path, const char *client_name, authd_error *error) {
    clear_error(error);
    authd_client *client = calloc(1, sizeof *client);
    if (!client) { fail(error, AUTHD_PROTOCOL_ERROR, NULL, "out of memory"); return NULL; }
    client->connection.fd = -1;
    if (destination_init(&client->to, profile, socket_path, client_name) != 0) {
        authd_client_free(client);
        fail(error, AUTHD_PROTOCOL_ERROR, NULL, "out of memory");
        return NULL;
    }
    if (client_open(client, error) != AUTHD_OK || check_profile(profile, client->last_hello, error) != AUTHD_OK) {
        authd_client_free(client);
        return NULL;
    }
    return client;
}

PUBLIC const char *authd_client_hello(const authd_client *client) { return client->last_hello; }

/* One call on the client's connection; a broken one (authd restarted, or it closed the
 * connection as idle) is opened again once and the call sent again. */
static authd_code client_call(authd_client *client, const char *method, const char *params, char **result, authd_error *error) {
    int reused = client->connection.fd >= 0;
    authd_code code;
    if (!reused && (code = client_open(client, error)) != AUTHD_OK) return code;
    code = call(&client->connection, method, params, CALL_TIMEOUT_MS, result, NULL, NULL, error);
    if (code == AUTHD_DAEMON_UNAVAILABLE || code == AUTHD_TIMED_OUT || code == AUTHD_PROTOCOL_ERROR)
        connection_close(&client->connection);
    if (code == AUTHD_DAEMON_UNAVAILABLE && reused) {
        clear_error(error);
        if ((code = client_open(client, error)) != AUTHD_OK) return code;
        code = call(&client->connection, method, params, CALL_TIMEOUT_MS, result, NULL, NULL, error);
        if (code == AUTHD_DAEMON_UNAVAILABLE || code == AUTHD_TIMED_OUT || code == AUTHD_PROTOCOL_ERROR)
            connection_close(&client->connection);
    }
    return code;
}

PUBLIC authd_code authd_client_token(authd_client *client, int min_validity, authd_token *token, authd_error *error) {
    clear_error(error);
    memset(token, 0, sizeof *token);
    char *params = token_params(client->to.profile, 1, min_validity), *result = NULL;
    if (!params) { fail(error, AUTHD_PROTOCOL_ERROR, NULL, "out of memory"); return AUTHD_PROTOCOL_ERROR; }
    authd_code code = client_call(client, "session.token", params, &result, error);
    free(params);
    if (code != AUTHD_OK) return code;
    span answer = { result, result + strlen(result) }, value;
    token->access_token = token_in_result(answer, &value, &token->expires_at) ? string_value(value) : NULL;
    if (!token->access_token) {
        authd_token_clear(token);
        code = AUTHD_PROTOCOL_ERROR;
        fail(error, code, NULL, "authd's token answer lacks access_token or expires_at");
    }
    explicit_bzero(result, strlen(result));
    free(result);
    return code;
}

PUBLIC void authd_token_clear(authd_token *token) {
    if (!token) return;
    if (token->access_token) explicit_bzero(token->access_token, strlen(token->access_token));
    free(token->access_token);
    token->access_token = NULL;
    token->expires_at = 0;
}

PUBLIC authd_code authd_client_status(authd_client *client, char **status_json, authd_error *error) {
    clear_error(error);
    *status_json = NULL;
    char *params = params_with_profile(client->to.profile, "");
    if (!params) { fail(error, AUTHD_PROTOCOL_ERROR, NULL, "out of memory"); return AUTHD_PROTOCOL_ERROR; }
    authd_code code = client_call(client, "session.status", params, status_json, error);
    free(params);
    return code;
}

/* ---- authd's sign-in page ---- */

/* A page lives ten minutes; its wait gets a little longer, for authd to say that it expired. */
#define PAGE_LIFETIME_S 600
#define PAGE_WAIT_MARGIN_S 30
/* The cancel sent for a caller who gave up: soon, since nothing waits for its answer. */
#define PAGE_CANCEL_TIMEOUT_MS 15000

/* Appends `"name":"value"` (a JSON string; a comma first unless it is the first member) to the
 * `extra` members being built at `out`; nothing when `value` is NULL. `out` must hold 6 bytes
 * per byte of value plus the name and 8. */
static char *put_string_member(char *out, const char *start, const char *name, const char *value) {
    if (!value) return out;
    if (out != start) *out++ = ',';
    out += sprintf(out, "\"%s\":", name);
    return put_json_string(out, value);
}

/* The params of a call about page `flow_id`, to free(); NULL when out of memory. */
static char *page_params(const char *profile, const char *flow_id) {
    char *extra = malloc(strlen(flow_id) * 6 + 16);
    if (!extra) return NULL;
    *extra = '\0';
    put_string_member(extra, extra, "flow_id", flow_id);
    char *params = params_with_profile(profile, extra);
    free(extra);
    return params;
}

/* Whether `value` is the JSON literal `true`. */
static int is_true(span value) { return value.end - value.start == 4 && !memcmp(value.start, "true", 4); }

PUBLIC void authd_sign_in_page_clear(authd_sign_in_page *page) {
    if (!page) return;
    if (page->url) explicit_bzero(page->url, strlen(page->url));
    free(page->flow_id);
    free(page->url);
    memset(page, 0, sizeof *page);
}

PUBLIC authd_code authd_client_begin_interactive_sign_in(authd_client *client, const char *method, const char *email, const char *aal,
                                                         int open_browser, authd_sign_in_page *page, authd_error *error) {
    clear_error(error);
    memset(page, 0, sizeof *page);
    size_t size = 96 + (method ? strlen(method) * 6 : 0) + (email ? strlen(email) * 6 : 0) + (aal ? strlen(aal) * 6 : 0);
    char *extra = malloc(size), *out = extra;
    if (!extra) { fail(error, AUTHD_PROTOCOL_ERROR, NULL, "out of memory"); return AUTHD_PROTOCOL_ERROR; }
    out = put_string_member(out, extra, "method", method);
    out = put_string_member(out, extra, "email", email);
    out = put_string_member(out, extra, "aal", aal);
    sprintf(out, "%s\"open_browser\":%s", out == extra ? "" : ",", open_browser ? "true" : "false");
    char *params = params_with_profile(client->to.profile, extra), *result = NULL;
    free(extra);
    if (!params) { fail(error, AUTHD_PROTOCOL_ERROR, NULL, "out of memory"); return AUTHD_PROTOCOL_ERROR; }
    authd_code code = client_call(client, "session.beginInteractiveSignIn", params, &result, error);
    free(params);
    if (code != AUTHD_OK) return code;
    span answer = { result, result + strlen(result) }, flow_id, url, expires_in, browser_opened;
    int64_t seconds = 0;
    if (member(answer, "flow_id", &flow_id) && member(answer, "url", &url) && member(answer, "expires_in", &expires_in)
        && integer_value(expires_in, &seconds) && seconds > 0 && seconds < (1 << 30) && member(answer, "browser_opened", &browser_opened)) {
        page->flow_id = string_value(flow_id);
        page->url = string_value(url);
        page->expires_in = (int)seconds;
        page->browser_opened = is_true(browser_opened);
    }
    explicit_bzero(result, strlen(result));
    free(result);
    if (!page->flow_id || !page->url) {
        authd_sign_in_page_clear(page);
        fail(error, AUTHD_PROTOCOL_ERROR, NULL, "authd's sign-in page answer lacks flow_id, url, expires_in or browser_opened");
        return AUTHD_PROTOCOL_ERROR;
    }
    return AUTHD_OK;
}

PUBLIC authd_code authd_client_wait_for_interactive_sign_in(authd_client *client, const char *flow_id, int timeout, char **status_json,
                                                            authd_error *error) {
    clear_error(error);
    *status_json = NULL;
    char *params = page_params(client->to.profile, flow_id);
    if (!params) { fail(error, AUTHD_PROTOCOL_ERROR, NULL, "out of memory"); return AUTHD_PROTOCOL_ERROR; }
    /* On a connection of its own, not the client's: the wait holds it for minutes, and it touches
     * nothing else of the client, so another thread may use the client meanwhile. */
    connection waiting;
    authd_code code = connection_open(&waiting, client->to.path, client->to.name, error);
    if (code == AUTHD_OK) {
        int seconds = timeout > 0 ? timeout : PAGE_LIFETIME_S + PAGE_WAIT_MARGIN_S;
        if (seconds > 86400) seconds = 86400;  /* a page lives minutes; a day keeps the milliseconds in an int */
        code = call(&waiting, "session.waitForInteractiveSignIn", params, seconds * 1000, status_json, NULL, NULL, error);
        connection_close(&waiting);
    }
    free(params);
    return code;
}

PUBLIC authd_code authd_client_cancel_interactive_sign_in(authd_client *client, const char *flow_id, int *cancelled, authd_error *error) {
    clear_error(error);
    if (cancelled) *cancelled = 0;
    char *params = page_params(client->to.profile, flow_id), *result = NULL;
    if (!params) { fail(error, AUTHD_PROTOCOL_ERROR, NULL, "out of memory"); return AUTHD_PROTOCOL_ERROR; }
    authd_code code = client_call(client, "session.cancelInteractiveSignIn", params, &result, error);
    free(params);
    if (code != AUTHD_OK) return code;
    span answer = { result, result + strlen(result) }, value;
    if (member(answer, "cancelled", &value) && cancelled) *cancelled = is_true(value);
    free(result);
    return AUTHD_OK;
}

PUBLIC authd_code authd_client_sign_in_interactively(authd_client *client, const char *method, const char *email, const char *aal,
                                                     int open_browser, int timeout, authd_sign_in_page_callback opened, void *user_data,
                                                     char **status_json, authd_error *error) {
    clear_error(error);
    *status_json = NULL;
    if (!open_browser && !opened) {
        fail(error, AUTHD_REJECTED, NULL, "a sign-in page authd does not open in the browser needs a callback to hand its address to "
             "the user's browser");
        return AUTHD_REJECTED;
    }
    authd_sign_in_page page;
    authd_code code = authd_client_begin_interactive_sign_in(client, method, email, aal, open_browser, &page, error);
    if (code != AUTHD_OK) return code;
    if (opened && opened(&page, user_data) != 0) {
        code = AUTHD_REJECTED;
        fail(error, code, "sign_in_cancelled", "the sign-in was given up on before the page was used: the page was closed");
    } else if (!opened && !page.browser_opened) {
        code = AUTHD_REJECTED;
        fail(error, code, "sign_in_failed", "authd could not start a browser on its sign-in page (no display or $BROWSER in its "
             "environment, or the browser did not start), and no callback was given to show the page's address: pass one, or sign in "
             "with 'authctl login --email ADDRESS'");
    } else {
        code = authd_client_wait_for_interactive_sign_in(client, page.flow_id, timeout > 0 ? timeout : page.expires_in + PAGE_WAIT_MARGIN_S,
                                                         status_json, error);
    }
    if (code != AUTHD_OK) {
        /* Given up on (the timeout, the callback, authd gone) or ended: the page must not stay open
         * for nobody. A page that ended already answers cancelled: false. On a connection of its
         * own, as the wait was: another thread may be using the client's meanwhile. */
        char *params = page_params(client->to.profile, page.flow_id), *result = NULL;
        authd_error ignored;
        connection cancelling;
        if (params && connection_open(&cancelling, client->to.path, client->to.name, &ignored) == AUTHD_OK) {
            if (call(&cancelling, "session.cancelInteractiveSignIn", params, PAGE_CANCEL_TIMEOUT_MS, &result, NULL, NULL, &ignored) == AUTHD_OK)
                free(result);
            connection_close(&cancelling);
        }
        free(params);
    }
    authd_sign_in_page_clear(&page);
    return code;
}

/* ---- events ---- */

struct authd_events {
    destination to;
    connection connection;
    /* What the app watches: an epoll set of the connection (while there is one), a timer that
     * fires when it is time to connect again, and an eventfd raised while events wait in memory
     * (read along with the subscription's answer), so that the descriptor turns readable for
     * them too. Its number never changes, so the app's watch holds across reconnects. */
    int epoll, timer, wakeup;
    int delay_ms;
    int next_is_after_reconnect;
    int ended;
    char **queued;      /* params of events read during a call, in order */
    size_t queued_count;
};

/* Keeps one event's params (read during the subscription's call) for the next dispatch. */
static void queue_event(span params, void *context) {
    authd_events *events = context;
    if (!is_kind(params, '{')) return;
    char **grown = realloc(events->queued, (events->queued_count + 1) * sizeof *grown);
    char *copy = copy_span(params);
    if (!grown || !copy) { free(copy); if (grown) events->queued = grown; return; }
    events->queued = grown;
    events->queued[events->queued_count++] = copy;
}

/* Hands one event's params to the app's callback. */
static void deliver(authd_events *events, span params, authd_event_callback callback, void *user_data) {
    span value;
    char *name = member(params, "event", &value) ? string_value(value) : NULL;
    char *profile = member(params, "profile", &value) ? string_value(value) : NULL;
    char *reason = member(params, "reason", &value) ? string_value(value) : NULL;
    char *status = member(params, "status", &value) && is_kind(value, '{') ? copy_span(value) : NULL;
    char *flow_id = member(params, "flow_id", &value) ? string_value(value) : NULL;
    char *message = member(params, "message", &value) ? string_value(value) : NULL;
    authd_event event = {
        .name = name ? name : "", .profile = profile ? profile : "", .reason = reason ? reason : "",
        .status_json = status ? status : "{}", .after_reconnect = 0, .flow_id = flow_id ? flow_id : "",
        .message = message ? message : "",
    };
    if (events->next_is_after_reconnect && strcmp(event.name, "INITIAL_SESSION") == 0) {
        event.after_reconnect = 1;
        events->next_is_after_reconnect = 0;
    }
    if (callback) callback(&event, user_data);
    free(name);
    free(profile);
    free(reason);
    free(status);
    free(flow_id);
    free(message);
}

static void raise_wakeup(authd_events *events) {
    uint64_t one = 1;
    if (write(events->wakeup, &one, sizeof one) < 0) { /* already raised past its limit: readable anyway */ }
}

/* Connects and subscribes; events read meanwhile are queued, and the descriptor raised for them. */
static authd_code events_connect(authd_events *events, authd_error *error) {
    authd_code code = connection_open(&events->connection, events->to.path, events->to.name, error);
    if (code != AUTHD_OK) return code;
    char *params = params_with_profile(events->to.profile, ""), *result = NULL;
    if (!params) { connection_close(&events->connection); fail(error, AUTHD_PROTOCOL_ERROR, NULL, "out of memory"); return AUTHD_PROTOCOL_ERROR; }
    code = call(&events->connection, "events.subscribe", params, HELLO_TIMEOUT_MS, &result, queue_event, events, error);
    free(params);
    free(result);
    if (code != AUTHD_OK) {
        /* Events of a subscription that failed belong to no stream the app will see. */
        for (size_t i = 0; i < events->queued_count; i++) free(events->queued[i]);
        events->queued_count = 0;
        connection_close(&events->connection);
        return code;
    }
    struct epoll_event watch = { .events = EPOLLIN };
    watch.data.fd = events->connection.fd;
    if (epoll_ctl(events->epoll, EPOLL_CTL_ADD, events->connection.fd, &watch) != 0) {
        connection_close(&events->connection);
        fail(error, AUTHD_DAEMON_UNAVAILABLE, NULL, "cannot watch the events' connection: %s", strerror(errno));
        return AUTHD_DAEMON_UNAVAILABLE;
    }
    events->delay_ms = FIRST_DELAY_MS;
    if (events->queued_count || events->connection.used) raise_wakeup(events);
    return AUTHD_OK;
}

/* The connection is gone: the timer is due after the delay, which doubles up to its longest. */
static void events_wait_to_retry(authd_events *events) {
    connection_close(&events->connection);  /* closing the socket also takes it out of the set */
    struct itimerspec due = { .it_value = { .tv_sec = events->delay_ms / 1000, .tv_nsec = (long)(events->delay_ms % 1000) * 1000000 } };
    timerfd_settime(events->timer, 0, &due, NULL);
    events->delay_ms = events->delay_ms * 2 > LONGEST_DELAY_MS ? LONGEST_DELAY_MS : events->delay_ms * 2;
}

PUBLIC authd_events *authd_events_subscribe(const char *profile, const char *socket_path, const char *client_name, authd_error *error) {
    clear_error(error);
    authd_events *events = calloc(1, sizeof *events);
    if (!events) { fail(error, AUTHD_PROTOCOL_ERROR, NULL, "out of memory"); return NULL; }
    events->connection.fd = -1;
    int copied = destination_init(&events->to, profile, socket_path, client_name);
    events->epoll = epoll_create1(EPOLL_CLOEXEC);
    events->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    events->wakeup = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event timer_watch = { .events = EPOLLIN }, wakeup_watch = { .events = EPOLLIN };
    timer_watch.data.fd = events->timer;
    wakeup_watch.data.fd = events->wakeup;
    if (copied != 0 || events->epoll < 0 || events->timer < 0 || events->wakeup < 0
        || epoll_ctl(events->epoll, EPOLL_CTL_ADD, events->timer, &timer_watch) != 0
        || epoll_ctl(events->epoll, EPOLL_CTL_ADD, events->wakeup, &wakeup_watch) != 0) {
        fail(error, AUTHD_PROTOCOL_ERROR, NULL, "cannot set up the subscription: %s", strerror(errno));
        authd_events_free(events);
        return NULL;
    }
    if (events_connect(events, error) != AUTHD_OK || check_profile(profile, events->connection.hello, error) != AUTHD_OK) {
        authd_events_free(events);
        return NULL;
    }
    return events;
}

PUBLIC int authd_events_fd(const authd_events *events) { return events->epoll; }

PUBLIC authd_code authd_events_dispatch(authd_events *events, authd_event_callback callback, void *user_data, authd_error *error) {
    clear_error(error);
    if (events->ended) { fail(error, AUTHD_REJECTED, NULL, "the subscription has ended"); return AUTHD_REJECTED; }
    uint64_t count;
    if (read(events->wakeup, &count, sizeof count) < 0) { /* not raised */ }
    if (events->connection.fd < 0) {
        if (read(events->timer, &count, sizeof count) < 0) return AUTHD_OK;  /* not due yet */
        authd_error attempt;
        clear_error(&attempt);
        authd_code code = events_connect(events, &attempt);
        if (code == AUTHD_DAEMON_UNAVAILABLE || code == AUTHD_TIMED_OUT || code == AUTHD_PROTOCOL_ERROR) {
            events_wait_to_retry(events);
            return AUTHD_OK;
        }
        if (code != AUTHD_OK) {
            /* Waiting will not mend it (another user's socket, access denied, unknown profile). */
            events->ended = 1;
            if (error) *error = attempt;
            return code;
        }
        events->next_is_after_reconnect = 1;
    }
    for (size_t i = 0; i < events->queued_count; i++) {
        deliver(events, (span){ events->queued[i], events->queued[i] + strlen(events->queued[i]) }, callback, user_data);
        free(events->queued[i]);
    }
    events->queued_count = 0;
    /* Everything buffered or readable now, without waiting. */
    for (;;) {
        char *line = NULL;
        authd_error reading;
        int got = read_line(&events->connection, -1, &line, &reading);
        if (got == 0) return AUTHD_OK;
        if (got < 0) {
            events_wait_to_retry(events);
            return AUTHD_OK;
        }
        span message = { line, line + strlen(line) }, method, params;
        char *name = member(message, "method", &method) ? string_value(method) : NULL;
        if (name && strcmp(name, "event") == 0 && member(message, "params", &params) && is_kind(params, '{'))
            deliver(events, params, callback, user_data);
        free(name);
        free(line);
    }
}

PUBLIC void authd_events_free(authd_events *events) {
    if (!events) return;
    connection_close(&events->connection);
    for (size_t i = 0; i < events->queued_count; i++) free(events->queued[i]);
    free(events->queued);
    if (events->epoll >= 0) close(events->epoll);
    if (events->timer >= 0) close(events->timer);
    if (events->wakeup >= 0) close(events->wakeup);
    destination_free(&events->to);
    free(events);
}
