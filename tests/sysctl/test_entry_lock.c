/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The entry's lock word and the tree's wait slots (lib/sysctl/entry_lock.c),
 * under stress: every read under the data lock is checked whole, writers
 * are counted inside the writer lock, the callback condition and a table's
 * drain are waited for many times (a lost wake-up hangs, and the alarm
 * fails the test). The threads yield inside their critical sections so
 * that waits happen on two cores as on many. Entries share the tree's wait
 * slots with others, as in a real tree (several entries per test).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "rcustring/sysctl.h"
#include "../../lib/sysctl/entry_lock.h"
#include "../../lib/sysctl/tree.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define ENTRIES 4  /* entries under stress at once, each with its threads */
#define VALUE_MAX 200
#define SECONDS 1.0      /* at least; longer until enough waits were seen */
#define MAX_SECONDS 20.0  /* on a machine too loaded to see them, fail */
#define MIN_WAITS 50

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * One entry's data: a value that writers replace in place, byte by byte,
 * with one of two patterns that differ in length and in every byte.
 */
struct guarded {
	struct sysctl_entry e;
	char value[VALUE_MAX];
	int inside_write; /* threads inside the writer lock (plain int: a race shows) */
	int inside_data;  /* inside the data lock exclusive */
	int running;      /* the callback condition's state */
};

struct shared {
	struct sysctl_table_header *header; /* the entries' (their tree is its) */
	struct guarded g[ENTRIES];
	long reads, torn, writes, overlap, waits, stop;
};

struct arg {
	struct shared *s;
	struct guarded *g;
};

static void fill(char *v, int which)
{
	size_t len = which ? 150 : 40;

	memset(v, which ? 'B' : 'a', len);
	v[len] = '\0';
}

/* Whole: one pattern from start to end, at its own length. */
static bool whole(const char *v)
{
	size_t len = strlen(v);

	if (len != 40 && len != 150)
		return false;
	for (size_t i = 0; i < len; i++)
		if (v[i] != v[0] || (v[0] != 'a' && v[0] != 'B') || (v[0] == 'a') != (len == 40))
			return false;
	return true;
}

static bool done(struct shared *s)
{
	return __atomic_load_n(&s->stop, __ATOMIC_RELAXED);
}

static void *reader(void *p)
{
	struct arg *a = p;
	char copy[VALUE_MAX];
	long reads = 0, torn = 0;

	while (!done(a->s)) {
		rcs_elock_read(&a->g->e);
		/* Copied slowly, as a handler copying a long value would. */
		for (size_t i = 0; i < VALUE_MAX; i++) {
			copy[i] = a->g->value[i];
			if (!copy[i])
				break;
			if (i == 20)
				sched_yield();
		}
		if (__atomic_load_n(&a->g->inside_data, __ATOMIC_SEQ_CST))
			torn++; /* a writer changes the data while a reader holds it */
		rcs_elock_read_unlock(&a->g->e);
		copy[VALUE_MAX - 1] = '\0';
		if (!whole(copy))
			torn++;
		reads++;
	}
	__atomic_add_fetch(&a->s->reads, reads, __ATOMIC_RELAXED);
	__atomic_add_fetch(&a->s->torn, torn, __ATOMIC_RELAXED);
	return NULL;
}

/* A write as entry_io.c makes one: the writer lock, then the data lock exclusive. */
static void *writer(void *p)
{
	struct arg *a = p;
	struct guarded *g = a->g;
	long overlap = 0;

	for (int i = 0; !done(a->s); i++) {
		rcs_elock_write(&g->e);
		if (__atomic_add_fetch(&g->inside_write, 1, __ATOMIC_SEQ_CST) != 1)
			overlap++;
		sched_yield(); /* the other writer now waits for the lock */
		rcs_elock_data(&g->e);
		__atomic_store_n(&g->inside_data, 1, __ATOMIC_SEQ_CST);
		fill(g->value, i % 2);
		__atomic_store_n(&g->inside_data, 0, __ATOMIC_SEQ_CST);
		rcs_elock_data_unlock(&g->e);
		__atomic_sub_fetch(&g->inside_write, 1, __ATOMIC_SEQ_CST);
		rcs_elock_write_unlock(&g->e);
		__atomic_add_fetch(&a->s->writes, 1, __ATOMIC_RELAXED);
	}
	__atomic_add_fetch(&a->s->overlap, overlap, __ATOMIC_RELAXED);
	return NULL;
}

static struct shared *shared_new(struct sysctl_tree *t)
{
	struct shared *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	/* A leaf's tree is its table header's. */
	s->header = calloc(1, sizeof(*s->header));
	assert_non_null(s->header);
	s->header->tree = t;
	for (int i = 0; i < ENTRIES; i++) {
		s->g[i].e.header = s->header;
		fill(s->g[i].value, 0);
	}
	return s;
}

