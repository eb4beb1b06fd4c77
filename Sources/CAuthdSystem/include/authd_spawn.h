#ifndef AUTHD_SPAWN_H
#define AUTHD_SPAWN_H

#include <spawn.h>

/* Adds "close every descriptor from `lowest` up" to `actions` (glibc's
 * posix_spawn_file_actions_addclosefrom_np, a GNU extension Swift's Glibc module does not
 * show). Returns 0 or an error number. */
int authd_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

#endif
