/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The schemes rcustring is measured against: no synchronization at all (the
 * two baselines, copy and in place, with no writer), an array overwritten in place like the kernel's
 * proc_dostring (racy), a mutex, a rwlock and a seqlock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* One cache-line-aligned shared object per run, so runs do not share lines. */
struct shared {
	union {
		pthread_mutex_t mutex;
		pthread_rwlock_t rwlock;
		unsigned seq;           /* seqlock: odd while a write is in progress */
		const char *src;        /* baseline: the constant value */
	};
	char data[VALUE_CAP];
};

static int shared_new(struct run *r)
{
	struct shared *sh = aligned_alloc(64, (sizeof(*sh) + 63) & ~(size_t)63);

	if (!sh)
		return -ENOMEM;
	memset(sh, 0, sizeof(*sh));
	strcpy(sh->data, r->values[0]);
	r->state = sh;
	return 0;
}

static void shared_free(struct run *r)
{
	free(r->state);
	r->state = NULL;
}

/* Baseline: the same strnlen + memcpy + check, from a value nobody writes. */
READ_FN baseline_read(void *state, const struct expect *e, char *buf, bool full)
{
	struct shared *sh = state;
	/* Loaded each time (like a published pointer) so it is not constant-folded. */
	const char *src = __atomic_load_n(&sh->src, __ATOMIC_RELAXED);
	ssize_t n = copy_value(buf, src);

	keep(buf);
	return copy_torn(buf, n, e, full);
}
DEFINE_READER(baseline_reader, baseline_read)

static int baseline_setup(struct run *r)
{
	int err = shared_new(r);

	if (!err)
		((struct shared *)r->state)->src = ((struct shared *)r->state)->data;
	return err;
}

const struct scheme scheme_baseline = {
	.name = "baseline copy",
	.setup = baseline_setup,
	.teardown = shared_free,
	.reader = baseline_reader,
};

/*
 * In-place baseline: the in-place reader's check (three loads on the value)
 * through a plain pointer nobody writes, loaded relaxed each time. What
 * rcustring in-place adds on top of it is its read-side section and
 * rcustring_dereference(): the in-place ratio divides by this, not by a copy.
 */
READ_FN baseline_inplace_read(void *state, const struct expect *e, char *buf, bool full)
{
	struct shared *sh = state;
	const char *p = __atomic_load_n(&sh->src, __ATOMIC_RELAXED);

	(void)buf;
	return value_torn(p, e, full);
}
DEFINE_READER(baseline_inplace_reader, baseline_inplace_read)

const struct scheme scheme_baseline_inplace = {
	.name = "baseline in-place",
	.setup = baseline_setup,
	.teardown = shared_free,
	.reader = baseline_inplace_reader,
};

/*
 * Racy: readers copy with no synchronization while the writer overwrites the
 * array in place, one byte at a time through volatile stores (as a
 * byte-wise copy_from_user into the kernel's buffer would). A data race on
 * purpose: it shows the torn reads the other schemes exist to prevent.
 */
READ_FN racy_read(void *state, const struct expect *e, char *buf, bool full)
{
	struct shared *sh = state;
	ssize_t n = copy_value(buf, sh->data);

	keep(buf);
	return copy_torn(buf, n, e, full);
}
DEFINE_READER(racy_reader, racy_read)

static int racy_write(void *state, const char *value, size_t len)
{
	volatile char *d = ((struct shared *)state)->data;

	for (size_t i = 0; i <= len; i++)
		d[i] = value[i];
	return 0;
}

const struct scheme scheme_racy = {
	.name = "racy in-place",
	.setup = shared_new,
	.teardown = shared_free,
	.reader = racy_reader,
	.write = racy_write,
};

/* Mutex: readers and the writer copy under one pthread_mutex. */
READ_FN mutex_read(void *state, const struct expect *e, char *buf, bool full)
{
	struct shared *sh = state;
	ssize_t n;

	pthread_mutex_lock(&sh->mutex);
	n = copy_value(buf, sh->data);
	pthread_mutex_unlock(&sh->mutex);
	keep(buf);
	return copy_torn(buf, n, e, full);
}
DEFINE_READER(mutex_reader, mutex_read)