static void run_threads(void *(*fns[])(void *), int nfns, struct shared *s, long *enough)
{
	pthread_t th[ENTRIES * 8];
	struct arg args[ENTRIES * 8];
	int n = 0;

	for (int i = 0; i < ENTRIES; i++)
		for (int f = 0; f < nfns; f++) {
			args[n] = (struct arg){ .s = s, .g = &s->g[i] };
			assert_int_equal(pthread_create(&th[n], NULL, fns[f], &args[n]), 0);
			n++;
		}
	/* SECONDS at least, then until *@enough reaches MIN_WAITS (or MAX_SECONDS). */
	for (double start = now(); now() - start < MAX_SECONDS;) {
		usleep(10000);
		if (now() - start >= SECONDS && __atomic_load_n(enough, __ATOMIC_RELAXED) >= MIN_WAITS)
			break;
	}
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

/* Two writers and three readers per entry: every read whole, writers alone. */
static void test_data_and_writer_locks(void **state)
{
	struct sysctl_tree *t = sysctl_tree_new();
	void *(*fns[])(void *) = { reader, reader, reader, writer, writer };
	struct shared *s;

	(void)state;
	assert_non_null(t);
	s = shared_new(t);
	run_threads(fns, 5, s, &s->writes);
	printf("entry-lock: %ld reads, %ld writes, %ld torn, %ld writers overlapping\n", s->reads,
	       s->writes, s->torn, s->overlap);
	assert_true(s->reads > 100);
	assert_true(s->writes >= MIN_WAITS);
	assert_int_equal(s->torn, 0);
	assert_int_equal(s->overlap, 0);
	for (int i = 0; i < ENTRIES; i++)
		assert_int_equal(s->g[i].e.lockw, 0); /* every lock and waiter bit released */
	free(s->header);
	free(s);
	sysctl_tree_free(t);
}

/* The runner of a callback: running 1 under the lock, the call outside it, 0 and a broadcast. */
static void *runner(void *p)
{
	struct arg *a = p;
	struct guarded *g = a->g;

	while (!done(a->s)) {
		rcs_elock_cb(&g->e);
		g->running = 1;
		rcs_elock_cb_unlock(&g->e);
		sched_yield();
		rcs_elock_cb(&g->e);
		g->running = 0;
		rcs_elock_cb_broadcast(&g->e);
		rcs_elock_cb_unlock(&g->e);
		sched_yield();
	}
	return NULL;
}

/* Waits as notify.c and watch.c do for a running callback. */
static void *cb_waiter(void *p)
{
	struct arg *a = p;
	struct guarded *g = a->g;

	while (!done(a->s)) {
		rcs_elock_cb(&g->e);
		while (g->running) {
			rcs_elock_cb_wait(&g->e);
			__atomic_add_fetch(&a->s->waits, 1, __ATOMIC_RELAXED);
		}
		rcs_elock_cb_unlock(&g->e);
	}
	return NULL;
}

/* A lost wake-up leaves a waiter asleep for ever: the alarm ends the test. */
static void test_callback_condition(void **state)
{
	struct sysctl_tree *t = sysctl_tree_new();
	void *(*fns[])(void *) = { runner, cb_waiter, cb_waiter };
	struct shared *s;

	(void)state;
	assert_non_null(t);
	s = shared_new(t);
	run_threads(fns, 3, s, &s->waits);
	printf("entry-lock: %ld callback waits\n", s->waits);
	assert_true(s->waits >= MIN_WAITS);
	for (int i = 0; i < ENTRIES; i++)
		assert_int_equal(s->g[i].e.lockw, 0);
	free(s->header);
	free(s);
	sysctl_tree_free(t);
}

/* A handler that takes a while, so that unregister finds it running. */
static int slow_calls, slow_inside;

static int slow_handler(const struct ctl_table *table, int write, void *buf, size_t *lenp,
			off_t *ppos)
{
	int err;

	__atomic_add_fetch(&slow_inside, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&slow_calls, 1, __ATOMIC_SEQ_CST);
	usleep(1000);
	err = proc_dointvec(table, write, buf, lenp, ppos);
	__atomic_sub_fetch(&slow_inside, 1, __ATOMIC_SEQ_CST);
	return err;
}

struct drain_arg {
	struct sysctl_tree *t;
	int stop;
};

static void *drain_reader(void *p)
{
	struct drain_arg *d = p;
	char buf[32];

	while (!__atomic_load_n(&d->stop, __ATOMIC_ACQUIRE))
		(void)sysctl_get(d->t, "dr.x", buf, sizeof(buf));
	return NULL;
}

/*
 * Unregister sleeps until the handlers running drain: each round waits for
 * a handler call to start, unregisters at once, and then none may be left
 * running.
 */
static void test_unregister_drains(void **state)
{
	static int x = 5;
	struct ctl_table tbl[] = { { "x", &x, sizeof(int), 0644, slow_handler } };
	struct drain_arg d = { .t = sysctl_tree_new() };
	pthread_t th[2];
	int rounds = 0, running_after = 0;

	(void)state;
	assert_non_null(d.t);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, drain_reader, &d), 0);
	for (double start = now(); now() - start < MAX_SECONDS; rounds++) {
		struct sysctl_table_header *h;
		int calls = __atomic_load_n(&slow_calls, __ATOMIC_SEQ_CST);

		/* Until the readers made their calls too: starved, they may not have. */
		if (now() - start >= SECONDS && rounds >= MIN_WAITS &&
		    __atomic_load_n(&slow_calls, __ATOMIC_SEQ_CST) >= MIN_WAITS)
			break;
		assert_int_equal(sysctl_register_table(d.t, "dr", tbl, 1, &h), 0);
		for (double t0 = now(); now() - t0 < 0.1;)
			if (__atomic_load_n(&slow_calls, __ATOMIC_SEQ_CST) != calls)
				break;
		sysctl_unregister_table(h);
		if (__atomic_load_n(&slow_inside, __ATOMIC_SEQ_CST))
			running_after++;
	}
	__atomic_store_n(&d.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	printf("entry-lock: %d unregisters, %d handler calls, %d left running\n", rounds, slow_calls,
	       running_after);
	assert_true(rounds >= MIN_WAITS);
	assert_true(slow_calls >= MIN_WAITS);
	assert_int_equal(running_after, 0);
	sysctl_tree_free(d.t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_data_and_writer_locks),
		cmocka_unit_test(test_callback_condition),
		cmocka_unit_test(test_unregister_drains),
	};

	/* A waiter that never wakes fails the run instead of hanging it. */
	alarm(90);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
