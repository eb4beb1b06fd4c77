/* authctl's front: the program installed as `authctl`. It answers the common `authctl token`
 * itself, because scripts and prompts run `$(authctl token)` many times and starting the whole
 * command-line tool (the authd executable, with the Swift runtime and the libraries the daemon
 * links) would be most of its cost (benchmark P2). Every other command, and every answer that is
 * not a plain token, is handed to the whole authctl by exec, in the same process, so output and
 * exit codes are the whole tool's: the front prints a token or nothing.
 *
 * Written in C on libc alone, so that it starts like any small program and weighs a few dozen
 * KiB: a Swift front carries the Swift runtime (about 6.6 MiB, statically linked). It is built
 * with the C client library's own code (included below), so that socket paths, the check of who
 * serves the socket, JSON strings and the token request are read and written the one way the
 * library does. Its answer is read more narrowly than the library reads one (each member once,
 * nothing else, every field of the result): anything else goes to the whole authctl. */
#include "authd-client.c"

#include <limits.h>
#include <sys/time.h>

/* The whole authctl: the authd executable beside the front, started under this name. */
#define FULL_EXECUTABLE "authd"
#define FULL_NAME "authctl"
/* The request's id; the whole authctl interprets a handed-over answer with this id. */
#define REQUEST_ID "1"
/* How long the front waits for its answer: authd may hold a token request while the user decides
 * about the app (two minutes by default) or while a refresh is out. */
#define ANSWER_TIMEOUT_S 300

/* The answer handed over when authd took the request but did not answer in time: the whole
 * authctl reports it instead of asking again, which would come from another executable, a new
 * app to a profile that asks. */
