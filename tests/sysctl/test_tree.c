/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the sysctl tree: registration checks, lookup with both
 * separators, walk and list_dir order, references on dead entries, the
 * unregister drain, permissions, sysctl_get/sysctl_set, allocation faults.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "rcustring/sysctl.h"
#include "../failmalloc.h"

/*
 * Link-time fault injection for the pthread_*_init calls of the library
 * (-Wl,--wrap=...): after failinit_arm(N) the Nth one fails with EAGAIN.
 */
int __real_pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a);
int __real_pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a);
int __real_pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a);
int __wrap_pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a);
int __wrap_pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a);
int __wrap_pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a);

static __thread long failinit_countdown, failinit_calls;

static int failinit_now(void)
{
	if (failinit_countdown <= 0)
		return 0;
	failinit_calls++;
	return --failinit_countdown == 0;
}

int __wrap_pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
	return failinit_now() ? EAGAIN : __real_pthread_mutex_init(m, a);
}

int __wrap_pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
	return failinit_now() ? EAGAIN : __real_pthread_cond_init(c, a);
}

int __wrap_pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a)
{
	return failinit_now() ? EAGAIN : __real_pthread_rwlock_init(l, a);
}

/* Tables leave trailing fields out, as kernel tables do. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static int int_a = 1, int_b = 2, int_c = 3, int_max = 10;
static char str_buf[32] = "hello";

/* Log hook: keep the last message and count them. */
static char last_log[512];
static int log_count;

static void capture_log(void *arg, const char *message)
{
	(void)arg;
	snprintf(last_log, sizeof(last_log), "%s", message);
	log_count++;
}

static struct sysctl_tree *new_tree(void)
{
	struct sysctl_tree *t = sysctl_tree_new();

	assert_non_null(t);
	sysctl_tree_set_log(t, capture_log, NULL);
	last_log[0] = '\0';
	log_count = 0;
	return t;
}

static bool exists(struct sysctl_tree *t, const char *path)
{
	struct sysctl_entry *e = sysctl_lookup(t, path);

	if (!e) {
		assert_int_equal(errno, ENOENT);
		return false;
	}
	sysctl_entry_put(e);
	return true;
}

/* Register @tbl and expect @err, nothing registered, a log line naming @what. */
static void refused(struct sysctl_tree *t, const char *path, struct ctl_table *tbl, size_t n,
		    int err, const char *what)
{
	struct sysctl_table_header *h = NULL;
	int before = log_count;

	assert_int_equal(sysctl_register_table(t, path, tbl, n, &h), err);
	assert_null(h);
	assert_int_equal(log_count, before + 1);
	assert_non_null(strstr(last_log, what));
	assert_null(strchr(last_log, '\n'));
}

static unsigned int uint_pair[2];
static bool bool_pair[2];

static void test_register_checks(void **state)
{
	struct sysctl_tree *t = new_tree();
	struct rcustring rs;
	struct sysctl_table_header *h, *h2;
	struct ctl_table good = { "good", &int_a, sizeof(int), 0644, proc_dointvec, NULL, NULL,
				  NULL };
	struct ctl_table tbl[2];

	(void)state;
	assert_int_equal(rcustring_init(&rs, 16, "x"), 0);
#define BAD(path, err, what, ...)                                                  \
	do {                                                                        \
		tbl[0] = good;                                                      \
		tbl[1] = (struct ctl_table){ __VA_ARGS__ };                        \
		refused(t, path, tbl, 2, err, what);                                \
		assert_false(exists(t, "d.good"));                                  \
		assert_false(exists(t, "d"));                                       \
	} while (0)
	BAD("d", -EINVAL, "procname", NULL, &int_b, sizeof(int), 0644, proc_dointvec);
	BAD("d", -EINVAL, "procname", "", &int_b, sizeof(int), 0644, proc_dointvec);
	BAD("d", -EINVAL, "d/a/b", "a/b", &int_b, sizeof(int), 0644, proc_dointvec);
	BAD("d", -EINVAL, "bad procname", "..", &int_b, sizeof(int), 0644, proc_dointvec);
	BAD("d", -EINVAL, "no proc_handler", "b", &int_b, sizeof(int), 0644, NULL);
	BAD("d", -EINVAL, "d/b: bogus mode", "b", &int_b, sizeof(int), 01644, proc_dointvec);
	/* As sysctl_check_table: read and write bits only. */
	BAD("d", -EINVAL, "d/b: bogus mode", "b", &int_b, sizeof(int), 0744, proc_dointvec);
	BAD("d", -EINVAL, "d/b: bogus mode", "b", &int_b, sizeof(int), 0645, proc_dointvec);
	BAD("d", -EINVAL, "d/b: bogus mode", "b", &int_b, sizeof(int), 0777, proc_dointvec);
	BAD("d", -EINVAL, "string handler", "s", str_buf, 0, 0644, proc_dostring);
	BAD("d", -EINVAL, "string handler", "s", &rs, 0, 0644, proc_rcu_string);
	BAD("d", -EINVAL, "differs", "s", &rs, 17, 0644, proc_rcu_string);
	BAD("d", -EINVAL, "bounds", "m", &int_b, sizeof(int), 0644, proc_dointvec_minmax, NULL,
	    NULL);
	BAD("d", -EINVAL, "bounds", "m", uint_pair, sizeof(unsigned int), 0644,
	    proc_douintvec_minmax, NULL, NULL);
	BAD("d", -EINVAL, "multiple", "v", &int_b, 3, 0644, proc_dointvec);
	/* proc_douintvec and proc_dobool take one element, as in the kernel. */
	BAD("d", -EINVAL, "one element", "u", uint_pair, sizeof(uint_pair), 0644, proc_douintvec);
	BAD("d", -EINVAL, "one element", "b", bool_pair, sizeof(bool_pair), 0644, proc_dobool);
	BAD("d", -EEXIST, "duplicate", "good", &int_b, sizeof(int), 0644, proc_dointvec);
	BAD("d..x", -EINVAL, "malformed", "b", &int_b, sizeof(int), 0644, proc_dointvec);

	/*
	 * One NULL bound leaves that side unchecked, as tcp_rmem is declared;
	 * the handler honours it through the tree. Mode 0666 is the most allowed.
	 */
	{
		unsigned long lv[3] = { 4096, 131072, 6291456 }, lmin = 1;
		int iv = 5;
		struct ctl_table one_bound[] = {
			{ "rmem", lv, sizeof(lv), 0644, proc_doulongvec_minmax, &lmin, NULL },
			{ "capped", &iv, sizeof(int), 0666, proc_dointvec_minmax, NULL, &int_max },
		};
		char buf[64];

		assert_int_equal(sysctl_register_table(t, "nb", one_bound, 2, &h), 0);
		assert_int_equal(sysctl_set(t, "nb.rmem", "0 1 2", 5, NULL), -EINVAL);
		assert_int_equal(sysctl_set(t, "nb.rmem", "1 99999999999 2", 15, NULL), 0);
		assert_int_equal(sysctl_get(t, "nb.rmem", buf, sizeof(buf)), 16);
		assert_string_equal(buf, "1\t99999999999\t2\n");
		assert_int_equal(sysctl_set(t, "nb.capped", "11", 2, NULL), -EINVAL);
		assert_int_equal(sysctl_set(t, "nb.capped", "-2147483648", 11, NULL), 0);
		assert_int_equal(iv, -2147483647 - 1);
		sysctl_unregister_table(h);
	}

	/* Names with '.' are allowed (reached through '/' paths). */
	tbl[0] = good;
	tbl[1] = (struct ctl_table){ "s", &rs, 16, 0644, proc_rcu_string };
	assert_int_equal(sysctl_register_table(t, "d", tbl, 2, &h), 0);
	assert_true(exists(t, "d.good"));
	/* Taken names, against entries and directories already registered. */
	refused(t, "d", &good, 1, -EEXIST, "already registered");
	refused(t, "", (struct ctl_table[]){ { "d", &int_a, sizeof(int), 0644, proc_dointvec } }, 1,
		-EEXIST, "already registered");
	refused(t, "d/good/x", &good, 1, -EEXIST, "not a directory");
	assert_false(exists(t, "d.good.x"));
	/* A second table in the same directory, and one deeper. */
	tbl[0] = (struct ctl_table){ "other", &int_b, sizeof(int), 0644, proc_dointvec };
	assert_int_equal(sysctl_register_table(t, "d", tbl, 1, &h2), 0);
	sysctl_unregister_table(h);
	assert_false(exists(t, "d.good"));
	assert_true(exists(t, "d.other"));
	sysctl_unregister_table(h2);
	/* The directory went with its last entry. */
	assert_false(exists(t, "d"));

	/* An empty table keeps its directory, as the kernel's register_sysctl does. */
	assert_int_equal(sysctl_register_table(t, "e/f", NULL, 0, &h), 0);
	assert_true(exists(t, "e.f"));
	assert_int_equal(sysctl_register_table(t, "e/f", &good, 1, &h2), 0);
	sysctl_unregister_table(h2);
	assert_true(exists(t, "e.f"));
	assert_false(exists(t, "e.f.good"));
	sysctl_unregister_table(h);
	assert_false(exists(t, "e"));

	assert_int_equal(sysctl_register_table(NULL, "d", &good, 1, &h), -EINVAL);
	assert_int_equal(sysctl_register_table(t, NULL, &good, 1, &h), -EINVAL);
	assert_int_equal(sysctl_register_table(t, "d", &good, 1, NULL), -EINVAL);
	sysctl_tree_free(t);
	rcustring_destroy(&rs);
	rcustring_barrier();
#undef BAD
}

