/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The FUSE front end mounted inside this process (in a private mount
 * namespace, as root): two polls of one open file register one change
 * callback; files still open at unmount lose their callbacks; mount
 * failures keep their errno; a listing read the way procps' sysctl -a
 * reads it costs a bounded number of requests per entry; touch (utimensat)
 * is allowed as on /proc/sys and changes nothing; an open file changed by
 * another writer reads the new value after lseek(0) or a poll() wake-up.
 *
 * sysctl_entry_on_change() and sysctl_callback_remove() are wrapped at link
 * time (-Wl,--wrap) to count registrations and removals, and to hold a
 * registering poll until a second one arrives, so that two polls of one
 * file meet inside the registration every run instead of by chance. With
 * more registrations than removals a later write runs a callback on a freed
 * open file, which the ASan build reports as a heap-use-after-free.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <grp.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>
#include <sys/syscall.h>

#include <cmocka.h>

#include <rcustring/sysctl_fuse.h>

/* ---- counting wrappers ---- */

int __real_sysctl_entry_on_change(struct sysctl_entry *e, sysctl_change_fn *fn, void *arg,
				  struct sysctl_callback **out);
void __real_sysctl_callback_remove(struct sysctl_callback *cb);
int __wrap_sysctl_entry_on_change(struct sysctl_entry *e, sysctl_change_fn *fn, void *arg,
				  struct sysctl_callback **out);
void __wrap_sysctl_callback_remove(struct sysctl_callback *cb);

static pthread_mutex_t w_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t w_cond = PTHREAD_COND_INITIALIZER;
static int registered, removed;
static int meet;    /* hold each registration until this many have arrived */
static int arrived; /* registrations since the counters were reset */

static void deadline_in(struct timespec *t, int seconds)
{
	clock_gettime(CLOCK_REALTIME, t);
	t->tv_sec += seconds;
}

int __wrap_sysctl_entry_on_change(struct sysctl_entry *e, sysctl_change_fn *fn, void *arg,
				  struct sysctl_callback **out)
{
	struct timespec deadline;

	pthread_mutex_lock(&w_lock);
	registered++;
	arrived++;
	pthread_cond_broadcast(&w_cond);
	/*
	 * Wait for the other poll. Where registration is serialized the other
	 * poll never comes in; the bound only keeps that case from hanging.
	 */
	deadline_in(&deadline, 2);
	while (arrived < meet && pthread_cond_timedwait(&w_cond, &w_lock, &deadline) == 0)
		;
	pthread_mutex_unlock(&w_lock);
	return __real_sysctl_entry_on_change(e, fn, arg, out);
}

void __wrap_sysctl_callback_remove(struct sysctl_callback *cb)
{
	__real_sysctl_callback_remove(cb);
	pthread_mutex_lock(&w_lock);
	if (cb)
		removed++;
	pthread_cond_broadcast(&w_cond);
	pthread_mutex_unlock(&w_lock);
}

static void reset_counts(int meet_count)
{
	pthread_mutex_lock(&w_lock);
	registered = removed = arrived = 0;
	meet = meet_count;
	pthread_mutex_unlock(&w_lock);
}

static int get_count(int *counter)
{
	int n;

	pthread_mutex_lock(&w_lock);
	n = *counter;
	pthread_mutex_unlock(&w_lock);
	return n;
}

/* The kernel sends a release after close() returns: wait for @n removals (hang guard 10 s). */
static int wait_removed(int n)
{
	struct timespec deadline;
	int got;

	deadline_in(&deadline, 10);
	pthread_mutex_lock(&w_lock);
	while (removed < n && pthread_cond_timedwait(&w_cond, &w_lock, &deadline) == 0)
		;
	got = removed;
	pthread_mutex_unlock(&w_lock);
	return got;
}

/* ---- a tree mounted in this process ---- */

static int can_mount; /* root, /dev/fuse, and a private mount namespace */
static struct rcustring value = RCUSTRING_INITIALIZER(64, "initial");
static struct ctl_table table[] = {
	{ "value", &value, 64, 0644, proc_rcu_string, NULL, NULL, "a string" },
};

struct mounted {
	struct sysctl_tree *tree;
	struct sysctl_table_header *h;
	struct sysctl_fuse *fs;
	pthread_t loop;
	int running; /* the loop thread was started and not joined */
	char dir[64];
	char file[128];
};

static void *loop_main(void *arg)
{
	struct mounted *m = arg;

	sysctl_fuse_loop(m->fs);
	return NULL;
}

