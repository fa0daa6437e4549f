/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcustring-file-loop: open, read to end of file and close each FILE in
 * turn, COUNT times, as `cat` does for one small file (reads of 128 KiB
 * until read() returns 0, and an fstat first, as coreutils cat does), and
 * print "<FILE> <wall ns per file> <CPU ns per file>" per file. Rounds
 * alternate the files (FILE1, FILE2, ... then again), ROUNDS of them, so a
 * burst of load falls on every file alike; each line is the median round.
 *   rcustring-file-loop [--no-fstat] [--read-size N] COUNT ROUNDS FILE...
 * --no-fstat leaves the fstat out and --read-size reads N bytes a call:
 * fuse_vs_kernel.sh counts the FUSE requests each costs.
 * Exit status 1 when a file cannot be read (the line names it).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILES 8
#define MAX_ROUNDS 51

static long long now_ns(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int no_fstat;

static int cat_once(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	if (fd < 0 || (!no_fstat && fstat(fd, &st) < 0))
		return -1;
	while ((n = read(fd, buf, size)) > 0)
		;
	close(fd);
	return n < 0 ? -1 : 0;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	static long long wall[MAX_FILES][MAX_ROUNDS], cpu[MAX_FILES][MAX_ROUNDS];
	static char buf[128 * 1024];
	long count, rounds, size = sizeof(buf);
	int nfiles;

	for (; argc > 1 && argv[1][0] == '-'; argc--, argv++) {
		if (!strcmp(argv[1], "--no-fstat")) {
			no_fstat = 1;
		} else if (!strcmp(argv[1], "--read-size") && argc > 2) {
			size = strtol(argv[2], NULL, 10);
			argc--, argv++;
		} else {
			size = 0;
			break;
		}
	}
	count = argc > 3 ? strtol(argv[1], NULL, 10) : 0;
	rounds = argc > 3 ? strtol(argv[2], NULL, 10) : 0;
	nfiles = argc - 3;
	if (count < 1 || rounds < 1 || rounds > MAX_ROUNDS || nfiles < 1 || nfiles > MAX_FILES ||
	    size < 1 || size > (long)sizeof(buf)) {
		fprintf(stderr,
			"usage: rcustring-file-loop [--no-fstat] [--read-size 1-%zu] COUNT "
			"ROUNDS(1-%d) FILE...(1-%d)\n",
			sizeof(buf), MAX_ROUNDS, MAX_FILES);
		return 2;
	}
	for (long r = 0; r < rounds; r++)
		for (int k = 0; k < nfiles; k++) {
			int f = (int)((k + r) % nfiles); /* the order rotates */
			long long w0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);

			for (long i = 0; i < count; i++)
				if (cat_once(argv[3 + f], buf, (size_t)size)) {
					fprintf(stderr, "rcustring-file-loop: %s: %s\n", argv[3 + f],
						strerror(errno));
					return 1;
				}
			wall[f][r] = (now_ns(CLOCK_MONOTONIC) - w0) / count;
			cpu[f][r] = (now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0) / count;
		}
	for (int f = 0; f < nfiles; f++) {
		/* Per-round figures first (ratios are taken round by round), then the medians. */
		printf("%s", argv[3 + f]);
		for (long r = 0; r < rounds; r++)
			printf(" %lld", wall[f][r]);
		qsort(wall[f], (size_t)rounds, sizeof(wall[f][0]), cmp_ll);
		qsort(cpu[f], (size_t)rounds, sizeof(cpu[f][0]), cmp_ll);
		printf(" median %lld cpu %lld\n", wall[f][rounds / 2], cpu[f][rounds / 2]);
	}
	return 0;
}