static void test_lookup_separators(void **state)
{
	struct sysctl_tree *t = new_tree();
	struct sysctl_table_header *h1, *h2;
	struct ctl_table k[] = {
		{ "core_pattern", str_buf, sizeof(str_buf), 0644, proc_dostring, NULL, NULL,
		  "core file name pattern" },
	};
	struct ctl_table c[] = {
		{ "eth0.100", &int_a, sizeof(int), 0644, proc_dointvec },
	};
	struct sysctl_entry *e;

	(void)state;
	assert_int_equal(sysctl_register_table(t, "kernel", k, 1, &h1), 0);
	assert_int_equal(sysctl_register_table(t, "net/ipv4/conf", c, 1, &h2), 0);

	const char *same[] = { "kernel.core_pattern", "kernel/core_pattern", "/kernel/core_pattern" };
	for (size_t i = 0; i < 3; i++) {
		e = sysctl_lookup(t, same[i]);
		assert_non_null(e);
		assert_false(sysctl_entry_is_dir(e));
		assert_string_equal(sysctl_entry_name(e), "core_pattern");
		assert_string_equal(sysctl_entry_path(e), "kernel.core_pattern");
		assert_string_equal(sysctl_entry_desc(e), "core file name pattern");
		assert_int_equal(sysctl_entry_mode(e), 0644);
		assert_ptr_equal(sysctl_entry_table(e), &k[0]);
		assert_true(sysctl_entry_live(e));
		sysctl_entry_put(e);
	}
	/* With a '/', '.' belongs to the name. */
	e = sysctl_lookup(t, "net/ipv4/conf/eth0.100");
	assert_non_null(e);
	assert_string_equal(sysctl_entry_name(e), "eth0.100");
	/* Shown as procps prints it, and found again by that name. */
	assert_string_equal(sysctl_entry_path(e), "net.ipv4.conf.eth0/100");
	sysctl_entry_put(e);
	assert_false(exists(t, "net.ipv4.conf.eth0.100"));
	/* First separator '.': a '/' stands for a '.' inside a name (systemd). */
	e = sysctl_lookup(t, "net.ipv4.conf.eth0/100");
	assert_non_null(e);
	assert_string_equal(sysctl_entry_name(e), "eth0.100");
	sysctl_entry_put(e);

	/* Directories and the root. */
	e = sysctl_lookup(t, "net.ipv4");
	assert_non_null(e);
	assert_true(sysctl_entry_is_dir(e));
	assert_int_equal(sysctl_entry_mode(e), 0555);
	assert_null(sysctl_entry_table(e));
	assert_string_equal(sysctl_entry_path(e), "net.ipv4");
	sysctl_entry_put(e);
	e = sysctl_lookup(t, "");
	assert_non_null(e);
	assert_true(sysctl_entry_is_dir(e));
	sysctl_entry_put(e);

	/* Malformed and missing. */
	const char *bad[] = { "kernel..core_pattern", "kernel//core_pattern", "kernel/./x",
			      "kernel/../kernel" };
	for (size_t i = 0; i < 4; i++) {
		errno = 0;
		assert_null(sysctl_lookup(t, bad[i]));
		assert_int_equal(errno, EINVAL);
	}
	errno = 0;
	assert_null(sysctl_lookup(t, "kernel.nope"));
	assert_int_equal(errno, ENOENT);
	assert_null(sysctl_lookup(t, "kernel.core_pattern.x"));
	assert_int_equal(errno, ENOENT);
	assert_null(sysctl_lookup(NULL, "kernel"));
	assert_int_equal(errno, EINVAL);

	sysctl_unregister_table(h2);
	assert_false(exists(t, "net"));
	assert_true(exists(t, "kernel"));
	sysctl_tree_free(t);
	rcustring_barrier();
}

struct collect {
	char paths[32][64];
	int n;
	int stop_at;
};

static int collect_fn(struct sysctl_entry *e, void *arg)
{
	struct collect *c = arg;

	assert_true(c->n < 32);
	snprintf(c->paths[c->n], sizeof(c->paths[0]), "%s%s", sysctl_entry_path(e),
		 sysctl_entry_is_dir(e) ? "/" : "");
	c->n++;
	return c->n == c->stop_at ? 42 : 0;
}

