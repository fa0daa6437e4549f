/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The FUSE request counts (sysctl_fuse_get_stats()) stay exact under
 * concurrent requests, on two mounts served at once by one process: four
 * threads per mount open, read and close their mount's file COUNT_ROUNDS
 * times each, so each mount's libfuse workers count at the same time as the
 * other mount's. Each mount must count exactly its own opens, reads and
 * releases (open, read and release are never answered from a cache:
 * direct_io, and every open is a request), and its total must be the sum
 * of its kinds. Counting that lost an update, or put a request on the
 * wrong mount, fails here. Runs as root in a private mount namespace, like
 * test_fuse_fs.c; skipped elsewhere (failed under CI as root).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cmocka.h>

#include <rcustring/sysctl_fuse.h>

#define THREADS_PER_MOUNT 4
#define COUNT_ROUNDS 500
#define MOUNTS 2

static int can_mount;
static int values[MOUNTS] = { 11, 22 };
static struct ctl_table tables[MOUNTS][1] = {
	{ { "value", &values[0], sizeof(int), 0644, proc_dointvec, NULL, NULL, "first" } },
	{ { "value", &values[1], sizeof(int), 0644, proc_dointvec, NULL, NULL, "second" } },
};

struct mount {
	struct sysctl_tree *tree;
	struct sysctl_table_header *h;
	struct sysctl_fuse *fs;
	pthread_t loop;
	char dir[64];
	char file[128];
};

struct worker {
	const char *file;
	int rounds;
	pthread_barrier_t *start; /* NULL: none */
	int failures;
};

static void *loop_main(void *arg)
{
	sysctl_fuse_loop(arg);
	return NULL;
}

static void mount_one(struct mount *m, int i)
{
	strcpy(m->dir, "/tmp/rcustring-count-XXXXXX");
	assert_non_null(mkdtemp(m->dir));
	snprintf(m->file, sizeof(m->file), "%s/t/value", m->dir);
	m->tree = sysctl_tree_new();
	assert_non_null(m->tree);
	assert_int_equal(sysctl_register_table(m->tree, "t", tables[i], 1, &m->h), 0);
	assert_int_equal(sysctl_fuse_mount(m->tree, m->dir, &m->fs), 0);
	assert_int_equal(pthread_create(&m->loop, NULL, loop_main, m->fs), 0);
}

static void unmount_one(struct mount *m)
{
	sysctl_fuse_exit(m->fs);
	pthread_join(m->loop, NULL);
	sysctl_fuse_unmount(m->fs);
	sysctl_unregister_table(m->h);
	sysctl_tree_free(m->tree);
	rmdir(m->dir);
}

/* @rounds times: open, one read (one READ request: direct_io), close. */
static void *work(void *arg)
{
	struct worker *w = arg;
	char buf[64];

	if (w->start)
		pthread_barrier_wait(w->start);
	for (int i = 0; i < w->rounds; i++) {
		int fd = open(w->file, O_RDONLY);

		if (fd < 0 || pread(fd, buf, sizeof(buf), 0) <= 0)
			w->failures++;
		if (fd >= 0)
			close(fd);
	}
	return NULL;
}

static uint64_t kinds_sum(const struct sysctl_fuse_stats *s)
{
	return s->lookup + s->getattr + s->access + s->open + s->read + s->write + s->flush +
	       s->release + s->opendir + s->readdir + s->readdirplus + s->releasedir + s->forget +
	       s->poll;
}

/*
 * @m's counters at one moment: they are read one by one, so a request the
 * kernel sends meanwhile (a FORGET) could be in the total and not in its
 * kind. Two reads in a row that agree are a moment.
 */
static void stats_at_rest(struct mount *m, struct sysctl_fuse_stats *out)
{
	struct sysctl_fuse_stats again;

	assert_int_equal(sysctl_fuse_get_stats(m->fs, out), 0);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(sysctl_fuse_get_stats(m->fs, &again), 0);
		if (!memcmp(out, &again, sizeof(again)))
			return;
		*out = again;
		usleep(1000);
	}
}

/* RELEASE follows close() in the background: until @m has @n more (hang guard 10 s). */
static void wait_releases(struct mount *m, const struct sysctl_fuse_stats *before, uint64_t n,
			  struct sysctl_fuse_stats *after)
{
	for (int i = 0; i < 1000; i++) {
		stats_at_rest(m, after);
		if (after->release - before->release >= n)
			return;
		usleep(10000);
	}
}

static void test_counts_exact(void **state)
{
	struct mount m[MOUNTS];
	struct worker w[MOUNTS * THREADS_PER_MOUNT];
	pthread_t t[MOUNTS * THREADS_PER_MOUNT];
	struct sysctl_fuse_stats a[MOUNTS], b[MOUNTS];
	const uint64_t each = (uint64_t)THREADS_PER_MOUNT * COUNT_ROUNDS;
	pthread_barrier_t start;

	(void)state;
	if (!can_mount)
		skip();
	for (int i = 0; i < MOUNTS; i++)
		mount_one(&m[i], i);
	assert_int_equal(pthread_barrier_init(&start, NULL, MOUNTS * THREADS_PER_MOUNT), 0);
	/* One round each first: the mount's INIT and its first LOOKUP come before the counts. */
	for (int i = 0; i < MOUNTS; i++) {
		struct sysctl_fuse_stats none = { 0 };
		struct worker once = { .file = m[i].file, .rounds = 1 };

		work(&once);
		assert_int_equal(once.failures, 0);
		wait_releases(&m[i], &none, 1, &a[i]);
	}
	for (int i = 0; i < MOUNTS * THREADS_PER_MOUNT; i++) {
		w[i] = (struct worker){ .file = m[i % MOUNTS].file, .rounds = COUNT_ROUNDS,
					.start = &start };
		assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	for (int i = 0; i < MOUNTS * THREADS_PER_MOUNT; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].failures, 0);
	}
	for (int i = 0; i < MOUNTS; i++) {
		uint64_t all, kinds;

		wait_releases(&m[i], &a[i], each, &b[i]);
		all = b[i].requests - a[i].requests;
		kinds = kinds_sum(&b[i]) - kinds_sum(&a[i]);
		print_message("mount %d: %llu requests (open %llu read %llu release %llu lookup %llu "
			      "getattr %llu)\n", i, (unsigned long long)all,
			      (unsigned long long)(b[i].open - a[i].open),
			      (unsigned long long)(b[i].read - a[i].read),
			      (unsigned long long)(b[i].release - a[i].release),
			      (unsigned long long)(b[i].lookup - a[i].lookup),
			      (unsigned long long)(b[i].getattr - a[i].getattr));
		assert_int_equal(b[i].open - a[i].open, each);
		assert_int_equal(b[i].read - a[i].read, each);
		assert_int_equal(b[i].release - a[i].release, each);
		assert_int_equal(all, kinds);
	}
	pthread_barrier_destroy(&start);
	for (int i = 0; i < MOUNTS; i++)
		unmount_one(&m[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_exact),
	};
	const char *ci = getenv("CI");

	/* Before any thread: unshare(CLONE_NEWNS) needs an unshared fs_struct. */
	if (geteuid() == 0 && access("/dev/fuse", R_OK | W_OK) == 0 &&
	    unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
		can_mount = 1;
	if (!can_mount) {
		if (ci && strcmp(ci, "true") == 0 && geteuid() == 0) {
			fprintf(stderr, "FAIL: cannot mount FUSE as root under CI\n");
			return 1;
		}
		fprintf(stderr, "mount tests skipped: needs root, /dev/fuse and a mount namespace\n");
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
