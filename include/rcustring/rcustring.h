/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcustring core: runtime-tunable strings that many threads read with no
 * lock and no torn read.
 *
 * A struct rcustring is a string *variable*: a published pointer protected by
 * RCU (liburcu, "bp" flavor), its capacity (maxlen, NUL included), its static
 * default (never freed), a writer mutex and a generation counter.
 *
 * Writers replace the whole value: a new buffer is allocated and filled,
 * checked, published with rcu_assign_pointer, and the old buffer is freed
 * after a grace period. A refused or failed write changes nothing.
 *
 * Readers:
 *   - that do not sleep:  rcustring_read_lock(); p = rcustring_dereference(s);
 *                         ... use p ...; rcustring_read_unlock();
 *   - that will sleep:    rcustring_copy(s, buf, sizeof buf)   (no malloc)
 *   - that must keep it:  rcustring_dup(s)                     (free() it)
 *
 * Any thread may read or write; no registration is needed (the bp flavor
 * registers a thread on its first read lock and unregisters it at exit).
 * <rcustring/static/rcustring.h> (opt-in) has the same read side inline, for
 * readers that must not pay a call into the library per read.
 *
 * Errors are negative errno values:
 *   -EINVAL    NULL argument, zero capacity
 *   -EMSGSIZE  value does not fit in maxlen (strlen(value) > maxlen - 1);
 *              nothing is truncated, the old value stays
 *   -ERANGE    a caller buffer is too small for the current value
 *   -ENOMEM    allocation failed; the old value stays
 *   -EDEADLK   a write inside a read-side section found the backlog of old
 *              versions full: making room means waiting for a grace period,
 *              which cannot end while the caller is inside a section. The
 *              old value stays; retry after rcustring_read_unlock().
 */
#ifndef RCUSTRING_RCUSTRING_H
#define RCUSTRING_RCUSTRING_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rcustring/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RCUSTRING_API __attribute__((visibility("default")))

/*
 * Library-wide bounds on old versions waiting for a grace period, in
 * versions and in bytes. Each version counts as its allocation: the value's
 * length + 1 (the edit form's maxlen copy is shrunk to that at commit) plus
 * a header of at most RCUSTRING_BUF_OVERHEAD bytes. A writer reserves room
 * for the version it replaces (maxlen + RCUSTRING_BUF_OVERHEAD, the most it
 * can be) before it publishes; when that does not fit it first waits until
 * every queued free has run (rcu_barrier). So a write storm, even with a
 * reader stalling grace periods, holds at most
 *   min(RCUSTRING_PENDING_MAX * (largest maxlen + RCUSTRING_BUF_OVERHEAD),
 *       RCUSTRING_PENDING_BYTES_MAX)
 * bytes of old versions (malloc's own per-block overhead on top), with two
 * exceptions, both visible in struct rcustring_stats: a single version
 * larger than RCUSTRING_PENDING_BYTES_MAX is let in when nothing else is
 * pending, and rcustring_destroy() or free_rcu_string() called inside a
 * read-side section on a full backlog (they cannot wait, nor fail) queue
 * their version beyond the bound (counted in overflowed).
 */
#define RCUSTRING_PENDING_MAX 16384
#define RCUSTRING_PENDING_BYTES_MAX (4u << 20)
#define RCUSTRING_BUF_OVERHEAD 32

/*
 * Builds without NDEBUG (debug, debugoptimized) and sanitizer builds fill a
 * value's bytes, NUL included, with this byte just before freeing it, so a
 * reader that uses a value after its grace period reads garbage with no
 * terminator instead of the intact old bytes. Never part of a valid value
 * in the tests.
 */
#define RCUSTRING_POISON 0xff

/*
 * Cache line size the layout of struct rcustring assumes (x86-64, most
 * arm64 cores).
 */
#define RCUSTRING_CACHE_LINE 64

/*
 * Two parts, each padded to a cache line: readers load only @value, and a
 * write stores to that part once (the publish). The writer's mutex and the
 * generation, which a write stores to several times (lock, generation,
 * unlock), start a full line after @value, so they are never on the line
 * readers load, however the struct is aligned (malloc gives 16 bytes, not
 * 64). The padding costs 128 bytes per variable instead of 72.
 */