static int setup(void **state)
{
	struct mounted *m;

	*state = NULL;
	if (!can_mount)
		return 0;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -1;
	*state = m;
	strcpy(m->dir, "/tmp/rcustring-fuse-XXXXXX");
	if (!mkdtemp(m->dir))
		return -1;
	snprintf(m->file, sizeof(m->file), "%s/t/value", m->dir);
	m->tree = sysctl_tree_new();
	if (!m->tree || sysctl_register_table(m->tree, "t", table, 1, &m->h) != 0)
		return -1;
	if (sysctl_fuse_mount(m->tree, m->dir, &m->fs) != 0)
		return -1;
	if (pthread_create(&m->loop, NULL, loop_main, m) != 0)
		return -1;
	m->running = 1;
	return 0;
}

/* Stop serving and unmount, whatever is still open. */
static void stop(struct mounted *m)
{
	if (m->running) {
		sysctl_fuse_exit(m->fs);
		pthread_join(m->loop, NULL);
		m->running = 0;
	}
	sysctl_fuse_unmount(m->fs);
	m->fs = NULL;
}

static int teardown(void **state)
{
	struct mounted *m = *state;

	if (!m)
		return 0;
	if (m->fs)
		stop(m);
	if (m->h)
		sysctl_unregister_table(m->h);
	sysctl_tree_free(m->tree);
	rmdir(m->dir);
	free(m);
	return 0;
}

static void set_value(struct mounted *m, const char *v)
{
	assert_int_equal(sysctl_set(m->tree, "t/value", v, strlen(v), NULL), 0);
}

/* ---- two polls of one open file at once ---- */

struct poller {
	int fd;
	pthread_barrier_t *start;
};

static void *poll_once(void *arg)
{
	struct poller *p = arg;
	struct pollfd pfd = { .fd = p->fd, .events = POLLPRI };

	pthread_barrier_wait(p->start);
	poll(&pfd, 1, 0);
	return NULL;
}

static void test_concurrent_polls(void **state)
{
	struct mounted *m = *state;
	pthread_barrier_t start;
	pthread_t t[2];
	struct poller p;
	int fd, reg, rem;

	if (!m)
		skip();
	fd = open(m->file, O_RDONLY);
	assert_true(fd >= 0);
	reset_counts(2);
	assert_int_equal(pthread_barrier_init(&start, NULL, 2), 0);
	p.fd = fd;
	p.start = &start;
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, poll_once, &p), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);
	reg = get_count(&registered);
	pthread_mutex_lock(&w_lock);
	meet = 0;
	pthread_mutex_unlock(&w_lock);
	/* Both polls are answered, so the file's callback is registered. */
	assert_true(reg >= 1);
	close(fd);
	rem = wait_removed(1);
	/* A callback left behind by the release would run on the freed file here. */
	set_value(m, "after-release-1");
	set_value(m, "after-release-2");
	print_message("registrations %d, removals at release %d\n", reg, rem);
	assert_int_equal(reg, 1);
	assert_int_equal(rem, reg);
}

/* ---- files still open when the filesystem goes away ---- */

struct waiter {
	int fd;
	pid_t tid;
	pthread_mutex_t lock;
};

static void *poll_blocking(void *arg)
{
	struct waiter *w = arg;
	struct pollfd pfd = { .fd = w->fd, .events = POLLPRI };

	pthread_mutex_lock(&w->lock);
	w->tid = gettid();
	pthread_mutex_unlock(&w->lock);
	/* Woken by the unmount; the bound is a hang guard only. */
	poll(&pfd, 1, 10000);
	return NULL;
}

/*
 * Wait until the waiter sleeps in poll() with the file system's answer in
 * hand (so the file holds the kernel's poll handle): its kernel stack shows
 * the poll sleep and no FUSE request. Returns 0 where the stack cannot be
 * read or within the 10 s hang guard; the test does not depend on it.
 */
static int wait_poll_sleeping(struct waiter *w)
{
	for (int i = 0; i < 1000; i++) {
		char path[64], stack[4096];
		ssize_t n = 0;
		pid_t tid;
		int fd;

		pthread_mutex_lock(&w->lock);
		tid = w->tid;
		pthread_mutex_unlock(&w->lock);
		if (tid) {
			snprintf(path, sizeof(path), "/proc/self/task/%d/stack", (int)tid);
			fd = open(path, O_RDONLY);
			if (fd < 0)
				return 0;
			n = read(fd, stack, sizeof(stack) - 1);
			close(fd);
			if (n < 0)
				return 0;
			stack[n] = '\0';
			if (strstr(stack, "poll_schedule_timeout") && !strstr(stack, "fuse"))
				return 1;
		}
		usleep(10000);
	}
	return 0;
}

