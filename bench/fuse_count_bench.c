/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuse_count_overhead: what counting FUSE requests (fuse_count.c) costs a
 * mount's requests, measured side by side in one run. One mount in this
 * process (root, a private mount namespace), T threads doing one kind of
 * request as fast as they can: "read" (pread of an open file: one READ,
 * direct_io) and "open" (open and close: OPEN, then RELEASE). GETATTR is
 * not measured: the kernel answers stat() from its attribute cache for
 * attr_timeout (1 s), so it would time the cache. Rounds alternate the
 * mount in the counted list (every request looked up and counted) and out
 * of it (the request still passes the counting read, whose list walk then
 * finds nothing: what is left out is the lookup's match and the two atomic
 * adds), in both orders; the figures are counted / uncounted ops/s
 * (1.00: free; below: the share counting costs) and counted / uncounted
 * CPU time of the process per op (1.00: free; above: the cost), each the
 * median of the rounds. On a loaded machine the ops/s of one round swing
 * by more than the whole cost; CPU per op is the steadier of the two.
 * Built against the static library: the list is internal.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include "fuse_fs.h"

#define MAX_THREADS 64
#define MAX_ROUNDS 99

enum kind { KIND_READ, KIND_OPEN };

struct load {
	const char *file;
	enum kind kind;
	int *stop;
	unsigned long ops;
	int failed;
};

