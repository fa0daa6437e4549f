/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _LGPL_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <urcu-bp.h>

#include "rcustring/rcustring.h"
#include "buf.h"

struct rcs_buf {
	struct rcu_head rcu;
	size_t capacity;
	char str[];
};

_Static_assert(sizeof(struct rcs_buf) <= RCUSTRING_BUF_OVERHEAD,
	       "RCUSTRING_BUF_OVERHEAD must cover the buffer header");

/*
 * Debug and sanitizer builds overwrite a buffer's bytes just before freeing
 * it, NUL included, so a reader that still holds a freed value (a missing or
 * broken read-side section) reads RCUSTRING_POISON bytes and no terminator:
 * a torn read that the stress tests and the bench count, even where the
 * allocator would have left the old bytes in place.
 */
#if defined(__SANITIZE_ADDRESS__) /* gcc */
#define RCS_ASAN 1
#elif defined(__has_feature) /* clang */
#if __has_feature(address_sanitizer)
#define RCS_ASAN 1
#endif
#endif
#if !defined(NDEBUG) || defined(RCS_ASAN)
#define RCS_POISON_ON_FREE 1
#else
#define RCS_POISON_ON_FREE 0
#endif

/*
 * Reclamation accounting. These are the only library-wide mutable values
 * outside the tree: the grace-period backlog is library-wide (one call_rcu
 * worker), so its bound has to be too. pending and pending_bytes count
 * reservations (an upper bound of what is queued); reserve_lock makes the
 * check and the add of a reservation one step, releases only subtract.
 */
static uint64_t stat_allocated, stat_freed, stat_pending, stat_pending_peak, stat_throttled;
static uint64_t stat_pending_bytes, stat_pending_bytes_peak, stat_refused, stat_overflowed;
static pthread_mutex_t reserve_lock = PTHREAD_MUTEX_INITIALIZER;

static struct rcs_buf *buf_of(char *str)
{
	return (struct rcs_buf *)(str - offsetof(struct rcs_buf, str));
}

size_t rcs_buf_size(size_t capacity)
{
	return sizeof(struct rcs_buf) + capacity;
}

size_t rcs_buf_size_of(const char *str)
{
	return rcs_buf_size(buf_of((char *)str)->capacity);
}

char *rcs_buf_alloc(size_t capacity)
{
	struct rcs_buf *b;

	if (capacity > SIZE_MAX - sizeof(*b))
		return NULL;
	b = malloc(sizeof(*b) + capacity);
	if (!b)
		return NULL;
	b->capacity = capacity;
	b->str[0] = '\0';
	__atomic_add_fetch(&stat_allocated, 1, __ATOMIC_RELAXED);
	return b->str;
}

char *rcs_buf_shrink(char *str, size_t capacity)
{
	struct rcs_buf *b = buf_of(str), *shrunk;

	if (capacity >= b->capacity)
		return str;
	shrunk = realloc(b, sizeof(*b) + capacity);
	if (!shrunk)
		return str; /* still a valid, larger buffer */
	shrunk->capacity = capacity;
	return shrunk->str;
}

static void buf_release(struct rcs_buf *b)
{
	if (RCS_POISON_ON_FREE)
		memset(b->str, RCUSTRING_POISON, b->capacity);
	free(b);
	__atomic_add_fetch(&stat_freed, 1, __ATOMIC_RELAXED);
}

void rcs_buf_free_now(char *str)
{
	if (str)
		buf_release(buf_of(str));
}

