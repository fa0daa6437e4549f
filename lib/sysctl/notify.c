/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Change notification: a counter per entry, waiters on a per-tree condition
 * variable, and callbacks.
 *
 * Callbacks follow Abseil's Flag OnUpdate / folly's addCallback rules: the
 * thread that published a change marks every callback of the entry pending
 * and then runs pending callbacks itself, after dropping every tree lock.
 * A callback already running in another thread is only marked; that runner
 * sees the mark when it returns and calls again with the latest counter. So
 * a callback never runs concurrently with itself, and every change is seen
 * by at least one call made after it was published.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <urcu/list.h>

#include "rcustring/sysctl.h"
#include "tree.h"

struct sysctl_callback {
	struct cds_list_head node; /* in e->callbacks, under e->cb_lock */
	struct sysctl_entry *e;    /* referenced */
	sysctl_change_fn *fn;
	void *arg;
	int pending; /* a change came since the last call started */
	int running; /* some thread is inside fn */
};

int rcs_sysctl_entry_init_notify(struct sysctl_entry *e)
{
	int err = pthread_mutex_init(&e->cb_lock, NULL);

	if (err)
		return -err;
	err = pthread_cond_init(&e->cb_cond, NULL);
	if (err) {
		pthread_mutex_destroy(&e->cb_lock);
		return -err;
	}
	CDS_INIT_LIST_HEAD(&e->callbacks);
	return 0;
}

void rcs_sysctl_entry_fini_notify(struct sysctl_entry *e)
{
	pthread_cond_destroy(&e->cb_cond);
	pthread_mutex_destroy(&e->cb_lock);
}

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

/* Run pending callbacks of @e in this thread (no tree lock held). */
static void run_callbacks(struct sysctl_entry *e)
{
	struct sysctl_callback *cb;

	pthread_mutex_lock(&e->cb_lock);
	cds_list_for_each_entry(cb, &e->callbacks, node)
		cb->pending = 1;
again:
	cds_list_for_each_entry(cb, &e->callbacks, node) {
		uint64_t changes;

		if (!cb->pending || cb->running)
			continue;
		cb->pending = 0;
		cb->running = 1;
		/* Read after clearing pending: covers every change marked so far. */
		changes = sysctl_entry_changes(e);
		pthread_mutex_unlock(&e->cb_lock);
		cb->fn(e, changes, cb->arg);
		pthread_mutex_lock(&e->cb_lock);
		cb->running = 0;
		pthread_cond_broadcast(&e->cb_cond);
		/* The list may have changed while unlocked: start over. */
		goto again;
	}
	pthread_mutex_unlock(&e->cb_lock);
}

/*
 * Called after a change of @e was published (counter already bumped), with
 * no tree lock held.
 */
void rcs_sysctl_changed(struct sysctl_entry *e)
{
	struct sysctl_tree *tree = e->tree;

	/* Pairs with the waiter's increment before it reads the counter. */
	if (__atomic_load_n(&tree->waiters, __ATOMIC_SEQ_CST))
		rcs_sysctl_wake_all(tree);
	/* Unlocked peek: a callback added during this change need not see it. */
	if (__atomic_load_n(&e->callbacks.next, __ATOMIC_ACQUIRE) != &e->callbacks)
		run_callbacks(e);
}

void sysctl_entry_notify(struct sysctl_entry *e)
{
	if (!e || e->is_dir)
		return;
	__atomic_add_fetch(&e->changes, 1, __ATOMIC_SEQ_CST);
	rcs_sysctl_changed(e);
}

int64_t sysctl_entry_wait(struct sysctl_entry *e, uint64_t seen, int timeout_ms)
{
	struct sysctl_tree *tree;
	struct timespec deadline;
	int64_t ret;

	if (!e)
		return -EINVAL;
	tree = e->tree;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	if (timeout_ms > 0) {
		deadline.tv_sec += timeout_ms / 1000;
		deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (deadline.tv_nsec >= 1000000000L) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000L;
		}
	}
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

int sysctl_entry_on_change(struct sysctl_entry *e, sysctl_change_fn *fn, void *arg,
			   struct sysctl_callback **out)
{
	struct sysctl_callback *cb;

	if (!e || !fn || !out || e->is_dir)
		return -EINVAL;
	cb = calloc(1, sizeof(*cb));
	if (!cb)
		return -ENOMEM;
	cb->fn = fn;
	cb->arg = arg;
	cb->e = e;
	sysctl_entry_get(e);
	pthread_mutex_lock(&e->cb_lock);
	cds_list_add_tail(&cb->node, &e->callbacks);
	pthread_mutex_unlock(&e->cb_lock);
	*out = cb;
	return 0;
}

void sysctl_callback_remove(struct sysctl_callback *cb)
{
	struct sysctl_entry *e;

	if (!cb)
		return;
	e = cb->e;
	pthread_mutex_lock(&e->cb_lock);
	cds_list_del(&cb->node);
	/* Unlinked: no new call starts; wait for the one running, if any. */
	while (cb->running)
		pthread_cond_wait(&e->cb_cond, &e->cb_lock);
	pthread_mutex_unlock(&e->cb_lock);
	free(cb);
	sysctl_entry_put(e);
}
