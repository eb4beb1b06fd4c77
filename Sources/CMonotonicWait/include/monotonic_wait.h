#ifndef AUTHD_MONOTONIC_WAIT_H
#define AUTHD_MONOTONIC_WAIT_H

#include <semaphore.h>
#include <time.h>

/* sem_clockwait on CLOCK_MONOTONIC: waits on `semaphore` until `deadline` on the monotonic clock,
 * which setting the wall clock does not move. 0 when posted, else -1 with errno (ETIMEDOUT, EINTR).
 * glibc declares sem_clockwait only for _GNU_SOURCE, which Swift's Glibc module does not see. */
int authd_sem_wait_monotonic(sem_t *semaphore, const struct timespec *deadline);

#endif
