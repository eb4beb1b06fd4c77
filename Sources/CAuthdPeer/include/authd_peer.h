#ifndef AUTHD_PEER_H
#define AUTHD_PEER_H

/* Whether the process `pidfd` refers to still runs: 1 if so, 0 if it has exited, -errno when the
 * kernel cannot tell (pidfd_send_signal with signal 0 sends nothing; glibc's wrapper is not
 * visible to Swift). */
int authd_pidfd_alive(int pidfd);

#include <stdint.h>

/* Which file `path` leads to (device and inode) and on which mount (the kernel's mount id, unique
 * while the mount exists), following links, from the attributes the kernel has cached: a file
 * system served by another program (FUSE) is not asked, so a server that never answers cannot
 * block the caller. 0, or -errno. */
int authd_file_identity(const char *path, uint64_t *device, uint64_t *inode, uint64_t *mount_id);

#endif
