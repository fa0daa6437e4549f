/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The listening socket both servers make (lib/common/unix_listen.h): a
 * client that connects the moment the socket file appears is never refused,
 * a stale file is replaced, a live server's file and any other file are
 * left alone, the file gets the mode asked for whatever the umask, and no
 * temporary name is left behind on any path.
 *
 * The race is run many times with a client thread that watches for the
 * name (inotify, or a tight lstat() loop) and connects at once. Some rounds
 * hold listen() back until that client has tried (at most FORCE_WAIT_MS),
 * so a file that appeared before listen() is seen to refuse every time, not
 * only when the scheduler happens to interleave so. Set
 * RCS_UNIX_LISTEN_ROUNDS to run more rounds of each kind (default 500).
 *
 * listen() and renameat2() are wrapped (-Wl,--wrap) to hold listen() back,
 * to make it fail, and to put a file at the name just before the rename.
 * Waits here are hang guards, never measures of speed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <time.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/unix_listen.h"

#define HANG_GUARD_MS 5000
#define FORCE_WAIT_MS 20

enum watch { BY_STAT, BY_INOTIFY };

/* What the wrappers do, set by a test before the call under test. */
static struct {
	bool hold_listen;    /* wait for the client before listening */
	int fail_listen;     /* errno listen() fails with, or 0 */
	int rename_errno;    /* errno renameat2() fails with untried, or 0 */
	enum { PUT_NONE, PUT_LIVE, PUT_STALE, PUT_FILE } put; /* at the name first */
	int live_fd;         /* the server PUT_LIVE made */
	int renames;         /* renameat2() calls seen */
} wrap = { .live_fd = -1 };

/* One round's client. */
struct client {
	char dir[64], path[128];
	const char *name;
	enum watch how;
	int ifd;
	int done;            /* set (atomically) once connect() returned */
	int result;          /* 0 connected, or -errno; -ETIMEDOUT: no file seen */
};
static struct client *current;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static struct sockaddr_un addr_of(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	assert_true(strlen(path) < sizeof(a.sun_path));
	memcpy(a.sun_path, path, strlen(path) + 1);
	return a;
}

/* A socket at @path that was bound and closed: a stale file. */
static void make_stale(const char *path)
{
	struct sockaddr_un a = addr_of(path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	close(fd);
}

/* A server listening at @path, made the plain way: its fd. */
static int make_live(const char *path)
{
	struct sockaddr_un a = addr_of(path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 4), 0);
	return fd;
}

/* 0 when a connect to @path is accepted into the backlog, or -errno. */
static int try_connect(const char *path)
{
	struct sockaddr_un a = addr_of(path);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0), err;

	assert_true(fd >= 0);
	err = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 ? 0 : -errno;
	close(fd);
	return err;
}

int __real_listen(int fd, int backlog);
int __wrap_listen(int fd, int backlog)
{
	long long end = now_ms() + FORCE_WAIT_MS;

	if (wrap.fail_listen) {
		errno = wrap.fail_listen;
		return -1;
	}
	/* Hold listen() back until the client tried, if it can see the file. */
	while (wrap.hold_listen && current && !__atomic_load_n(&current->done, __ATOMIC_ACQUIRE) &&
	       now_ms() < end)
		usleep(100);
	return __real_listen(fd, backlog);
}

int __real_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
		     unsigned int flags);
int __wrap_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
		     unsigned int flags)
{
	int fd;

	wrap.renames++;
	switch (wrap.put) {
	case PUT_LIVE:
		wrap.live_fd = make_live(newpath);
		break;
	case PUT_STALE:
		make_stale(newpath);
		break;
	case PUT_FILE:
		fd = open(newpath, O_CREAT | O_WRONLY | O_EXCL, 0600);
		assert_true(fd >= 0);
		close(fd);
		break;
	case PUT_NONE:
		break;
	}
	wrap.put = PUT_NONE; /* once: a retry finds what is there */
	if (wrap.rename_errno) {
		errno = wrap.rename_errno;
		return -1;
	}
	return __real_renameat2(olddirfd, oldpath, newdirfd, newpath, flags);
}

/* Names in @dir that start with ".rcs-" (temporary names left behind). */
static int leftovers(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strncmp(e->d_name, ".rcs-", 5) == 0) {
			fprintf(stderr, "left behind: %s/%s\n", dir, e->d_name);
			n++;
		}
	closedir(d);
	return n;
}

static void rm_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	assert_int_equal(rmdir(dir), 0);
}