static void test_walk_and_list(void **state)
{
	struct sysctl_tree *t = new_tree();
	struct sysctl_table_header *h[3];
	/* Registered out of order, in three tables. */
	struct ctl_table t1[] = {
		{ "zeta", &int_a, sizeof(int), 0644, proc_dointvec },
		{ "alpha", &int_b, sizeof(int), 0644, proc_dointvec },
	};
	struct ctl_table t2[] = {
		{ "mid", &int_c, sizeof(int), 0644, proc_dointvec },
	};
	struct ctl_table t3[] = {
		{ "b", &int_a, sizeof(int), 0644, proc_dointvec },
		{ "a", &int_b, sizeof(int), 0644, proc_dointvec },
	};
	const char *want[] = { "a.b.a", "a.b.b", "k.alpha", "k.m.mid", "k.zeta" };
	struct collect c;

	(void)state;
	assert_int_equal(sysctl_register_table(t, "k", t1, 2, &h[0]), 0);
	assert_int_equal(sysctl_register_table(t, "k.m", t2, 1, &h[1]), 0);
	assert_int_equal(sysctl_register_table(t, "a/b", t3, 2, &h[2]), 0);

	for (int round = 0; round < 2; round++) {
		memset(&c, 0, sizeof(c));
		assert_int_equal(sysctl_walk(t, "", collect_fn, &c), 0);
		assert_int_equal(c.n, 5);
		for (int i = 0; i < 5; i++)
			assert_string_equal(c.paths[i], want[i]);
	}
	/* Under a prefix; a prefix naming an entry walks just it. */
	memset(&c, 0, sizeof(c));
	assert_int_equal(sysctl_walk(t, "k", collect_fn, &c), 0);
	assert_int_equal(c.n, 3);
	assert_string_equal(c.paths[1], "k.m.mid");
	memset(&c, 0, sizeof(c));
	assert_int_equal(sysctl_walk(t, "k/zeta", collect_fn, &c), 0);
	assert_int_equal(c.n, 1);
	/* A non-zero return stops and is returned. */
	memset(&c, 0, sizeof(c));
	c.stop_at = 2;
	assert_int_equal(sysctl_walk(t, "", collect_fn, &c), 42);
	assert_int_equal(c.n, 2);
	assert_int_equal(sysctl_walk(t, "nope", collect_fn, &c), -ENOENT);

	/* list_dir: direct children, directories too, sorted. */
	memset(&c, 0, sizeof(c));
	assert_int_equal(sysctl_list_dir(t, "k", collect_fn, &c), 0);
	assert_int_equal(c.n, 3);
	assert_string_equal(c.paths[0], "k.alpha");
	assert_string_equal(c.paths[1], "k.m/");
	assert_string_equal(c.paths[2], "k.zeta");
	memset(&c, 0, sizeof(c));
	assert_int_equal(sysctl_list_dir(t, "", collect_fn, &c), 0);
	assert_int_equal(c.n, 2);
	assert_string_equal(c.paths[0], "a/");
	assert_string_equal(c.paths[1], "k/");
	assert_int_equal(sysctl_list_dir(t, "k.zeta", collect_fn, &c), -ENOTDIR);
	assert_int_equal(sysctl_list_dir(t, "x", collect_fn, &c), -ENOENT);

	for (int i = 0; i < 3; i++)
		sysctl_unregister_table(h[i]);
	memset(&c, 0, sizeof(c));
	assert_int_equal(sysctl_list_dir(t, "", collect_fn, &c), 0);
	assert_int_equal(c.n, 0);
	sysctl_tree_free(t);
	rcustring_barrier();
}

static void test_dead_entry(void **state)
{
	struct sysctl_tree *t = new_tree();
	struct sysctl_table_header *h;
	struct ctl_table *tbl = malloc(sizeof(*tbl));
	struct sysctl_entry *e, *d;
	char buf[32];
	size_t len;
	off_t pos = 0;

	(void)state;
	*tbl = (struct ctl_table){ "v", &int_a, sizeof(int), 0644, proc_dointvec, NULL, NULL, "d" };
	assert_int_equal(sysctl_register_table(t, "x.y", tbl, 1, &h), 0);
	e = sysctl_lookup(t, "x.y.v");
	d = sysctl_lookup(t, "x.y");
	assert_non_null(e);
	assert_non_null(d);
	sysctl_entry_get(e);
	sysctl_unregister_table(h);
	/* The table may be freed now; the held entry stays safe, and dead. */
	free(tbl);
	assert_false(sysctl_entry_live(e));
	assert_false(sysctl_entry_live(d));
	assert_null(sysctl_entry_table(e));
	assert_string_equal(sysctl_entry_path(e), "x.y.v");
	assert_string_equal(sysctl_entry_desc(e), "d");
	len = sizeof(buf);
	assert_int_equal(sysctl_entry_read(e, buf, &len, &pos), -ENOENT);
	len = 2;
	assert_int_equal(sysctl_entry_write(e, NULL, "5\n", &len, &pos), -ENOENT);
	assert_int_equal(int_a, 1);
	assert_false(exists(t, "x"));
	sysctl_entry_put(e);
	sysctl_entry_put(e);
	sysctl_entry_put(d);
	sysctl_tree_free(t);
	rcustring_barrier();
}

/* A handler that blocks until told, to hold a call in flight. */
static int slow_entered, slow_release, slow_left;

static int slow_handler(const struct ctl_table *table, int write, void *buffer, size_t *lenp,
			off_t *ppos)
{
	__atomic_store_n(&slow_entered, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&slow_release, __ATOMIC_SEQ_CST))
		usleep(1000);
	usleep(20000);
	__atomic_store_n(&slow_left, 1, __ATOMIC_SEQ_CST);
	return proc_dointvec(table, write, buffer, lenp, ppos);
}

static void *slow_reader(void *arg)
{
	struct sysctl_entry *e = arg;
	char buf[32];
	size_t len = sizeof(buf);
	off_t pos = 0;

	return (void *)(long)sysctl_entry_read(e, buf, &len, &pos);
}

static void *unregister_thread(void *arg)
{
	sysctl_unregister_table(arg);
	return NULL;
}

static void test_unregister_waits(void **state)
{
	struct sysctl_tree *t = new_tree();
	struct sysctl_table_header *h;
	struct ctl_table tbl = { "slow", &int_a, sizeof(int), 0644, slow_handler };
	struct sysctl_entry *e;
	pthread_t rd, un;
	void *ret;

	(void)state;
	assert_int_equal(sysctl_register_table(t, "s", &tbl, 1, &h), 0);
	e = sysctl_lookup(t, "s.slow");
	assert_non_null(e);
	assert_int_equal(pthread_create(&rd, NULL, slow_reader, e), 0);
	while (!__atomic_load_n(&slow_entered, __ATOMIC_SEQ_CST))
		usleep(1000);
	assert_int_equal(pthread_create(&un, NULL, unregister_thread, h), 0);
	/* The entry goes away at once, but unregister itself waits. */
	while (exists(t, "s.slow"))
		usleep(1000);
	usleep(20000);
	assert_false(__atomic_load_n(&slow_left, __ATOMIC_SEQ_CST));
	__atomic_store_n(&slow_release, 1, __ATOMIC_SEQ_CST);
	assert_int_equal(pthread_join(un, NULL), 0);
	/* unregister returned: the handler had finished. */
	assert_true(__atomic_load_n(&slow_left, __ATOMIC_SEQ_CST));
	assert_int_equal(pthread_join(rd, &ret), 0);
	assert_int_equal((long)ret, 0);
	sysctl_entry_put(e);
	sysctl_tree_free(t);
	rcustring_barrier();
}