static void test_open_at_unmount(void **state)
{
	struct mounted *m = *state;
	struct waiter w = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct pollfd pfd;
	pthread_t waiter;
	int fd, reg, rem, sleeping;

	if (!m)
		skip();
	fd = open(m->file, O_RDONLY);
	assert_true(fd >= 0);
	reset_counts(0);
	pfd = (struct pollfd){ .fd = fd, .events = POLLPRI };
	assert_int_equal(poll(&pfd, 1, 0), 0);
	reg = get_count(&registered);
	assert_int_equal(reg, 1);
	/* A poll that waits leaves the kernel's poll handle with the file too. */
	w.fd = fd;
	assert_int_equal(pthread_create(&waiter, NULL, poll_blocking, &w), 0);
	sleeping = wait_poll_sleeping(&w);
	stop(m); /* fd is still open: the kernel will never release it */
	rem = get_count(&removed);
	/* A callback left registered would notify the session that is gone. */
	set_value(m, "after-unmount-1");
	set_value(m, "after-unmount-2");
	pthread_join(waiter, NULL);
	close(fd);
	print_message("registrations %d, removals at unmount %d (%s)\n", reg, rem,
		      sleeping ? "a poll was waiting" : "no waiting poll seen");
	assert_int_equal(rem, reg);
}

/* ---- an open file reads the current value again, as /proc/sys does ---- */

/* lseek(@fd, 0) and read to EOF in 4-byte reads; the text read, or "" on error. */
static const char *reread(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET) != 0)
		return "";
	while (len + 4 < size && (n = read(fd, buf + len, 4)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	return buf;
}

/* Writes @v through an open file of the mount of its own: another writer than the reader. */
static void write_through_mount(struct mounted *m, const char *v)
{
	int fd = open(m->file, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, v, strlen(v)), (ssize_t)strlen(v));
	assert_int_equal(close(fd), 0);
}

struct change_later {
	struct mounted *m;
	struct waiter *w; /* the poller, to wait for it to sleep */
	const char *value;
	int slept; /* the poll was seen asleep before the change */
	int err;   /* of the change (cmocka asserts only in the test's thread) */
};

static void *change_when_polling(void *arg)
{
	struct change_later *c = arg;

	c->slept = wait_poll_sleeping(c->w); /* the change should wake a poll, not precede it */
	c->err = sysctl_set(c->m->tree, "t/value", c->value, strlen(c->value), NULL);
	return NULL;
}

/*
 * The semantics the front end keeps (sysctl_fuse.h): one open file, read,
 * then changed by another writer; lseek(0) and a read return the new value
 * whole, and a poll() that sleeps wakes on the change and the re-read is
 * the new value. A front end that served each open's first value forever
 * (one inode per value) fails here.
 */
