#include "authd_peer.h"

#include <errno.h>
#include <stddef.h>
#include <sys/pidfd.h>

int authd_pidfd_alive(int pidfd) {
    if (pidfd_send_signal(pidfd, 0, NULL, 0) == 0) return 1;
    return errno == ESRCH ? 0 : -errno;
}