static void new_dir(char *dir, size_t size)
{
	snprintf(dir, size, "/tmp/rcs-unix-listen-XXXXXX");
	assert_non_null(mkdtemp(dir));
}

/* Wait until the name is there, by inotify or by lstat(); false past the guard. */
static bool wait_name(struct client *c)
{
	long long end = now_ms() + HANG_GUARD_MS;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct stat st;
	unsigned int spins = 0;

	if (c->how == BY_STAT) {
		while (lstat(c->path, &st) != 0)
			if ((++spins & 1023) == 0 && now_ms() > end)
				return false;
		return true;
	}
	for (;;) {
		struct pollfd p = { .fd = c->ifd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, (int)(end - now_ms() > 0 ? end - now_ms() : 0)) <= 0)
			return false;
		n = read(c->ifd, buf, sizeof(buf));
		for (char *q = buf; n > 0 && q < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)q;

			if (ev->len && strcmp(ev->name, c->name) == 0)
				return true;
			q += sizeof(*ev) + ev->len;
		}
	}
}

static void *client_main(void *arg)
{
	struct client *c = arg;

	c->result = wait_name(c) ? try_connect(c->path) : -ETIMEDOUT;
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct tally {
	int connected, refused, other;
};

/* One start of the server against a client already watching. */
static void one_round(struct client *c, bool hold, struct tally *t)
{
	struct sockaddr_un a = addr_of(c->path);
	pthread_t tid;
	dev_t dev;
	ino_t ino;
	int fd;

	c->done = 0;
	c->result = -EIO;
	current = c;
	wrap.hold_listen = hold;
	assert_int_equal(pthread_create(&tid, NULL, client_main, c), 0);
	fd = rcs_unix_listen(&a, 0600, 16, &dev, &ino);
	assert_true(fd >= 0);
	assert_int_equal(pthread_join(tid, NULL), 0);
	wrap.hold_listen = false;
	current = NULL;
	if (c->result == 0)
		t->connected++;
	else if (c->result == -ECONNREFUSED)
		t->refused++;
	else
		t->other++;
	assert_int_equal(rcs_unix_unlink_own(c->path, dev, ino), 0);
	close(fd);
	if (c->how == BY_INOTIFY) { /* drop this round's events */
		char buf[4096];

		while (read(c->ifd, buf, sizeof(buf)) > 0)
			;
	}
}

static int rounds(void)
{
	const char *s = getenv("RCS_UNIX_LISTEN_ROUNDS");

	return s && atoi(s) > 0 ? atoi(s) : 500;
}

/* Rounds of one kind; the rounds that did not connect. */
static int race(enum watch how, bool hold)
{
	struct client c = { .name = "s.sock", .how = how, .ifd = -1 };
	struct tally t = { 0 };
	int n = hold ? rounds() / 5 + 1 : rounds();

	new_dir(c.dir, sizeof(c.dir));
	snprintf(c.path, sizeof(c.path), "%s/%s", c.dir, c.name);
	if (how == BY_INOTIFY) {
		c.ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		assert_true(c.ifd >= 0);
		assert_true(inotify_add_watch(c.ifd, c.dir, IN_CREATE | IN_MOVED_TO) >= 0);
	}
	for (int i = 0; i < n; i++)
		one_round(&c, hold, &t);
	printf("%s, listen() %s: %d rounds: connected %d, refused %d, other %d\n",
	       how == BY_STAT ? "lstat loop" : "inotify", hold ? "held back" : "as it comes", n,
	       t.connected, t.refused, t.other);
	if (c.ifd >= 0)
		close(c.ifd);
	assert_int_equal(leftovers(c.dir), 0);
	rm_dir(c.dir);
	return n - t.connected;
}

/* A client that connects once it sees the file is never refused. */
static void test_race_stat(void **state)
{
	int missed = race(BY_STAT, false);

	(void)state;
	missed += race(BY_STAT, true);
	assert_int_equal(missed, 0);
}

static void test_race_inotify(void **state)
{
	int missed = race(BY_INOTIFY, false);

	(void)state;
	missed += race(BY_INOTIFY, true);
	assert_int_equal(missed, 0);
}

struct place {
	char dir[64], path[128];
	struct sockaddr_un addr;
	dev_t dev;
	ino_t ino;
};

static void place_new(struct place *p)
{
	new_dir(p->dir, sizeof(p->dir));
	snprintf(p->path, sizeof(p->path), "%s/s.sock", p->dir);
	p->addr = addr_of(p->path);
}

static void place_free(struct place *p)
{
	assert_int_equal(leftovers(p->dir), 0);
	rm_dir(p->dir);
}

/* The file at @path is the socket @dev/@ino and a connect is accepted. */
static void assert_serves(const char *path, dev_t dev, ino_t ino)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_true(st.st_dev == dev && st.st_ino == ino);
	assert_int_equal(try_connect(path), 0);
}

