/*
 * Stress: reader threads and writer threads on one variable. Every read is
 * checked to be exactly one written value, whole and NUL-terminated, and,
 * per writer, never older than one seen before. At the end no update is
 * lost (generation == writes, final value == the last one published) and,
 * after the barrier, every buffer allocated was freed.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rcustring/rcustring.h"

#define MAXLEN 64
#define MAX_WRITERS 64

static struct rcustring var;
static int nwriters = 4, nreaders = 4;
static long writes_per_writer = 20000;
static int writers_done;
static long bad_reads;
static long last_writer = -1; /* written under the variable's writer lock */

/* Value k of writer w: a header naming it, then a pattern of varying length. */
static void make_value(char *buf, int w, long k)
{
	int n = snprintf(buf, MAXLEN, "w%02d-k%08ld-", w, k);
	size_t len = (size_t)n + (size_t)(k * 7 + w) % (MAXLEN - (size_t)n);

	for (size_t i = (size_t)n; i < len; i++)
		buf[i] = (char)('a' + (size_t)(w + k + (long)i) % 26);
	buf[len] = '\0';
}

/* Returns the writer of @v (or MAX_WRITERS for the default), -1 if torn. */
static int check_value(const char *v, long *k)
{
	char want[MAXLEN];
	int w;

	if (memchr(v, '\0', MAXLEN) == NULL)
		return -1;
	if (strcmp(v, "initial") == 0) {
		*k = -1;
		return MAX_WRITERS;
	}
	if (sscanf(v, "w%2d-k%8ld-", &w, k) != 2 || w < 0 || w >= nwriters)
		return -1;
	make_value(want, w, *k);
	return strcmp(v, want) == 0 ? w : -1;
}

static void *reader(void *arg)
{
	long seen[MAX_WRITERS + 1], reads = 0, bad = 0, k;
	char buf[MAXLEN];
	int done, w;

	(void)arg;
	for (int i = 0; i <= MAX_WRITERS; i++)
		seen[i] = -1;
	do {
		done = __atomic_load_n(&writers_done, __ATOMIC_ACQUIRE);
		for (int kind = 0; kind < 3; kind++) {
			char *dup = NULL;

			if (kind == 0) { /* in place, no copy */
				rcustring_read_lock();
				w = check_value(rcustring_dereference(&var), &k);
				rcustring_read_unlock();
			} else if (kind == 1) { /* copy into a buffer */
				w = rcustring_copy(&var, buf, sizeof(buf)) < 0 ? -1 : check_value(buf, &k);
			} else { /* heap copy */
				dup = rcustring_dup(&var);
				w = dup ? check_value(dup, &k) : -1;
				free(dup);
			}
			reads++;
			if (w < 0 || k < seen[w]) {
				bad++;
				continue;
			}
			seen[w] = k;
		}
	} while (!done);
	__atomic_add_fetch(&bad_reads, bad, __ATOMIC_RELAXED);
	return (void *)reads;
}

static void *writer(void *arg)
{
	int w = (int)(long)arg;
	char value[MAXLEN];

	for (long k = 0; k < writes_per_writer; k++) {
		make_value(value, w, k);
		if (k % 2 == 0 && k != writes_per_writer - 1) {
			if (rcustring_set(&var, value) != 0)
				abort();
			continue;
		}
		/* Odd writes and the last one go through the edit form, which
		 * also records who published last while holding the lock. */
		struct rcustring_edit e;
		if (rcustring_edit_begin(&var, &e) != 0)
			abort();
		strcpy(e.buf, value);
		last_writer = w;
		if (rcustring_edit_commit(&e) != 0)
			abort();
	}
	return NULL;
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [--readers N] [--writers N] [--writes N-per-writer]\n", prog);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "readers", required_argument, NULL, 'r' },
		{ "writers", required_argument, NULL, 'w' },
		{ "writes", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	pthread_t rt[256], wt[MAX_WRITERS];
	struct rcustring_stats before, after;
	long total_reads = 0, k;
	char final[MAXLEN], want[MAXLEN];
	int opt, failed = 0;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'r')
			nreaders = atoi(optarg);
		else if (opt == 'w')
			nwriters = atoi(optarg);
		else if (opt == 'n')
			writes_per_writer = atol(optarg);
		else
			usage(argv[0]);
	}
	if (nreaders < 1 || nreaders > 256 || nwriters < 1 || nwriters > MAX_WRITERS ||
	    writes_per_writer < 1)
		usage(argv[0]);

	rcustring_get_stats(&before);
	if (rcustring_init(&var, MAXLEN, "initial") != 0)
		return 1;
	for (int i = 0; i < nreaders; i++)
		pthread_create(&rt[i], NULL, reader, NULL);
	for (int i = 0; i < nwriters; i++)
		pthread_create(&wt[i], NULL, writer, (void *)(long)i);
	for (int i = 0; i < nwriters; i++)
		pthread_join(wt[i], NULL);
	__atomic_store_n(&writers_done, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < nreaders; i++) {
		void *r;
		pthread_join(rt[i], &r);
		total_reads += (long)r;
	}

	if (bad_reads) {
		fprintf(stderr, "FAIL: %ld torn, unknown or out-of-order reads\n", bad_reads);
		failed = 1;
	}
	if (rcustring_generation(&var) != (uint64_t)(nwriters * writes_per_writer)) {
		fprintf(stderr, "FAIL: generation %llu, want %ld\n",
			(unsigned long long)rcustring_generation(&var), nwriters * writes_per_writer);
		failed = 1;
	}
	make_value(want, (int)last_writer, writes_per_writer - 1);
	if (rcustring_copy(&var, final, sizeof(final)) < 0 || strcmp(final, want) != 0 ||
	    check_value(final, &k) != last_writer) {
		fprintf(stderr, "FAIL: final value '%s', want '%s'\n", final, want);
		failed = 1;
	}
	rcustring_destroy(&var);
	rcustring_barrier();
	rcustring_get_stats(&after);
	if (after.allocated - before.allocated != after.freed - before.freed || after.pending != 0) {
		fprintf(stderr, "FAIL: allocated %llu, freed %llu, pending %llu\n",
			(unsigned long long)(after.allocated - before.allocated),
			(unsigned long long)(after.freed - before.freed),
			(unsigned long long)after.pending);
		failed = 1;
	}
	printf("stress-core: readers=%d writers=%d reads=%ld writes=%ld bad=%ld allocated=%llu "
	       "freed=%llu pending_peak=%llu throttled=%llu\n",
	       nreaders, nwriters, total_reads, nwriters * writes_per_writer, bad_reads,
	       (unsigned long long)(after.allocated - before.allocated),
	       (unsigned long long)(after.freed - before.freed),
	       (unsigned long long)after.pending_peak, (unsigned long long)after.throttled);
	return failed;
}
