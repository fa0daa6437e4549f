/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Benchmark of the sysctl tree: the cost of a read and a write through the
 * tree (lookup + handler + put; writes also pay the audit record and the
 * change notification) for a proc_rcu_string and a proc_dointvec entry,
 * next to the bare rcustring_copy() / int load they wrap; and lookups per
 * second while another thread registers and unregisters tables.
 *
 * Usage: rcustring-tree-bench [--seconds S]   (S split over the 5 runs)
 * Ends with "summary <name> <n>" lines.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rcustring/sysctl.h"

#define BATCH 256

static struct sysctl_tree *tree;
static struct rcustring str_var;
static int int_var;
static volatile int sink;
static int stop;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "rcustring-tree-bench: %s: %d\n", what, err);
	exit(1);
}

/* One operation through the tree: lookup, read or write, put. */
static void tree_op(const char *path, int write, long k)
{
	struct sysctl_entry *e = sysctl_lookup(tree, path);
	char buf[64];
	size_t len;
	off_t pos = 0;
	int err;

	if (!e)
		die("lookup", -1);
	if (write) {
		len = (size_t)snprintf(buf, sizeof(buf), "%ld", k & 0xffff);
		err = sysctl_entry_write(e, NULL, buf, &len, &pos);
	} else {
		len = sizeof(buf);
		err = sysctl_entry_read(e, buf, &len, &pos);
		sink += (int)len;
	}
	if (err)
		die(path, err);
	sysctl_entry_put(e);
}

/* ns per operation of @op over @seconds. */
static double measure(double seconds, void (*op)(const char *, int, long), const char *path,
		      int write)
{
	double t0 = now_s(), t;
	long n = 0;

	do {
		for (int i = 0; i < BATCH; i++, n++)
			op(path, write, n);
		t = now_s();
	} while (t - t0 < seconds);
	return (t - t0) * 1e9 / (double)n;
}

/* The bare reads the entries wrap, for the ratio. */
static void bare_op(const char *path, int write, long k)
{
	char buf[64];

	(void)write;
	(void)k;
	if (!strcmp(path, "s"))
		sink += (int)rcustring_copy(&str_var, buf, sizeof(buf));
	else
		sink += __atomic_load_n(&int_var, __ATOMIC_RELAXED);
}

static void *churn(void *arg)
{
	int vals[4] = { 0 };
	struct ctl_table tbl[4];
	long *regs = arg;

	for (int i = 0; i < 4; i++) {
		char *name = malloc(8);

		if (!name)
			die("malloc", -1);
		snprintf(name, 8, "c%d", i);
		tbl[i] = (struct ctl_table){ name, &vals[i], sizeof(int), 0644, proc_dointvec,
					     NULL, NULL, NULL };
	}
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		struct sysctl_table_header *h;
		char path[32];

		snprintf(path, sizeof(path), "churn.t%ld", *regs % 8);
		if (sysctl_register_table(tree, path, tbl, 4, &h))
			die("register", -1);
		sysctl_unregister_table(h);
		(*regs)++;
	}
	for (int i = 0; i < 4; i++)
		free((char *)tbl[i].procname);
	return NULL;
}

static double lookups_during_churn(double seconds, long *regs)
{
	static const char *paths[] = { "bench.str", "bench/int", "churn.t3.c1", "bench.none" };
	pthread_t th;
	double t0, t;
	long n = 0;

	if (pthread_create(&th, NULL, churn, regs))
		die("pthread_create", -1);
	t0 = now_s();
	do {
		for (int i = 0; i < BATCH; i++, n++) {
			struct sysctl_entry *e = sysctl_lookup(tree, paths[n & 3]);

			if (e)
				sysctl_entry_put(e);
		}
		t = now_s();
	} while (t - t0 < seconds);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	return (double)n / (t - t0);
}

int main(int argc, char **argv)
{
	double seconds = 2, each;
	struct sysctl_table_header *h;
	struct ctl_table tbl[2];
	double rs, ws, ri, wi, bs, bi, lps;
	long regs = 0;
	int err;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			seconds = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: %s [--seconds S]\n", argv[0]);
			return 2;
		}
	}
	each = seconds / 5 > 0.05 ? seconds / 5 : 0.05;
	if (rcustring_init(&str_var, 64, "/sbin/modprobe"))
		die("rcustring_init", -1);
	tree = sysctl_tree_new();
	if (!tree)
		die("sysctl_tree_new", -1);
	tbl[0] = (struct ctl_table){ "str", &str_var, 64, 0644, proc_rcu_string, NULL, NULL, NULL };
	tbl[1] = (struct ctl_table){ "int", &int_var, sizeof(int), 0644, proc_dointvec, NULL, NULL,
				     NULL };
	err = sysctl_register_table(tree, "bench", tbl, 2, &h);
	if (err)
		die("register", err);

	rs = measure(each, tree_op, "bench.str", 0);
	ws = measure(each, tree_op, "bench.str", 1);
	ri = measure(each, tree_op, "bench.int", 0);
	wi = measure(each, tree_op, "bench.int", 1);
	bs = measure(each / 4, bare_op, "s", 0);
	bi = measure(each / 4, bare_op, "i", 0);
	lps = lookups_during_churn(each, &regs);

	printf("tree read  string: %8.1f ns/op (bare rcustring_copy %.1f ns, x%.1f)\n", rs, bs,
	       rs / bs);
	printf("tree write string: %8.1f ns/op (lookup, handler, audit with 2 reads, notify)\n", ws);
	printf("tree read  int:    %8.1f ns/op (bare load %.1f ns)\n", ri, bi);
	printf("tree write int:    %8.1f ns/op\n", wi);
	printf("lookups during churn: %.0f/s (%ld register+unregister pairs meanwhile)\n", lps,
	       regs);

	sysctl_unregister_table(h);
	sysctl_tree_free(tree);
	rcustring_destroy(&str_var);
	rcustring_barrier();

	printf("summary tree_read_string_ns %.0f\n", rs);
	printf("summary tree_write_string_ns %.0f\n", ws);
	printf("summary tree_read_int_ns %.0f\n", ri);
	printf("summary tree_write_int_ns %.0f\n", wi);
	printf("summary tree_lookups_per_s_during_churn %.0f\n", lps);
	return 0;
}
