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
    /* The action keys offered, NULL-terminated; `answer` is the invoked one's index + 1. */
    const char *const *keys;
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
    for (int i = 0; question->keys[i]; i++) {
        if (strcmp(action, question->keys[i]) == 0) {
            question->answer = i + 1;
            question->ended = 1;
        }
    }
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

/* Notify's arguments, with `actions` (key, label, key, label, …, NULL) and the hints
 * urgency and, when not NULL, category. */
static int append_notification(sd_bus_message *call, const char *summary, const char *body, char **actions,
                               uint8_t urgency, const char *category, int32_t expire) {
    int r = sd_bus_message_append(call, "susss", "authd", (uint32_t)0, "dialog-password", summary, body);
    if (r >= 0) r = sd_bus_message_append_strv(call, actions);
    if (r >= 0) r = sd_bus_message_open_container(call, 'a', "{sv}");
    if (r >= 0) r = sd_bus_message_append(call, "{sv}", "urgency", "y", urgency);
    if (r >= 0 && category) r = sd_bus_message_append(call, "{sv}", "category", "s", category);
    if (r >= 0) r = sd_bus_message_close_container(call);
    if (r >= 0) r = sd_bus_message_append(call, "i", expire);
    return r;
}

/* Shows a notification with `actions` and waits for one of them, its closing, or `stop_fd`
 * (then withdraws it). Returns the invoked action's index among the keys + 1, 0, or -errno. */
static int show_and_wait(const char *bus_address, int stop_fd, const char *summary, const char *body,
                         char **actions, const char *const *keys, uint8_t urgency, const char *category, int32_t expire) {
    sd_bus *bus = NULL;
    int r = authd_bus_open(bus_address, 0, &bus);
    if (r < 0) return r;
    /* A notification server that does not answer Notify must not hold the daemon up (its
     * shutdown waits for this call, and stop_fd is not watched during it): five seconds, not
     * sd-bus's default of 25. */
    sd_bus_set_method_call_timeout(bus, 5 * 1000 * 1000);
    struct question question = { 0, keys, AUTHD_ANSWER_NONE, 0, NULL };
    /* Matches first: the answer may come as soon as the notification is up. Signals that arrive
     * before the reply to Notify wait in sd-bus's queue (sd_bus_call dispatches nothing), so the
     * handlers see them only once the id and the server's name are known. */
    r = sd_bus_match_signal(bus, NULL, NOTIFICATIONS_NAME, NOTIFICATIONS_PATH, NOTIFICATIONS_NAME, "ActionInvoked",
                            on_action_invoked, &question);
    if (r >= 0)
        r = sd_bus_match_signal(bus, NULL, NOTIFICATIONS_NAME, NOTIFICATIONS_PATH, NOTIFICATIONS_NAME, "NotificationClosed",
                                on_closed, &question);
    sd_bus_message *call = NULL;
    if (r >= 0) r = sd_bus_message_new_method_call(bus, &call, NOTIFICATIONS_NAME, NOTIFICATIONS_PATH, NOTIFICATIONS_NAME, "Notify");
    if (r >= 0) r = append_notification(call, summary, body, actions, urgency, category, expire);
    if (r < 0) {
        sd_bus_message_unref(call);
        sd_bus_flush_close_unref(bus);
        return r;
    }
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    r = sd_bus_call(bus, call, 0, &error, &reply);
    sd_bus_message_unref(call);
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
        /* Withdrawn: answered elsewhere, timed out, or no longer true. A failure here leaves a
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

int authd_ask_by_notification(const char *bus_address, int stop_fd, const char *summary, const char *body) {
    char *actions[] = { "allow", "Allow", "deny", "Deny", NULL };
    static const char *const keys[] = { "allow", "deny", NULL };
    /* Urgency critical: the server keeps it on screen until the user chooses; expire 0: never. */
    return show_and_wait(bus_address, stop_fd, summary, body, actions, keys, 2, "presence", 0);
}

int authd_offer_by_notification(const char *bus_address, int stop_fd, const char *summary, const char *body,
                                const char *action_key, const char *action_label) {
    char *with_action[] = { (char *)action_key, (char *)action_label, NULL };
    char *without[] = { NULL };
    const char *const keys[] = { action_key, NULL };
    const char *const no_keys[] = { NULL };
    /* Urgency normal: news, not a question; expire 0: it stays (in the server's list) until
     * the user acts on it or it is withdrawn, because the offer holds until then. */
    return show_and_wait(bus_address, stop_fd, summary, body, action_key ? with_action : without, action_key ? keys : no_keys,
                         1, NULL, 0);
}
