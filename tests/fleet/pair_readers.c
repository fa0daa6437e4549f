/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Readers of a pair for the fleet test of commits (test_fleet_commit.sh):
 * each thread takes sysctl_snapshot()s of two entries of different kinds
 * (a string and an int, written (x, x) by one etcd transaction each) and
 * counts the snapshots whose two values differ. Counting starts at the
 * first equal pair: before it the host holds its defaults. The tree's
 * commit listener counts the commits of several entries, so that a test
 * can tell a revision applied as one commit from one applied key by key
 * without a reader having to fall in the window between the two.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rcustring/sysctl_commit.h>

#include "pair_readers.h"

#define READERS_MAX 8

static struct sysctl_tree *pr_tree;
static const char *pr_a, *pr_b;
static pthread_t pr_thread[READERS_MAX];
static int pr_n;
static bool pr_stop;
static unsigned long pr_snapshots, pr_mixed, pr_commits;

static void count_commit(struct sysctl_tree *tree, struct sysctl_entry *const *entries,
			 const uint64_t *seqs, size_t n, enum sysctl_origin origin, void *arg)
{
	(void)tree, (void)entries, (void)seqs, (void)origin, (void)arg;
	if (n > 1)
		__atomic_add_fetch(&pr_commits, 1, __ATOMIC_RELAXED);
}

int pair_commits_count(struct sysctl_tree *tree)
{
	return sysctl_tree_set_commit_notify(tree, count_commit, NULL);
}

static void *reader(void *arg)
{
	char a[80], b[80];
	bool armed = false;

	(void)arg;
	while (!__atomic_load_n(&pr_stop, __ATOMIC_RELAXED)) {
		struct sysctl_snapshot_item it[2] = {
			{ .path = pr_a, .buf = a, .size = sizeof(a) },
			{ .path = pr_b, .buf = b, .size = sizeof(b) },
		};
		bool same;

		sched_yield(); /* spin, but let the host's other threads (and etcd) run */
		if (sysctl_snapshot(pr_tree, it, 2, NULL))
			continue; /* not registered yet, or going: no pair to judge */
		same = !strcmp(a, b); /* each value with its '\n' */
		armed |= same;
		if (!armed)
			continue;
		__atomic_add_fetch(&pr_snapshots, 1, __ATOMIC_RELAXED);
		if (!same && __atomic_add_fetch(&pr_mixed, 1, __ATOMIC_RELAXED) <= 3)
			fprintf(stderr, "mixed pair: %s = %.*s, %s = %.*s\n", pr_a,
				(int)strcspn(a, "\n"), a, pr_b, (int)strcspn(b, "\n"), b);
	}
	return NULL;
}

int pair_readers_start(struct sysctl_tree *tree, const char *a, const char *b, int n)
{
	int err;

	if (n < 1 || n > READERS_MAX)
		return -EINVAL;
	pr_tree = tree;
	pr_a = a;
	pr_b = b;
	for (pr_n = 0; pr_n < n; pr_n++) {
		err = pthread_create(&pr_thread[pr_n], NULL, reader, NULL);
		if (err)
			return -err;
	}
	return 0;
}

void pair_readers_stop(const char *host)
{
	__atomic_store_n(&pr_stop, true, __ATOMIC_RELAXED);
	for (int i = 0; i < pr_n; i++)
		pthread_join(pr_thread[i], NULL);
	if (pr_n)
		printf("pairs\t%s\tsnapshots=%lu\tmixed=%lu\tcommits=%lu\n", host, pr_snapshots,
		       pr_mixed, pr_commits);
}
