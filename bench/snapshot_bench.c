/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a snapshot read of 4 tunables (sysctl_snapshot(), lib/sysctl/
 * snapshot.c) costs against one single read (sysctl_get()) of the same
 * tree, in the same run: CPU nanoseconds per call, one thread, no writer,
 * the two alternating over the repetitions. The tunables are two RCU
 * strings and two ints (the ints read under their entry's reader lock, as
 * every read of them does). The target (issue 41): at most 4.5 single reads.
 *
 * Usage: rcustring-snapshot-bench [--reps N] [--calls N]
 * Ends with "summary snapshot4_vs_single <ratio>", the median of the
 * per-repetition ratios (snapshot ns / single ns).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rcustring/rcustring.h"
#include "rcustring/sysctl.h"
#include "rcustring/sysctl_commit.h"

#define MAX_REPS 99

static struct rcustring host, name;
static int port = 8080, burst = 32;

static struct ctl_table table[] = {
	{ .procname = "host", .data = &host, .maxlen = 64, .mode = 0644,
	  .proc_handler = proc_rcu_string },
	{ .procname = "port", .data = &port, .maxlen = sizeof(int), .mode = 0644,
	  .proc_handler = proc_dointvec },
	{ .procname = "name", .data = &name, .maxlen = 64, .mode = 0644,
	  .proc_handler = proc_rcu_string },
	{ .procname = "burst", .data = &burst, .maxlen = sizeof(int), .mode = 0644,
	  .proc_handler = proc_dointvec },
};
static const char *paths[4] = { "backend.host", "backend.port", "backend.name", "backend.burst" };

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU ns per call: a snapshot of all 4, or single reads of each in turn. */
static double measure(struct sysctl_tree *t, int snapshot, long calls)
{
	char buf[4][80];
	struct sysctl_snapshot_item items[4];
	double t0;

	for (int i = 0; i < 4; i++)
		items[i] = (struct sysctl_snapshot_item){ paths[i], buf[i], sizeof(buf[i]), 0 };
	t0 = cpu_now();
	for (long i = 0; i < calls; i++) {
		if (snapshot ? sysctl_snapshot(t, items, 4, NULL) < 0
			     : sysctl_get(t, paths[i & 3], buf[i & 3], sizeof(buf[0])) < 0)
			exit(1);
		__asm__ volatile("" ::: "memory");
	}
	return (cpu_now() - t0) / (double)calls * 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct sysctl_table_header *h;
	struct sysctl_tree *t;
	double ratio[MAX_REPS];
	long calls = 1000000;
	int reps = 7;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--reps"))
			reps = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--calls"))
			calls = atol(argv[i + 1]);
	}
	if (reps < 1 || reps > MAX_REPS || calls < 1) {
		fprintf(stderr, "usage: rcustring-snapshot-bench [--reps 1..99] [--calls N]\n");
		return 2;
	}
	t = sysctl_tree_new();
	if (!t || rcustring_init(&host, 64, "backend.example.org") ||
	    rcustring_init(&name, 64, "primary") || sysctl_register_table(t, "backend", table, 4, &h))
		return 1;
	for (int rep = 0; rep < reps; rep++) {
		double s, g;

		if (rep % 2) { /* alternate which goes first */
			s = measure(t, 1, calls / 4);
			g = measure(t, 0, calls);
		} else {
			g = measure(t, 0, calls);
			s = measure(t, 1, calls / 4);
		}
		ratio[rep] = s / g;
		printf("repetition %d: snapshot of 4 %.1f ns, single read %.1f ns (x%.2f)\n", rep + 1,
		       s, g, s / g);
	}
	qsort(ratio, (size_t)reps, sizeof(ratio[0]), cmp_double);
	printf("summary snapshot4_vs_single %.2f # CPU per snapshot of 4 / per single read (target <= 4.5); median of %d\n",
	       reps % 2 ? ratio[reps / 2] : (ratio[reps / 2 - 1] + ratio[reps / 2]) / 2, reps);
	sysctl_unregister_table(h);
	sysctl_tree_free(t);
	rcustring_destroy(&host);
	rcustring_destroy(&name);
	return 0;
}
