/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a program calls to follow an entry's changes: wait for the next
 * one (of one entry, or of several as of one commit), add a callback
 * (holding a reference on the entry) and remove it. notify.c counts the
 * changes and runs the callbacks.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <urcu/list.h>

#include "common/deadline.h"
#include "rcustring/sysctl.h"
#include "entry_lock.h"
#include "notify.h"
#include "tree.h"
#include "watch.h"

int64_t sysctl_entry_wait(struct sysctl_entry *e, uint64_t seen, int timeout_ms)
{
	struct sysctl_tree *tree;
	struct timespec deadline;
	int64_t ret;

	if (!e)
		return -EINVAL;
	tree = rcs_entry_tree(e);
	deadline = rcs_deadline_after_ms(timeout_ms > 0 ? timeout_ms : 0);
	pthread_mutex_lock(&tree->notify_lock);
	__atomic_add_fetch(&tree->waiters, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		uint64_t now = sysctl_entry_changes(e);

		if (now != seen) {
			ret = (int64_t)now;
			break;
		}
		if (!sysctl_entry_live(e)) {
			ret = -ENOENT;
			break;
		}
		if (timeout_ms == 0) {
			ret = -ETIMEDOUT;
			break;
		}
		if (timeout_ms < 0) {
			pthread_cond_wait(&tree->notify_cond, &tree->notify_lock);
		} else if (pthread_cond_timedwait(&tree->notify_cond, &tree->notify_lock,
						  &deadline) == ETIMEDOUT) {
			now = sysctl_entry_changes(e);
			ret = now != seen ? (int64_t)now : -ETIMEDOUT;
			break;
		}
	}
	__atomic_sub_fetch(&tree->waiters, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&tree->notify_lock);
	return ret;
}

/*
 * The counters of @e[0..@n) as of one commit: a commit bumps them inside
 * one odd phase of the tree's commit sequence (commit.c), so they are
 * read between two equal even reads of it, as sysctl_snapshot() reads
 * values.
 */
static void read_counters(const uint64_t *seq, struct sysctl_entry *const *e, size_t n,
			  uint64_t *now)
{
	uint64_t s;

	do {
		while ((s = __atomic_load_n(seq, __ATOMIC_ACQUIRE)) & 1)
			sched_yield();
		for (size_t i = 0; i < n; i++)
			now[i] = __atomic_load_n(&e[i]->changes, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(seq, __ATOMIC_RELAXED) != s);
}

/* Whether @now differs from @seen anywhere; *@gone set when an entry is gone. */
static bool any_changed(struct sysctl_entry *const *e, size_t n, const uint64_t *seen,
			const uint64_t *now, size_t *gone, bool *removed)
{
	bool changed = false;

	for (size_t i = 0; i < n; i++) {
		changed |= now[i] != seen[i];
		if (!*removed && !sysctl_entry_live(e[i])) {
			*removed = true;
			*gone = i;
		}
	}
	return changed;
}

int rcs_entries_wait(struct sysctl_entry *const *e, size_t n, const uint64_t *seen,
		     uint64_t *now, int timeout_ms, size_t *gone)
{
	struct sysctl_tree *tree;
	struct timespec deadline;
	bool removed = false;
	int ret;

	if (!e || !n || !seen || !now || !gone)
		return -EINVAL;
	tree = rcs_entry_tree(e[0]);
	deadline = rcs_deadline_after_ms(timeout_ms > 0 ? timeout_ms : 0);
	pthread_mutex_lock(&tree->notify_lock);
	__atomic_add_fetch(&tree->waiters, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		/* Under the lock: a writer bumps, then takes it to wake us; none is lost. */
		read_counters(&tree->commit_seq, e, n, now);
		if (any_changed(e, n, seen, now, gone, &removed)) {
			ret = 0;
			break;
		}
		if (removed) {
			ret = -ENOENT;
			break;
		}
		if (timeout_ms < 0) {
			pthread_cond_wait(&tree->notify_cond, &tree->notify_lock);
			continue;
		}
		if (timeout_ms == 0 || pthread_cond_timedwait(&tree->notify_cond, &tree->notify_lock,
							      &deadline) == ETIMEDOUT) {
			read_counters(&tree->commit_seq, e, n, now);
			ret = any_changed(e, n, seen, now, gone, &removed) ? 0
			      : removed ? -ENOENT : -ETIMEDOUT;
			break;
		}
	}
	__atomic_sub_fetch(&tree->waiters, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&tree->notify_lock);
	return ret;
}

int sysctl_entry_on_change(struct sysctl_entry *e, sysctl_change_fn *fn, void *arg,
			   struct sysctl_callback **out)
{
	struct sysctl_callback *cb, **at;

	if (!e || !fn || !out || e->is_dir)
		return -EINVAL;
	cb = calloc(1, sizeof(*cb));
	if (!cb)
		return -ENOMEM;
	cb->fn = fn;
	cb->arg = arg;
	cb->e = e;
	sysctl_entry_get(e);
	rcs_elock_cb(e);
	/* Changes published before it was added are not its concern. */
	cb->done = sysctl_entry_changes(e);
	/* Added last: callbacks run in the order they were added (few per entry). */
	for (at = &e->callbacks; *at; at = &(*at)->next)
		;
	__atomic_store_n(at, cb, __ATOMIC_RELEASE); /* notify.c peeks without the lock */
	rcs_elock_cb_unlock(e);
	*out = cb;
	return 0;
}

void sysctl_callback_remove(struct sysctl_callback *cb)
{
	struct sysctl_callback **at;
	struct sysctl_entry *e;

	if (!cb)
		return;
	e = cb->e;
	rcs_elock_cb(e);
	for (at = &e->callbacks; *at != cb; at = &(*at)->next)
		;
	__atomic_store_n(at, cb->next, __ATOMIC_RELEASE);
	cb->removed = true;
	/* Unlinked: no new call starts; wait for the one running, if any. */
	while (cb->running)
		rcs_elock_cb_wait(e);
	rcs_elock_cb_unlock(e);
	free(cb);
	sysctl_entry_put(e);
}
