#define _GNU_SOURCE
#include "monotonic_wait.h"

int authd_sem_wait_monotonic(sem_t *semaphore, const struct timespec *deadline) {
    return sem_clockwait(semaphore, CLOCK_MONOTONIC, deadline);
}
