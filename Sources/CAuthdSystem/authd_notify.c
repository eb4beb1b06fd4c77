#include "authd_notify.h"
#include "bus_util.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-bus.h>

#define NOTIFICATIONS_NAME "org.freedesktop.Notifications"
#define NOTIFICATIONS_PATH "/org/freedesktop/Notifications"

/* What the signal handlers learn about the one notification shown. */
struct question {
    uint32_t id;
    int answer;
    int ended;
    /* The unique bus name of the server that showed it (the sender of the reply to Notify). */
    char *server;
};

/* Whether `message` comes from the server that showed our notification. The matches name the
 * well-known name, but that checks nothing here: sd-bus lets a signal from any unique name pass
 * a match on a well-known name (it cannot know who owns one), and dbus-daemon hands a signal
 * addressed to us to our connection whatever our matches say. The sender's unique name is
 * stamped by the bus daemon, so no other connection can claim the server's. */
static int from_server(sd_bus_message *message, const struct question *question) {
    const char *sender = sd_bus_message_get_sender(message);
    return question->server && sender && strcmp(sender, question->server) == 0;
}

static int on_action_invoked(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    (void)error;
    struct question *question = userdata;
    uint32_t id = 0;
    const char *action = NULL;
    if (!from_server(message, question)) return 0;
    if (sd_bus_message_read_basic(message, 'u', &id) < 0 || sd_bus_message_read_basic(message, 's', &action) < 0) return 0;
    if (id != question->id || question->ended) return 0;
    /* Any other key (a server's "default" for a click on the body) is no choice. */
    if (strcmp(action, "allow") == 0) question->answer = AUTHD_ANSWER_ALLOW;
    else if (strcmp(action, "deny") == 0) question->answer = AUTHD_ANSWER_DENY;
    else return 0;
    question->ended = 1;
    return 0;
}

static int on_closed(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    (void)error;
    struct question *question = userdata;
    uint32_t id = 0;
    if (!from_server(message, question)) return 0;
    if (sd_bus_message_read_basic(message, 'u', &id) < 0) return 0;
    if (id == question->id) question->ended = 1;
    return 0;
}

int authd_ask_by_notification(const char *bus_address, int stop_fd, const char *summary, const char *body) {
    sd_bus *bus = NULL;
    int r = authd_bus_open(bus_address, 0, &bus);
    if (r < 0) return r;
    struct question question = { 0, AUTHD_ANSWER_NONE, 0, NULL };
    /* Matches first: the answer may come as soon as the notification is up. Signals that arrive
     * before the reply to Notify wait in sd-bus's queue (sd_bus_call dispatches nothing), so the
     * handlers see them only once the id and the server's name are known. */
    r = sd_bus_match_signal(bus, NULL, NOTIFICATIONS_NAME, NOTIFICATIONS_PATH, NOTIFICATIONS_NAME, "ActionInvoked",
                            on_action_invoked, &question);
    if (r >= 0)
        r = sd_bus_match_signal(bus, NULL, NOTIFICATIONS_NAME, NOTIFICATIONS_PATH, NOTIFICATIONS_NAME, "NotificationClosed",
                                on_closed, &question);
    if (r < 0) {
        sd_bus_flush_close_unref(bus);
        return r;
    }
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    /* Urgency critical: the server keeps it on screen until the user chooses; expire 0: never. */
    r = sd_bus_call_method(bus, NOTIFICATIONS_NAME, NOTIFICATIONS_PATH, NOTIFICATIONS_NAME, "Notify", &error, &reply,
                           "susssasa{sv}i", "authd", (uint32_t)0, "dialog-password", summary, body,
                           4, "allow", "Allow", "deny", "Deny",
                           2, "urgency", "y", (uint8_t)2, "category", "s", "presence",
                           (int32_t)0);
    if (r >= 0) r = sd_bus_message_read_basic(reply, 'u', &question.id);
    if (r >= 0) {
        /* Without a sender (no bus daemon in between) no signal could be told genuine. */
        const char *server = sd_bus_message_get_sender(reply);
        if (!server) r = -EBADMSG;
        else if (!(question.server = strdup(server))) r = -ENOMEM;
    }
    sd_bus_message_unref(reply);
    sd_bus_error_free(&error);
    if (r < 0) {
        free(question.server);
        sd_bus_flush_close_unref(bus);
        return r;
    }
    int stopped = 0;
    while (!question.ended) {
        while (!question.ended && (r = sd_bus_process(bus, NULL)) > 0) {}
        if (r < 0 || question.ended) break;
        struct pollfd fds[2] = {
            { .fd = stop_fd, .events = POLLIN },
            { .fd = sd_bus_get_fd(bus), .events = (short)sd_bus_get_events(bus) },
        };
        if (poll(fds, 2, authd_bus_timeout_ms(bus)) < 0 && errno != EINTR) { r = -errno; break; }
        if (fds[0].revents) { stopped = 1; break; }
    }
    if (stopped) {
        /* Withdrawn: the question was answered elsewhere or timed out. A failure here leaves a
         * stale notification whose buttons no longer matter, so it is not an error. */
        sd_bus_call_method(bus, NOTIFICATIONS_NAME, NOTIFICATIONS_PATH, NOTIFICATIONS_NAME, "CloseNotification",
                           NULL, NULL, "u", question.id);
        r = 0;
    }
    free(question.server);
    sd_bus_flush_close_unref(bus);
    if (r < 0 && !question.ended) return r;
    return question.answer;
}

int authd_notify(const char *bus_address, const char *summary, const char *body) {
    sd_bus *bus = NULL;
    int r = authd_bus_open(bus_address, 0, &bus);
    if (r < 0) return r;
    /* A notification server that does not answer must not hold the daemon up (its shutdown
     * waits for this call): five seconds, not sd-bus's default of 25. */
    sd_bus_set_method_call_timeout(bus, 5 * 1000 * 1000);
    sd_bus_error error = SD_BUS_ERROR_NULL;
    /* Urgency normal, the server's own expiry (-1): news, not a question. */
    r = sd_bus_call_method(bus, NOTIFICATIONS_NAME, NOTIFICATIONS_PATH, NOTIFICATIONS_NAME, "Notify", &error, NULL,
                           "susssasa{sv}i", "authd", (uint32_t)0, "dialog-password", summary, body,
                           0, 1, "urgency", "y", (uint8_t)1, (int32_t)-1);
    sd_bus_error_free(&error);
    sd_bus_flush_close_unref(bus);
    return r < 0 ? r : 0;
}
