/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Large directories (correctness, not timing): the index (one hash table
 * of every node by path for lookups, a skip list per directory for the
 * sorted position) must find
 * every entry and keep walks and listings in name order however many
 * entries a directory holds, however they arrive and leave:
 *   flat        one table of N entries in one directory, in shuffled order;
 *   spread      N entries as one table of 100 per directory;
 *   one by one  N/4 single-entry tables into one directory, shuffled, while
 *               a reader thread looks up entries that stay registered all
 *               along (the hash table grows under it), then unregistered in
 *               another shuffled order, checked at each step's end; four
 *               rounds, as a reader caught in a chain being rebuilt is rare.
 * Also duplicates: inside one big table (the last row repeats the first),
 * and a name already registered; and paths whose hashes are equal, which
 * only their names tell apart. Usage: test_tree_scale [--entries N]
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rcustring/sysctl.h"

#define PER_DIR 100
#define PINNED 64

static long failures;

#define CHECK(cond, ...)                                                           \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                              \
			fputc('\n', stderr);                                       \
			__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);        \
			if (failures > 20)                                         \
				exit(1);                                           \
		}                                                                  \
	} while (0)

static unsigned long long rng = 0x2545f4914f6cdd1dULL;

static unsigned long rnd(unsigned long n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned long)(rng % n);
}

