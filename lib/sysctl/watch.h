/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Waiting on several entries at once, for a front end that reports a
 * commit as one event (the control socket's MWATCH): the entries' change
 * counters are read as of one commit, since a sysctl_commit() bumps its
 * entries' counters inside one odd phase of the tree's commit sequence.
 * Internal to the library (watch.c).
 */
#ifndef RCUSTRING_LIB_SYSCTL_WATCH_H
#define RCUSTRING_LIB_SYSCTL_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include "rcustring/sysctl.h"

/*
 * Block until the counter of one of @e[0..@n) (entries of one tree)
 * differs from @seen[i], then put every counter in @now[], all as of one
 * commit: the counters of a commit's entries are seen all bumped or none.
 * @timeout_ms as sysctl_entry_wait()'s. Return 0, -ETIMEDOUT (@now[] then
 * equals @seen[]), or -ENOENT with *@gone the index of an unregistered entry.
 * Context: any thread outside a read-side section and a handler; may sleep.
 */
int rcs_entries_wait(struct sysctl_entry *const *e, size_t n, const uint64_t *seen,
		     uint64_t *now, int timeout_ms, size_t *gone);

#endif
