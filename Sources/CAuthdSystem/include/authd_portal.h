#ifndef AUTHD_PORTAL_H
#define AUTHD_PORTAL_H

/* Asks the desktop to open `uri` in the user's browser through the desktop portal
 * (org.freedesktop.portal.OpenURI on the session bus at `bus_address`, or the user's session bus
 * when NULL), which starts the browser in the user's session, outside the caller's service and
 * its sandbox. Blocks for the portal's answer, at most ten seconds. Returns 0 when the portal took
 * the request, or -errno: no bus, no portal (not installed or not activatable), or a refusal.
 * Written in C because sd-bus's message building is variadic. */
int authd_open_uri_by_portal(const char *bus_address, const char *uri);

#endif
