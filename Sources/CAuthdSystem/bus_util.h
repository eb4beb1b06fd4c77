#ifndef AUTHD_BUS_UTIL_H
#define AUTHD_BUS_UTIL_H

#include <systemd/sd-bus.h>

/* Shared by the C files that drive an sd-bus connection themselves; not part of the module's
 * interface. */

/* Milliseconds until sd-bus wants to be called again, for poll(); -1 for never. */
int authd_bus_timeout_ms(sd_bus *bus);

/* Connects to the bus at `address` as a bus client, or, when `address` is NULL, to the system
 * bus (`system` non-zero; $DBUS_SYSTEM_BUS_ADDRESS is honoured) or the user's session bus.
 * Returns 0 or -errno. */
int authd_bus_open(const char *address, int system, sd_bus **out);

#endif
