/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tunable-readers: reader threads use a helper path while a writer keeps
 * changing it. Every read is checked to be one whole written value.
 *
 *   tunable-readers [SECONDS]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rcustring/rcustring.h>

#define READERS 4

static const char *const paths[] = { "/sbin/modprobe", "/usr/local/sbin/modprobe-wrapper",
				     "/opt/kmod/bin/modprobe" };
#define NPATHS (sizeof(paths) / sizeof(paths[0]))

static struct rcustring modprobe_path = RCUSTRING_INITIALIZER(256, "/sbin/modprobe");
static volatile int stop;

struct reader_stats {
	long seen[NPATHS];
	long torn;
};

static int which_path(const char *p)
{
	for (size_t i = 0; i < NPATHS; i++)
		if (strcmp(p, paths[i]) == 0)
			return (int)i;
	return -1;
}

static void count(struct reader_stats *st, const char *p)
{
	int i = which_path(p);

	if (i < 0)
		st->torn++;
	else
		st->seen[i]++;
}

static void *reader(void *arg)
{
	struct reader_stats *st = arg;
	char copy[256];

	while (!stop) {
		/* A reader that does not sleep uses the value in place... */
		rcustring_read_lock();
		count(st, rcustring_dereference(&modprobe_path));
		rcustring_read_unlock();
		/* ...one that will sleep (say, to exec it) copies it first. */
		if (rcustring_copy(&modprobe_path, copy, sizeof(copy)) < 0)
			st->torn++;
		else
			count(st, copy);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct reader_stats stats[READERS] = { 0 };
	pthread_t threads[READERS];
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	long writes = 0, reads = 0, torn = 0, per_path[NPATHS] = { 0 };
	struct timespec start, now;

	printf("tunable-readers: %d readers use kernel.modprobe-style path while a writer\n"
	       "changes it every millisecond for %.1f s\n", READERS, seconds);
	for (int i = 0; i < READERS; i++)
		pthread_create(&threads[i], NULL, reader, &stats[i]);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		int err = rcustring_set(&modprobe_path, paths[(writes + 1) % NPATHS]);

		if (err) {
			fprintf(stderr, "tunable-readers: write failed: %s\n", strerror(-err));
			return 1;
		}
		writes++;
		usleep(1000);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	stop = 1;
	for (int i = 0; i < READERS; i++) {
		pthread_join(threads[i], NULL);
		for (size_t p = 0; p < NPATHS; p++) {
			per_path[p] += stats[i].seen[p];
			reads += stats[i].seen[p];
		}
		torn += stats[i].torn;
		reads += stats[i].torn;
	}
	for (size_t p = 0; p < NPATHS; p++)
		printf("  %-34s seen %ld times\n", paths[p], per_path[p]);
	uint64_t generation = rcustring_generation(&modprobe_path);

	rcustring_destroy(&modprobe_path);
	rcustring_barrier();
	printf("tunable-readers: reads=%ld writes=%ld generation=%llu torn=%ld\n", reads, writes,
	       (unsigned long long)generation, torn);
	return torn == 0 ? 0 : 1;
}