/* Rows by pointer share one header; one row goes alone, the last takes the table along. */
static void test_rows(void **state)
{
	struct sysctl_tree *t = new_tree();
	struct sysctl_table_header *h;
	struct ctl_table a = { "a", &int_a, sizeof(int), 0644, proc_dointvec };
	struct ctl_table b = { "b", &int_b, sizeof(int), 0644, proc_dointvec };
	struct ctl_table c = { "c", &int_c, sizeof(int), 0644, proc_dointvec };
	struct ctl_table *rows[] = { &a, &b, &c }, *with_null[] = { &a, NULL }, *twice[] = { &a, &a };
	char buf[16];

	(void)state;
	assert_int_equal(sysctl_register_rows(t, "r", with_null, 2, &h), -EINVAL);
	assert_int_equal(sysctl_register_rows(t, "r", twice, 2, &h), -EEXIST);
	assert_int_equal(sysctl_register_rows(t, "r.d", rows, 3, &h), 0);
	assert_int_equal(sysctl_get(t, "r.d.b", buf, sizeof(buf)), 2);
	assert_memory_equal(buf, "2\n", 2);
	assert_int_equal(sysctl_unregister_row(h, &b), 0);
	assert_false(exists(t, "r.d.b"));
	assert_true(exists(t, "r.d.a"));
	assert_true(exists(t, "r.d.c"));
	assert_int_equal(sysctl_unregister_row(h, &b), -ENOENT);
	assert_int_equal(sysctl_unregister_row(h, NULL), -EINVAL);
	/* The name is free again: another table may take it. */
	{
		struct sysctl_table_header *h2;

		assert_int_equal(sysctl_register_table(t, "r.d", &b, 1, &h2), 0);
		assert_true(exists(t, "r.d.b"));
		sysctl_unregister_table(h2);
	}
	assert_int_equal(sysctl_unregister_row(h, &a), 0);
	assert_true(exists(t, "r.d"));
	assert_int_equal(sysctl_unregister_row(h, &c), 0); /* the last: table and directories go */
	assert_false(exists(t, "r.d.c"));
	assert_false(exists(t, "r"));
	sysctl_tree_free(t);
	rcustring_barrier();
}

struct row_of {
	struct sysctl_table_header *h;
	const struct ctl_table *row;
};

static void *unregister_row_thread(void *arg)
{
	struct row_of *r = arg;

	return (void *)(long)sysctl_unregister_row(r->h, r->row);
}

/* Removing a row waits for its own handler's calls, not for another row's. */
static void test_unregister_row_waits_for_its_row(void **state)
{
	struct sysctl_tree *t = new_tree();
	struct sysctl_table_header *h;
	struct ctl_table slow = { "slow", &int_a, sizeof(int), 0644, slow_handler };
	struct ctl_table other = { "other", &int_b, sizeof(int), 0644, proc_dointvec };
	struct ctl_table keep = { "keep", &int_c, sizeof(int), 0644, proc_dointvec };
	struct ctl_table *rows[] = { &slow, &other, &keep };
	struct row_of arg;
	struct sysctl_entry *e;
	pthread_t rd, un;
	void *ret;

	(void)state;
	__atomic_store_n(&slow_entered, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&slow_release, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&slow_left, 0, __ATOMIC_SEQ_CST);
	assert_int_equal(sysctl_register_rows(t, "w", rows, 3, &h), 0);
	e = sysctl_lookup(t, "w.slow");
	assert_non_null(e);
	assert_int_equal(pthread_create(&rd, NULL, slow_reader, e), 0);
	while (!__atomic_load_n(&slow_entered, __ATOMIC_SEQ_CST))
		usleep(1000);
	/* The other row goes at once while the slow one's call is held. */
	assert_int_equal(sysctl_unregister_row(h, &other), 0);
	assert_false(exists(t, "w.other"));
	assert_false(__atomic_load_n(&slow_left, __ATOMIC_SEQ_CST));
	/* The slow row's removal (not the last row's) waits for its call. */
	arg = (struct row_of){ h, &slow };
	assert_int_equal(pthread_create(&un, NULL, unregister_row_thread, &arg), 0);
	while (exists(t, "w.slow"))
		usleep(1000);
	usleep(20000);
	assert_false(__atomic_load_n(&slow_left, __ATOMIC_SEQ_CST));
	__atomic_store_n(&slow_release, 1, __ATOMIC_SEQ_CST);
	assert_int_equal(pthread_join(un, &ret), 0);
	assert_int_equal((long)ret, 0);
	assert_true(__atomic_load_n(&slow_left, __ATOMIC_SEQ_CST));
	assert_int_equal(pthread_join(rd, &ret), 0);
	assert_int_equal((long)ret, 0);
	assert_true(exists(t, "w.keep"));
	sysctl_entry_put(e);
	assert_int_equal(sysctl_unregister_row(h, &keep), 0);
	sysctl_tree_free(t);
	rcustring_barrier();
}

static void test_access(void **state)
{
	struct sysctl_tree *t = new_tree();
	struct sysctl_table_header *h;
	struct ctl_table tbl[] = {
		{ "rw", &int_a, sizeof(int), 0644, proc_dointvec },
		{ "ro", &int_b, sizeof(int), 0444, proc_dointvec },
		{ "all", &int_c, sizeof(int), 0666, proc_dointvec },
		{ "grp", &int_c, sizeof(int), 0460, proc_dointvec },
	};
	struct sysctl_caller root = { 0, 0, 1 }, user = { 1000, 1000, 2 }, wheel = { 1000, 0, 3 };
	struct sysctl_entry *rw, *ro, *all, *grp;

	(void)state;
	assert_int_equal(sysctl_register_table(t, "p", tbl, 4, &h), 0);
	rw = sysctl_lookup(t, "p.rw");
	ro = sysctl_lookup(t, "p.ro");
	all = sysctl_lookup(t, "p.all");
	grp = sysctl_lookup(t, "p.grp");
	assert_int_equal(sysctl_access(rw, &root, R_OK | W_OK), 0);
	assert_int_equal(sysctl_access(ro, &root, R_OK), 0);
	/* Not even root writes a 0444 entry (kernel test_perm). */
	assert_int_equal(sysctl_access(ro, &root, W_OK), -EACCES);
	assert_int_equal(sysctl_access(rw, &user, R_OK), 0);
	assert_int_equal(sysctl_access(rw, &user, W_OK), -EACCES);
	assert_int_equal(sysctl_access(all, &user, R_OK | W_OK), 0);
	/* Group 0 uses the group bits. */
	assert_int_equal(sysctl_access(grp, &wheel, R_OK | W_OK), 0);
	assert_int_equal(sysctl_access(grp, &user, R_OK), -EACCES);
	assert_int_equal(sysctl_access(grp, &root, W_OK), -EACCES);
	assert_int_equal(sysctl_access(rw, NULL, R_OK), -EINVAL);

	/* sysctl_set checks the caller; NULL is the program itself. */
	assert_int_equal(sysctl_set(t, "p.rw", "7", 1, &user), -EACCES);
	assert_int_equal(int_a, 1);
	assert_int_equal(sysctl_set(t, "p.ro", "7", 1, &root), -EACCES);
	assert_int_equal(sysctl_set(t, "p.ro", "7", 1, NULL), 0);
	assert_int_equal(int_b, 7);
	int_b = 2;
	sysctl_entry_put(rw);
	sysctl_entry_put(ro);
	sysctl_entry_put(all);
	sysctl_entry_put(grp);
	sysctl_unregister_table(h);
	sysctl_tree_free(t);
	rcustring_barrier();
}

