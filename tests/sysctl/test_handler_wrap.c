/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A program's handler declared as a wrapper of a library handler
 * (sysctl_tree_wrap_handler()) is its base's kind in the tree: the base's
 * registration checks, value checks and lock-free reads. Undeclared, it
 * stays opaque.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "rcustring/sysctl.h"

#define CAP 16

/* The wrapper's write pauses here while a test holds it. */
static sem_t in_write, go_on;
static int hold_writes;

/* Refuses "bad", then is proc_rcu_string. */
static int wrapper(const struct ctl_table *t, int write, void *buf, size_t *lenp, off_t *ppos)
{
	if (write && *lenp >= 3 && !memcmp(buf, "bad", 3))
		return -EINVAL;
	if (write && __atomic_load_n(&hold_writes, __ATOMIC_ACQUIRE)) {
		sem_post(&in_write);
		sem_wait(&go_on);
	}
	return proc_rcu_string(t, write, buf, lenp, ppos);
}

static void quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

static struct sysctl_tree *new_tree(void)
{
	struct sysctl_tree *t = sysctl_tree_new();

	assert_non_null(t);
	sysctl_tree_set_log(t, quiet, NULL);
	return t;
}

static void test_declare(void **state)
{
	struct sysctl_tree *t = new_tree();
	const struct sysctl_handler_info *hi;

	(void)state;
	assert_int_equal(sysctl_tree_wrap_handler(t, wrapper, wrapper), -EINVAL);
	assert_int_equal(sysctl_tree_wrap_handler(t, proc_dostring, proc_rcu_string), -EINVAL);
	assert_int_equal(sysctl_tree_wrap_handler(t, NULL, proc_rcu_string), -EINVAL);
	assert_null(sysctl_tree_handler_info(t, wrapper));
	assert_int_equal(sysctl_tree_wrap_handler(t, wrapper, proc_rcu_string), 0);
	assert_int_equal(sysctl_tree_wrap_handler(t, wrapper, proc_rcu_string), 0);
	assert_int_equal(sysctl_tree_wrap_handler(t, wrapper, proc_dostring), -EEXIST);
	hi = sysctl_tree_handler_info(t, wrapper);
	assert_non_null(hi);
	assert_ptr_equal(hi->handler, proc_rcu_string);
	assert_true(hi->flags & SYSCTL_HF_RCU);
	/* The declaration is the tree's: the library's table is unchanged. */
	assert_null(sysctl_handler_info(wrapper));
	assert_ptr_equal(sysctl_tree_handler_info(NULL, proc_dobool), sysctl_handler_info(proc_dobool));
	sysctl_tree_free(t);
}

/* Declared, the base's registration checks apply (maxlen against capacity). */
static void test_register_checks(void **state)
{
	static struct rcustring s = RCUSTRING_INITIALIZER(CAP, "x");
	struct ctl_table tbl[] = { { .procname = "w", .data = &s, .maxlen = CAP + 1, .mode = 0644,
				     .proc_handler = wrapper } };
	struct sysctl_table_header *h;
	struct sysctl_tree *t = new_tree();

	(void)state;
	assert_int_equal(sysctl_register_table(t, "a", tbl, 1, &h), 0);
	sysctl_unregister_table(h);
	assert_int_equal(sysctl_tree_wrap_handler(t, wrapper, proc_rcu_string), 0);
	assert_int_equal(sysctl_register_table(t, "a", tbl, 1, &h), -EINVAL);
	tbl[0].maxlen = CAP;
	assert_int_equal(sysctl_register_table(t, "a", tbl, 1, &h), 0);
	sysctl_unregister_table(h);
	sysctl_tree_free(t);
	rcustring_barrier();
}

