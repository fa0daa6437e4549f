/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of change notification: the change counter, waits (wake-up,
 * timeout, unregister), callbacks (after publish, never concurrent with
 * themselves, every change seen, removal waits for a running call).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "rcustring/sysctl.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static struct rcustring var;
static int ival;
static struct ctl_table tbl[] = {
	{ "s", &var, 32, 0644, proc_rcu_string },
	{ "i", &ival, sizeof(int), 0644, proc_dointvec },
};

struct fixture {
	struct sysctl_tree *t;
	struct sysctl_table_header *h;
	struct sysctl_entry *s, *i;
};

static int setup(void **state)
{
	static struct fixture f;

	ival = 0;
	if (rcustring_init(&var, 32, "init"))
		return -1;
	f.t = sysctl_tree_new();
	if (!f.t || sysctl_register_table(f.t, "n", tbl, 2, &f.h))
		return -1;
	f.s = sysctl_lookup(f.t, "n.s");
	f.i = sysctl_lookup(f.t, "n.i");
	*state = &f;
	return f.s && f.i ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	sysctl_entry_put(f->s);
	sysctl_entry_put(f->i);
	if (f->h)
		sysctl_unregister_table(f->h);
	sysctl_tree_free(f->t);
	rcustring_destroy(&var);
	rcustring_barrier();
	return 0;
}