static int mutex_setup(struct run *r)
{
	int err = shared_new(r);

	if (!err)
		err = -pthread_mutex_init(&((struct shared *)r->state)->mutex, NULL);
	return err;
}

static void mutex_teardown(struct run *r)
{
	pthread_mutex_destroy(&((struct shared *)r->state)->mutex);
	shared_free(r);
}

static int mutex_write(void *state, const char *value, size_t len)
{
	struct shared *sh = state;

	pthread_mutex_lock(&sh->mutex);
	memcpy(sh->data, value, len + 1);
	pthread_mutex_unlock(&sh->mutex);
	return 0;
}

const struct scheme scheme_mutex = {
	.name = "pthread_mutex",
	.setup = mutex_setup,
	.teardown = mutex_teardown,
	.reader = mutex_reader,
	.write = mutex_write,
};

/*
 * Rwlock: readers share the lock. glibc's default rwlock prefers readers, so
 * two readers that never pause would starve the writer and the row would
 * show reads against (almost) no writes; prefer the writer instead.
 */
READ_FN rwlock_read(void *state, const struct expect *e, char *buf, bool full)
{
	struct shared *sh = state;
	ssize_t n;

	pthread_rwlock_rdlock(&sh->rwlock);
	n = copy_value(buf, sh->data);
	pthread_rwlock_unlock(&sh->rwlock);
	keep(buf);
	return copy_torn(buf, n, e, full);
}
DEFINE_READER(rwlock_reader, rwlock_read)

static int rwlock_setup(struct run *r)
{
	pthread_rwlockattr_t attr;
	int err = shared_new(r);

	if (err)
		return err;
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	err = -pthread_rwlock_init(&((struct shared *)r->state)->rwlock, &attr);
	pthread_rwlockattr_destroy(&attr);
	return err;
}

static void rwlock_teardown(struct run *r)
{
	pthread_rwlock_destroy(&((struct shared *)r->state)->rwlock);
	shared_free(r);
}

static int rwlock_write(void *state, const char *value, size_t len)
{
	struct shared *sh = state;

	pthread_rwlock_wrlock(&sh->rwlock);
	memcpy(sh->data, value, len + 1);
	pthread_rwlock_unlock(&sh->rwlock);
	return 0;
}

const struct scheme scheme_rwlock = {
	.name = "pthread_rwlock",
	.setup = rwlock_setup,
	.teardown = rwlock_teardown,
	.reader = rwlock_reader,
	.write = rwlock_write,
};

/*
 * Seqlock (one writer): the sequence is odd while the data changes; a reader
 * retries when the sequence was odd or moved during its copy. Fences after
 * Boehm, "Can seqlocks get along with programming language memory models?":
 * the writer's release fence keeps the data stores after the odd store, the
 * reader's acquire fence keeps its data loads before the second sequence
 * load. The data itself is copied with plain memcpy, as the kernel's seqlock
 * users do; a copy that raced with the writer is thrown away.
 */
READ_FN seqlock_read(void *state, const struct expect *e, char *buf, bool full)
{
	struct shared *sh = state;
	unsigned s1, s2;
	ssize_t n;

	for (;;) {
		s1 = __atomic_load_n(&sh->seq, __ATOMIC_ACQUIRE);
		if (s1 & 1) {
			cpu_relax();
			continue;
		}
		n = copy_value(buf, sh->data);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&sh->seq, __ATOMIC_RELAXED);
		if (s1 == s2)
			break;
	}
	keep(buf);
	return copy_torn(buf, n, e, full);
}
DEFINE_READER(seqlock_reader, seqlock_read)

static int seqlock_write(void *state, const char *value, size_t len)
{
	struct shared *sh = state;
	unsigned s = __atomic_load_n(&sh->seq, __ATOMIC_RELAXED);

	__atomic_store_n(&sh->seq, s + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(sh->data, value, len + 1);
	__atomic_store_n(&sh->seq, s + 2, __ATOMIC_RELEASE);
	return 0;
}

const struct scheme scheme_seqlock = {
	.name = "seqlock",
	.setup = shared_new,
	.teardown = shared_free,
	.reader = seqlock_reader,
	.write = seqlock_write,
};