static void test_reread_after_change(void **state)
{
	const char *longer = "a value longer than the first, read 4 bytes at a time";
	struct mounted *m = *state;
	struct waiter w = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct change_later c = { m, &w, "polled", 0, 0 };
	struct pollfd pfd;
	pthread_t changer;
	char buf[128], expect[128];
	struct timespec t0, t1;
	double waited;
	int fd, ready;

	if (!m)
		skip();
	reset_counts(0);
	set_value(m, "old");
	fd = open(m->file, O_RDONLY);
	assert_true(fd >= 0);
	assert_string_equal(reread(fd, buf, sizeof(buf)), "old\n");
	write_through_mount(m, longer);
	snprintf(expect, sizeof(expect), "%s\n", longer);
	assert_string_equal(reread(fd, buf, sizeof(buf)), expect);

	/* poll(): the write since open is reported once; then a poll sleeps until a change. */
	pfd = (struct pollfd){ .fd = fd, .events = POLLPRI };
	assert_int_equal(poll(&pfd, 1, 0), 1);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	pthread_mutex_lock(&w.lock);
	w.tid = gettid();
	pthread_mutex_unlock(&w.lock);
	assert_int_equal(pthread_create(&changer, NULL, change_when_polling, &c), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/*
	 * A hang guard, and the line between woken and timed out: poll(2)
	 * asks the file once more when its time is up, so a poll nobody woke
	 * returns the change too, but only after the full 20 s.
	 */
	ready = poll(&pfd, 1, 20000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_join(changer, NULL);
	assert_int_equal(c.err, 0);
	waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	print_message("poll %s before the change, woke after %.3f s\n",
		      c.slept ? "seen asleep" : "not seen asleep", waited);
	assert_true(waited < 19.0);
	assert_int_equal(ready, 1);
	assert_true(pfd.revents & POLLPRI);
	assert_string_equal(reread(fd, buf, sizeof(buf)), "polled\n");
	close(fd);
}

/* ---- requests per entry of a listing ---- */

#define MANY 400
static int many_data[MANY];
static char many_names[MANY][16];
static struct ctl_table many_table[MANY];

/* Read @path to EOF through one open, as procps does; return the bytes read. */
static ssize_t read_whole(const char *path)
{
	char buf[64];
	ssize_t n, total = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	close(fd);
	return n < 0 ? -1 : total;
}

/*
 * sysctl -a over FUSE: a directory listing, then for each name a stat()
 * and a read to EOF through one open. The least the kernel must send per
 * entry is OPEN, READ (the value), READ (end of file) and RELEASE, since
 * values are never cached. READDIRPLUS hands out names with nodes and
 * attributes, so stat() and open() need no LOOKUP or GETATTR: without it
 * each entry costs a LOOKUP more, over 5 per entry where the bound is 4.5
 * (the half request
 * of slack covers the listing's own requests and entries whose cached
 * names ran out, after 1 s, on a slow machine: a stall can cost at most one
 * request for each entry of the batch it hits, about 25 of the 400 here).
 * Files also say that close() needs no FLUSH (libfuse would otherwise
 * answer the first FLUSH of the mount ENOSYS, which stops the others).
 * Counts, not time.
 */
static void test_listing_requests(void **state)
{
	struct mounted *m = *state;
	struct sysctl_table_header *h;
	struct sysctl_fuse_stats a, b;
	char dir[128], path[512];
	char buf[4096] __attribute__((aligned(8)));
	unsigned long entries = 0, requests;
	long n;
	int fd;

	if (!m)
		skip();
	for (int i = 0; i < MANY; i++) {
		snprintf(many_names[i], sizeof(many_names[i]), "e%04d", i);
		many_table[i] = (struct ctl_table){ many_names[i], &many_data[i], sizeof(int), 0644,
						    proc_dointvec, NULL, NULL, "an int" };
	}
	assert_int_equal(sysctl_register_table(m->tree, "many", many_table, MANY, &h), 0);
	snprintf(dir, sizeof(dir), "%s/many", m->dir);
	assert_int_equal(sysctl_fuse_get_stats(m->fs, &a), 0);
	/*
	 * getdents64 with a one-page buffer, where readdir(3) asks 32 KiB at
	 * a time: the kernel then fetches names a page at a time (about 25 per
	 * READDIRPLUS), so a stall of the machine can let at most that many
	 * cached names run out before they are used.
	 */
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64 *de = (struct dirent64 *)(buf + off);
			struct stat st;

			off += de->d_reclen;
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			assert_int_equal(stat(path, &st), 0);
			assert_true(S_ISREG(st.st_mode));
			assert_int_equal(read_whole(path), 2); /* "0\n" */
			entries++;
		}
	}
	assert_int_equal(n, 0);
	close(fd);
	assert_int_equal(entries, MANY);
	/*
	 * RELEASE and RELEASEDIR are sent in the background: wait for all of
	 * them (hang guard 10 s), so that none is left when the test unmounts.
	 */
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(sysctl_fuse_get_stats(m->fs, &b), 0);
		if (b.release - a.release >= MANY && b.releasedir - a.releasedir >= 1)
			break;
		usleep(10000);
	}
	requests = b.requests - a.requests - (b.forget - a.forget);
	print_message("%lu entries: %lu requests (lookup %lu getattr %lu open %lu read %lu "
		      "flush %lu release %lu readdir %lu readdirplus %lu)\n",
		      entries, requests, (unsigned long)(b.lookup - a.lookup),
		      (unsigned long)(b.getattr - a.getattr), (unsigned long)(b.open - a.open),
		      (unsigned long)(b.read - a.read), (unsigned long)(b.flush - a.flush),
		      (unsigned long)(b.release - a.release), (unsigned long)(b.readdir - a.readdir),
		      (unsigned long)(b.readdirplus - a.readdirplus));
	assert_int_equal(b.open - a.open, MANY);
	assert_int_equal(b.release - a.release, MANY);
	assert_true(requests * 2 <= 9 * entries); /* at most 4.5 per entry */
	assert_true(b.readdirplus - a.readdirplus >= 1);
	assert_int_equal(b.flush - a.flush, 0);
	sysctl_unregister_table(h);
}

