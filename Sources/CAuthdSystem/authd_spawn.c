#define _GNU_SOURCE
#include "authd_spawn.h"

int authd_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}
