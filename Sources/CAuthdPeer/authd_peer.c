#define _GNU_SOURCE
#include "authd_peer.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif

int authd_pidfd_alive(int pidfd) {
    if (pidfd_send_signal(pidfd, 0, NULL, 0) == 0) return 1;
    return errno == ESRCH ? 0 : -errno;
}

int authd_file_identity(const char *path, uint64_t *device, uint64_t *inode, uint64_t *mount_id) {
    struct statx info;
    if (statx(AT_FDCWD, path, AT_STATX_DONT_SYNC, STATX_INO | STATX_MNT_ID, &info) != 0) return -errno;
    /* Kernels before 5.8 have no mount id: then 0 for all, and device and inode decide alone. */
    *mount_id = (info.stx_mask & STATX_MNT_ID) ? info.stx_mnt_id : 0;
    *device = makedev(info.stx_dev_major, info.stx_dev_minor);
    *inode = info.stx_ino;
    return 0;
}