static void *loader(void *arg)
{
	struct load *l = arg;
	char buf[64];
	int fd = l->kind == KIND_READ ? open(l->file, O_RDONLY) : -1;

	if (l->kind == KIND_READ && fd < 0)
		l->failed = 1;
	while (!l->failed && !__atomic_load_n(l->stop, __ATOMIC_RELAXED)) {
		if (l->kind == KIND_READ) {
			l->failed = pread(fd, buf, sizeof(buf), 0) <= 0;
		} else {
			int f = open(l->file, O_RDONLY);

			l->failed = f < 0;
			if (f >= 0)
				close(f);
		}
		l->ops++;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

struct result {
	double ops_s;  /* ops per second of wall time */
	double cpu_us; /* CPU time of the whole process (loaders and FUSE workers) per op */
};

static double secs(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* @threads threads doing @kind for @seconds; ops_s -1 on failure. */
static struct result measure(const char *file, enum kind kind, int threads, double seconds)
{
	struct load l[MAX_THREADS];
	pthread_t t[MAX_THREADS];
	struct timespec a, b, ca, cb, pause = { (time_t)seconds,
						(long)((seconds - (double)(time_t)seconds) * 1e9) };
	struct result res = { -1, -1 };
	unsigned long ops = 0;
	int stop = 0, failed = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
	for (int i = 0; i < threads; i++) {
		l[i] = (struct load){ .file = file, .kind = kind, .stop = &stop };
		if (pthread_create(&t[i], NULL, loader, &l[i]) != 0)
			return res;
	}
	nanosleep(&pause, NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		ops += l[i].ops;
		failed |= l[i].failed;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
	if (!failed && ops) {
		res.ops_s = (double)ops / secs(&a, &b);
		res.cpu_us = secs(&ca, &cb) * 1e6 / (double)ops;
	}
	return res;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void set_counted(struct sysctl_fuse *fs, int *counted, int want)
{
	if (*counted == want)
		return;
	if (want)
		rcs_fuse_counted_add(fs);
	else
		rcs_fuse_counted_remove(fs);
	*counted = want;
}

/* The median of @n values (sorted in place). */
static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return v[n / 2];
}

/* Rounds of @kind, counted and uncounted in turn; prints them and the summaries. */
static int compare(struct sysctl_fuse *fs, const char *file, enum kind kind, int threads,
		   double seconds, int rounds)
{
	const char *name = kind == KIND_READ ? "read" : "open";
	double ops[MAX_ROUNDS], cpu[MAX_ROUNDS];
	int counted = 1;

	for (int r = 0; r < rounds; r++) {
		struct result with, without;

		/* Both orders, so that a drift of the machine favours neither. */
		set_counted(fs, &counted, r % 2 == 0);
		if (r % 2 == 0)
			with = measure(file, kind, threads, seconds);
		else
			without = measure(file, kind, threads, seconds);
		set_counted(fs, &counted, r % 2 != 0);
		if (r % 2 == 0)
			without = measure(file, kind, threads, seconds);
		else
			with = measure(file, kind, threads, seconds);
		if (with.ops_s <= 0 || without.ops_s <= 0) {
			fprintf(stderr, "fuse-count-bench: %s failed: %s\n", name, strerror(errno));
			set_counted(fs, &counted, 1);
			return 1;
		}
		ops[r] = with.ops_s / without.ops_s;
		cpu[r] = with.cpu_us / without.cpu_us;
		printf("round %d, %d thread%s, %s: counted %.0f ops/s %.2f us CPU/op, uncounted %.0f "
		       "ops/s %.2f us CPU/op (ops x%.3f, CPU x%.3f)\n", r + 1, threads,
		       threads == 1 ? "" : "s", name, with.ops_s, with.cpu_us, without.ops_s,
		       without.cpu_us, ops[r], cpu[r]);
	}
	set_counted(fs, &counted, 1);
	printf("summary fuse_count_overhead_%s %.3f # counted / uncounted %s ops/s, %d thread(s); "
	       "median of %d\n", name, median(ops, rounds), name, threads, rounds);
	printf("summary fuse_count_overhead_%s_cpu %.3f # counted / uncounted CPU per %s "
	       "(process: callers and FUSE workers); median of %d\n", name, median(cpu, rounds),
	       name, rounds);
	return 0;
}

static void *serve(void *fs)
{
	sysctl_fuse_loop(fs);
	return NULL;
}

static int value = 42;
static struct ctl_table table[] = {
	{ "value", &value, sizeof(int), 0644, proc_dointvec, NULL, NULL, "read by the bench" },
};

static int usage(void)
{
	fprintf(stderr, "usage: rcustring-fuse-count-bench [--seconds S] [--rounds 1..%d] "
			"[--threads 1..%d]\n", MAX_ROUNDS, MAX_THREADS);
	return 2;
}

int main(int argc, char **argv)
{
	double seconds = 0.3;
	int rounds = 9, threads = 2, err = 0;
	char dir[] = "/tmp/rcustring-count-bench-XXXXXX", file[128];
	struct sysctl_table_header *h;
	struct sysctl_tree *tree;
	struct sysctl_fuse *fs;
	pthread_t loop;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--seconds"))
			seconds = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--rounds"))
			rounds = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--threads"))
			threads = atoi(argv[i + 1]);
		else
			return usage();
	}
	if (argc % 2 == 0 || seconds <= 0 || rounds < 1 || rounds > MAX_ROUNDS || threads < 1 ||
	    threads > MAX_THREADS)
		return usage();
	/* Before any thread: unshare(CLONE_NEWNS) needs an unshared fs_struct. */
	if (geteuid() != 0 || unshare(CLONE_NEWNS) != 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		printf("skip: fuse_count_overhead needs root and a private mount namespace\n");
		return 0;
	}
	tree = sysctl_tree_new();
	if (!tree || !mkdtemp(dir) || sysctl_register_table(tree, "t", table, 1, &h) != 0 ||
	    (err = sysctl_fuse_mount(tree, dir, &fs)) != 0) {
		printf("skip: fuse_count_overhead cannot mount: %s\n", strerror(err ? -err : errno));
		return 0;
	}
	snprintf(file, sizeof(file), "%s/t/value", dir);
	pthread_create(&loop, NULL, serve, fs);
	measure(file, KIND_READ, threads, 0.1); /* INIT, the first LOOKUP, the workers started */
	err = compare(fs, file, KIND_READ, threads, seconds, rounds) ||
	      compare(fs, file, KIND_OPEN, threads, seconds, rounds);
	sysctl_fuse_exit(fs);
	pthread_join(loop, NULL);
	sysctl_fuse_unmount(fs);
	sysctl_unregister_table(h);
	sysctl_tree_free(tree);
	rmdir(dir);
	return err;
}