/* A stale socket file is replaced; a live server's and other files are not. */
static void test_stale_live_other(void **state)
{
	struct place p;
	struct stat st, before;
	char link_target[64];
	dev_t dev2;
	ino_t ino2;
	int fd, fd2;

	(void)state;
	place_new(&p);
	make_stale(p.path);
	assert_int_equal(try_connect(p.path), -ECONNREFUSED);
	fd = rcs_unix_listen(&p.addr, 0600, 4, &p.dev, &p.ino);
	assert_true(fd >= 0);
	assert_serves(p.path, p.dev, p.ino);
	/* A live server keeps its file. */
	assert_int_equal(rcs_unix_listen(&p.addr, 0600, 4, &dev2, &ino2), -EADDRINUSE);
	assert_serves(p.path, p.dev, p.ino);
	assert_int_equal(rcs_unix_unlink_own(p.path, p.dev, p.ino), 0);
	close(fd);
	/* A regular file and a symlink are never touched. */
	fd = open(p.path, O_CREAT | O_WRONLY, 0640);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(lstat(p.path, &before), 0);
	assert_int_equal(rcs_unix_listen(&p.addr, 0600, 4, &dev2, &ino2), -EEXIST);
	assert_int_equal(lstat(p.path, &st), 0);
	assert_true(S_ISREG(st.st_mode) && st.st_ino == before.st_ino && (st.st_mode & 0777) == 0640);
	unlink(p.path);
	assert_int_equal(symlink("/nonexistent", p.path), 0);
	assert_int_equal(rcs_unix_listen(&p.addr, 0600, 4, &dev2, &ino2), -EEXIST);
	assert_int_equal(readlink(p.path, link_target, sizeof(link_target)), 12);
	unlink(p.path);
	/* A temporary name a dead process left is skipped, and left to its owner. */
	assert_int_equal(rcs_unix_tmp_name(p.path, 0, &p.addr), 0);
	make_stale(p.addr.sun_path);
	p.addr = addr_of(p.path);
	fd2 = rcs_unix_listen(&p.addr, 0600, 4, &p.dev, &p.ino);
	assert_true(fd2 >= 0);
	assert_serves(p.path, p.dev, p.ino);
	assert_int_equal(rcs_unix_tmp_name(p.path, 0, &p.addr), 0);
	assert_int_equal(lstat(p.addr.sun_path, &st), 0);
	assert_int_equal(unlink(p.addr.sun_path), 0);
	close(fd2);
	place_free(&p);
}

/* The file has the mode asked for, whatever the umask. */
static void test_mode(void **state)
{
	static const struct {
		mode_t umask, mode;
	} cases[] = { { 077, 0666 }, { 0, 0600 }, { 0111, 0666 }, { 0177, 0600 }, { 022, 0660 } };
	struct place p;
	struct stat st;
	mode_t old = umask(0);

	(void)state;
	place_new(&p);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int fd;

		umask(cases[i].umask);
		fd = rcs_unix_listen(&p.addr, cases[i].mode, 4, &p.dev, &p.ino);
		umask(old);
		assert_true(fd >= 0);
		assert_int_equal(lstat(p.path, &st), 0);
		assert_int_equal(st.st_mode & 07777, cases[i].mode);
		assert_serves(p.path, p.dev, p.ino);
		assert_int_equal(rcs_unix_unlink_own(p.path, p.dev, p.ino), 0);
		close(fd);
	}
	umask(old);
	place_free(&p);
}