static void shuffle(long *v, long n)
{
	for (long i = n - 1; i > 0; i--) {
		long j = (long)rnd((unsigned long)i + 1), t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
}

static long *permutation(long n)
{
	long *v = malloc((size_t)n * sizeof(*v));

	if (!v)
		abort();
	for (long i = 0; i < n; i++)
		v[i] = i;
	shuffle(v, n);
	return v;
}

static char **names_new(long n, const char *prefix)
{
	char **names = malloc((size_t)n * sizeof(*names));

	if (!names)
		abort();
	for (long i = 0; i < n; i++) {
		/* Alphanumeric names: dotted paths then sort as their components do. */
		names[i] = malloc(48);
		if (!names[i])
			abort();
		snprintf(names[i], 48, "%s%ld", prefix, i);
	}
	return names;
}

static void names_free(char **names, long n)
{
	for (long i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static struct ctl_table *table_new(char **names, const long *order, long n, int *data)
{
	struct ctl_table *t = malloc((size_t)n * sizeof(*t));

	if (!t)
		abort();
	for (long i = 0; i < n; i++)
		t[i] = (struct ctl_table){ names[order[i]], &data[order[i]], sizeof(int), 0644,
					   proc_dointvec, NULL, NULL, NULL };
	return t;
}

/* Walks and listings: count, strictly increasing paths, none dead. */
struct order_check {
	long count;
	char last[256];
	long unordered;
};

static int in_order(struct sysctl_entry *e, void *arg)
{
	struct order_check *o = arg;
	const char *p = sysctl_entry_path(e);

	if (o->count && strcmp(o->last, p) >= 0 && o->unordered++ < 3)
		fprintf(stderr, "out of order: %s after %s\n", p, o->last);
	snprintf(o->last, sizeof(o->last), "%s", p);
	o->count++;
	return 0;
}

static void check_walk(struct sysctl_tree *t, const char *prefix, long expect)
{
	struct order_check o = { 0 };
	int err = sysctl_walk(t, prefix, in_order, &o);

	CHECK(err == 0, "walk %s: %d", prefix, err);
	CHECK(o.count == expect, "walk %s: %ld entries, expected %ld", prefix, o.count, expect);
	CHECK(o.unordered == 0, "walk %s: %ld out of order", prefix, o.unordered);
}

static void check_list(struct sysctl_tree *t, const char *dir, long expect)
{
	struct order_check o = { 0 };
	int err = sysctl_list_dir(t, dir, in_order, &o);

	CHECK(err == 0, "list %s: %d", dir, err);
	CHECK(o.count == expect, "list %s: %ld entries, expected %ld", dir, o.count, expect);
	CHECK(o.unordered == 0, "list %s: %ld out of order", dir, o.unordered);
}

/* @path names the entry of @name and row @row; both separators. */
static void check_found(struct sysctl_tree *t, const char *path, const char *name,
			const struct ctl_table *row)
{
	struct sysctl_entry *e = sysctl_lookup(t, path);

	CHECK(e != NULL, "lookup %s: errno %d", path, errno);
	if (!e)
		return;
	CHECK(!strcmp(sysctl_entry_name(e), name), "lookup %s found %s", path, sysctl_entry_name(e));
	CHECK(sysctl_entry_table(e) == row, "lookup %s: another row", path);
	sysctl_entry_put(e);
}

static void check_missing(struct sysctl_tree *t, const char *path)
{
	struct sysctl_entry *e = sysctl_lookup(t, path);

	CHECK(!e && errno == ENOENT, "lookup %s: found or errno %d", path, errno);
	if (e)
		sysctl_entry_put(e);
}

static char last_log[512];

static void capture_log(void *arg, const char *message)
{
	(void)arg;
	snprintf(last_log, sizeof(last_log), "%s", message);
}

static void test_flat(long n)
{
	struct sysctl_tree *t = sysctl_tree_new();
	char **names = names_new(n, "e");
	long *order = permutation(n);
	int *data = calloc((size_t)n, sizeof(int));
	struct ctl_table *tbl = table_new(names, order, n, data), extra;
	struct sysctl_table_header *h, *h2;
	char path[128];
	int err;

	sysctl_tree_set_log(t, capture_log, NULL);
	/* The last row repeats the first: found however far apart they are. */
	extra = tbl[n - 1];
	tbl[n - 1].procname = tbl[0].procname;
	err = sysctl_register_table(t, "big", tbl, (size_t)n, &h);
	CHECK(err == -EEXIST, "duplicate in the table: %d", err);
	CHECK(strstr(last_log, "duplicate") != NULL, "log: %s", last_log);
	check_missing(t, "big");
	tbl[n - 1] = extra;

	err = sysctl_register_table(t, "big", tbl, (size_t)n, &h);
	CHECK(err == 0, "register %ld entries: %d", n, err);
	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof(path), i % 2 ? "big.%s" : "/big/%s", tbl[i].procname);
		check_found(t, path, tbl[i].procname, &tbl[i]);
	}
	check_missing(t, "big.e-1");
	snprintf(path, sizeof(path), "big.e%ld", n);
	check_missing(t, path);
	check_walk(t, "big", n);
	check_list(t, "big", n);

	/* A second table with one name of the first. */
	extra = (struct ctl_table){ names[n / 2], &data[0], sizeof(int), 0644, proc_dointvec,
				   NULL, NULL, NULL };
	err = sysctl_register_table(t, "big", &extra, 1, &h2);
	CHECK(err == -EEXIST, "name already registered: %d", err);
	CHECK(strstr(last_log, "already registered") != NULL, "log: %s", last_log);

	sysctl_unregister_table(h);
	check_missing(t, "big");
	snprintf(path, sizeof(path), "big.%s", names[0]);
	check_missing(t, path);
	sysctl_tree_free(t);
	free(tbl);
	free(data);
	free(order);
	names_free(names, n);
}

static void test_spread(long n)
{
	struct sysctl_tree *t = sysctl_tree_new();
	long ndirs = (n + PER_DIR - 1) / PER_DIR;
	char **names = names_new(n, "e");
	long *order = permutation(n), *dirs = permutation(ndirs);
	int *data = calloc((size_t)n, sizeof(int));
	struct ctl_table *tbl = table_new(names, order, n, data);
	struct sysctl_table_header **h = calloc((size_t)ndirs, sizeof(*h));
	char path[128];
	long left;
	int err;

	/* Directories registered in shuffled order; rows of d<k> are tbl[k*100..]. */
	for (long i = 0; i < ndirs; i++) {
		long d = dirs[i], first = d * PER_DIR;
		long cnt = n - first < PER_DIR ? n - first : PER_DIR;

		snprintf(path, sizeof(path), "spread.d%ld", d);
		err = sysctl_register_table(t, path, &tbl[first], (size_t)cnt, &h[d]);
		CHECK(err == 0, "register %s: %d", path, err);
	}
	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "spread.d%ld.%s", i / PER_DIR, tbl[i].procname);
		check_found(t, path, tbl[i].procname, &tbl[i]);
	}
	check_walk(t, "spread", n);
	check_list(t, "spread", ndirs);

	/* Every other directory goes: the rest still found, still in order. */
	for (long d = 0; d < ndirs; d += 2)
		sysctl_unregister_table(h[d]);
	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "spread.d%ld.%s", i / PER_DIR, tbl[i].procname);
		if ((i / PER_DIR) % 2)
			check_found(t, path, tbl[i].procname, &tbl[i]);
		else
			check_missing(t, path);
	}
	check_list(t, "spread", ndirs / 2);
	left = 0;
	for (long d = 1; d < ndirs; d += 2)
		left += n - d * PER_DIR < PER_DIR ? n - d * PER_DIR : PER_DIR;
	check_walk(t, "spread", left);
	for (long d = 1; d < ndirs; d += 2)
		sysctl_unregister_table(h[d]);
	check_missing(t, "spread");
	sysctl_tree_free(t);
	free(h);
	free(tbl);
	free(data);
	free(dirs);
	free(order);
	names_free(names, n);
}