static const char no_answer_in_time[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32000,\"message\":\"authd took the token request but did not answer "
    "within 300 s (an app decision or a refresh may still be pending): run the command again\",\"data\":{\"reason\":\"timed_out\"}}}";

static void give_up(const char *message) {
    fprintf(stderr, "authctl: %s\n", message);
    exit(1);
}

/* The folder this executable is in, from /proc/self/exe; NULL when unknown. */
static char *own_folder(void) {
    char path[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
    if (length <= 0) return NULL;
    path[length] = '\0';
    char *slash = strrchr(path, '/');
    if (!slash) return NULL;
    *slash = '\0';
    return strdup(path);
}

/* A pipe's read end holding `answer` and a newline; -1 when it could not be made or the answer
 * does not fit (then the whole authctl asks again). */
static int hand_over(const char *answer, size_t length) {
    int ends[2];
    if (pipe(ends) != 0) return -1;
    /* The write end must not block: nobody reads until after exec. */
    fcntl(ends[1], F_SETFL, O_NONBLOCK);
    ssize_t written = write(ends[1], answer, length);
    ssize_t newline = written == (ssize_t)length ? write(ends[1], "\n", 1) : -1;
    close(ends[1]);
    if (newline != 1) {
        close(ends[0]);
        return -1;
    }
    return ends[0];
}

/* Replaces this process with the whole authctl, given the same arguments, and with `answer` (when
 * there is one) on a pipe named by `--answer-fd N`. */
static void run_full(int argc, char **argv, const char *answer, size_t answer_length) {
    char *folder = own_folder(), *executable = NULL;
    if (!folder || asprintf(&executable, "%s/" FULL_EXECUTABLE, folder) < 0 || access(executable, X_OK) != 0)
        give_up("cannot find " FULL_EXECUTABLE " beside authctl; reinstall authd (make install)");
    char **arguments = calloc((size_t)argc + 3, sizeof *arguments);
    if (!arguments) give_up("out of memory");
    /* Under the name authctl, whatever this front was called: the authd executable is the daemon
     * under any other name. */
    arguments[0] = FULL_NAME;
    for (int i = 1; i < argc; i++) arguments[i] = argv[i];
    char descriptor[16];
    if (answer) {
        int read_end = hand_over(answer, answer_length);
        if (read_end >= 0) {
            snprintf(descriptor, sizeof descriptor, "%d", read_end);
            arguments[argc] = "--answer-fd";
            arguments[argc + 1] = descriptor;
        }
    }
    execv(executable, arguments);
    fprintf(stderr, "authctl: cannot run %s: %s\n", executable, strerror(errno));
    exit(1);
}

/* An `authctl token` command line the front sends itself: every option `token` takes (`--profile`,
 * `--socket`, `--min-valid`, `--json`), each at most once, as `--name value` or `--name=value`.
 * Anything else (`--help`, a typo, a value the whole authctl would reject) is left to the whole
 * authctl, which reports it before it connects. */
typedef struct {
    const char *profile, *socket;
    long min_valid; /* -1: not given */
    int json;
} token_request;

static int parse_token_request(int argc, char **argv, token_request *request) {
    *request = (token_request){ .min_valid = -1 };
    if (argc < 2 || strcmp(argv[1], "token") != 0) return 0;
    for (int i = 2; i < argc; i++) {
        const char *argument = argv[i], *value = NULL;
        size_t name_length = strlen(argument);
        const char *equals = strncmp(argument, "--", 2) == 0 ? strchr(argument, '=') : NULL;
        if (equals) {
            name_length = (size_t)(equals - argument);
            value = equals + 1;
        }
#define IS(name) (name_length == strlen(name) && strncmp(argument, name, name_length) == 0)
        if (IS("--json")) {
            if (value || request->json) return 0;
            request->json = 1;
            continue;
        }
        if (!value) {
            if (i + 1 >= argc) return 0;
            value = argv[++i];
        }
        if (!*value || *value == '-') return 0;
        if (IS("--profile") && !request->profile) request->profile = value;
        else if (IS("--socket") && !request->socket) request->socket = value;
        else if (IS("--min-valid") && request->min_valid < 0) {
            /* Digits only, as the whole authctl reads it (strtol would also take spaces and a sign). */
            if (*value < '0' || *value > '9') return 0;
            char *rest;
            errno = 0;
            long seconds = strtol(value, &rest, 10);
            if (errno || *rest || seconds < 0 || seconds > INT_MAX) return 0;
            request->min_valid = seconds;
        } else {
            /* Unknown, or given twice: the whole authctl decides what that means. */
            return 0;
        }
#undef IS
    }
    return 1;
}

/* Whether `byte` is one a JWT is made of: letters, digits, `-`, `_` and `.`. Anything else is
 * printed by the whole authctl, which says what is odd about it. */
static int is_token_character(char byte) {
    return (byte >= '0' && byte <= '9') || (byte >= 'A' && byte <= 'Z') || (byte >= 'a' && byte <= 'z') || byte == '-' || byte == '_'
           || byte == '.';
}

/* Calls `visit` for each member of the JSON object `object`; false when it is not one, or when
 * `visit` refuses a member. */
static int each_member(span object, int (*visit)(span key, span value, void *context), void *context) {
    const char *p = skip_space(object.start, object.end), *end = object.end;
    if (p >= end || *p != '{') return 0;
    p = skip_space(p + 1, end);
    if (p < end && *p == '}') return skip_space(p + 1, end) == end;
    for (;;) {
        const char *key_start = p, *key_end = skip_string(p, end);
        if (!key_end) return 0;
        p = skip_space(key_end, end);
        if (p >= end || *p != ':') return 0;
        const char *value_start = skip_space(p + 1, end), *value_end = skip_value(value_start, end, 0);
        if (!value_end || !visit((span){ key_start, key_end }, (span){ value_start, value_end }, context)) return 0;
        p = skip_space(value_end, end);
        if (p < end && *p == ',') { p = skip_space(p + 1, end); continue; }
        return p < end && *p == '}' && skip_space(p + 1, end) == end;
    }
}

/* Whether `text` is exactly `expected` (a span of JSON text, quotes included for strings). */
static int spells(span text, const char *expected) {
    size_t length = strlen(expected);
    return (size_t)(text.end - text.start) == length && memcmp(text.start, expected, length) == 0;
}

/* The answer's parts, each to be seen once. */
typedef struct {
    span token;
    int seen_version, seen_id, seen_result, seen_token, seen_type, seen_expires_at, seen_expires_in;
} token_answer;

static int visit_result(span key, span value, void *context) {
    token_answer *answer = context;
    int64_t number;
    if (spells(key, "\"access_token\"") && !answer->seen_token++) {
        if (!is_kind(value, '"') || value.end - value.start < 3) return 0;
        for (const char *p = value.start + 1; p < value.end - 1; p++)
            if (!is_token_character(*p)) return 0;
        answer->token = (span){ value.start + 1, value.end - 1 };
        return 1;
    }
    if (spells(key, "\"token_type\"") && !answer->seen_type++) return is_kind(value, '"');
    if (spells(key, "\"expires_at\"") && !answer->seen_expires_at++) return integer_value(value, &number);
    if (spells(key, "\"expires_in\"") && !answer->seen_expires_in++) return integer_value(value, &number);
    return 0;
}

static int visit_answer(span key, span value, void *context) {
    token_answer *answer = context;
    if (spells(key, "\"jsonrpc\"") && !answer->seen_version++) return spells(value, "\"2.0\"");
    if (spells(key, "\"id\"") && !answer->seen_id++) return spells(value, REQUEST_ID);
    if (spells(key, "\"result\"") && !answer->seen_result++) return each_member(value, visit_result, answer);
    return 0;
}

/* The token in `line` when it is a successful answer to the request in the narrow shape authd
 * writes (any member order and spacing, each member once, nothing else); otherwise the line is
 * handed to the whole authctl, which decodes it the general way. */
static int plain_token(const char *line, size_t length, span *token) {
    token_answer answer = { 0 };
    if (!each_member((span){ line, line + length }, visit_answer, &answer)) return 0;
    if (!answer.seen_version || !answer.seen_id || !answer.seen_result || !answer.seen_token || !answer.seen_type
        || !answer.seen_expires_at || !answer.seen_expires_in)
        return 0;
    *token = answer.token;
    return 1;
}

/* Writes all of `text` to `fd`, a socket when `socket` is set (then without SIGPIPE: authd refuses
 * a client over its limits by writing one line and closing, and the whole authctl, not a signal,
 * must report that); false on a failed or short write (a closed pipe). */
static int write_all(int fd, int socket, const char *text, size_t length) {
    while (length > 0) {
        ssize_t written = socket ? send(fd, text, length, MSG_NOSIGNAL) : write(fd, text, length);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return 0;
        text += written;
        length -= (size_t)written;
    }
    return 1;
}

int main(int argc, char **argv) {
    token_request request;
    if (!parse_token_request(argc, argv, &request)) run_full(argc, argv, NULL, 0);
    /* No socket path, no daemon, or no answer: the whole authctl runs the whole command and says
     * what went wrong. */
    char *path = request.socket ? strdup(request.socket) : authd_socket_path();
    int fd;
    if (!path || socket_open(&fd, path, NULL) != AUTHD_OK) run_full(argc, argv, NULL, 0);
    struct timeval timeout = { .tv_sec = ANSWER_TIMEOUT_S };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    /* The library's own writer, with the library's params. */
    char *params = token_params(request.profile, request.min_valid >= 0, request.min_valid);
    int length = 0;
    char *line = params ? request_text(REQUEST_ID, "session.token", params, &length) : NULL;
    free(params);
    if (!line || !write_all(fd, 1, line, (size_t)length)) run_full(argc, argv, NULL, 0);
    free(line);
    /* One answer line, read whole. */
    size_t capacity = 4096, used = 0;
    char *answer = malloc(capacity);
    for (;;) {
        if (!answer) run_full(argc, argv, NULL, 0);
        char *newline = used ? memchr(answer, '\n', used) : NULL;
        if (newline) {
            used = (size_t)(newline - answer);
            break;
        }
        if (used == capacity) {
            if (capacity >= MAX_LINE) run_full(argc, argv, NULL, 0);
            capacity *= 2;
            answer = realloc(answer, capacity);
            continue;
        }
        ssize_t count = read(fd, answer + used, capacity - used);
        if (count < 0 && errno == EINTR) continue;
        if (count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            run_full(argc, argv, no_answer_in_time, sizeof no_answer_in_time - 1);
        /* authd went away: the whole authctl asks again and says why. */
        if (count <= 0) run_full(argc, argv, NULL, 0);
        used += (size_t)count;
    }
    close(fd);
    span token;
    if (!request.json && plain_token(answer, used, &token)) {
        size_t length = (size_t)(token.end - token.start);
        char *printed = malloc(length + 1);
        if (printed) {
            memcpy(printed, token.start, length);
            printed[length] = '\n';
            /* A short or failed write is left to the whole authctl to report. (A closed pipe
             * ends the front by SIGPIPE, as it would end the whole authctl.) */
            if (write_all(STDOUT_FILENO, 0, printed, length + 1)) return 0;
        }
    }
    run_full(argc, argv, answer, used);
}