/*
 * The tree's owner: its uid is held to the owner bits and its gid to the
 * group bits, as root and group 0 are (who keep their access).
 */
static void test_owner(void **state)
{
	struct sysctl_tree *t = new_tree();
	struct sysctl_table_header *h;
	struct ctl_table tbl[] = {
		{ "rw", &int_a, sizeof(int), 0644, proc_dointvec },
		{ "ro", &int_b, sizeof(int), 0444, proc_dointvec },
		{ "grp", &int_c, sizeof(int), 0460, proc_dointvec },
		{ "own", &int_c, sizeof(int), 0600, proc_dointvec },
	};
	struct sysctl_caller root = { 0, 0, 1 }, svc = { 990, 990, 2 }, svc_grp = { 1000, 991, 3 },
			     user = { 1000, 1000, 4 }, wheel = { 1000, 0, 5 };
	struct sysctl_entry *rw, *ro, *grp, *own;
	uid_t uid;
	gid_t gid;

	(void)state;
	assert_int_equal(sysctl_register_table(t, "p", tbl, 4, &h), 0);
	rw = sysctl_lookup(t, "p.rw");
	ro = sysctl_lookup(t, "p.ro");
	grp = sysctl_lookup(t, "p.grp");
	own = sysctl_lookup(t, "p.own");
	sysctl_tree_get_owner(t, &uid, &gid);
	assert_true(uid == 0 && gid == 0);
	/* Root's tree: the service user is anyone. */
	assert_int_equal(sysctl_access(rw, &svc, W_OK), -EACCES);
	assert_int_equal(sysctl_access(own, &svc, R_OK), -EACCES);

	assert_int_equal(sysctl_tree_set_owner(t, 990, 991), 0);
	sysctl_tree_get_owner(t, &uid, &gid);
	assert_true(uid == 990 && gid == 991);
	/* The owner uid: owner bits. */
	assert_int_equal(sysctl_access(rw, &svc, R_OK | W_OK), 0);
	assert_int_equal(sysctl_access(own, &svc, R_OK | W_OK), 0);
	assert_int_equal(sysctl_access(ro, &svc, W_OK), -EACCES);
	assert_int_equal(sysctl_access(grp, &svc, W_OK), -EACCES);
	/* The owner gid: group bits. */
	assert_int_equal(sysctl_access(grp, &svc_grp, R_OK | W_OK), 0);
	assert_int_equal(sysctl_access(rw, &svc_grp, W_OK), -EACCES);
	assert_int_equal(sysctl_access(own, &svc_grp, R_OK), -EACCES);
	/* Anyone else: other bits. */
	assert_int_equal(sysctl_access(rw, &user, R_OK), 0);
	assert_int_equal(sysctl_access(rw, &user, W_OK), -EACCES);
	assert_int_equal(sysctl_access(grp, &user, R_OK), -EACCES);
	/* Root and group 0 keep theirs. */
	assert_int_equal(sysctl_access(rw, &root, R_OK | W_OK), 0);
	assert_int_equal(sysctl_access(own, &root, R_OK | W_OK), 0);
	assert_int_equal(sysctl_access(ro, &root, W_OK), -EACCES);
	assert_int_equal(sysctl_access(grp, &wheel, R_OK | W_OK), 0);
	/* sysctl_set checks the same way. */
	assert_int_equal(sysctl_set(t, "p.rw", "5", 1, &svc), 0);
	assert_int_equal(int_a, 5);
	assert_int_equal(sysctl_set(t, "p.rw", "6", 1, &user), -EACCES);
	assert_int_equal(int_a, 5);
	int_a = 1;

	assert_int_equal(sysctl_tree_set_owner(t, (uid_t)-1, 0), -EINVAL);
	assert_int_equal(sysctl_tree_set_owner(t, 0, (gid_t)-1), -EINVAL);
	assert_int_equal(sysctl_tree_set_owner(NULL, 0, 0), -EINVAL);
	sysctl_tree_get_owner(t, &uid, &gid);
	assert_true(uid == 990 && gid == 991);
	/* Back to root's. */
	assert_int_equal(sysctl_tree_set_owner(t, 0, 0), 0);
	assert_int_equal(sysctl_access(rw, &svc, W_OK), -EACCES);
	sysctl_entry_put(rw);
	sysctl_entry_put(ro);
	sysctl_entry_put(grp);
	sysctl_entry_put(own);
	sysctl_unregister_table(h);
	sysctl_tree_free(t);
	rcustring_barrier();
}

static void test_get_set(void **state)
{
	struct sysctl_tree *t = new_tree();
	struct sysctl_table_header *h;
	struct rcustring rs;
	int v = 5;
	struct ctl_table tbl[] = {
		{ "s", &rs, 16, 0644, proc_rcu_string },
		{ "i", &v, sizeof(int), 0644, proc_dointvec },
	};
	char buf[32];
	struct sysctl_entry *e;
	size_t len;
	off_t pos;

	(void)state;
	assert_int_equal(rcustring_init(&rs, 16, "init"), 0);
	assert_int_equal(sysctl_register_table(t, "g", tbl, 2, &h), 0);
	assert_int_equal(sysctl_get(t, "g.s", buf, sizeof(buf)), 5);
	assert_string_equal(buf, "init\n");
	assert_int_equal(sysctl_get(t, "g/i", buf, sizeof(buf)), 2);
	assert_string_equal(buf, "5\n");
	/* "init\n" plus the NUL needs 6 bytes. */
	assert_int_equal(sysctl_get(t, "g.s", buf, 5), -ERANGE);
	assert_int_equal(sysctl_get(t, "g.s", buf, 6), 5);
	assert_int_equal(sysctl_get(t, "g", buf, sizeof(buf)), -EISDIR);
	assert_int_equal(sysctl_get(t, "g.x", buf, sizeof(buf)), -ENOENT);

	assert_int_equal(sysctl_set(t, "g.s", "new value\n", 10, NULL), 0);
	assert_int_equal(sysctl_get(t, "g.s", buf, sizeof(buf)), 10);
	assert_string_equal(buf, "new value\n");
	/* Too long for the variable: refused, old value kept. */
	assert_int_equal(sysctl_set(t, "g.s", "0123456789abcdefg", 17, NULL), -EMSGSIZE);
	assert_int_equal(sysctl_get(t, "g.s", buf, sizeof(buf)), 10);
	assert_int_equal(sysctl_set(t, "g.i", "x", 1, NULL), -EINVAL);
	assert_int_equal(v, 5);
	assert_int_equal(sysctl_set(t, "g", "1", 1, NULL), -EISDIR);
	assert_int_equal(sysctl_set(t, "g.nope", "1", 1, NULL), -ENOENT);

	/* Reads and writes on a directory entry. */
	e = sysctl_lookup(t, "g");
	len = sizeof(buf);
	pos = 0;
	assert_int_equal(sysctl_entry_read(e, buf, &len, &pos), -EISDIR);
	assert_int_equal(sysctl_entry_write(e, NULL, "1", &len, &pos), -EISDIR);
	sysctl_entry_put(e);

	sysctl_unregister_table(h);
	sysctl_tree_free(t);
	rcustring_destroy(&rs);
	rcustring_barrier();
}