/* ---- touch: who may, as on /proc/sys; nothing changes ---- */

static int shared_int = 5, own_int = 6;
static struct ctl_table touch_table[] = {
	{ "shared", &shared_int, sizeof(int), 0666, proc_dointvec, NULL, NULL, "anyone writes" },
	{ "own", &own_int, sizeof(int), 0644, proc_dointvec, NULL, NULL, "root writes" },
};

/* utimensat(@path, @times) as uid and gid 65534: 0 or its errno. */
static int touch_as_nobody(const char *path, const struct timespec *times)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(255);
		_exit(utimensat(AT_FDCWD, path, times, 0) ? errno : 0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static void test_touch(void **state)
{
	const struct timespec given[2] = { { 60, 0 }, { 60, 0 } };
	const struct timespec mtime_now[2] = { { 0, UTIME_OMIT }, { 0, UTIME_NOW } };
	char shared[160], own[160], dir[160], missing[160];
	struct mounted *m = *state;
	struct sysctl_table_header *h;
	struct stat before, after;

	if (!m)
		skip();
	assert_int_equal(sysctl_register_table(m->tree, "touch", touch_table, 2, &h), 0);
	snprintf(shared, sizeof(shared), "%s/touch/shared", m->dir);
	snprintf(own, sizeof(own), "%s/touch/own", m->dir);
	snprintf(dir, sizeof(dir), "%s/touch", m->dir);
	snprintf(missing, sizeof(missing), "%s/touch/missing", m->dir);
	assert_int_equal(stat(own, &before), 0);

	/* root owns every name */
	assert_int_equal(utimensat(AT_FDCWD, own, NULL, 0), 0);
	assert_int_equal(utimensat(AT_FDCWD, own, given, 0), 0);
	assert_int_equal(utimensat(AT_FDCWD, dir, given, 0), 0);
	assert_int_equal(utimensat(AT_FDCWD, m->dir, mtime_now, 0), 0);
	assert_int_equal(utimensat(AT_FDCWD, missing, NULL, 0), -1);
	assert_int_equal(errno, ENOENT);

	/* anyone else: "now" on what they may write, no time given */
	assert_int_equal(touch_as_nobody(shared, NULL), 0);
	assert_int_equal(touch_as_nobody(own, NULL), EACCES);
	assert_int_equal(touch_as_nobody(dir, NULL), EACCES);
	assert_int_equal(touch_as_nobody(shared, given), EPERM);
	assert_int_equal(touch_as_nobody(shared, mtime_now), EPERM);
	assert_int_equal(touch_as_nobody(missing, NULL), ENOENT);

	/* nothing kept: the times are the mount's, the values as they were */
	assert_int_equal(stat(own, &after), 0);
	assert_int_equal(after.st_mtime, before.st_mtime);
	assert_int_equal(shared_int, 5);
	assert_int_equal(own_int, 6);
	sysctl_unregister_table(h);
}

/* ---- mount failures keep their errno ---- */

static void test_mount_errors(void **state)
{
	char file[] = "/tmp/rcustring-fuse-file-XXXXXX";
	struct sysctl_tree *tree;
	struct sysctl_fuse *fs = NULL;
	int fd;

	(void)state;
	if (access("/dev/fuse", R_OK | W_OK) != 0)
		skip();
	tree = sysctl_tree_new();
	assert_non_null(tree);
	assert_int_equal(sysctl_fuse_mount(tree, "/nonexistent/rcustring-fuse", &fs), -ENOENT);
	fd = mkstemp(file);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(sysctl_fuse_mount(tree, file, &fs), -ENOTDIR);
	unlink(file);
	assert_null(fs);
	sysctl_tree_free(tree);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_concurrent_polls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_at_unmount, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reread_after_change, setup, teardown),
		cmocka_unit_test_setup_teardown(test_listing_requests, setup, teardown),
		cmocka_unit_test_setup_teardown(test_touch, setup, teardown),
		cmocka_unit_test(test_mount_errors),
	};
	const char *ci = getenv("CI");
	int ret;

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
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	rcustring_destroy(&value);
	rcustring_barrier();
	return ret;
}
