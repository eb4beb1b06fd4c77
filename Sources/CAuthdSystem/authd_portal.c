#include "authd_portal.h"
#include "bus_util.h"

#include <errno.h>

#include <systemd/sd-bus.h>

#define PORTAL_NAME "org.freedesktop.portal.Desktop"
#define PORTAL_PATH "/org/freedesktop/portal/desktop"
#define OPEN_URI_INTERFACE "org.freedesktop.portal.OpenURI"

int authd_open_uri_by_portal(const char *bus_address, const char *uri) {
    sd_bus *bus = NULL;
    int r = authd_bus_open(bus_address, 0, &bus);
    if (r < 0) return r;
    /* A portal that has to be started first answers within a second or two; one that does not
     * answer must not hold a sign-in up: the caller then opens the browser another way. */
    sd_bus_set_method_call_timeout(bus, 10 * 1000 * 1000);
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    /* No parent window (authd has none); no options: the desktop's own handler for the scheme,
     * its default browser. The reply is the request's handle: the portal took the request. */
    r = sd_bus_call_method(bus, PORTAL_NAME, PORTAL_PATH, OPEN_URI_INTERFACE, "OpenURI", &error, &reply, "ssa{sv}", "", uri, 0);
    if (r < 0) r = sd_bus_error_get_errno(&error) > 0 ? -sd_bus_error_get_errno(&error) : r;
    sd_bus_message_unref(reply);
    sd_bus_error_free(&error);
    sd_bus_flush_close_unref(bus);
    return r < 0 ? r : 0;
}
