/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Stress: reader threads and writer threads on one variable. Every read is
 * checked to be exactly one written value, whole (every byte and the NUL
 * recomputed) and NUL-terminated, and, per writer, never older than one
 * seen before. At the end no update is lost (generation == writes, final
 * value == the last one published) and, after the barrier, every buffer
 * allocated was freed.
 *
 * Tear detection: the values a read could mix differ in length and in
 * every byte, so any mix of two of them, byte-wise or a head and a tail, is
 * neither. Each value is written in one of NBANKS disjoint byte ranges (its
 * bank), every byte of it: a writer's consecutive values are in different
 * banks, and so are the values of up to NBANKS writers at the same step.
 * No bank holds NUL or RCUSTRING_POISON, so a value freed under a reader
 * (debug builds poison it) is never read as valid.
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
#define NBANKS 15 /* banks of 16 byte values: 0x01..0xf0 */
#define HEAD 10   /* 2 digits of writer, 8 of step */

_Static_assert(NBANKS * 16 < RCUSTRING_POISON, "banks must not hold the poison byte");

static struct rcustring var;
static int nwriters = 4, nreaders = 4;
static long writes_per_writer = 20000;
static int writers_done;
static long bad_reads;
static long last_writer = -1; /* written under the variable's writer lock */

static unsigned char digit_in_bank(unsigned bank, unsigned d)
{
	return (unsigned char)(0x01 + 16 * bank + d);
}

static unsigned value_bank(int w, long k)
{
	return (unsigned)((w + k) % NBANKS);
}

/* Length of value k of writer w, NUL excluded: HEAD .. MAXLEN - 2. */
static size_t value_len(int w, long k)
{
	return HEAD + (size_t)(k * 7 + w * 3) % (MAXLEN - HEAD - 1);
}

/* Value k of writer w: its identity, then a pattern, all in its bank. */
static void make_value(char *buf, int w, long k)
{
	unsigned bank = value_bank(w, k);
	size_t len = value_len(w, k), i;

	for (i = 0; i < 2; i++)
		buf[i] = (char)digit_in_bank(bank, ((unsigned)w >> (4 * (1 - i))) & 15);
	for (i = 0; i < 8; i++)
		buf[2 + i] = (char)digit_in_bank(bank, ((unsigned long)k >> (4 * (7 - i))) & 15);
	for (i = HEAD; i < len; i++)
		buf[i] = (char)digit_in_bank(bank, (unsigned)(w * 7 + k * 3 + (long)i) % 16);
	buf[len] = '\0';
}

/* Returns the writer of @v (or MAX_WRITERS for the default), -1 if torn. */
static int check_value(const char *v, long *k)
{
	const unsigned char *u = (const unsigned char *)v;
	char want[MAXLEN];
	size_t len = strnlen(v, MAXLEN);
	unsigned bank, w = 0;
	unsigned long step = 0;

	if (len == MAXLEN)
		return -1;
	if (strcmp(v, "initial") == 0) {
		*k = -1;
		return MAX_WRITERS;
	}
	if (len < HEAD || u[0] == 0 || u[0] > NBANKS * 16)
		return -1;
	bank = (u[0] - 1u) / 16;
	for (size_t i = 0; i < HEAD; i++) {
		unsigned d = u[i] - digit_in_bank(bank, 0);

		if (u[i] < digit_in_bank(bank, 0) || d > 15)
			return -1;
		if (i < 2)
			w = w << 4 | d;
		else
			step = step << 4 | d;
	}
	if (w >= (unsigned)nwriters || value_bank((int)w, (long)step) != bank)
		return -1;
	*k = (long)step;
	make_value(want, (int)w, *k);
	/* The whole value, NUL included: same length, every byte. */
	return len == value_len((int)w, *k) && memcmp(v, want, len + 1) == 0 ? (int)w : -1;
}