struct rcustring {
	union {
		struct {
			char *value;                /* published value, RCU-protected, never NULL */
			size_t maxlen;              /* capacity, NUL included */
			const char *static_default; /* never freed; value points here until a write */
		};
		char reader_line_[RCUSTRING_CACHE_LINE];
	};
	union {
		struct {
			pthread_mutex_t writer_lock;
			uint64_t generation; /* successful writes so far */
		};
		char writer_line_[RCUSTRING_CACHE_LINE];
	};
};

/*
 * Static initializer: RCUSTRING_INITIALIZER(64, "default"). @default_ must be
 * a string literal; a literal longer than maxlen - 1 fails to compile.
 */
#define RCUSTRING_INITIALIZER(maxlen_, default_)                                   \
	{                                                                          \
		.value = (char *)(default_),                                       \
		.maxlen = (maxlen_) + 0 * sizeof(char[sizeof(default_) <= (maxlen_) ? 1 : -1]), \
		.static_default = (default_),                                      \
		.writer_lock = PTHREAD_MUTEX_INITIALIZER,                          \
		.generation = 0,                                                   \
	}

/**
 * rcustring_init - initialize a string variable at run time
 * @s: the variable
 * @maxlen: capacity, NUL included (> 0)
 * @static_default: initial value; must outlive @s and is never freed
 *
 * Return: 0, -EINVAL (NULL or maxlen 0), -EMSGSIZE (default too long).
 */
RCUSTRING_API int rcustring_init(struct rcustring *s, size_t maxlen, const char *static_default);

/**
 * rcustring_destroy - release a variable's heap value
 *
 * Call when no writer can run any more. Readers still inside a read-side
 * section stay safe: the value is freed after a grace period. The variable
 * reads as its static default afterwards. Waits when the backlog is full;
 * called inside a read-side section it cannot, and queues the value beyond
 * the bound (stats.overflowed).
 */
RCUSTRING_API void rcustring_destroy(struct rcustring *s);

/**
 * rcustring_set - replace the whole value
 * @value: NUL-terminated; strlen(value) must be < maxlen
 *
 * Serialized with other writers of @s. Allocates strlen(value) + 1 bytes
 * (plus a header). When the backlog of old versions is full it waits for a
 * grace period first; inside a read-side section it cannot, and returns
 * -EDEADLK instead.
 * Return: 0, -EINVAL, -EMSGSIZE, -ENOMEM, -EDEADLK; on error the old value
 * stays.
 */
RCUSTRING_API int rcustring_set(struct rcustring *s, const char *value);

/**
 * rcustring_set_len - replace the value with @len bytes (not NUL-terminated)
 *
 * The stored value is the bytes up to the first NUL in @value[0..len) or all
 * of them. Same rules and returns as rcustring_set(); len must be < maxlen.
 */
RCUSTRING_API int rcustring_set_len(struct rcustring *s, const char *value, size_t len);

/**
 * rcustring_reset - publish the static default again (no allocation)
 * Return: 0, -EINVAL, or -EDEADLK (as rcustring_set()); on error the old
 * value stays.
 */
RCUSTRING_API int rcustring_reset(struct rcustring *s);

/*
 * Edit form: the writer gets a private copy of the current value to modify
 * in place, then publishes it or throws it away. Between begin and
 * commit/abort the writer lock of the variable is held. The copy has maxlen
 * bytes (commit shrinks it to the value's length + 1), and begin takes the
 * backlog room for the version commit will replace, so commit never waits.
 */
struct rcustring_edit {
	struct rcustring *s;
	char *buf;   /* private copy of the current value, NUL-terminated */
	size_t size; /* bytes usable in buf, == s->maxlen */
};

/**
 * rcustring_edit_begin - lock the variable and copy its value for editing
 *
 * May wait for a grace period when the backlog is full, as rcustring_set().
 * Return: 0, -EINVAL, -ENOMEM, -EDEADLK (inside a read-side section with
 * the backlog full); nothing locked on error.
 */
RCUSTRING_API int rcustring_edit_begin(struct rcustring *s, struct rcustring_edit *e);

