#include "authd_system.h"
#include "bus_util.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#define LOGIND_NAME "org.freedesktop.login1"
#define BUS_DRIVER_NAME "org.freedesktop.DBus"

struct resume_target {
    authd_event_callback callback;
    void *context;
    /* The unique name that owns org.freedesktop.login1 now; empty while nobody does. D-Bus
     * names are at most 255 characters. */
    char owner[256];
};

/* Whether `message` was sent by the connection named `name`. The bus daemon stamps every
 * message's sender, so no client can send as another's unique name or as the bus driver. */
static bool sent_by(sd_bus_message *message, const char *name) {
    const char *sender = sd_bus_message_get_sender(message);
    return name[0] != '\0' && sender && strcmp(sender, name) == 0;
}

static void set_owner(struct resume_target *target, const char *owner) {
    snprintf(target->owner, sizeof(target->owner), "%s", owner && strlen(owner) < sizeof(target->owner) ? owner : "");
}

/* NameOwnerChanged(name, old, new) for org.freedesktop.login1, from the bus driver only: sd-bus
 * lets a signal from any unique name pass a match on a well-known sender, and anyone may send a
 * signal addressed to us, so a forged one could otherwise hand the name to an impostor. */
static int on_owner_changed(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    (void)error;
    struct resume_target *target = userdata;
    const char *name = NULL, *old_owner = NULL, *new_owner = NULL;
    if (!sent_by(message, BUS_DRIVER_NAME)) return 0;
    if (sd_bus_message_read(message, "sss", &name, &old_owner, &new_owner) < 0) return 0;
    if (strcmp(name, LOGIND_NAME) == 0) set_owner(target, new_owner);
    return 0;
}

/* PrepareForSleep(false) from the current owner of org.freedesktop.login1 only: the match's
 * sender does not check that (see on_owner_changed), and a signal sent straight to our
 * connection by any other would wake the daemon's retries. */
static int on_prepare_for_sleep(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    (void)error;
    struct resume_target *target = userdata;
    int going_to_sleep = 0;
    if (!sent_by(message, target->owner)) return 0;
    if (sd_bus_message_read_basic(message, 'b', &going_to_sleep) < 0) return 0;
    if (!going_to_sleep) target->callback(target->context);
    return 0;
}

int authd_watch_resume(const char *bus_address, int stop_fd, authd_event_callback callback, void *context) {
    sd_bus *bus = NULL;
    int r = authd_bus_open(bus_address, 1, &bus);
    if (r < 0) return r;
    struct resume_target target = { callback, context, "" };
    /* PrepareForSleep's match first, before anything is read: sd-bus never hands a match a
     * message read before the match was added, so a signal sent straight to this connection
     * while the other AddMatch was under way would be dropped unseen. Signals read before the
     * owner is known wait in sd-bus's queue until the loop below, when it is.
     * The owner is followed from before it is first asked for: a change while GetNameOwner is
     * under way waits in sd-bus's queue and is applied after the answer, in the bus's order,
     * which ends at the owner the answer named or a later one. */
    r = sd_bus_match_signal(bus, NULL, LOGIND_NAME, "/org/freedesktop/login1",
                            "org.freedesktop.login1.Manager", "PrepareForSleep",
                            on_prepare_for_sleep, &target);
    if (r >= 0)
        r = sd_bus_add_match(bus, NULL,
                             "type='signal',sender='" BUS_DRIVER_NAME "',path='/org/freedesktop/DBus',interface='" BUS_DRIVER_NAME "',"
                             "member='NameOwnerChanged',arg0='" LOGIND_NAME "'",
                             on_owner_changed, &target);
    if (r >= 0) {
        sd_bus_message *reply = NULL;
        const char *owner = NULL;
        /* An error (no logind yet) leaves no owner; NameOwnerChanged names it when it comes. */
        if (sd_bus_call_method(bus, BUS_DRIVER_NAME, "/org/freedesktop/DBus", BUS_DRIVER_NAME, "GetNameOwner", NULL, &reply,
                               "s", LOGIND_NAME) >= 0 &&
            sd_bus_message_read_basic(reply, 's', &owner) >= 0)
            set_owner(&target, owner);
        sd_bus_message_unref(reply);
    }
    while (r >= 0) {
        while ((r = sd_bus_process(bus, NULL)) > 0) {}
        if (r < 0) break;
        struct pollfd fds[2] = {
            { .fd = stop_fd, .events = POLLIN },
            { .fd = sd_bus_get_fd(bus), .events = (short)sd_bus_get_events(bus) },
        };
        if (poll(fds, 2, authd_bus_timeout_ms(bus)) < 0 && errno != EINTR) { r = -errno; break; }
        if (fds[0].revents) { r = 0; break; }
    }
    sd_bus_flush_close_unref(bus);
    return r;
}

/* Whether one rtnetlink message may mean connectivity came back. */
static bool means_network_may_be_back(const struct nlmsghdr *header) {
    switch (header->nlmsg_type) {
    case RTM_NEWADDR:
    case RTM_NEWROUTE:
        return true;
    case RTM_NEWLINK: {
        const struct ifinfomsg *info = NLMSG_DATA(header);
        return header->nlmsg_len >= NLMSG_LENGTH(sizeof(*info)) && (info->ifi_flags & IFF_RUNNING);
    }
    default:
        return false;
    }
}

int authd_watch_network(int stop_fd, authd_event_callback callback, void *context) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
    if (fd < 0) return -errno;
    struct sockaddr_nl address;
    memset(&address, 0, sizeof(address));
    address.nl_family = AF_NETLINK;
    address.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
    if (bind(fd, (struct sockaddr *)&address, sizeof(address)) < 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    /* Aligned for struct nlmsghdr. */
    char buffer[16384] __attribute__((aligned(__alignof__(struct nlmsghdr))));
    int r = 0;
    for (;;) {
        struct pollfd fds[2] = { { .fd = stop_fd, .events = POLLIN }, { .fd = fd, .events = POLLIN } };
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            r = -errno;
            break;
        }
        if (fds[0].revents) break;
        bool worth_a_retry = false;
        for (;;) {
            ssize_t length = recv(fd, buffer, sizeof(buffer), 0);
            if (length < 0) {
                /* ENOBUFS: the kernel dropped messages because we were slow; something changed. */
                if (errno == ENOBUFS) { worth_a_retry = true; continue; }
                if (errno == EINTR) continue;
                break; /* EAGAIN: drained */
            }
            int remaining = (int)length;
            for (struct nlmsghdr *header = (struct nlmsghdr *)buffer; NLMSG_OK(header, remaining);
                 header = NLMSG_NEXT(header, remaining)) {
                if (means_network_may_be_back(header)) worth_a_retry = true;
            }
        }
        /* One callback per batch: an address change arrives as several messages. */
        if (worth_a_retry) callback(context);
    }
    close(fd);
    return r;
}

int authd_make_undumpable(void) {
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return -errno;
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : -EPERM;
}
