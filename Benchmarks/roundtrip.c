/* Round-trip load generator over a Unix socket, the same client for every target so that only
 * the server differs: authd (a JSON-RPC line), the C echo floor (the same line echoed) and
 * ssh-agent (SSH2_AGENTC_REQUEST_IDENTITIES). Each of `clients` threads opens one connection,
 * warms it up, then sends one request at a time and waits for the whole answer.
 *
 *   roundtrip line|ssh SOCKET REQUESTS_PER_CLIENT CLIENTS [LINE]
 *
 * Prints one JSON object: requests, seconds, requests_per_second, p50_us, p99_us, min_us, max_us. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum mode { MODE_LINE, MODE_SSH };

struct worker {
    enum mode mode;
    const char *path;
    const char *line;
    size_t line_length;
    long requests;
    uint64_t *latencies; /* nanoseconds, one per measured request */
    int failed;
    pthread_barrier_t *start;
};

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int write_all(int fd, const void *data, size_t length) {
    const char *p = data;
    while (length > 0) {
        ssize_t n = write(fd, p, length);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        length -= (size_t)n;
    }
    return 0;
}

static int read_exact(int fd, void *data, size_t length) {
    char *p = data;
    while (length > 0) {
        ssize_t n = read(fd, p, length);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        length -= (size_t)n;
    }
    return 0;
}

/* Reads until a newline ends what was read; answers are one line each, one request at a time. */
static int read_line(int fd, char *buffer, size_t capacity) {
    size_t used = 0;
    for (;;) {
        ssize_t n = read(fd, buffer + used, capacity - used);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        used += (size_t)n;
        if (buffer[used - 1] == '\n') return 0;
        if (used == capacity) return -1;
    }
}

static int one_request(struct worker *w, int fd, char *buffer, size_t capacity) {
    if (w->mode == MODE_LINE) {
        if (write_all(fd, w->line, w->line_length) < 0) return -1;
        return read_line(fd, buffer, capacity);
    }
    /* uint32 length 1, type 11 (SSH2_AGENTC_REQUEST_IDENTITIES); the answer is length-prefixed. */
    static const unsigned char request[5] = { 0, 0, 0, 1, 11 };
    if (write_all(fd, request, sizeof(request)) < 0) return -1;
    unsigned char header[4];
    if (read_exact(fd, header, 4) < 0) return -1;
    size_t length = ((size_t)header[0] << 24) | ((size_t)header[1] << 16) | ((size_t)header[2] << 8) | header[3];
    if (length == 0 || length > capacity) return -1;
    return read_exact(fd, buffer, length);
}

static void *run(void *argument) {
    struct worker *w = argument;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    strncpy(address.sun_path, w->path, sizeof(address.sun_path) - 1);
    size_t capacity = 1 << 20;
    char *buffer = malloc(capacity);
    if (fd < 0 || !buffer || connect(fd, (struct sockaddr *)&address, sizeof(address)) < 0) {
        w->failed = 1;
        pthread_barrier_wait(w->start);
        free(buffer);
        return NULL;
    }
    /* Warm the connection and the server's paths before the clock starts. */
    long warmup = w->requests / 10 < 1000 ? w->requests / 10 : 1000;
    for (long i = 0; i < warmup && !w->failed; i++) {
        if (one_request(w, fd, buffer, capacity) < 0) w->failed = 1;
    }
    pthread_barrier_wait(w->start);
    for (long i = 0; i < w->requests && !w->failed; i++) {
        uint64_t started = now_ns();
        if (one_request(w, fd, buffer, capacity) < 0) { w->failed = 1; break; }
        w->latencies[i] = now_ns() - started;
    }
    close(fd);
    free(buffer);
    return NULL;
}

static int by_value(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 5 || (strcmp(argv[1], "line") != 0 && strcmp(argv[1], "ssh") != 0) || (strcmp(argv[1], "line") == 0 && argc < 6)) {
        fprintf(stderr, "usage: roundtrip line|ssh SOCKET REQUESTS_PER_CLIENT CLIENTS [LINE]\n");
        return 64;
    }
    enum mode mode = strcmp(argv[1], "line") == 0 ? MODE_LINE : MODE_SSH;
    long requests = atol(argv[3]);
    int clients = atoi(argv[4]);
    char *line = NULL;
    size_t line_length = 0;
    if (mode == MODE_LINE) {
        line_length = strlen(argv[5]) + 1;
        line = malloc(line_length + 1);
        memcpy(line, argv[5], line_length - 1);
        line[line_length - 1] = '\n';
    }
    if (requests < 1 || clients < 1) return 64;
    uint64_t *latencies = calloc((size_t)requests * (size_t)clients, sizeof(uint64_t));
    struct worker *workers = calloc((size_t)clients, sizeof(struct worker));
    pthread_t *threads = calloc((size_t)clients, sizeof(pthread_t));
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)clients + 1);
    for (int i = 0; i < clients; i++) {
        workers[i] = (struct worker){ mode, argv[2], line, line_length, requests, latencies + (size_t)i * (size_t)requests, 0, &start };
        pthread_create(&threads[i], NULL, run, &workers[i]);
    }
    pthread_barrier_wait(&start);
    uint64_t began = now_ns();
    int failed = 0;
    for (int i = 0; i < clients; i++) {
        pthread_join(threads[i], NULL);
        failed |= workers[i].failed;
    }
    double seconds = (double)(now_ns() - began) / 1e9;
    if (failed) {
        fprintf(stderr, "roundtrip: a connection failed (is the server running on %s?)\n", argv[2]);
        return 1;
    }
    size_t total = (size_t)requests * (size_t)clients;
    qsort(latencies, total, sizeof(uint64_t), by_value);
    printf("{\"requests\":%zu,\"clients\":%d,\"seconds\":%.3f,\"requests_per_second\":%.0f,"
           "\"p50_us\":%.1f,\"p99_us\":%.1f,\"min_us\":%.1f,\"max_us\":%.1f}\n",
           total, clients, seconds, (double)total / seconds,
           latencies[total / 2] / 1e3, latencies[(size_t)((double)total * 0.99)] / 1e3,
           latencies[0] / 1e3, latencies[total - 1] / 1e3);
    return 0;
}