static void note_peak(uint64_t *peak_var, uint64_t value)
{
	uint64_t peak = __atomic_load_n(peak_var, __ATOMIC_RELAXED);

	while (value > peak &&
	       !__atomic_compare_exchange_n(peak_var, &peak, value, 1, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

/* Take room for one buffer of @bytes if it fits (or @force); true if taken. */
static bool try_reserve(size_t bytes, bool force)
{
	uint64_t n, sum;
	bool fits;

	pthread_mutex_lock(&reserve_lock);
	n = __atomic_load_n(&stat_pending, __ATOMIC_RELAXED);
	sum = __atomic_load_n(&stat_pending_bytes, __ATOMIC_RELAXED);
	/* An empty backlog takes any one buffer, or a huge variable could never be written. */
	fits = n == 0 || (n < RCUSTRING_PENDING_MAX && sum <= RCUSTRING_PENDING_BYTES_MAX &&
			  bytes <= RCUSTRING_PENDING_BYTES_MAX - sum);
	if (fits || force) {
		n = __atomic_add_fetch(&stat_pending, 1, __ATOMIC_RELAXED);
		sum = __atomic_add_fetch(&stat_pending_bytes, bytes, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&reserve_lock);
	if (!fits && !force)
		return false;
	if (!fits)
		__atomic_add_fetch(&stat_overflowed, 1, __ATOMIC_RELAXED);
	note_peak(&stat_pending_peak, n);
	note_peak(&stat_pending_bytes_peak, sum);
	return true;
}

/* Frees this thread holds back (rcs_buf_hold_frees()). */
#define HELD_FREES_MAX 64
static __thread struct {
	struct rcs_buf *b[HELD_FREES_MAX];
	int n, depth;
} held;

static void buf_release_rcu(struct rcu_head *head);

static void flush_held(void)
{
	int n = held.n;

	held.n = 0;
	for (int i = 0; i < n; i++)
		call_rcu(&held.b[i]->rcu, buf_release_rcu);
}

void rcs_buf_hold_frees(void)
{
	held.depth++;
}

void rcs_buf_release_frees(void)
{
	if (held.depth > 0 && --held.depth == 0)
		flush_held();
}

int rcs_buf_reserve(size_t bytes, bool force)
{
	while (!try_reserve(bytes, false)) {
		/*
		 * Backlog full. rcu_barrier() would wait for this thread's own
		 * read-side section (liburcu refuses and returns at once, so
		 * retrying would spin for ever): refuse, or overflow if the
		 * caller cannot fail.
		 */
		if (rcu_read_ongoing()) {
			if (force && try_reserve(bytes, true))
				return 0;
			__atomic_add_fetch(&stat_refused, 1, __ATOMIC_RELAXED);
			return -EDEADLK;
		}
		/*
		 * Wait until every queued free has run, which empties the
		 * backlog for the next writes (one wait per full backlog, not
		 * one per write).
		 */
		__atomic_add_fetch(&stat_throttled, 1, __ATOMIC_RELAXED);
		flush_held(); /* counted in the backlog: the barrier must see them queued */
		rcu_barrier();
	}
	return 0;
}

void rcs_buf_unreserve(size_t bytes)
{
	__atomic_sub_fetch(&stat_pending_bytes, bytes, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&stat_pending, 1, __ATOMIC_RELAXED);
}

static void buf_release_rcu(struct rcu_head *head)
{
	struct rcs_buf *b = caa_container_of(head, struct rcs_buf, rcu);
	size_t bytes = rcs_buf_size(b->capacity);

	buf_release(b);
	rcs_buf_unreserve(bytes);
}

void rcs_buf_free_reserved(char *str, size_t reserved)
{
	size_t bytes = rcs_buf_size_of(str);

	/* Keep exactly the buffer's size reserved until its callback runs. */
	if (reserved > bytes)
		__atomic_sub_fetch(&stat_pending_bytes, reserved - bytes, __ATOMIC_RELAXED);
	if (held.depth && held.n < HELD_FREES_MAX) {
		held.b[held.n++] = buf_of(str);
		return;
	}
	call_rcu(&buf_of(str)->rcu, buf_release_rcu);
}

void rcs_buf_free_deferred(char *str)
{
	size_t bytes;

	if (!str)
		return;
	bytes = rcs_buf_size_of(str);
	rcs_buf_reserve(bytes, true);
	rcs_buf_free_reserved(str, bytes);
}

void rcustring_get_stats(struct rcustring_stats *st)
{
	st->allocated = __atomic_load_n(&stat_allocated, __ATOMIC_RELAXED);
	st->freed = __atomic_load_n(&stat_freed, __ATOMIC_RELAXED);
	st->pending = __atomic_load_n(&stat_pending, __ATOMIC_RELAXED);
	st->pending_peak = __atomic_load_n(&stat_pending_peak, __ATOMIC_RELAXED);
	st->throttled = __atomic_load_n(&stat_throttled, __ATOMIC_RELAXED);
	st->pending_bytes = __atomic_load_n(&stat_pending_bytes, __ATOMIC_RELAXED);
	st->pending_bytes_peak = __atomic_load_n(&stat_pending_bytes_peak, __ATOMIC_RELAXED);
	st->refused = __atomic_load_n(&stat_refused, __ATOMIC_RELAXED);
	st->overflowed = __atomic_load_n(&stat_overflowed, __ATOMIC_RELAXED);
}

void rcustring_reset_peak(void)
{
	__atomic_store_n(&stat_pending_peak, __atomic_load_n(&stat_pending, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&stat_pending_bytes_peak,
			 __atomic_load_n(&stat_pending_bytes, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

void rcustring_barrier(void)
{
	rcu_barrier();
}

int rcustring_synchronize(void)
{
	/* A grace period cannot end while this thread is inside a section. */
	if (rcu_read_ongoing())
		return -EDEADLK;
	synchronize_rcu();
	return 0;
}
