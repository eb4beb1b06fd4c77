#ifndef AUTHD_PEER_H
#define AUTHD_PEER_H

/* Whether the process `pidfd` refers to still runs: 1 if so, 0 if it has exited, -errno when the
 * kernel cannot tell (pidfd_send_signal with signal 0 sends nothing; glibc's wrapper is not
 * visible to Swift). */
int authd_pidfd_alive(int pidfd);

#endif