/*
 * A node keeps its path, a name too long for the inline buffer and the
 * description in its own allocation: each reads back whole, side by side.
 */
static void test_long_name_and_desc(void **state)
{
	struct sysctl_tree *t = new_tree();
	struct sysctl_table_header *h = NULL;
	struct ctl_table tbl[] = {
		{ "a_name_longer_than_sixteen.x", &int_a, sizeof(int), 0644, proc_dointvec, NULL, NULL,
		  "the long one" },
		{ "short", &int_b, sizeof(int), 0644, proc_dointvec, NULL, NULL, "the short one" },
		{ "plain", &int_c, sizeof(int), 0644, proc_dointvec },
	};
	struct sysctl_entry *e;

	(void)state;
	assert_int_equal(sysctl_register_table(t, "a_directory_named_at_length/d", tbl, 3, &h), 0);
	e = sysctl_lookup(t, "a_directory_named_at_length.d.a_name_longer_than_sixteen/x");
	assert_non_null(e);
	assert_string_equal(sysctl_entry_name(e), "a_name_longer_than_sixteen.x");
	assert_string_equal(sysctl_entry_path(e),
			    "a_directory_named_at_length.d.a_name_longer_than_sixteen/x");
	assert_string_equal(sysctl_entry_desc(e), "the long one");
	sysctl_entry_put(e);
	e = sysctl_lookup(t, "a_directory_named_at_length.d.short");
	assert_non_null(e);
	assert_string_equal(sysctl_entry_name(e), "short");
	assert_string_equal(sysctl_entry_desc(e), "the short one");
	sysctl_entry_put(e);
	e = sysctl_lookup(t, "a_directory_named_at_length.d.plain");
	assert_non_null(e);
	assert_null(sysctl_entry_desc(e));
	sysctl_entry_put(e);
	e = sysctl_lookup(t, "a_directory_named_at_length");
	assert_non_null(e);
	assert_string_equal(sysctl_entry_name(e), "a_directory_named_at_length");
	assert_null(sysctl_entry_desc(e));
	sysctl_entry_put(e);
	sysctl_unregister_table(h);
	/* At the top of the tree the path has no separator: the name and desc follow it alike. */
	assert_int_equal(sysctl_register_table(t, "", tbl, 2, &h), 0);
	e = sysctl_lookup(t, "/a_name_longer_than_sixteen.x");
	assert_non_null(e);
	assert_string_equal(sysctl_entry_name(e), "a_name_longer_than_sixteen.x");
	assert_string_equal(sysctl_entry_desc(e), "the long one");
	sysctl_entry_put(e);
	e = sysctl_lookup(t, "short");
	assert_non_null(e);
	assert_string_equal(sysctl_entry_desc(e), "the short one");
	sysctl_entry_put(e);
	sysctl_unregister_table(h);
	sysctl_tree_free(t);
	rcustring_barrier();
}

/* Every allocation of a registration fails in turn: -ENOMEM, nothing left. */
static void test_register_nomem(void **state)
{
	struct sysctl_tree *t = new_tree();
	struct sysctl_table_header *h = NULL;
	struct ctl_table tbl[] = {
		{ "a", &int_a, sizeof(int), 0644, proc_dointvec, NULL, NULL, "desc a" },
		{ "b", &int_b, sizeof(int), 0644, proc_dointvec },
	};
	int err, failures = 0;

	(void)state;
	for (long nth = 1; nth < 100; nth++) {
		failmalloc_arm(nth);
		err = sysctl_register_table(t, "n1/n2", tbl, 2, &h);
		failmalloc_disarm();
		if (err == 0)
			break;
		assert_int_equal(err, -ENOMEM);
		assert_non_null(strstr(last_log, "out of memory"));
		assert_false(exists(t, "n1"));
		failures++;
	}
	assert_int_equal(err, 0);
	/* 7 allocations to fail in turn (11 before a node held its path and directory part). */
	assert_true(failures >= 7);
	assert_true(exists(t, "n1.n2.a"));
	sysctl_unregister_table(h);
	sysctl_tree_free(t);
	rcustring_barrier();
}

#define LONG_VALUE "long-long-long-long-long-long-long-long-long-long-long-value"

struct flipper {
	struct sysctl_tree *t;
	int stop;
};

static void *flip_values(void *arg)
{
	struct flipper *f = arg;

	for (long i = 0; !__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE); i++) {
		const char *v = i % 2 ? "short" : LONG_VALUE;

		assert_int_equal(sysctl_set(f->t, "g.s", v, strlen(v), NULL), 0);
	}
	return NULL;
}

/* sysctl_get returns one whole value while another thread writes. */
static void test_get_never_torn(void **state)
{
	struct sysctl_tree *t = new_tree();
	struct rcustring rs;
	struct ctl_table tbl = { "s", &rs, 96, 0644, proc_rcu_string, NULL, NULL, NULL };
	struct sysctl_table_header *h;
	struct flipper f = { t, 0 };
	char buf[128];
	pthread_t tid;
	long bad = 0;

	(void)state;
	assert_int_equal(rcustring_init(&rs, 96, "short"), 0);
	assert_int_equal(sysctl_register_table(t, "g", &tbl, 1, &h), 0);
	assert_int_equal(pthread_create(&tid, NULL, flip_values, &f), 0);
	for (int i = 0; i < 200000; i++) {
		ssize_t n = sysctl_get(t, "g.s", buf, sizeof(buf));

		if (n < 0 || (strcmp(buf, "short\n") != 0 && strcmp(buf, LONG_VALUE "\n") != 0))
			bad++;
	}
	__atomic_store_n(&f.stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(tid, NULL), 0);
	assert_int_equal(bad, 0);
	/* Too small for the value and its NUL: refused, not cut. */
	assert_int_equal(sysctl_set(t, "g.s", "abc", 3, NULL), 0);
	assert_int_equal(sysctl_get(t, "g.s", buf, 4), -ERANGE);
	assert_int_equal(sysctl_get(t, "g.s", buf, 5), 4);
	assert_string_equal(buf, "abc\n");
	sysctl_unregister_table(h);
	sysctl_tree_free(t);
	rcustring_destroy(&rs);
	rcustring_barrier();
}

/* Each pthread_*_init of a new tree and of a registration fails in turn. */
static void test_init_errors(void **state)
{
	struct ctl_table tbl[] = {
		{ "a", &int_a, sizeof(int), 0644, proc_dointvec },
		{ "s", str_buf, sizeof(str_buf), 0644, proc_dostring },
	};
	struct sysctl_table_header *h = NULL;
	struct sysctl_tree *t = NULL;
	int failures = 0, err = 0;

	(void)state;
	for (long nth = 1; nth < 50; nth++) {
		failinit_countdown = nth;
		errno = 0;
		t = sysctl_tree_new();
		failinit_countdown = 0;
		if (t)
			break;
		/* The init's own error, not a made-up ENOMEM. */
		assert_int_equal(errno, EAGAIN);
		failures++;
	}
	assert_non_null(t);
	/* tree lock, notify lock and cond, audit lock (an entry's locks need no init). */
	assert_true(failures >= 4);
	sysctl_tree_set_log(t, capture_log, NULL);
	failures = 0;
	for (long nth = 1; nth < 50; nth++) {
		failinit_countdown = nth;
		err = sysctl_register_table(t, "i1/i2", tbl, 2, &h);
		failinit_countdown = 0;
		if (err == 0)
			break;
		assert_int_equal(err, -ENOMEM);
		assert_false(exists(t, "i1"));
		failures++;
	}
	assert_int_equal(err, 0);
	/* Entries and headers keep their locks in a word (entry_lock.h): nothing to init. */
	assert_int_equal(failures, 0);
	assert_true(exists(t, "i1.i2.s"));
	sysctl_unregister_table(h);
	sysctl_tree_free(t);
	rcustring_barrier();
}

