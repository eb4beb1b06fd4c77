#include "authd_system.h"
#include "bus_timeout.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

struct resume_target {
    authd_event_callback callback;
    void *context;
};

static int on_prepare_for_sleep(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    (void)error;
    int going_to_sleep = 0;
    if (sd_bus_message_read_basic(message, 'b', &going_to_sleep) < 0) return 0;
    if (!going_to_sleep) {
        struct resume_target *target = userdata;
        target->callback(target->context);
    }
    return 0;
}

int authd_bus_timeout_ms(sd_bus *bus) {
    uint64_t until = 0;
    if (sd_bus_get_timeout(bus, &until) < 0 || until == UINT64_MAX) return -1;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t now_us = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
    if (until <= now_us) return 0;
    uint64_t ms = (until - now_us + 999) / 1000;
    return ms > 60000 ? 60000 : (int)ms;
}

int authd_watch_resume(int stop_fd, authd_event_callback callback, void *context) {
    sd_bus *bus = NULL;
    int r = sd_bus_open_system(&bus);
    if (r < 0) return r;
    struct resume_target target = { callback, context };
    r = sd_bus_match_signal(bus, NULL, "org.freedesktop.login1", "/org/freedesktop/login1",
                            "org.freedesktop.login1.Manager", "PrepareForSleep",
                            on_prepare_for_sleep, &target);
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
