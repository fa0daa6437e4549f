/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Change notification: a counter per entry, waiters on a per-tree condition
 * variable, and callbacks (added, removed and waited for in watch.c; this
 * file runs them and takes no entry reference).
 *
 * Callbacks run in threads that change the entry (a writer, the program's
 * sysctl_entry_notify, or unregister telling them the entry is gone), not
 * necessarily in the thread of the change a call reports, after every tree
 * lock is dropped, never concurrently with themselves. Which thread runs a
 * call says nothing about who made the change: the call's record (struct
 * sysctl_change) carries the origin, read with the change's number from
 * one word (the entry's stamp). Each writer answers for
 * its own change only: it returns once every callback of the entry has
 * finished a call that started after the change (so saw it), running the
 * call itself when the callback is idle and waiting when another thread
 * runs it. That call covers every change published before it started, so
 * a writer waits for at most the call in progress and one more: it is never
 * held running the callbacks of other writers' changes, however many come.
 *
 * A writer inside a callback (a callback that writes an entry) never waits:
 * two callbacks writing each other's entries in two threads would wait for
 * each other. When the callback it would wait for is running, it leaves the
 * change to that call's runner, which calls again when its call returns.
 * Only such changes made by callbacks can keep a runner calling; a callback
 * that writes its own entry on every call therefore never stops.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <urcu/list.h>

#include "rcustring/sysctl.h"
#include "entry_lock.h"
#include "notify.h"
#include "tree.h"

/* Callbacks this thread is inside of (any entry, any tree). */
static __thread int callback_depth;

uint64_t sysctl_entry_changes(const struct sysctl_entry *e)
{
	return e ? __atomic_load_n(&e->changes, __ATOMIC_SEQ_CST) : 0;
}

void rcs_sysctl_wake_all(struct sysctl_tree *tree)
{
	pthread_mutex_lock(&tree->notify_lock);
	pthread_cond_broadcast(&tree->notify_cond);
	pthread_mutex_unlock(&tree->notify_lock);
}

/*
 * Call @cb (idle, the callback lock held; dropped around the call) until it has
 * seen every change handed off to this runner.
 */
static void run_one(struct sysctl_entry *e, struct sysctl_callback *cb)
{
	cb->running = true;
	do {
		/*
		 * Read with the lock held: covers every change stamped so far
		 * (each writer stamps its change before it runs callbacks), and
		 * names the origin of the latest, whichever thread this is.
		 */
		uint64_t stamp = __atomic_load_n(&e->stamp, __ATOMIC_SEQ_CST);
		uint64_t seen = stamp >> 8;
		struct sysctl_change ch = { .seq = seen, .origin = (enum sysctl_origin)(stamp & 0xff) };

		rcs_elock_cb_unlock(e);
		callback_depth++;
		cb->fn(e, &ch, cb->arg);
		callback_depth--;
		rcs_elock_cb(e);
		if (seen > cb->done)
			cb->done = seen;
		/* Writers waiting for this call need not wait for the next. */
		rcs_elock_cb_broadcast(e);
	} while (!cb->removed && cb->handoff > cb->done);
	cb->running = false;
	rcs_elock_cb_broadcast(e);
}

/* Make every callback of @e see change number @c (no tree lock held). */
static void run_callbacks(struct sysctl_entry *e, uint64_t c)
{
	struct sysctl_callback *cb;

	rcs_elock_cb(e);
again:
	for (cb = e->callbacks; cb; cb = cb->next) {
		if (cb->done >= c)
			continue;
		if (cb->running) {
			if (callback_depth) {
				/* Never wait from inside a callback: hand it off. */
				if (c > cb->handoff)
					cb->handoff = c;
				continue;
			}
			/* Its call, or the next one, will have seen @c. */
			rcs_elock_cb_wait(e);
		} else {
			run_one(e, cb);
		}
		/* The list may have changed while unlocked: start over. */
		goto again;
	}
	rcs_elock_cb_unlock(e);
}

/*
 * Called after change number @c of @e was published (counter bumped), with
 * no tree lock held.
 */
void rcs_sysctl_changed(struct sysctl_entry *e, uint64_t c)
{
	struct sysctl_tree *tree = rcs_entry_tree(e);

	/* Pairs with the waiter's increment before it reads the counter. */
	if (__atomic_load_n(&tree->waiters, __ATOMIC_SEQ_CST))
		rcs_sysctl_wake_all(tree);
	/* Unlocked peek: a callback added during this change need not see it. */
	if (__atomic_load_n(&e->callbacks, __ATOMIC_ACQUIRE))
		run_callbacks(e, c);
}

void rcs_sysctl_stamp(struct sysctl_entry *e, uint64_t c, enum sysctl_origin origin)
{
	uint64_t old = __atomic_load_n(&e->stamp, __ATOMIC_SEQ_CST);
	uint64_t stamp = c << 8 | (uint64_t)origin;

	/* Writers under the writer lock and notifiers race: only a later change may replace it. */
	while ((old >> 8) < c &&
	       !__atomic_compare_exchange_n(&e->stamp, &old, stamp, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST))
		;
}

void sysctl_entry_notify(struct sysctl_entry *e)
{
	uint64_t c;

	if (!e || e->is_dir)
		return;
	c = __atomic_add_fetch(&e->changes, 1, __ATOMIC_SEQ_CST);
	rcs_sysctl_stamp(e, c, SYSCTL_ORIGIN_PROGRAM);
	rcs_sysctl_changed(e, c);
}

/*
 * Each callback once more, told the entry is gone: a poller waiting for a
 * change would otherwise wait for ever. In the unregistering thread.
 */
void rcs_sysctl_removed(struct sysctl_entry *e)
{
	struct sysctl_change ch = { .origin = SYSCTL_ORIGIN_REMOVED };
	struct sysctl_callback *cb;

	rcs_elock_cb(e);
again:
	for (cb = e->callbacks; cb; cb = cb->next) {
		if (cb->told_gone)
			continue;
		if (cb->running) {
			rcs_elock_cb_wait(e);
			goto again;
		}
		cb->told_gone = true;
		cb->running = true;
		ch.seq = sysctl_entry_changes(e);
		rcs_elock_cb_unlock(e);
		callback_depth++;
		cb->fn(e, &ch, cb->arg);
		callback_depth--;
		rcs_elock_cb(e);
		cb->running = false;
		rcs_elock_cb_broadcast(e);
		goto again; /* the list may have changed while unlocked */
	}
	rcs_elock_cb_unlock(e);
}