/* A file put at the name between the check and the rename. */
static void test_appeared_meanwhile(void **state)
{
	struct place p;
	struct stat st;
	dev_t dev;
	ino_t ino;
	int fd;

	(void)state;
	place_new(&p);
	/* Another server: it keeps its file, ours goes. */
	wrap.put = PUT_LIVE;
	assert_int_equal(rcs_unix_listen(&p.addr, 0600, 4, &dev, &ino), -EADDRINUSE);
	assert_int_equal(lstat(p.path, &st), 0);
	assert_int_equal(try_connect(p.path), 0);
	close(wrap.live_fd);
	unlink(p.path);
	assert_int_equal(leftovers(p.dir), 0);
	/* A stale socket: replaced. */
	wrap.put = PUT_STALE;
	wrap.renames = 0;
	fd = rcs_unix_listen(&p.addr, 0600, 4, &p.dev, &p.ino);
	assert_true(fd >= 0);
	assert_int_equal(wrap.renames, 2);
	assert_serves(p.path, p.dev, p.ino);
	assert_int_equal(rcs_unix_unlink_own(p.path, p.dev, p.ino), 0);
	close(fd);
	/* Any other file: kept. */
	wrap.put = PUT_FILE;
	assert_int_equal(rcs_unix_listen(&p.addr, 0600, 4, &dev, &ino), -EEXIST);
	assert_int_equal(lstat(p.path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	unlink(p.path);
	place_free(&p);
}

/* Where renameat2() has no RENAME_NOREPLACE: link() and unlink(). */
static void test_link_fallback(void **state)
{
	struct place p;
	struct stat st;
	dev_t dev;
	ino_t ino;
	int fd;

	(void)state;
	place_new(&p);
	wrap.rename_errno = EINVAL;
	fd = rcs_unix_listen(&p.addr, 0600, 4, &p.dev, &p.ino);
	assert_true(fd >= 0);
	assert_serves(p.path, p.dev, p.ino);
	assert_int_equal(rcs_unix_unlink_own(p.path, p.dev, p.ino), 0);
	close(fd);
	/* It replaces nothing either: a file put there meanwhile stays. */
	wrap.put = PUT_FILE;
	assert_int_equal(rcs_unix_listen(&p.addr, 0600, 4, &dev, &ino), -EEXIST);
	wrap.rename_errno = 0;
	assert_int_equal(lstat(p.path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	unlink(p.path);
	place_free(&p);
}

/* Errors after bind() leave no name behind. */
static void test_errors_leave_nothing(void **state)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char deep[256];
	struct place p;
	struct stat st;
	dev_t dev;
	ino_t ino;

	(void)state;
	place_new(&p);
	wrap.fail_listen = EOPNOTSUPP;
	assert_int_equal(rcs_unix_listen(&p.addr, 0600, 4, &dev, &ino), -EOPNOTSUPP);
	wrap.fail_listen = 0;
	assert_int_equal(lstat(p.path, &st), -1);
	wrap.rename_errno = EIO;
	assert_int_equal(rcs_unix_listen(&p.addr, 0600, 4, &dev, &ino), -EIO);
	wrap.rename_errno = 0;
	assert_int_equal(lstat(p.path, &st), -1);
	assert_int_equal(leftovers(p.dir), 0);
	/* A name that fits, in a folder that leaves no room for the temporary one. */
	snprintf(deep, sizeof(deep), "%s/%.*s", p.dir,
		 (int)(sizeof(a.sun_path) - strlen(p.dir) - 4), "dddddddddddddddddddddddddddddddddddddddddd"
		 "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd");
	assert_int_equal(mkdir(deep, 0700), 0);
	assert_true(strlen(deep) + 2 < sizeof(a.sun_path));
	memcpy(a.sun_path, deep, strlen(deep));
	memcpy(a.sun_path + strlen(deep), "/s", 3);
	assert_int_equal(rcs_unix_listen(&a, 0600, 4, &dev, &ino), -ENAMETOOLONG);
	assert_int_equal(leftovers(deep), 0);
	assert_int_equal(rmdir(deep), 0);
	place_free(&p);
}

/* A stop removes its own file and nothing that replaced it. */
static void test_unlink_own(void **state)
{
	struct place p;
	struct stat st;
	int fd, other;

	(void)state;
	place_new(&p);
	fd = rcs_unix_listen(&p.addr, 0600, 4, &p.dev, &p.ino);
	assert_true(fd >= 0);
	assert_int_equal(unlink(p.path), 0);
	other = make_live(p.path);
	assert_int_equal(rcs_unix_unlink_own(p.path, p.dev, p.ino), -ESTALE);
	assert_int_equal(lstat(p.path, &st), 0);
	assert_int_equal(try_connect(p.path), 0);
	close(other);
	close(fd);
	assert_int_equal(unlink(p.path), 0);
	assert_int_equal(rcs_unix_unlink_own(p.path, p.dev, p.ino), 0); /* gone already */
	place_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_race_stat),
		cmocka_unit_test(test_race_inotify),
		cmocka_unit_test(test_stale_live_other),
		cmocka_unit_test(test_mode),
		cmocka_unit_test(test_appeared_meanwhile),
		cmocka_unit_test(test_link_fallback),
		cmocka_unit_test(test_errors_leave_nothing),
		cmocka_unit_test(test_unlink_own),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
