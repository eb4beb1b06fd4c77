#ifndef AUTHD_SYSTEM_H
#define AUTHD_SYSTEM_H

/* Blocking watchers for the outside events that can end a transient refresh failure early.
 * Each runs on a thread of its own until `stop_fd` becomes readable, calling `callback` for
 * every event; they return 0 after a stop and -errno when the source cannot be used. Written in
 * C because rtnetlink's message walking is macros and sd-bus wants a plain callback. */

/* Called with the context given to the watcher. */
typedef void (*authd_event_callback)(void *context);

/* logind's PrepareForSleep(false) on the bus at `bus_address`, or on the system bus when it is
 * NULL ($DBUS_SYSTEM_BUS_ADDRESS is honoured): `callback` runs once per resume. Only the
 * connection that owns org.freedesktop.login1 at the time (as the bus daemon reports it) is
 * listened to: the same signal from any other, even one addressed to authd's connection alone,
 * does nothing. */
int authd_watch_resume(const char *bus_address, int stop_fd, authd_event_callback callback, void *context);

/* rtnetlink (no privileges needed): `callback` runs once per batch of messages that may mean
 * the network came back: a link that is up and running, a new address, a new route. */
int authd_watch_network(int stop_fd, authd_event_callback callback, void *context);

/* Marks the process not dumpable (PR_SET_DUMPABLE 0): no core dump, and no other process of
 * the same user may ptrace it or read its memory, environment or descriptors under /proc.
 * Returns 0 once PR_GET_DUMPABLE confirms it, -errno otherwise. prctl is variadic, which Swift
 * cannot call. */
int authd_make_undumpable(void);

#endif
