/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the rcustring core: every public function, its error paths. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "rcustring/rcustring.h"
#include "rcustring/static/rcustring.h"
#include "rcustring/compat.h"
#include "../failmalloc.h"

static struct rcustring global_var = RCUSTRING_INITIALIZER(16, "static-default");

static void read_is(const struct rcustring *s, const char *want)
{
	char buf[256];

	assert_int_equal(rcustring_copy(s, buf, sizeof(buf)), (ssize_t)strlen(want));
	assert_string_equal(buf, want);
}

static void test_static_initializer(void **state)
{
	(void)state;
	assert_int_equal(rcustring_maxlen(&global_var), 16);
	assert_int_equal(rcustring_generation(&global_var), 0);
	read_is(&global_var, "static-default");
	assert_int_equal(rcustring_set(&global_var, "x"), 0);
	read_is(&global_var, "x");
	/* Back to the static default: must not be freed by the next write. */
	assert_int_equal(rcustring_reset(&global_var), 0);
	rcustring_read_lock();
	assert_ptr_equal(rcustring_dereference(&global_var), global_var.static_default);
	rcustring_read_unlock();
	assert_int_equal(rcustring_set(&global_var, "y"), 0);
	assert_int_equal(rcustring_generation(&global_var), 3);
	rcustring_destroy(&global_var);
	read_is(&global_var, "static-default");
	rcustring_barrier();
}

static uintptr_t line_of(const void *p)
{
	return (uintptr_t)p / RCUSTRING_CACHE_LINE;
}

/*
 * Readers load only value; a write stores to writer_lock and generation
 * several times. Wherever malloc or a caller puts the variable (every
 * 8-byte offset of a line here), value must not share a cache line with
 * them, or each write would take the readers' line away more than once.
 */
static void test_layout_reader_line(void **state)
{
	_Alignas(RCUSTRING_CACHE_LINE) static char area[2 * RCUSTRING_CACHE_LINE +
							sizeof(struct rcustring)];

	(void)state;
	for (size_t off = 0; off < RCUSTRING_CACHE_LINE; off += 8) {
		struct rcustring *s = (struct rcustring *)(void *)(area + off);

		assert_int_equal(rcustring_init(s, 8, "d"), 0);
		assert_true(line_of(&s->value) != line_of(&s->writer_lock));
		assert_true(line_of(&s->value) !=
			    line_of((const char *)&s->writer_lock + sizeof(s->writer_lock) - 1));
		assert_true(line_of(&s->value) != line_of(&s->generation));
		rcustring_destroy(s);
	}
}

static void test_init_errors(void **state)
{
	struct rcustring s;

	(void)state;
	assert_int_equal(rcustring_init(NULL, 8, "a"), -EINVAL);
	assert_int_equal(rcustring_init(&s, 8, NULL), -EINVAL);
	assert_int_equal(rcustring_init(&s, 0, ""), -EINVAL);
	assert_int_equal(rcustring_init(&s, 4, "abcd"), -EMSGSIZE);
	assert_int_equal(rcustring_init(&s, 5, "abcd"), 0);
	read_is(&s, "abcd");
	rcustring_destroy(&s);
	assert_int_equal(rcustring_init(&s, 1, ""), 0);
	read_is(&s, "");
	assert_int_equal(rcustring_set(&s, "a"), -EMSGSIZE);
	assert_int_equal(rcustring_set(&s, ""), 0);
	rcustring_destroy(&s);
	rcustring_barrier();
}

static void test_set(void **state)
{
	struct rcustring s;

	(void)state;
	assert_int_equal(rcustring_init(&s, 8, "def"), 0);
	assert_int_equal(rcustring_set(&s, "1234567"), 0);
	read_is(&s, "1234567");
	assert_int_equal(rcustring_generation(&s), 1);

	/* Too long: refused, nothing truncated, old value and generation kept. */
	assert_int_equal(rcustring_set(&s, "12345678"), -EMSGSIZE);
	read_is(&s, "1234567");
	assert_int_equal(rcustring_generation(&s), 1);

	assert_int_equal(rcustring_set(NULL, "a"), -EINVAL);
	assert_int_equal(rcustring_set(&s, NULL), -EINVAL);
	read_is(&s, "1234567");
	rcustring_destroy(&s);
	rcustring_barrier();
}