struct reader {
	struct sysctl_tree *t;
	const char *dir;
	int stop;
	long rounds;
};

/* Pinned entries stay registered: every lookup must find them. */
static void *read_pinned(void *arg)
{
	struct reader *r = arg;
	char path[64];

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		for (int i = 0; i < PINNED; i++) {
			struct sysctl_entry *e;

			snprintf(path, sizeof(path), "%s.pin%d", r->dir, i);
			e = sysctl_lookup(r->t, path);
			CHECK(e != NULL, "pinned %s missing while the directory grows", path);
			if (e)
				sysctl_entry_put(e);
		}
		r->rounds++;
	}
	return NULL;
}

static void test_one_by_one(long n, const char *inc)
{
	struct sysctl_tree *t = sysctl_tree_new();
	char **names = names_new(n, "x"), **pins = names_new(PINNED, "pin");
	long *order = permutation(n), *pin_order = permutation(PINNED);
	int *data = calloc((size_t)n + PINNED, sizeof(int));
	struct ctl_table *tbl = table_new(names, order, n, data);
	struct ctl_table *pin_tbl = table_new(pins, pin_order, PINNED, data + n);
	struct sysctl_table_header **h = calloc((size_t)n, sizeof(*h)), *hp;
	struct reader r = { t, inc, 0, 0 };
	pthread_t tid;
	char path[64];
	long *gone = permutation(n);
	int err;

	err = sysctl_register_table(t, inc, pin_tbl, PINNED, &hp);
	CHECK(err == 0, "register pinned: %d", err);
	if (pthread_create(&tid, NULL, read_pinned, &r))
		abort();
	for (long i = 0; i < n; i++) {
		err = sysctl_register_table(t, inc, &tbl[i], 1, &h[i]);
		CHECK(err == 0, "register %s: %d", tbl[i].procname, err);
	}
	/* Leave the reader some rounds over the grown table too. */
	while (__atomic_load_n(&r.rounds, __ATOMIC_RELAXED) < 2)
		sched_yield();
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pthread_join(tid, NULL);
	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s.%s", inc, tbl[i].procname);
		check_found(t, path, tbl[i].procname, &tbl[i]);
	}
	check_list(t, inc, n + PINNED);

	/* Half go, in another order: the others stay found and in order. */
	for (long k = 0; k < n / 2; k++) {
		sysctl_unregister_table(h[gone[k]]);
		h[gone[k]] = NULL;
	}
	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s.%s", inc, tbl[i].procname);
		if (h[i])
			check_found(t, path, tbl[i].procname, &tbl[i]);
		else
			check_missing(t, path);
	}
	check_walk(t, inc, n - n / 2 + PINNED);
	/* Names freed by unregister can come back. */
	for (long k = 0; k < n / 2; k++) {
		long i = gone[k];

		err = sysctl_register_table(t, inc, &tbl[i], 1, &h[i]);
		CHECK(err == 0, "register %s again: %d", tbl[i].procname, err);
	}
	check_walk(t, inc, n + PINNED);
	for (long i = 0; i < n; i++)
		sysctl_unregister_table(h[gone[i]]);
	check_list(t, inc, PINNED);
	sysctl_unregister_table(hp);
	check_missing(t, inc);
	sysctl_tree_free(t);
	free(gone);
	free(h);
	free(pin_tbl);
	free(tbl);
	free(data);
	free(pin_order);
	free(order);
	names_free(pins, PINNED);
	names_free(names, n);
}

