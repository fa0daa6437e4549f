/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Signalling this process's own children (helpers and supervised programs)
 * when the daemon stops: the helpers are started by the library, which keeps
 * no list of their pids, so they are found through /proc.
 */
#ifndef RCUSYSD_CHILDREN_H
#define RCUSYSD_CHILDREN_H

/*
 * Sends @sig to every child of this process still alive (zombies, dead
 * and waiting to be reaped, are left out).
 * A child found in /proc is pinned with a pidfd and checked again before
 * the signal, so a pid reused by another process is never signalled.
 * Returns how many children were signalled, or a negative errno if /proc
 * cannot be read.
 */
int children_signal(int sig);

#endif
