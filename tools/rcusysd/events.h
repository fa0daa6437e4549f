/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysd's events socket (RUN_DIR/events.sock, root only): one request per
 * line, one reply line ("OK <result>" or "ERR <errno> <message>"):
 *
 *   MODULE <name>                       request_module(name)
 *   UEVENT <subsystem> <action> <devpath>  uevent_helper_call(...)
 *   POWEROFF [force]                    orderly_poweroff()
 *   OCFS2_LEAVE <group>                 ocfs2_leave_group(group)
 *   RUN </absolute/path> [args...]      run and supervise a program: when it
 *                                       dies from a signal, a crash record goes
 *                                       where kernel.core_pattern says; the
 *                                       reply is its pid
 *
 * Connections are threads, capped at EVENTS_MAX_CLIENTS; a started line must
 * end within 5 s and an idle connection is closed after 60 s. Threads rather
 * than one poll loop: a request may sleep in a helper (request_module waits
 * for modprobe), and the cap and timeouts bound what a thread each costs.
 *
 * It is not the control socket's server (lib/frontend/socket_server.c)
 * with other verbs, though both take lines under the same deadlines
 * (lib/common/deadline.h) on a socket made the same way
 * (lib/common/unix_listen.h): its clients are root alone (no per-uid caps
 * of its own; its connections count in the daemon's handle budget), a reply is one line (no WATCH stream, no multi-line
 * reply), and what a request starts (helpers, supervised programs)
 * outlives the connection, so its stop waits for those, with a grace
 * period and SIGKILL, not for the connections.
 */
#ifndef RCUSYSD_EVENTS_H
#define RCUSYSD_EVENTS_H

#include <stdbool.h>

struct events;
struct sysctl_budget;

/* Concurrent events connections; beyond it a client gets ERR EAGAIN. */
#define EVENTS_MAX_CLIENTS 32

/*
 * Listens on @path (created with the caller's umask, which should leave it
 * 0600); crash records with relative names go under the directory @core_dirfd
 * (duplicated, the caller keeps its own). POWEROFF is answered ERR 1
 * unless @allow_poweroff: it runs kernel.poweroff_cmd, /sbin/poweroff by
 * default, so one stray line would turn the machine off. Each connection
 * is a handle of @budget (the daemon's, shared with the FUSE mount and the
 * control socket; NULL: not counted), by its peer's uid; a connection past
 * the uid's share is answered "ERR 24 ..." (EMFILE) or "ERR 23 ..."
 * (ENFILE) and closed.
 */
int events_start(const char *path, int core_dirfd, bool allow_poweroff, struct sysctl_budget *budget,
		 struct events **out);

/*
 * Stops listening, closes every connection (idle or not), then waits for
 * the requests in flight and the supervised programs: every child of the
 * process still running gets SIGTERM, and SIGKILL if it outlives
 * @grace_s seconds. Returns 0 with @ev freed, or -ETIMEDOUT if work is still
 * running another @grace_s seconds after the SIGKILL (then @ev is left
 * allocated, since its threads still use it). @killed receives how many
 * children needed SIGKILL. NULL @ev is a no-op.
 */
int events_stop(struct events *ev, int grace_s, int *killed);

/* Client side: sends @line, prints the reply; returns 0 for OK, 1 otherwise. */
int events_send(const char *path, const char *line);

#endif