/**
 * rcustring_edit_commit - publish the edited copy and unlock
 *
 * Refused with -EMSGSIZE if buf holds no NUL within size bytes; the copy is
 * then discarded and the old value stays. Either way the edit is over.
 */
RCUSTRING_API int rcustring_edit_commit(struct rcustring_edit *e);

/** rcustring_edit_abort - discard the edited copy (freed at once) and unlock */
RCUSTRING_API void rcustring_edit_abort(struct rcustring_edit *e);

/** rcustring_read_lock - enter a read-side section (nests; any thread) */
RCUSTRING_API void rcustring_read_lock(void);

/** rcustring_read_unlock - leave a read-side section */
RCUSTRING_API void rcustring_read_unlock(void);

/**
 * rcustring_dereference - the current value
 *
 * Only valid between rcustring_read_lock() and rcustring_read_unlock(); the
 * caller must not sleep or keep the pointer past the unlock.
 */
static inline const char *rcustring_dereference(const struct rcustring *s)
{
	/* What rcu_dereference() is: a dependency-ordered load, inlined so
	 * an in-place read costs no call between lock and unlock. */
	return __atomic_load_n(&s->value, __ATOMIC_CONSUME);
}

/**
 * rcustring_copy - copy the current value into a caller buffer (no malloc)
 *
 * For readers that will sleep. A buffer of maxlen bytes always fits.
 * Return: strlen of the copy, -EINVAL, or -ERANGE (buffer too small; buf is
 * then the empty string).
 */
RCUSTRING_API ssize_t rcustring_copy(const struct rcustring *s, char *buf, size_t size);

/**
 * rcustring_dup - heap copy of the current value, for callers that keep it
 * Return: a string to free(), or NULL with errno EINVAL or ENOMEM.
 */
RCUSTRING_API char *rcustring_dup(const struct rcustring *s);

/** rcustring_generation - number of successful writes so far */
RCUSTRING_API uint64_t rcustring_generation(const struct rcustring *s);

/** rcustring_maxlen - capacity of @s, NUL included */
RCUSTRING_API size_t rcustring_maxlen(const struct rcustring *s);

/*
 * Library-wide reclamation counters (monotonic except pending and
 * pending_bytes). pending and pending_bytes count the backlog room taken:
 * old versions waiting for a grace period, each at its size, plus the
 * reservations of writes in progress (at maxlen + RCUSTRING_BUF_OVERHEAD).
 */
struct rcustring_stats {
	uint64_t allocated;     /* value buffers allocated */
	uint64_t freed;         /* value buffers freed (at once or deferred) */
	uint64_t pending;       /* old versions waiting for a grace period now */
	uint64_t pending_peak;  /* highest pending seen */
	uint64_t throttled;     /* waits for a grace period on a full backlog */
	uint64_t pending_bytes; /* bytes of pending, headers included */
	uint64_t pending_bytes_peak; /* highest pending_bytes seen */
	uint64_t refused;       /* writes refused with -EDEADLK */
	uint64_t overflowed;    /* versions queued beyond the bound (see above) */
};

/** rcustring_get_stats - snapshot of the reclamation counters */
RCUSTRING_API void rcustring_get_stats(struct rcustring_stats *st);

/** rcustring_reset_peak - restart both peaks from the current pending counts */
RCUSTRING_API void rcustring_reset_peak(void);

/**
 * rcustring_barrier - wait until every deferred free has run
 *
 * Call before exit (after the last write) so that nothing is left pending.
 * Must not be called inside a read-side section.
 */
RCUSTRING_API void rcustring_barrier(void);

/**
 * rcustring_synchronize - wait for a grace period
 *
 * Returns once every read-side section that was running when it was called
 * has ended: no reader can still hold a value retired before the call
 * (its free may still be queued; rcustring_barrier() waits for that).
 * Return: 0, or -EDEADLK inside a read-side section (the grace period would
 * wait for the caller).
 */
RCUSTRING_API int rcustring_synchronize(void);

#ifdef __cplusplus
}
#endif

#endif /* RCUSTRING_RCUSTRING_H */