/* Declared, a value is checked on a scratch copy by the wrapper itself. */
static void test_check(void **state)
{
	static struct rcustring s = RCUSTRING_INITIALIZER(CAP, "x");
	struct ctl_table tbl[] = { { .procname = "w", .data = &s, .maxlen = CAP, .mode = 0644,
				     .proc_handler = wrapper } };
	const char *longer = "0123456789abcdefXYZ";
	struct sysctl_table_header *h;
	struct sysctl_tree *t = new_tree();
	struct sysctl_entry *e;

	(void)state;
	assert_int_equal(sysctl_register_table(t, "opaque", tbl, 1, &h), 0);
	e = sysctl_lookup(t, "opaque/w");
	assert_non_null(e);
	assert_int_equal(sysctl_entry_check(e, "fine", 4), -EOPNOTSUPP);
	sysctl_entry_put(e);
	sysctl_unregister_table(h);

	assert_int_equal(sysctl_tree_wrap_handler(t, wrapper, proc_rcu_string), 0);
	assert_int_equal(sysctl_register_table(t, "known", tbl, 1, &h), 0);
	e = sysctl_lookup(t, "known/w");
	assert_non_null(e);
	assert_int_equal(sysctl_entry_check(e, "fine", 4), 0);
	assert_int_equal(sysctl_entry_check(e, "bad", 3), -EINVAL);
	assert_int_equal(sysctl_entry_check(e, longer, strlen(longer)), -EMSGSIZE);
	{
		char now[CAP];

		rcustring_copy(&s, now, sizeof(now));
		assert_string_equal(now, "x"); /* checks change nothing */
	}
	sysctl_entry_put(e);
	sysctl_unregister_table(h);
	sysctl_tree_free(t);
	rcustring_barrier();
}

struct io_arg {
	struct sysctl_tree *t;
	ssize_t ret;
	char buf[CAP + 2];
	sem_t done;
};

static void *writer(void *p)
{
	struct io_arg *w = p;

	w->ret = sysctl_set(w->t, "known/w", "new", 3, NULL);
	return NULL;
}

static void *reader(void *p)
{
	struct io_arg *r = p;

	r->ret = sysctl_get(r->t, "known/w", r->buf, sizeof(r->buf));
	sem_post(&r->done);
	return NULL;
}

static struct timespec seconds_from_now(int s)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += s;
	return ts;
}

/*
 * Declared as a wrapper of proc_rcu_string, the entry keeps lock-free
 * reads: a read returns while a write is inside the handler (a row read
 * under the entry's lock would wait for the write).
 */
static void test_reads_lock_free(void **state)
{
	static struct rcustring s = RCUSTRING_INITIALIZER(CAP, "old");
	struct ctl_table tbl[] = { { .procname = "w", .data = &s, .maxlen = CAP, .mode = 0644,
				     .proc_handler = wrapper } };
	struct io_arg w = { 0 }, r = { 0 };
	struct sysctl_table_header *h;
	struct sysctl_tree *t = new_tree();
	struct timespec until;
	pthread_t wt, rt;
	int read_waited;

	(void)state;
	w.t = r.t = t;
	assert_int_equal(sysctl_tree_wrap_handler(t, wrapper, proc_rcu_string), 0);
	assert_int_equal(sysctl_register_table(t, "known", tbl, 1, &h), 0);
	assert_int_equal(sem_init(&in_write, 0, 0), 0);
	assert_int_equal(sem_init(&go_on, 0, 0), 0);
	assert_int_equal(sem_init(&r.done, 0, 0), 0);
	__atomic_store_n(&hold_writes, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_create(&wt, NULL, writer, &w), 0);
	until = seconds_from_now(10);
	assert_int_equal(sem_timedwait(&in_write, &until), 0);
	/* The writer is inside the handler: a read under the entry's lock waits. */
	assert_int_equal(pthread_create(&rt, NULL, reader, &r), 0);
	until = seconds_from_now(30); /* a bound for a starved reader thread; no wait when it passes */
	read_waited = sem_timedwait(&r.done, &until);
	sem_post(&go_on);
	assert_int_equal(pthread_join(wt, NULL), 0);
	assert_int_equal(pthread_join(rt, NULL), 0);
	__atomic_store_n(&hold_writes, 0, __ATOMIC_RELEASE);
	assert_int_equal(read_waited, 0);
	assert_int_equal(r.ret, 4);
	assert_memory_equal(r.buf, "old\n", 4);
	assert_int_equal(w.ret, 0);
	assert_int_equal(sysctl_get(t, "known/w", r.buf, sizeof(r.buf)), 4);
	assert_memory_equal(r.buf, "new\n", 4);
	sysctl_unregister_table(h);
	sysctl_tree_free(t);
	sem_destroy(&in_write);
	sem_destroy(&go_on);
	sem_destroy(&r.done);
	rcustring_barrier();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_declare),
		cmocka_unit_test(test_register_checks),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_reads_lock_free),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
