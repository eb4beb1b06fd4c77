#ifndef AUTHD_NOTIFY_H
#define AUTHD_NOTIFY_H

/* The answers authd_ask_by_notification can return besides -errno. */
enum {
    AUTHD_ANSWER_NONE = 0,  /* closed or dismissed without a choice, or stopped through stop_fd */
    AUTHD_ANSWER_ALLOW = 1, /* the "allow" action was invoked */
    AUTHD_ANSWER_DENY = 2,  /* the "deny" action was invoked */
};

/* Shows a desktop notification (org.freedesktop.Notifications on the session bus at
 * `bus_address`, or the user's session bus when NULL) with the actions "allow" and "deny", and
 * blocks until one is invoked, the notification is closed, or `stop_fd` becomes readable; on a
 * stop the notification is withdrawn. Only signals from the connection that answered Notify
 * count: another client on the bus cannot click for the user. `body` is shown as is, so escape
 * markup first. Returns an AUTHD_ANSWER_* value, or -errno when there is no bus or no
 * notification service. Written in C because sd-bus's message building is variadic. */
int authd_ask_by_notification(const char *bus_address, int stop_fd, const char *summary, const char *body);

/* Shows a desktop notification offering one action (`action_key`, shown as `action_label`; none
 * when `action_key` is NULL) and blocks until the action is invoked (1), the notification is
 * closed (0), or `stop_fd` becomes readable (0; the notification is then withdrawn). Only the
 * server that showed it can invoke the action. Returns -errno when there is no bus or no
 * notification service. `body` is shown as is: escape markup. */
int authd_offer_by_notification(const char *bus_address, int stop_fd, const char *summary, const char *body,
                                const char *action_key, const char *action_label);

#endif
