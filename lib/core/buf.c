/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _LGPL_SOURCE
#include <stdlib.h>
#include <urcu-bp.h>

#include "rcustring/rcustring.h"
#include "buf.h"

struct rcs_buf {
	struct rcu_head rcu;
	size_t capacity;
	char str[];
};

/*
 * Reclamation accounting. These are the only library-wide mutable values
 * outside the tree: the grace-period backlog is library-wide (one call_rcu
 * worker), so its bound has to be too.
 */
static uint64_t stat_allocated, stat_freed, stat_pending, stat_pending_peak, stat_throttled;

static struct rcs_buf *buf_of(char *str)
{
	return (struct rcs_buf *)(str - offsetof(struct rcs_buf, str));
}

char *rcs_buf_alloc(size_t capacity)
{
	struct rcs_buf *b = malloc(sizeof(*b) + capacity);

	if (!b)
		return NULL;
	b->capacity = capacity;
	b->str[0] = '\0';
	__atomic_add_fetch(&stat_allocated, 1, __ATOMIC_RELAXED);
	return b->str;
}

static void buf_release(struct rcs_buf *b)
{
	free(b);
	__atomic_add_fetch(&stat_freed, 1, __ATOMIC_RELAXED);
}

void rcs_buf_free_now(char *str)
{
	if (str)
		buf_release(buf_of(str));
}

static void buf_release_rcu(struct rcu_head *head)
{
	buf_release(caa_container_of(head, struct rcs_buf, rcu));
	__atomic_sub_fetch(&stat_pending, 1, __ATOMIC_RELAXED);
}

static void note_peak(uint64_t pending)
{
	uint64_t peak = __atomic_load_n(&stat_pending_peak, __ATOMIC_RELAXED);

	while (pending > peak &&
	       !__atomic_compare_exchange_n(&stat_pending_peak, &peak, pending, 1,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void rcs_buf_free_deferred(char *str)
{
	uint64_t pending;

	if (!str)
		return;
	for (;;) {
		pending = __atomic_add_fetch(&stat_pending, 1, __ATOMIC_RELAXED);
		if (pending <= RCUSTRING_PENDING_MAX)
			break;
		/*
		 * Backlog full: this writer waits until every queued free has
		 * run, which empties the backlog for the next writes (one wait
		 * per RCUSTRING_PENDING_MAX writes, not one per write).
		 */
		__atomic_sub_fetch(&stat_pending, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&stat_throttled, 1, __ATOMIC_RELAXED);
		rcu_barrier();
	}
	note_peak(pending);
	call_rcu(&buf_of(str)->rcu, buf_release_rcu);
}

void rcustring_get_stats(struct rcustring_stats *st)
{
	st->allocated = __atomic_load_n(&stat_allocated, __ATOMIC_RELAXED);
	st->freed = __atomic_load_n(&stat_freed, __ATOMIC_RELAXED);
	st->pending = __atomic_load_n(&stat_pending, __ATOMIC_RELAXED);
	st->pending_peak = __atomic_load_n(&stat_pending_peak, __ATOMIC_RELAXED);
	st->throttled = __atomic_load_n(&stat_throttled, __ATOMIC_RELAXED);
}

void rcustring_reset_peak(void)
{
	__atomic_store_n(&stat_pending_peak, __atomic_load_n(&stat_pending, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
}

void rcustring_barrier(void)
{
	rcu_barrier();
}
