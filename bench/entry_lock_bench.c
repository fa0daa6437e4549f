/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The read side of an entry's data lock (lib/sysctl/entry_lock.c, a word
 * and the tree's wait slots) against the writer-preferring pthread rwlock
 * it replaced, in the same run: CPU nanoseconds per lock + unlock pair,
 * uncontended (one thread) and with every thread reading the same entry,
 * the two locks alternating over the repetitions. The tree's reads of
 * in-place handlers (proc_dointvec and the like) pay this pair once each.
 *
 * Usage: rcustring-entry-lock-bench [--reps N] [--pairs N]
 * Ends with "summary entry_lock_read_vs_rwlock <ratio>" (median of the
 * per-repetition ratios, one thread) and the same for all threads.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rcustring/sysctl.h"
#include "../lib/sysctl/entry_lock.h"
#include "../lib/sysctl/tree.h"

#define MAX_THREADS 64
#define MAX_REPS 99

static struct sysctl_entry entry;
static pthread_rwlock_t rwlock;
static long pairs = 10000000;

struct run {
	int word; /* 1: the entry's lock word, 0: the rwlock */
	double ns;
};

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *reader(void *arg)
{
	struct run *r = arg;
	double t0 = cpu_now();

	if (r->word) {
		for (long i = 0; i < pairs; i++) {
			rcs_elock_read(&entry);
			__asm__ volatile("" ::: "memory");
			rcs_elock_read_unlock(&entry);
		}
	} else {
		for (long i = 0; i < pairs; i++) {
			pthread_rwlock_rdlock(&rwlock);
			__asm__ volatile("" ::: "memory");
			pthread_rwlock_unlock(&rwlock);
		}
	}
	r->ns = (cpu_now() - t0) / (double)pairs * 1e9;
	return NULL;
}

/* Mean CPU ns per pair over @n threads reading at once. */
static double measure(int word, int n)
{
	pthread_t th[MAX_THREADS];
	struct run runs[MAX_THREADS];
	double sum = 0;

	for (int i = 0; i < n; i++) {
		runs[i] = (struct run){ .word = word };
		if (pthread_create(&th[i], NULL, reader, &runs[i]))
			exit(1);
	}
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		sum += runs[i].ns;
	}
	return sum / n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	pthread_rwlockattr_t attr;
	int reps = 5, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	double ratio[2][MAX_REPS];

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--reps"))
			reps = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--pairs"))
			pairs = atol(argv[i + 1]);
	}
	if (reps < 1 || reps > MAX_REPS || pairs < 1) {
		fprintf(stderr, "usage: rcustring-entry-lock-bench [--reps 1..99] [--pairs N]\n");
		return 2;
	}
	ncpu = ncpu < 1 ? 1 : ncpu > MAX_THREADS ? MAX_THREADS : ncpu;
	/* What the entry had before: a writer-preferring rwlock. */
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&rwlock, &attr);
	/* A leaf's tree is its table header's. */
	entry.header = calloc(1, sizeof(*entry.header));
	if (!entry.header || !(entry.header->tree = sysctl_tree_new()))
		return 1;
	for (int rep = 0; rep < reps; rep++) {
		for (int t = 0; t < 2; t++) {
			int n = t ? ncpu : 1;
			double a, b;

			if (rep % 2) { /* alternate which lock goes first */
				a = measure(1, n);
				b = measure(0, n);
			} else {
				b = measure(0, n);
				a = measure(1, n);
			}
			ratio[t][rep] = a / b;
			printf("repetition %d, %d thread%s: entry lock word %.2f ns, pthread rwlock %.2f ns per read pair (x%.2f)\n",
			       rep + 1, n, n > 1 ? "s" : "", a, b, a / b);
		}
	}
	printf("summary entry_lock_read_vs_rwlock %.2f # CPU per read lock+unlock, one thread; median of %d\n",
	       median(ratio[0], reps), reps);
	printf("summary entry_lock_read_vs_rwlock_%dt %.2f # the same, %d threads on one entry\n", ncpu,
	       median(ratio[1], reps), ncpu);
	sysctl_tree_free(entry.header->tree);
	free(entry.header);
	pthread_rwlock_destroy(&rwlock);
	return 0;
}