static void test_set_len(void **state)
{
	struct rcustring s;
	const char bytes[] = { 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i' };

	(void)state;
	assert_int_equal(rcustring_init(&s, 8, ""), 0);
	assert_int_equal(rcustring_set_len(&s, bytes, 3), 0);
	read_is(&s, "abc");
	assert_int_equal(rcustring_set_len(&s, bytes, 8), -EMSGSIZE);
	read_is(&s, "abc");
	/* An embedded NUL ends the value, so a long buffer can still fit. */
	assert_int_equal(rcustring_set_len(&s, "xy\0zzzzzzzzzz", 13), 0);
	read_is(&s, "xy");
	assert_int_equal(rcustring_set_len(&s, bytes, 0), 0);
	read_is(&s, "");
	assert_int_equal(rcustring_set_len(&s, NULL, 1), -EINVAL);
	assert_int_equal(rcustring_generation(&s), 3);
	rcustring_destroy(&s);
	rcustring_barrier();
}

/* Fail each allocation of a write in turn: the old value must survive. */
static void test_set_enomem(void **state)
{
	struct rcustring s;
	long n, calls;
	int ret;

	(void)state;
	assert_int_equal(rcustring_init(&s, 32, "old"), 0);
	for (n = 1;; n++) {
		failmalloc_arm(n);
		ret = rcustring_set(&s, "new value");
		calls = failmalloc_disarm();
		if (ret == 0)
			break;
		assert_int_equal(ret, -ENOMEM);
		read_is(&s, "old");
		assert_int_equal(rcustring_generation(&s), 0);
		assert_true(n <= calls);
	}
	assert_true(n > 1); /* at least one allocation was failed */
	read_is(&s, "new value");
	rcustring_destroy(&s);
	rcustring_barrier();
}

static void test_edit(void **state)
{
	struct rcustring s;
	struct rcustring_edit e;

	(void)state;
	assert_int_equal(rcustring_init(&s, 8, "abc"), 0);
	assert_int_equal(rcustring_edit_begin(&s, &e), 0);
	assert_string_equal(e.buf, "abc");
	assert_int_equal(e.size, 8);
	strcat(e.buf, "def");
	read_is(&s, "abc"); /* not published yet */
	assert_int_equal(rcustring_edit_commit(&e), 0);
	read_is(&s, "abcdef");
	assert_int_equal(rcustring_generation(&s), 1);

	/* Abort: discarded, lock released (a later write goes through). */
	assert_int_equal(rcustring_edit_begin(&s, &e), 0);
	strcpy(e.buf, "zzz");
	rcustring_edit_abort(&e);
	read_is(&s, "abcdef");
	assert_int_equal(rcustring_generation(&s), 1);

	/* No NUL within size: refused and discarded. */
	assert_int_equal(rcustring_edit_begin(&s, &e), 0);
	memset(e.buf, 'q', e.size);
	assert_int_equal(rcustring_edit_commit(&e), -EMSGSIZE);
	read_is(&s, "abcdef");
	assert_int_equal(rcustring_set(&s, "after"), 0);
	read_is(&s, "after");

	assert_int_equal(rcustring_edit_begin(NULL, &e), -EINVAL);
	assert_int_equal(rcustring_edit_begin(&s, NULL), -EINVAL);
	assert_int_equal(rcustring_edit_commit(NULL), -EINVAL);
	rcustring_edit_abort(NULL);

	failmalloc_arm(1);
	assert_int_equal(rcustring_edit_begin(&s, &e), -ENOMEM);
	failmalloc_disarm();
	assert_int_equal(rcustring_set(&s, "free"), 0); /* lock not held */
	read_is(&s, "free");
	rcustring_destroy(&s);
	rcustring_barrier();
}

static void test_copy(void **state)
{
	struct rcustring s;
	char buf[16];

	(void)state;
	assert_int_equal(rcustring_init(&s, 16, "0123456789"), 0);
	assert_int_equal(rcustring_copy(&s, buf, 11), 10);
	assert_string_equal(buf, "0123456789");
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(rcustring_copy(&s, buf, 10), -ERANGE);
	assert_string_equal(buf, "");
	assert_int_equal(rcustring_copy(&s, buf, 0), -EINVAL);
	assert_int_equal(rcustring_copy(&s, NULL, 8), -EINVAL);
	assert_int_equal(rcustring_copy(NULL, buf, 8), -EINVAL);
	rcustring_destroy(&s);
}

static void test_dup(void **state)
{
	struct rcustring s;
	char *p;

	(void)state;
	assert_int_equal(rcustring_init(&s, 16, "dflt"), 0);
	assert_int_equal(rcustring_set(&s, "kept"), 0);
	p = rcustring_dup(&s);
	assert_non_null(p);
	assert_string_equal(p, "kept");
	assert_int_equal(rcustring_set(&s, "changed"), 0);
	assert_string_equal(p, "kept"); /* the copy is the caller's */
	free(p);

	failmalloc_arm(1);
	errno = 0;
	assert_null(rcustring_dup(&s));
	failmalloc_disarm();
	assert_int_equal(errno, ENOMEM);
	errno = 0;
	assert_null(rcustring_dup(NULL));
	assert_int_equal(errno, EINVAL);
	rcustring_destroy(&s);
	rcustring_barrier();
}

struct replacer {
	struct rcustring *s;
	int done;
};

static void *replace_once(void *arg)
{
	struct replacer *r = arg;

	assert_int_equal(rcustring_set(r->s, "second"), 0);
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A reader's pointer stays valid (not freed) until its read unlock. */
static void test_reader_keeps_old_version(void **state)
{
	struct rcustring s;
	struct replacer r = { &s, 0 };
	pthread_t t;
	const char *p;

	(void)state;
	assert_int_equal(rcustring_init(&s, 16, "dflt"), 0);
	assert_int_equal(rcustring_set(&s, "first"), 0);
	rcustring_read_lock();
	rcustring_read_lock(); /* nests */
	p = rcustring_dereference(&s);
	assert_int_equal(pthread_create(&t, NULL, replace_once, &r), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(__atomic_load_n(&r.done, __ATOMIC_ACQUIRE));
	assert_string_equal(p, "first"); /* ASan flags this if freed early */
	rcustring_read_unlock();
	assert_string_equal(p, "first");
	rcustring_read_unlock();
	read_is(&s, "second");
	rcustring_destroy(&s);
	rcustring_barrier();
}

/* Counts balance: every buffer allocated is freed once everything settles. */
static void test_stats_balance(void **state)
{
	struct rcustring_stats before, after;
	struct rcustring s;
	int i;

	(void)state;
	rcustring_barrier();
	rcustring_get_stats(&before);
	assert_int_equal(rcustring_init(&s, 16, "d"), 0);
	for (i = 0; i < 100; i++)
		assert_int_equal(rcustring_set(&s, i % 2 ? "odd" : "even"), 0);
	rcustring_destroy(&s);
	rcustring_barrier();
	rcustring_get_stats(&after);
	assert_int_equal(after.allocated - before.allocated, 100);
	assert_int_equal(after.freed - before.freed, 100);
	assert_int_equal(after.pending, 0);
}

/* Hang guard: wait up to @seconds for *flag to become nonzero. */
static int wait_flag(const int *flag, int seconds)
{
	struct timespec now;
	time_t end;

	clock_gettime(CLOCK_MONOTONIC, &now);
	end = now.tv_sec + seconds;
	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec >= end)
			return 0;
		usleep(1000);
	}
	return 1;
}

/* A write allocates what the value needs, not the variable's maxlen. */
static void test_set_allocates_value_size(void **state)
{
	struct rcustring s;
	size_t requested;
	long calls;

	(void)state;
	assert_int_equal(rcustring_init(&s, 65536, "d"), 0);
	failmalloc_arm(LONG_MAX); /* count, never fail */
	assert_int_equal(rcustring_set(&s, "abc"), 0);
	requested = failmalloc_requested;
	calls = failmalloc_disarm();
	assert_int_equal(calls, 1);
	assert_true(requested >= 4);
	assert_true(requested <= 4 + RCUSTRING_BUF_OVERHEAD);
	read_is(&s, "abc");
	rcustring_destroy(&s);
	rcustring_barrier();
}

/* Bytes the backlog holds for the version @write retires (inside a section). */
static uint64_t retired_bytes(struct rcustring *s, int (*write)(struct rcustring *))
{
	struct rcustring_stats before, after;
	int err;

	rcustring_barrier();
	rcustring_read_lock(); /* holds the grace period: the version stays pending */
	rcustring_get_stats(&before);
	err = write(s);
	rcustring_get_stats(&after);
	rcustring_read_unlock();
	rcustring_barrier();
	assert_int_equal(err, 0);
	return after.pending_bytes - before.pending_bytes;
}

static int write_x(struct rcustring *s)
{
	return rcustring_set(s, "x");
}

static int edit_abc(struct rcustring *s)
{
	struct rcustring_edit e;
	int err = rcustring_edit_begin(s, &e);

	if (err)
		return err;
	strcpy(e.buf, "abc");
	return rcustring_edit_commit(&e);
}

/*
 * The backlog counts a retired version at what the value needs, whether it
 * was written by set or through the edit form (whose maxlen copy is shrunk
 * at commit), not at maxlen.
 */
static void test_retired_version_bytes(void **state)
{
	struct rcustring s;
	uint64_t bytes;

	(void)state;
	assert_int_equal(rcustring_init(&s, 65536, "d"), 0);
	assert_int_equal(rcustring_set(&s, "abc"), 0);
	bytes = retired_bytes(&s, edit_abc); /* retires set's "abc" */
	assert_true(bytes >= 4 && bytes <= 4 + RCUSTRING_BUF_OVERHEAD);
	bytes = retired_bytes(&s, write_x); /* retires the edit form's "abc" */
	assert_true(bytes >= 4 && bytes <= 4 + RCUSTRING_BUF_OVERHEAD);
	read_is(&s, "x");
	rcustring_destroy(&s);
	rcustring_barrier();
}

struct gp_waiter {
	struct rcustring *s;
	int set_err, sync_err;
	int set_done, sync_done;
	int reader_inside;   /* set by the reader while it holds its section */
	int inside_at_return; /* reader_inside when the grace period ended */
};

static void *set_then_synchronize(void *arg)
{
	struct gp_waiter *w = arg;

	w->set_err = rcustring_set(w->s, "second, and longer than the first");
	__atomic_store_n(&w->set_done, 1, __ATOMIC_RELEASE);
	w->sync_err = rcustring_synchronize();
	w->inside_at_return = __atomic_load_n(&w->reader_inside, __ATOMIC_ACQUIRE);
	__atomic_store_n(&w->sync_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The read-side section holds off the grace period: a writer that replaced
 * the value and waits for a grace period is still waiting while a reader
 * that entered before is inside, and the old value is intact (a premature
 * free poisons it, or ASan reports it) until the reader leaves.
 */
static void test_reader_holds_grace_period(void **state)
{
	struct rcustring s;
	struct gp_waiter w = { .s = &s };
	pthread_t t;
	const char *p;

	(void)state;
	assert_int_equal(rcustring_init(&s, 64, "dflt"), 0);
	assert_int_equal(rcustring_set(&s, "first"), 0);
	rcustring_read_lock();
	__atomic_store_n(&w.reader_inside, 1, __ATOMIC_RELEASE);
	p = rcustring_dereference(&s);
	assert_string_equal(p, "first");
	assert_int_equal(pthread_create(&t, NULL, set_then_synchronize, &w), 0);
	assert_true(wait_flag(&w.set_done, 60));
	assert_int_equal(w.set_err, 0);
	/*
	 * Give a broken grace period time to end (and the freed value time
	 * to be poisoned). Correct code never ends it here, so this waits the
	 * whole time; only a broken read lock makes it stop early.
	 */
	for (int i = 0; i < 300 && !__atomic_load_n(&w.sync_done, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	assert_false(__atomic_load_n(&w.sync_done, __ATOMIC_ACQUIRE));
	assert_memory_equal(p, "first", 6);
	__atomic_store_n(&w.reader_inside, 0, __ATOMIC_RELEASE);
	rcustring_read_unlock();
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(w.sync_err, 0);
	assert_false(w.inside_at_return);
	read_is(&s, "second, and longer than the first");
	rcustring_destroy(&s);
	rcustring_barrier();
}

/*
 * Threads that never register: any thread may read and write, and the
 * library (liburcu-bp) registers it on its first read lock and unregisters
 * it when it exits. Many short threads, some reading, some writing
 * (call_rcu from a thread that did nothing else), some exiting having
 * touched nothing, must neither crash nor leak (ASan and valgrind run this
 * test), and a fresh thread's section must still hold off a grace period.
 */
struct fresh {
	struct rcustring *s;
	unsigned i;
	int err;
	int inside, release, intact;
};

static bool value_ok(const char *v)
{
	return !strcmp(v, "first") || !strcmp(v, "x") || !strcmp(v, "yy");
}

static void *fresh_thread(void *arg)
{
	struct fresh *f = arg;
	char buf[16];
	const char *p;

	switch (f->i % 4) {
	case 0: /* exits holding nothing, having called nothing */
		break;
	case 1:
		if (rcustring_copy(f->s, buf, sizeof(buf)) < 0 || !value_ok(buf))
			f->err = -EIO;
		break;
	case 2:
		rcustring_read_lock();
		p = rcustring_dereference(f->s);
		if (!value_ok(p))
			f->err = -EIO;
		rcustring_read_unlock();
		break;
	case 3: /* a write first: call_rcu from a thread that never read */
		f->err = rcustring_set(f->s, f->i % 8 == 3 ? "x" : "yy");
		if (!f->err && (rcustring_copy(f->s, buf, sizeof(buf)) < 0 || !value_ok(buf)))
			f->err = -EIO;
		break;
	}
	return NULL;
}

static void *fresh_reader_hold(void *arg)
{
	struct fresh *f = arg;
	const char *p;

	rcustring_read_lock();
	p = rcustring_dereference(f->s);
	__atomic_store_n(&f->inside, 1, __ATOMIC_RELEASE);
	wait_flag(&f->release, 60);
	/* A premature free poisons these bytes (or ASan reports the read). */
	f->intact = !memcmp(p, "first", 6);
	rcustring_read_unlock();
	return NULL;
}

static void test_unregistered_threads(void **state)
{
	enum { ROUNDS = 50, BATCH = 8 };
	struct rcustring s;
	struct fresh f[BATCH], holder;
	struct gp_waiter w = { .s = &s };
	struct rcustring_stats before, after;
	pthread_t t[BATCH], ht, wt;

	(void)state;
	rcustring_barrier();
	rcustring_get_stats(&before);
	assert_int_equal(rcustring_init(&s, 64, "first"), 0);
	for (unsigned round = 0; round < ROUNDS; round++) {
		for (unsigned i = 0; i < BATCH; i++) {
			f[i] = (struct fresh){ .s = &s, .i = round * BATCH + i };
			assert_int_equal(pthread_create(&t[i], NULL, fresh_thread, &f[i]), 0);
		}
		for (unsigned i = 0; i < BATCH; i++) {
			assert_int_equal(pthread_join(t[i], NULL), 0);
			assert_int_equal(f[i].err, 0);
		}
	}

	/* A fresh thread inside a section holds off the grace period. */
	assert_int_equal(rcustring_reset(&s), 0); /* "first" again */
	holder = (struct fresh){ .s = &s };
	assert_int_equal(pthread_create(&ht, NULL, fresh_reader_hold, &holder), 0);
	assert_true(wait_flag(&holder.inside, 60));
	w.reader_inside = 1;
	assert_int_equal(pthread_create(&wt, NULL, set_then_synchronize, &w), 0);
	assert_true(wait_flag(&w.set_done, 60));
	assert_int_equal(w.set_err, 0);
	/* Correct code waits here the whole time; a broken section ends early. */
	for (int i = 0; i < 300 && !__atomic_load_n(&w.sync_done, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	assert_false(__atomic_load_n(&w.sync_done, __ATOMIC_ACQUIRE));
	__atomic_store_n(&w.reader_inside, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&holder.release, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(ht, NULL), 0);
	assert_true(holder.intact);
	assert_int_equal(pthread_join(wt, NULL), 0);
	assert_int_equal(w.sync_err, 0);
	assert_false(w.inside_at_return);

	rcustring_destroy(&s);
	rcustring_barrier();
	rcustring_get_stats(&after);
	/* Every buffer the threads allocated was freed. */
	assert_int_equal(after.allocated - before.allocated, after.freed - before.freed);
	assert_int_equal(after.pending, before.pending);
}

/*
 * The opt-in inline read side is the library's own: same returns as
 * rcustring_copy(), and an inline section is a section to the library
 * (a grace period would wait for it), nesting with the function form.
 */
static void test_inline_read_side(void **state)
{
	struct rcustring s;
	char buf[8], small[3];

	(void)state;
	assert_int_equal(rcustring_init(&s, 8, "dflt"), 0);
	assert_int_equal(rcustring_set(&s, "abcd"), 0);
	assert_int_equal(rcustring_copy_inline(&s, buf, sizeof(buf)), 4);
	assert_string_equal(buf, "abcd");
	assert_int_equal(rcustring_copy_inline(&s, small, sizeof(small)), -ERANGE);
	assert_string_equal(small, "");
	assert_int_equal(rcustring_copy_inline(NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(rcustring_copy_inline(&s, buf, 0), -EINVAL);

	rcustring_read_lock_inline();
	assert_int_equal(rcustring_synchronize(), -EDEADLK);
	rcustring_read_lock(); /* nests across the two forms */
	assert_string_equal(rcustring_dereference(&s), "abcd");
	rcustring_read_unlock();
	assert_int_equal(rcustring_synchronize(), -EDEADLK);
	rcustring_read_unlock_inline();
	assert_int_equal(rcustring_synchronize(), 0);
	rcustring_destroy(&s);
	rcustring_barrier();
}

/* Waiting for a grace period inside a section would wait for itself. */
static void test_synchronize_in_section(void **state)
{
	(void)state;
	assert_int_equal(rcustring_synchronize(), 0);
	rcustring_read_lock();
	assert_int_equal(rcustring_synchronize(), -EDEADLK);
	rcustring_read_unlock();
	assert_int_equal(rcustring_synchronize(), 0);
}

#define BIG_MAXLEN 4096

/* Value @k of a big variable: BIG_MAXLEN - 1 bytes, one letter per k. */
static void big_value(char *buf, long k)
{
	memset(buf, 'a' + (int)(k % 26), BIG_MAXLEN - 1);
	buf[BIG_MAXLEN - 1] = '\0';
}

struct inside_writer {
	struct rcustring *s;
	struct rcustring *other; /* destroyed inside the section */
	char *compat;            /* freed inside the section */
	long writes;        /* successful writes inside the section */
	int set_err, reset_err, edit_err;
	int kept;           /* value and generation unchanged by the refusals */
	int done;
};

/* Write inside one read-side section until the backlog refuses. */
static void *write_inside_section(void *arg)
{
	struct inside_writer *w = arg;
	static char value[BIG_MAXLEN];
	struct rcustring_edit e;
	uint64_t gen;
	int err = 0;

	rcustring_read_lock();
	/* More than either bound allows: the writes must stop somewhere. */
	for (long k = 0; k < RCUSTRING_PENDING_MAX + 10; k++) {
		big_value(value, k);
		err = rcustring_set(w->s, value);
		if (err)
			break;
		w->writes++;
	}
	w->set_err = err;
	gen = rcustring_generation(w->s);
	big_value(value, w->writes - 1);
	w->reset_err = rcustring_reset(w->s);
	w->edit_err = rcustring_edit_begin(w->s, &e);
	if (w->edit_err == 0)
		rcustring_edit_abort(&e);
	w->kept = strcmp(rcustring_dereference(w->s), value) == 0 &&
		  rcustring_generation(w->s) == gen && gen == (uint64_t)w->writes;
	/* These cannot fail: they queue beyond the bound rather than spin. */
	rcustring_destroy(w->other);
	free_rcu_string(w->compat);
	rcustring_read_unlock();
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Writes inside a read-side section on a full backlog cannot wait for a
 * grace period: they fail with -EDEADLK and leave the old value, instead of
 * retrying for ever.
 */
static void test_write_in_section_full_backlog(void **state)
{
	struct rcustring_stats before, after;
	static char value[BIG_MAXLEN];
	struct rcustring s, other;
	struct inside_writer w;
	struct rcustring_edit e;
	pthread_t t;

	(void)state;
	rcustring_barrier();
	rcustring_get_stats(&before);
	assert_int_equal(rcustring_init(&s, BIG_MAXLEN, "d"), 0);
	/* As big as what the refused writes needed: they cannot fit either. */
	assert_int_equal(rcustring_init(&other, BIG_MAXLEN, "d"), 0);
	big_value(value, 0);
	assert_int_equal(rcustring_set(&other, value), 0);
	memset(&w, 0, sizeof(w));
	w.s = &s;
	w.other = &other;
	w.compat = alloc_rcu_string(BIG_MAXLEN);
	assert_non_null(w.compat);
	assert_int_equal(pthread_create(&t, NULL, write_inside_section, &w), 0);
	if (!wait_flag(&w.done, 20)) {
		/* The writer spins inside its section: nothing later can run. */
		fprintf(stderr, "FAIL: a write inside a read-side section never returned\n");
		_exit(1);
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(w.set_err, -EDEADLK);
	assert_int_equal(w.reset_err, -EDEADLK);
	assert_int_equal(w.edit_err, -EDEADLK);
	assert_true(w.kept);
	assert_true(w.writes > 0);
	rcustring_get_stats(&after);
	assert_int_equal(after.refused - before.refused, 3);
	assert_int_equal(after.overflowed - before.overflowed, 2);
	read_is(&other, "d");
	/* Outside the section the same write waits for room and succeeds. */
	assert_int_equal(rcustring_set(&s, "after"), 0);
	read_is(&s, "after");
	assert_int_equal(rcustring_edit_begin(&s, &e), 0);
	rcustring_edit_abort(&e);
	rcustring_destroy(&s);
	rcustring_barrier();
}

#define STORM_WRITERS 4
#define STORM_VARS 2

struct storm {
	struct rcustring vars[STORM_VARS];
	size_t len;        /* length of every value written */
	long per_writer;
	long completed;    /* successful writes, all writers */
	int finished;      /* writers that did all their writes */
	int next_id;
	int failed;
};

static void *storm_writer(void *arg)
{
	struct storm *st = arg;
	static __thread char value[2048];
	long id = __atomic_fetch_add(&st->next_id, 1, __ATOMIC_RELAXED);

	for (long k = 0; k < st->per_writer; k++) {
		struct rcustring *s = &st->vars[(k + id) % STORM_VARS];
		struct rcustring_edit e;
		int err;

		memset(value, 'a' + (int)(k % 26), st->len);
		value[st->len] = '\0';
		if (k % 4 == 3) { /* some through the edit form */
			err = rcustring_edit_begin(s, &e);
			if (!err) {
				strcpy(e.buf, value);
				err = rcustring_edit_commit(&e);
			}
		} else {
			err = rcustring_set(s, value);
		}
		if (err) {
			__atomic_store_n(&st->failed, 1, __ATOMIC_RELAXED);
			break;
		}
		__atomic_add_fetch(&st->completed, 1, __ATOMIC_RELEASE);
	}
	__atomic_add_fetch(&st->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A write storm while this thread stalls grace periods. Nothing written
 * after its read lock can be freed until its unlock, so every completed
 * write leaves its old version in memory: the count of completed writes
 * measures what is held, independently of the library's own counters.
 * Without the bounds the writers would finish and hold
 * STORM_WRITERS * per_writer versions, more than either bound.
 */
static void storm_under_stalled_reader(size_t len, size_t maxlen, long per_writer)
{
	struct rcustring_stats before, during, after;
	static struct storm st;
	pthread_t t[STORM_WRITERS];
	long held, held_later, waited;
	int blocked = 0, over = 0;

	memset(&st, 0, sizeof(st));
	st.len = len;
	st.per_writer = per_writer;
	/* Unbounded, the storm would hold more than both bounds allow. */
	assert_true(STORM_WRITERS * per_writer > RCUSTRING_PENDING_MAX ||
		    STORM_WRITERS * per_writer * (long)(len + 1) > 2L * RCUSTRING_PENDING_BYTES_MAX);
	rcustring_barrier();
	rcustring_reset_peak();
	rcustring_get_stats(&before);
	for (int i = 0; i < STORM_VARS; i++)
		assert_int_equal(rcustring_init(&st.vars[i], maxlen, "d"), 0);

	rcustring_read_lock();
	for (int i = 0; i < STORM_WRITERS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, storm_writer, &st), 0);
	/* Until every writer finished or waits for room (hang guard 120 s). */
	for (waited = 0; waited < 120000; waited++) {
		rcustring_get_stats(&during);
		/* Asserted after the unlock: a failed assert would keep the section. */
		if (during.pending > RCUSTRING_PENDING_MAX ||
		    during.pending_bytes > RCUSTRING_PENDING_BYTES_MAX)
			over = 1;
		if ((long)(during.throttled - before.throttled) +
			    __atomic_load_n(&st.finished, __ATOMIC_ACQUIRE) >= STORM_WRITERS) {
			blocked = 1;
			break;
		}
		usleep(1000);
	}
	/* first writes replace the static defaults, nothing to hold */
	held = __atomic_load_n(&st.completed, __ATOMIC_ACQUIRE) - STORM_VARS;
	/*
	 * Stalled, the writers stay stopped and nothing published is freed.
	 * The pause only gives a broken read lock time to show.
	 */
	usleep(100000);
	held_later = __atomic_load_n(&st.completed, __ATOMIC_ACQUIRE) - STORM_VARS;
	rcustring_get_stats(&during);
	rcustring_read_unlock();
	for (int i = 0; i < STORM_WRITERS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	assert_true(blocked);
	assert_false(st.failed);
	assert_int_equal(held_later, held);
	assert_int_equal(during.freed, before.freed);
	/*
	 * The bounds on what is really held: each completed write left an old
	 * version still allocated, of at least len + 1 bytes. Then the same
	 * bounds on the library's own counters.
	 */
	assert_true(held <= RCUSTRING_PENDING_MAX);
	assert_true((uint64_t)held * (len + 1) <= RCUSTRING_PENDING_BYTES_MAX);
	assert_false(over);
	assert_int_equal(st.completed, STORM_WRITERS * per_writer);
	for (int i = 0; i < STORM_VARS; i++)
		rcustring_destroy(&st.vars[i]);
	rcustring_barrier();
	rcustring_get_stats(&after);
	assert_true(after.throttled > before.throttled); /* the bound was reached */
	assert_true(after.pending_peak <= RCUSTRING_PENDING_MAX);
	assert_true(after.pending_bytes_peak <= RCUSTRING_PENDING_BYTES_MAX);
	assert_int_equal(after.overflowed, before.overflowed);
	assert_int_equal(after.allocated - before.allocated, after.freed - before.freed);
	assert_int_equal(after.pending, 0);
	assert_int_equal(after.pending_bytes, 0);
}

/* Small values: the version bound is the one reached. */
static void test_backlog_bounded_versions(void **state)
{
	(void)state;
	storm_under_stalled_reader(8, 16, RCUSTRING_PENDING_MAX / STORM_WRITERS + 1000);
}

/* 1000-byte values: the byte bound is reached long before the version bound. */
static void test_backlog_bounded_bytes(void **state)
{
	(void)state;
	storm_under_stalled_reader(1000, 1024, RCUSTRING_PENDING_MAX / STORM_WRITERS + 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_static_initializer),
		cmocka_unit_test(test_layout_reader_line),
		cmocka_unit_test(test_init_errors),
		cmocka_unit_test(test_set),
		cmocka_unit_test(test_set_len),
		cmocka_unit_test(test_set_enomem),
		cmocka_unit_test(test_edit),
		cmocka_unit_test(test_copy),
		cmocka_unit_test(test_dup),
		cmocka_unit_test(test_reader_keeps_old_version),
		cmocka_unit_test(test_stats_balance),
		cmocka_unit_test(test_set_allocates_value_size),
		cmocka_unit_test(test_retired_version_bytes),
		cmocka_unit_test(test_reader_holds_grace_period),
		cmocka_unit_test(test_unregistered_threads),
		cmocka_unit_test(test_inline_read_side),
		cmocka_unit_test(test_synchronize_in_section),
		cmocka_unit_test(test_write_in_section_full_backlog),
		cmocka_unit_test(test_backlog_bounded_versions),
		cmocka_unit_test(test_backlog_bounded_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