/*
 * proc_dostring and vector entries change their data in place; the tree
 * must never copy it for a reader while one of its writers changes it.
 * The two values differ in length and in every byte, so any mix shows;
 * the strings are long so that a copy takes a while.
 */
#define STR_LEN_A 3000
#define STR_LEN_B 1777
#define VEC_A "1 1 1 1 1 1 1 1"
#define VEC_B "-222222222 -222222222 -222222222 -222222222 -222222222 -222222222 -222222222 -222222222"

struct inplace_flip {
	struct sysctl_tree *t;
	const char *path, *a, *b;
	int stop;
	long writes;
};

static void *flip_inplace(void *arg)
{
	struct inplace_flip *f = arg;

	for (long i = 0; !__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE); i++) {
		const char *v = i % 2 ? f->b : f->a;

		if (sysctl_set(f->t, f->path, v, strlen(v), NULL))
			return (void *)1;
		f->writes++;
	}
	return NULL;
}

/* @got must be @a or @b as the file reads it: tabs for spaces, a newline. */
static bool is_whole(const char *got, size_t n, const char *a, const char *b, bool vec)
{
	const char *src[2] = { a, b };

	for (int k = 0; k < 2; k++) {
		size_t len = strlen(src[k]), i;

		if (n != len + 1 || got[len] != '\n')
			continue;
		for (i = 0; i < len; i++)
			if (got[i] != (vec && src[k][i] == ' ' ? '\t' : src[k][i]))
				break;
		if (i == len)
			return true;
	}
	return false;
}

static void test_inplace_reads_whole(void **state)
{
	static char sval[4096], str_a[STR_LEN_A + 1], str_b[STR_LEN_B + 1], buf[4096];
	static int vval[8];
	struct ctl_table tbl[] = {
		{ "s", sval, sizeof(sval), 0644, proc_dostring },
		{ "v", vval, sizeof(vval), 0644, proc_dointvec },
	};
	struct sysctl_tree *t = new_tree();
	struct sysctl_table_header *h;

	(void)state;
	memset(str_a, 'A', STR_LEN_A);
	for (int i = 0; i < STR_LEN_B; i++)
		str_b[i] = (char)('b' + i % 25); /* never 'A' */
	assert_int_equal(sysctl_register_table(t, "ip", tbl, 2, &h), 0);
	for (int k = 0; k < 2; k++) {
		struct inplace_flip f = { t, k ? "ip.v" : "ip.s", k ? VEC_A : str_a,
					  k ? VEC_B : str_b, 0, 0 };
		long bad = 0, reads = 0;
		pthread_t tid;
		void *ret;

		assert_int_equal(sysctl_set(t, f.path, f.a, strlen(f.a), NULL), 0);
		assert_int_equal(pthread_create(&tid, NULL, flip_inplace, &f), 0);
		/* Until the writer made enough changes (bounded: a hang guard only). */
		for (; reads < 2000000 && (reads < 100000 || __atomic_load_n(&f.writes,
				__ATOMIC_RELAXED) < 1000); reads++) {
			ssize_t n = sysctl_get(t, f.path, buf, sizeof(buf));

			if (n < 0 || !is_whole(buf, (size_t)n, f.a, f.b, k == 1)) {
				if (bad++ < 3)
					print_message("%s: torn read of %zd bytes: \"%.40s...\"\n",
						      f.path, n, n < 0 ? "(error)" : buf);
			}
		}
		__atomic_store_n(&f.stop, 1, __ATOMIC_RELEASE);
		assert_int_equal(pthread_join(tid, &ret), 0);
		assert_null(ret);
		print_message("%s: %ld reads, %ld writes, %ld torn\n", f.path, reads, f.writes, bad);
		assert_int_equal(bad, 0);
		assert_true(f.writes >= 1000);
	}
	sysctl_unregister_table(h);
	sysctl_tree_free(t);
	rcustring_barrier();
}