/*
 * Paths of equal hash (FNV-1a over the dotted path, found by search): the
 * index puts them on one probe sequence with one tag, so only the names,
 * the leaf's and its parents', tell them apart, in lookups and in
 * registration's "already registered" check.
 */
static void test_equal_hashes(void)
{
	/* "coll.a228319" and "coll.a1248864": the leaf names differ. */
	static const char *same_dir[2] = { "a228319", "a1248864" };
	/* "coll.d462789.x" and "coll.d679192.x": the same leaf, other parents. */
	static const char *dirs[2] = { "coll.d462789", "coll/d679192" };
	struct sysctl_tree *t = sysctl_tree_new();
	struct ctl_table rows[2], xs[2], y = { "y", NULL, sizeof(int), 0644, proc_dointvec,
					     NULL, NULL, NULL };
	struct sysctl_table_header *h, *hx[2], *hy;
	int data[5] = { 0 };
	char path[64];
	int err;

	for (int i = 0; i < 2; i++) {
		rows[i] = (struct ctl_table){ same_dir[i], &data[i], sizeof(int), 0644,
					      proc_dointvec, NULL, NULL, NULL };
		xs[i] = (struct ctl_table){ "x", &data[2 + i], sizeof(int), 0644, proc_dointvec,
					    NULL, NULL, NULL };
	}
	err = sysctl_register_table(t, "coll", rows, 2, &h);
	CHECK(err == 0, "register coll: %d", err);
	/* The second directory exists first: its "x" is checked against its children. */
	y.data = &data[4];
	err = sysctl_register_table(t, dirs[1], &y, 1, &hy);
	CHECK(err == 0, "register %s.y: %d", dirs[1], err);
	for (int i = 0; i < 2; i++) {
		err = sysctl_register_table(t, dirs[i], &xs[i], 1, &hx[i]);
		CHECK(err == 0, "register %s.x beside a path of the same hash: %d", dirs[i], err);
	}
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "coll.%s", same_dir[i]);
		check_found(t, path, same_dir[i], &rows[i]);
		snprintf(path, sizeof(path), "/coll/%s", same_dir[i]);
		check_found(t, path, same_dir[i], &rows[i]);
		snprintf(path, sizeof(path), "%s/x", i ? "coll/d679192" : "coll/d462789");
		check_found(t, path, "x", &xs[i]);
		snprintf(path, sizeof(path), "%s.x", i ? "coll.d679192" : "coll.d462789");
		check_found(t, path, "x", &xs[i]);
	}
	sysctl_unregister_table(hx[0]);
	check_missing(t, "coll.d462789.x");
	check_found(t, "coll.d679192.x", "x", &xs[1]);
	sysctl_unregister_table(hx[1]);
	check_missing(t, "coll.d679192.x");
	sysctl_unregister_table(hy);
	sysctl_unregister_table(h);
	sysctl_tree_free(t);
}

int main(int argc, char **argv)
{
	long n = 20000;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--entries") && i + 1 < argc && atol(argv[i + 1]) >= 4) {
			n = atol(argv[++i]);
		} else {
			fprintf(stderr, "usage: %s [--entries N]   (N >= 4)\n", argv[0]);
			return 2;
		}
	}
	test_equal_hashes();
	test_flat(n);
	test_spread(n);
	/* Rounds: a reader in the middle of a chain while it is rebuilt is rare. */
	for (int round = 0; round < 4; round++)
		test_one_by_one(n / 4, round % 2 ? "inc.sub" : "inc");
	rcustring_barrier();
	printf("%s: %ld entries flat, %ld spread, 4 x %ld one by one: %ld failures\n", argv[0], n,
	       n, n / 4, failures);
	return failures ? 1 : 0;
}