/*
 * The generator's promise, checked before the run: each value reads back
 * as itself, and differs in length and in every byte from the writer's
 * next value and from the other writers' values at the same step.
 */
static int values_differ_everywhere(void)
{
	char a[MAXLEN], b[MAXLEN];
	long k2;

	for (int w = 0; w < nwriters; w++) {
		for (long k = 0; k < 2000 && k < writes_per_writer; k++) {
			make_value(a, w, k);
			if (check_value(a, &k2) != w || k2 != k)
				return 0;
			for (int w2 = w; w2 < nwriters && w2 < w + NBANKS; w2++) {
				make_value(b, w2, w2 == w ? k + 1 : k);
				if (strlen(a) == strlen(b))
					return 0;
				for (size_t i = 0; a[i] && b[i]; i++)
					if (a[i] == b[i])
						return 0;
			}
		}
	}
	return 1;
}

/*
 * An in-place read, checked twice. A lingering one holds on to its value
 * while writers replace it (readers may take their time in a section) and
 * checks it again and again, until more buffers have been freed than were
 * pending when it entered: that can only happen if versions retired during
 * its section were freed, its own value among the first of them (frees run
 * in the order of retirement). Then one more check sees the poison debug
 * builds write, or the allocator's reuse, as a torn read. With a working
 * read lock that never happens, and the linger ends after a bounded number
 * of checks or when the writers are done.
 */
static int read_in_place(long *k, int linger)
{
	struct rcustring_stats entry, now;
	int more = linger ? 1000000 : 1, w;
	const char *p;
	long k2;

	rcustring_read_lock();
	if (linger)
		rcustring_get_stats(&entry);
	p = rcustring_dereference(&var);
	w = check_value(p, k);
	for (int again = 0; w >= 0 && again < more; again++) {
		if (check_value(p, &k2) != w || k2 != *k)
			w = -1;
		if (linger && again % 64 == 0) {
			if (__atomic_load_n(&writers_done, __ATOMIC_ACQUIRE))
				break; /* no writer left to free it */
			rcustring_get_stats(&now);
			if (now.freed - entry.freed > entry.pending + 1 && more > again + 2)
				more = again + 2; /* one more check, then leave */
		}
	}
	rcustring_read_unlock();
	return w;
}

/* arg nonzero: the lingering reader, in-place reads only. */
static void *reader(void *arg)
{
	long seen[MAX_WRITERS + 1], reads = 0, bad = 0, k;
	int linger = arg != NULL;
	char buf[MAXLEN];
	int done, w;

	for (int i = 0; i <= MAX_WRITERS; i++)
		seen[i] = -1;
	do {
		done = __atomic_load_n(&writers_done, __ATOMIC_ACQUIRE);
		for (int kind = 0; kind < (linger ? 1 : 3); kind++) {
			char *dup = NULL;

			if (kind == 0) { /* in place, no copy */
				w = read_in_place(&k, linger);
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
	pthread_t rt[257], wt[MAX_WRITERS];
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
	    writes_per_writer < 1 || writes_per_writer > 0xffffffffL)
		usage(argv[0]);

	if (!values_differ_everywhere()) {
		fprintf(stderr, "FAIL: test values do not differ in length and every byte\n");
		return 1;
	}
	rcustring_get_stats(&before);
	if (rcustring_init(&var, MAXLEN, "initial") != 0)
		return 1;
	/* The readers asked for, and one lingering reader. */
	for (int i = 0; i <= nreaders; i++)
		pthread_create(&rt[i], NULL, reader, i == nreaders ? (void *)1 : NULL);
	for (int i = 0; i < nwriters; i++)
		pthread_create(&wt[i], NULL, writer, (void *)(long)i);
	for (int i = 0; i < nwriters; i++)
		pthread_join(wt[i], NULL);
	__atomic_store_n(&writers_done, 1, __ATOMIC_RELEASE);
	for (int i = 0; i <= nreaders; i++) {
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