/* The explanations name the limits, with one or two bounds. */
static void test_explain(void **state)
{
	static struct rcustring rs;
	static int iv, ilo = -3, ihi = 7;
	static unsigned int uv, uhi = 9;
	static unsigned long lv[2], llo = 4;
	struct ctl_table tbl[] = {
		{ "r", &rs, 16, 0644, proc_rcu_string },
		{ "d", str_buf, sizeof(str_buf), 0644, proc_dostring },
		{ "i", &iv, sizeof(int), 0644, proc_dointvec_minmax, &ilo, &ihi },
		{ "u", &uv, sizeof(uv), 0644, proc_douintvec_minmax, NULL, &uhi },
		{ "l", lv, sizeof(lv), 0644, proc_doulongvec_minmax, &llo, NULL },
		{ "p", &int_a, sizeof(int), 0644, proc_dointvec },
	};
	struct sysctl_tree *t = new_tree();
	struct sysctl_table_header *h;
	struct sysctl_entry *e;
	char buf[128];

	(void)state;
	assert_int_equal(rcustring_init(&rs, 16, "x"), 0);
	assert_int_equal(sysctl_register_table(t, "x", tbl, 6, &h), 0);
#define EXPLAIN(path, err, want)                                                   \
	do {                                                                       \
		e = sysctl_lookup(t, path);                                        \
		assert_non_null(e);                                                \
		assert_int_equal(sysctl_entry_explain(e, err, buf, sizeof(buf)),  \
				 (ssize_t)strlen(want));                           \
		assert_string_equal(buf, want);                                    \
		sysctl_entry_put(e);                                               \
	} while (0)
	EXPLAIN("x.r", -EMSGSIZE, "value longer than 15 bytes");
	EXPLAIN("x.d", -EMSGSIZE, "value longer than 31 bytes");
	EXPLAIN("x.i", -EINVAL, "invalid value (integers -3..7)");
	EXPLAIN("x.u", -EINVAL, "invalid value (integers <= 9)");
	EXPLAIN("x.l", -EINVAL, "invalid value (integers >= 4)");
	EXPLAIN("x.p", -EINVAL, "invalid value");
	EXPLAIN("x.p", -EACCES, strerror(EACCES));
	/* Bounds are read when asked: they may be other live tunables. */
	ihi = 70;
	EXPLAIN("x.i", -EINVAL, "invalid value (integers -3..70)");
	e = sysctl_lookup(t, "x.i");
	assert_int_equal(sysctl_entry_explain(e, -EINVAL, buf, 8), 7);
	assert_string_equal(buf, "invalid");
	assert_int_equal(sysctl_entry_explain(e, 0, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(sysctl_entry_explain(e, -EINVAL, NULL, 8), -EINVAL);
	sysctl_unregister_table(h);
	/* Gone: no table to read. */
	assert_int_equal(sysctl_entry_explain(e, -EINVAL, buf, sizeof(buf)), -ENOENT);
	sysctl_entry_put(e);
	e = sysctl_lookup(t, "");
	assert_int_equal(sysctl_entry_explain(e, -EINVAL, buf, sizeof(buf)), -EISDIR);
	sysctl_entry_put(e);
#undef EXPLAIN
	sysctl_tree_free(t);
	rcustring_destroy(&rs);
	rcustring_barrier();
}

/*
 * sysctl_entry_explain reads the registrant's bounds; an unregister that
 * starts meanwhile must wait, or the registrant could free them under the
 * reader. The bounds sit on a page that faults when read: the SIGSEGV
 * handler, in the middle of that read, lets an unregister start in another
 * thread, waits (a bounded while) for it to return, records whether it did,
 * then makes the page readable and lets the read finish.
 */
static char *trap_page;
static long trap_pagesize;
static sem_t trap_go;
static int trap_unregistered, trap_faults, trap_unregistered_while_reading;

static void trap_fault(int sig, siginfo_t *si, void *ctx)
{
	char *addr = si->si_addr;

	(void)sig;
	(void)ctx;
	if (addr < trap_page || addr >= trap_page + trap_pagesize) {
		signal(SIGSEGV, SIG_DFL);
		return;
	}
	if (trap_faults++ == 0) {
		struct timespec ms = { 0, 1000000 };

		sem_post(&trap_go);
		/* A hang guard, not a timing: the unregister must not return at all. */
		for (int i = 0; i < 300 && !__atomic_load_n(&trap_unregistered, __ATOMIC_SEQ_CST);
		     i++)
			nanosleep(&ms, NULL);
		trap_unregistered_while_reading =
			__atomic_load_n(&trap_unregistered, __ATOMIC_SEQ_CST);
	}
	mprotect(trap_page, (size_t)trap_pagesize, PROT_READ | PROT_WRITE);
}

static void *trap_unregister(void *arg)
{
	while (sem_wait(&trap_go) && errno == EINTR)
		;
	sysctl_unregister_table(arg);
	__atomic_store_n(&trap_unregistered, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void test_explain_holds_table(void **state)
{
	static int iv;
	struct ctl_table tbl = { "i", &iv, sizeof(int), 0644, proc_dointvec_minmax };
	struct sysctl_tree *t = new_tree();
	struct sysctl_table_header *h;
	struct sysctl_entry *e;
	struct sigaction sa = { 0 }, old;
	pthread_t tid;
	char buf[128];

	(void)state;
	trap_pagesize = sysconf(_SC_PAGESIZE);
	trap_page = mmap(NULL, (size_t)trap_pagesize, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(trap_page != MAP_FAILED);
	((int *)trap_page)[0] = 2;
	((int *)trap_page)[1] = 5;
	tbl.extra1 = trap_page;
	tbl.extra2 = trap_page + sizeof(int);
	assert_int_equal(sysctl_register_table(t, "tr", &tbl, 1, &h), 0);
	e = sysctl_lookup(t, "tr.i");
	assert_non_null(e);
	assert_int_equal(sem_init(&trap_go, 0, 0), 0);
	assert_int_equal(pthread_create(&tid, NULL, trap_unregister, h), 0);
	sa.sa_sigaction = trap_fault;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);

	mprotect(trap_page, (size_t)trap_pagesize, PROT_NONE);
	assert_int_equal(sysctl_entry_explain(e, -EINVAL, buf, sizeof(buf)),
			 (ssize_t)strlen("invalid value (integers 2..5)"));
	assert_int_equal(sigaction(SIGSEGV, &old, NULL), 0);
	assert_string_equal(buf, "invalid value (integers 2..5)");
	assert_int_equal(trap_faults, 1);
	/* The read of the bounds ended before the unregister could return. */
	assert_false(trap_unregistered_while_reading);
	assert_int_equal(pthread_join(tid, NULL), 0);
	assert_true(trap_unregistered);
	assert_int_equal(sysctl_entry_explain(e, -EINVAL, buf, sizeof(buf)), -ENOENT);
	sysctl_entry_put(e);
	sem_destroy(&trap_go);
	munmap(trap_page, (size_t)trap_pagesize);
	sysctl_tree_free(t);
	rcustring_barrier();
}

/* A value of unknown size: read again into a bigger buffer until it fits, never cut. */
static void test_read_whole(void **state)
{
	static char big[3000];
	struct ctl_table tbl[] = { { .procname = "big", .data = big, .maxlen = sizeof(big),
				     .mode = 0644, .proc_handler = proc_dostring } };
	struct sysctl_tree *t = new_tree();
	struct sysctl_table_header *h;
	struct sysctl_entry *e;
	char *out = NULL;
	size_t len = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(big) - 1; i++)
		big[i] = (char)('a' + i % 26);
	assert_int_equal(sysctl_register_table(t, "w", tbl, 1, &h), 0);
	e = sysctl_lookup(t, "w/big");
	assert_non_null(e);
	/* 16, 32, ... 4096: the 2999 bytes and the newline need 4096. */
	assert_int_equal(sysctl_entry_read_whole(e, 16, 1u << 20, &out, &len), 0);
	assert_int_equal(len, sizeof(big));
	assert_memory_equal(out, big, sizeof(big) - 1);
	assert_int_equal(out[len - 1], '\n');
	free(out);
	/* The last size tried is 2048: the value fills it. */
	assert_int_equal(sysctl_entry_read_whole(e, 16, 2000, &out, &len), -EFBIG);
	assert_int_equal(sysctl_set(t, "w/big", "x", 1, NULL), 0);
	assert_int_equal(sysctl_entry_read_whole(e, 0, 0, &out, &len), 0);
	assert_int_equal(len, 2);
	assert_memory_equal(out, "x\n", 2);
	free(out);
	assert_int_equal(sysctl_entry_read_whole(NULL, 0, 0, &out, &len), -EINVAL);
	sysctl_entry_put(e);
	e = sysctl_lookup(t, "w");
	assert_int_equal(sysctl_entry_read_whole(e, 0, 0, &out, &len), -EISDIR);
	sysctl_entry_put(e);
	sysctl_unregister_table(h);
	sysctl_tree_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_register_checks),
		cmocka_unit_test(test_lookup_separators),
		cmocka_unit_test(test_walk_and_list),
		cmocka_unit_test(test_dead_entry),
		cmocka_unit_test(test_unregister_waits),
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_unregister_row_waits_for_its_row),
		cmocka_unit_test(test_access),
		cmocka_unit_test(test_owner),
		cmocka_unit_test(test_get_set),
		cmocka_unit_test(test_read_whole),
		cmocka_unit_test(test_register_nomem),
		cmocka_unit_test(test_get_never_torn),
		cmocka_unit_test(test_init_errors),
		cmocka_unit_test(test_inplace_reads_whole),
		cmocka_unit_test(test_explain),
		cmocka_unit_test(test_explain_holds_table),
		cmocka_unit_test(test_long_name_and_desc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
