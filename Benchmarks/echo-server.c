/* The floor for the socket benchmarks: a Unix-socket server that writes back whatever it reads,
 * one thread per connection, no parsing. Nothing can answer a line faster over the same socket.
 *
 *   echo-server SOCKET      (runs until killed) */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void *echo(void *argument) {
    int fd = (int)(intptr_t)argument;
    char buffer[65536];
    for (;;) {
        ssize_t n = read(fd, buffer, sizeof(buffer));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(fd, buffer + done, (size_t)(n - done));
            if (w <= 0) { close(fd); return NULL; }
            done += w;
        }
    }
    close(fd);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: echo-server SOCKET\n");
        return 64;
    }
    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un address = { .sun_family = AF_UNIX };
    strncpy(address.sun_path, argv[1], sizeof(address.sun_path) - 1);
    unlink(argv[1]);
    if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof(address)) < 0 || listen(listener, 4096) < 0) {
        perror("echo-server");
        return 1;
    }
    for (;;) {
        int fd = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            perror("accept");
            return 1;
        }
        pthread_t thread;
        pthread_attr_t attributes;
        pthread_attr_init(&attributes);
        pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attributes, 128 << 10);
        if (pthread_create(&thread, &attributes, echo, (void *)(intptr_t)fd) != 0) close(fd);
        pthread_attr_destroy(&attributes);
    }
}