static int write_str(struct sysctl_entry *e, const char *v)
{
	size_t len = strlen(v);
	off_t pos = 0;

	return sysctl_entry_write(e, NULL, v, &len, &pos);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void test_counter(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(sysctl_entry_changes(f->s), 0);
	assert_int_equal(write_str(f->s, "a"), 0);
	assert_int_equal(write_str(f->s, "b"), 0);
	assert_int_equal(sysctl_entry_changes(f->s), 2);
	/* A refused write is no change. */
	assert_int_equal(write_str(f->i, "zz"), -EINVAL);
	assert_int_equal(sysctl_entry_changes(f->i), 0);
	sysctl_entry_notify(f->i);
	assert_int_equal(sysctl_entry_changes(f->i), 1);
	assert_int_equal(sysctl_entry_changes(f->s), 2);
}

/* sysctl_entry_write_if writes only at the counter named. */
static void test_write_if(void **state)
{
	struct fixture *f = *state;
	char buf[16];
	size_t len = 2;
	off_t pos = 0;

	assert_int_equal(sysctl_entry_write_if(f->i, NULL, "5\n", &len, &pos, 0), 0);
	assert_int_equal(sysctl_entry_changes(f->i), 1);
	len = 2;
	pos = 0;
	assert_int_equal(sysctl_entry_write_if(f->i, NULL, "6\n", &len, &pos, 0), -ESTALE);
	assert_int_equal(sysctl_entry_changes(f->i), 1);
	assert_int_equal(sysctl_get(f->t, "n.i", buf, sizeof(buf)), 2);
	assert_string_equal(buf, "5\n");
	/* A refused value is still the handler's error, and no change. */
	len = 2;
	pos = 0;
	assert_int_equal(sysctl_entry_write_if(f->i, NULL, "zz", &len, &pos, 1), -EINVAL);
	assert_int_equal(sysctl_entry_changes(f->i), 1);
}

#define CAS_WRITERS 4
#define CAS_WRITES 2000

struct cas {
	struct sysctl_entry *e;
	unsigned ok;
};

/* Increments n.i by read + sysctl_entry_write_if, CAS_WRITES tries. */
static void *cas_thread(void *arg)
{
	struct cas *c = arg;

	for (int n = 0; n < CAS_WRITES; n++) {
		char v[32], next[32];
		uint64_t g = sysctl_entry_changes(c->e);
		size_t len = sizeof(v) - 1;
		off_t pos = 0;

		/* The counter first: a value read later is as new or newer. */
		if (sysctl_entry_read(c->e, v, &len, &pos))
			break;
		v[len] = '\0';
		len = (size_t)snprintf(next, sizeof(next), "%ld", atol(v) + 1);
		pos = 0;
		if (sysctl_entry_write_if(c->e, NULL, next, &len, &pos, g) == 0)
			c->ok++;
	}
	return NULL;
}

/* Compare-and-set from several threads: no increment is lost. */
static void test_write_if_concurrent(void **state)
{
	struct fixture *f = *state;
	struct cas c[CAS_WRITERS];
	pthread_t th[CAS_WRITERS];
	unsigned total = 0;

	for (int i = 0; i < CAS_WRITERS; i++) {
		c[i] = (struct cas){ f->i, 0 };
		assert_int_equal(pthread_create(&th[i], NULL, cas_thread, &c[i]), 0);
	}
	for (int i = 0; i < CAS_WRITERS; i++) {
		pthread_join(th[i], NULL);
		total += c[i].ok;
	}
	assert_true(total > 0);
	assert_int_equal(ival, (int)total);
	assert_int_equal(sysctl_entry_changes(f->i), total);
}

struct waiter {
	struct sysctl_entry *e;
	uint64_t seen;
	int timeout_ms;
	int64_t ret;
	int started;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;

	__atomic_store_n(&w->started, 1, __ATOMIC_SEQ_CST);
	w->ret = sysctl_entry_wait(w->e, w->seen, w->timeout_ms);
	return NULL;
}

static void test_wait(void **state)
{
	struct fixture *f = *state;
	struct waiter w = { f->s, 0, -1, 0, 0 };
	pthread_t th;
	double t0;

	/* Already different: returns at once. */
	assert_int_equal(write_str(f->s, "x"), 0);
	assert_int_equal(sysctl_entry_wait(f->s, 0, 0), 1);
	/* Same: 0 ms and a short timeout. */
	assert_int_equal(sysctl_entry_wait(f->s, 1, 0), -ETIMEDOUT);
	t0 = now_ms();
	assert_int_equal(sysctl_entry_wait(f->s, 1, 60), -ETIMEDOUT);
	assert_true(now_ms() - t0 >= 59);

	/* A write wakes a waiter that waits forever. */
	w.seen = 1;
	assert_int_equal(pthread_create(&th, NULL, wait_thread, &w), 0);
	while (!__atomic_load_n(&w.started, __ATOMIC_SEQ_CST))
		usleep(1000);
	usleep(20000);
	assert_int_equal(write_str(f->s, "y"), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(w.ret, 2);

	/* A write on another entry does not end a wait on this one. */
	w = (struct waiter){ f->s, 2, 150, 0, 0 };
	assert_int_equal(pthread_create(&th, NULL, wait_thread, &w), 0);
	usleep(10000);
	assert_int_equal(write_str(f->i, "3"), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(w.ret, -ETIMEDOUT);

	/* Unregistering ends a wait with -ENOENT. */
	w = (struct waiter){ f->i, 1, -1, 0, 0 };
	assert_int_equal(pthread_create(&th, NULL, wait_thread, &w), 0);
	while (!__atomic_load_n(&w.started, __ATOMIC_SEQ_CST))
		usleep(1000);
	usleep(20000);
	sysctl_unregister_table(f->h);
	f->h = NULL;
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(w.ret, -ENOENT);
	assert_int_equal(sysctl_entry_wait(f->s, 2, -1), -ENOENT);
}

/* Callback that reads the entry's value through the tree. */
struct seen_value {
	char value[64];
	uint64_t changes;
	int calls;
};

static void record_value(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	uint64_t changes = ch->seq;

	struct seen_value *sv = arg;
	size_t len = sizeof(sv->value) - 1;
	off_t pos = 0;

	assert_int_equal(sysctl_entry_read(e, sv->value, &len, &pos), 0);
	sv->value[len] = '\0';
	sv->changes = changes;
	sv->calls++;
}

static void test_callback_after_publish(void **state)
{
	struct fixture *f = *state;
	struct seen_value sv = { "", 0, 0 };
	struct sysctl_callback *cb;

	assert_int_equal(sysctl_entry_on_change(f->s, record_value, &sv, &cb), 0);
	assert_int_equal(write_str(f->s, "published"), 0);
	/* The writer ran it before returning, and it saw the new value. */
	assert_int_equal(sv.calls, 1);
	assert_string_equal(sv.value, "published\n");
	assert_int_equal(sv.changes, 1);
	assert_int_equal(write_str(f->s, "bad, far too long for thirty-two bytes"), -EMSGSIZE);
	assert_int_equal(sv.calls, 1);
	/* Direct changes by the program, told through notify. */
	assert_int_equal(rcustring_set(&var, "direct"), 0);
	sysctl_entry_notify(f->s);
	assert_int_equal(sv.calls, 2);
	assert_string_equal(sv.value, "direct\n");
	assert_int_equal(sv.changes, 2);
	sysctl_callback_remove(cb);
	assert_int_equal(write_str(f->s, "after"), 0);
	assert_int_equal(sv.calls, 2);

	assert_int_equal(sysctl_entry_on_change(NULL, record_value, &sv, &cb), -EINVAL);
	assert_int_equal(sysctl_entry_on_change(f->s, NULL, &sv, &cb), -EINVAL);
}

/* Sleeping callback hammered by writers: no overlap, nothing missed. */
static int in_cb, overlaps, cb_calls;
static uint64_t cb_last;

static void slow_cb(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	uint64_t changes = ch->seq;

	(void)e;
	(void)arg;
	if (__atomic_exchange_n(&in_cb, 1, __ATOMIC_SEQ_CST))
		__atomic_add_fetch(&overlaps, 1, __ATOMIC_SEQ_CST);
	/* Counters only grow between calls. */
	if (changes < cb_last)
		__atomic_add_fetch(&overlaps, 1000, __ATOMIC_SEQ_CST);
	cb_last = changes;
	cb_calls++;
	usleep(500);
	__atomic_store_n(&in_cb, 0, __ATOMIC_SEQ_CST);
}

#define WRITERS 4
#define WRITES 50

static void *writer(void *arg)
{
	struct sysctl_entry *e = arg;
	char v[16];

	for (int k = 0; k < WRITES; k++) {
		snprintf(v, sizeof(v), "%d", k);
		if (write_str(e, v))
			return (void *)1;
	}
	return NULL;
}

static void test_callback_serialized(void **state)
{
	struct fixture *f = *state;
	struct sysctl_callback *cb;
	pthread_t th[WRITERS];
	void *ret;

	in_cb = overlaps = cb_calls = 0;
	cb_last = 0;
	assert_int_equal(sysctl_entry_on_change(f->i, slow_cb, NULL, &cb), 0);
	for (int i = 0; i < WRITERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, writer, f->i), 0);
	for (int i = 0; i < WRITERS; i++) {
		assert_int_equal(pthread_join(th[i], &ret), 0);
		assert_null(ret);
	}
	assert_int_equal(overlaps, 0);
	assert_int_equal(sysctl_entry_changes(f->i), WRITERS * WRITES);
	/* The last call saw the last change; bursts may have been folded. */
	assert_int_equal(cb_last, WRITERS * WRITES);
	assert_true(cb_calls >= 1 && cb_calls <= WRITERS * WRITES);
	sysctl_callback_remove(cb);
}

/* Removal waits for a call in progress. */
static int blocking_started, blocking_done;

static void blocking_cb(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	uint64_t changes = ch->seq;

	(void)e;
	(void)changes;
	(void)arg;
	__atomic_store_n(&blocking_started, 1, __ATOMIC_SEQ_CST);
	usleep(100000);
	__atomic_store_n(&blocking_done, 1, __ATOMIC_SEQ_CST);
}

static void *one_write(void *arg)
{
	return (void *)(long)write_str(arg, "7");
}

static void test_callback_remove_waits(void **state)
{
	struct fixture *f = *state;
	struct sysctl_callback *cb;
	pthread_t th;
	void *ret;

	assert_int_equal(sysctl_entry_on_change(f->i, blocking_cb, NULL, &cb), 0);
	assert_int_equal(pthread_create(&th, NULL, one_write, f->i), 0);
	while (!__atomic_load_n(&blocking_started, __ATOMIC_SEQ_CST))
		usleep(1000);
	sysctl_callback_remove(cb);
	assert_true(__atomic_load_n(&blocking_done, __ATOMIC_SEQ_CST));
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_null(ret);
	/* A callback keeps its entry alive past unregister. */
	assert_int_equal(sysctl_entry_on_change(f->i, blocking_cb, NULL, &cb), 0);
	sysctl_unregister_table(f->h);
	f->h = NULL;
	assert_false(sysctl_entry_live(f->i));
	sysctl_callback_remove(cb);
}

/*
 * One writer is never held running callbacks for other writers' changes:
 * with a 1 ms callback, a single write runs the callback and, while that
 * first call runs, another thread starts writing the same entry without a
 * pause. The single write must return while the busy writer still writes;
 * the busy writer stops as soon as it did, or after BUSY_CAP writes (a hang
 * guard: far more than the two calls the single write may wait for).
 */
#define BUSY_CAP 20000

static uint64_t ms_cb_max;
static int ms_cb_called;

static void ms_cb(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	uint64_t changes = ch->seq;

	(void)e;
	(void)arg;
	__atomic_store_n(&ms_cb_called, 1, __ATOMIC_SEQ_CST);
	if (changes > __atomic_load_n(&ms_cb_max, __ATOMIC_SEQ_CST))
		__atomic_store_n(&ms_cb_max, changes, __ATOMIC_SEQ_CST);
	usleep(1000);
}

struct busy {
	struct sysctl_entry *e;
	int single_done;
	long writes;
};

static void *busy_writer(void *arg)
{
	struct busy *b = arg;

	/* Start once the single write is inside its first call. */
	while (!__atomic_load_n(&ms_cb_called, __ATOMIC_SEQ_CST))
		usleep(100);
	while (!__atomic_load_n(&b->single_done, __ATOMIC_SEQ_CST) &&
	       __atomic_load_n(&b->writes, __ATOMIC_SEQ_CST) < BUSY_CAP) {
		if (write_str(b->e, b->writes % 2 ? "1" : "2"))
			return (void *)1;
		__atomic_add_fetch(&b->writes, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static void test_callback_writer_bounded(void **state)
{
	struct fixture *f = *state;
	struct busy b = { f->i, 0, 0 };
	struct sysctl_callback *cb;
	uint64_t before;
	long busy_before;
	pthread_t th;
	void *ret;

	ms_cb_max = 0;
	ms_cb_called = 0;
	assert_int_equal(sysctl_entry_on_change(f->i, ms_cb, NULL, &cb), 0);
	assert_int_equal(pthread_create(&th, NULL, busy_writer, &b), 0);
	before = sysctl_entry_changes(f->i);
	assert_int_equal(write_str(f->i, "3"), 0);
	busy_before = __atomic_load_n(&b.writes, __ATOMIC_SEQ_CST);
	__atomic_store_n(&b.single_done, 1, __ATOMIC_SEQ_CST);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_null(ret);
	print_message("single write returned after %ld of the busy writer's writes\n",
		      busy_before);
	assert_true(busy_before < BUSY_CAP);
	/* Its change was seen by a call that ended before it returned. */
	assert_true(__atomic_load_n(&ms_cb_max, __ATOMIC_SEQ_CST) > before);
	sysctl_callback_remove(cb);
	/* The busy writer's last change was seen too. */
	assert_int_equal(ms_cb_max, sysctl_entry_changes(f->i));
}

/*
 * Callbacks that write entries: one writing its own entry (a bounded
 * number of times), and two callbacks writing each other's entries from
 * two threads at once. No deadlock, and the last change is seen.
 */
static struct fixture *wfix;
static int own_calls;

static void writes_own(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	uint64_t changes = ch->seq;

	(void)arg;
	(void)changes;
	if (__atomic_add_fetch(&own_calls, 1, __ATOMIC_SEQ_CST) < 5)
		assert_int_equal(write_str(e, "9"), 0);
}

static uint64_t cross_seen[2];
static int cross_budget;

static void writes_other(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	uint64_t changes = ch->seq;

	long k = (long)arg;

	__atomic_store_n(&cross_seen[k], changes, __ATOMIC_SEQ_CST);
	(void)e;
	if (__atomic_sub_fetch(&cross_budget, 1, __ATOMIC_SEQ_CST) > 0)
		assert_int_equal(k ? write_str(wfix->i, "4") : write_str(wfix->s, "x"), 0);
}

static void *write_many(void *arg)
{
	for (int n = 0; n < 200; n++)
		if (write_str(arg, n % 2 ? "5" : "6"))
			return (void *)1;
	return NULL;
}

static void test_callback_writes_entries(void **state)
{
	struct fixture *f = *state;
	struct sysctl_callback *cb, *cbi, *cbs;
	pthread_t th[2];

	wfix = f;
	own_calls = 0;
	assert_int_equal(sysctl_entry_on_change(f->i, writes_own, NULL, &cb), 0);
	assert_int_equal(write_str(f->i, "1"), 0);
	/* The writer ran it, and again for each of its own nested writes. */
	assert_int_equal(own_calls, 5);
	assert_int_equal(sysctl_entry_changes(f->i), 5);
	sysctl_callback_remove(cb);

	/* i's callback writes s, s's writes i, from two writer threads. */
	cross_budget = 2000;
	assert_int_equal(sysctl_entry_on_change(f->i, writes_other, (void *)0L, &cbi), 0);
	assert_int_equal(sysctl_entry_on_change(f->s, writes_other, (void *)1L, &cbs), 0);
	assert_int_equal(pthread_create(&th[0], NULL, write_many, f->i), 0);
	assert_int_equal(pthread_create(&th[1], NULL, write_many, f->s), 0);
	for (int k = 0; k < 2; k++) {
		void *ret;

		assert_int_equal(pthread_join(th[k], &ret), 0);
		assert_null(ret);
	}
	sysctl_callback_remove(cbi);
	sysctl_callback_remove(cbs);
	assert_int_equal(cross_seen[0], sysctl_entry_changes(f->i));
	assert_int_equal(cross_seen[1], sysctl_entry_changes(f->s));
}

/*
 * A callback that keeps writing its own entry keeps its runner calling;
 * another writer of the entry must still return once a call saw its change,
 * not when the loop ends. The loop stops when that writer returned, or
 * after LOOP_CAP calls (a hang guard).
 */
#define LOOP_CAP 5000

static int loop_calls, loop_other_done;

static void loop_cb(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	uint64_t changes = ch->seq;

	(void)changes;
	(void)arg;
	usleep(1000);
	if (!__atomic_load_n(&loop_other_done, __ATOMIC_SEQ_CST) &&
	    __atomic_add_fetch(&loop_calls, 1, __ATOMIC_SEQ_CST) < LOOP_CAP)
		assert_int_equal(write_str(e, "8"), 0);
}

static void *loop_starter(void *arg)
{
	return (void *)(long)write_str(arg, "1");
}

static void test_callback_loop_other_writer(void **state)
{
	struct fixture *f = *state;
	struct sysctl_callback *cb;
	pthread_t th;
	int calls;
	void *ret;

	loop_calls = loop_other_done = 0;
	assert_int_equal(sysctl_entry_on_change(f->i, loop_cb, NULL, &cb), 0);
	assert_int_equal(pthread_create(&th, NULL, loop_starter, f->i), 0);
	while (__atomic_load_n(&loop_calls, __ATOMIC_SEQ_CST) < 3)
		usleep(1000);
	assert_int_equal(write_str(f->i, "2"), 0);
	calls = __atomic_load_n(&loop_calls, __ATOMIC_SEQ_CST);
	__atomic_store_n(&loop_other_done, 1, __ATOMIC_SEQ_CST);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_null(ret);
	print_message("other writer returned after %d looping calls\n", calls);
	assert_true(calls < LOOP_CAP);
	sysctl_callback_remove(cb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_counter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_if, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_if_concurrent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait, setup, teardown),
		cmocka_unit_test_setup_teardown(test_callback_after_publish, setup, teardown),
		cmocka_unit_test_setup_teardown(test_callback_serialized, setup, teardown),
		cmocka_unit_test_setup_teardown(test_callback_remove_waits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_callback_writer_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_callback_writes_entries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_callback_loop_other_writer, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
