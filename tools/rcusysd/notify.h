/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * systemd's readiness protocol (sd_notify(3)): one datagram of
 * "KEY=VALUE\n" lines to the AF_UNIX socket named by NOTIFY_SOCKET (a path,
 * or '@' for the abstract namespace). systemd documents it as a stable
 * interface, so it is spoken here directly and libsystemd is not needed.
 * Without NOTIFY_SOCKET (not started by systemd with Type=notify) nothing
 * is sent.
 */
#ifndef RCUSYSD_NOTIFY_H
#define RCUSYSD_NOTIFY_H

/* Sends @state ("READY=1", "RELOADING=1\nMONOTONIC_USEC=...", "STOPPING=1"); 0, or a negative errno. */
int notify(const char *state);

/* "RELOADING=1" with the MONOTONIC_USEC= that Type=notify-reload asks for. */
int notify_reloading(void);

#endif
