#ifndef AUTHD_BUS_TIMEOUT_H
#define AUTHD_BUS_TIMEOUT_H

#include <systemd/sd-bus.h>

/* Milliseconds until sd-bus wants to be called again, for poll(); -1 for never. Shared by the
 * C files that drive an sd-bus connection themselves; not part of the module's interface. */
int authd_bus_timeout_ms(sd_bus *bus);

#endif
