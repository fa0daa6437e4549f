/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Attacks on the control socket by local users: connection and WATCH
 * floods from non-root uids with root still served, watchers that stop
 * reading, request lines dripped a byte at a time, replies read a trickle
 * at a time. Each attack prints "held" when the server withstood it.
 *
 * Waits here are hang guards (seconds), never measures of speed.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "rcustring/sysctl_socket.h"
#include "socket_client.h"

#define BIG_MAX (960 * 1024) /* a GET reply may be up to 1 MiB */

static struct rcustring big = RCUSTRING_INITIALIZER(BIG_MAX, "");
static int swappiness = 60, sw_min = 0, sw_max = 200;

static struct ctl_table vm_table[] = {
	{ "swappiness", &swappiness, sizeof(int), 0644, proc_dointvec_minmax, &sw_min, &sw_max,
	  "how eagerly to swap" },
	{ "big", &big, BIG_MAX, 0644, proc_rcu_string, NULL, NULL, "a long string" },
};

struct fixture {
	struct sysctl_tree *tree;
	struct sysctl_table_header *h;
	struct sysctl_socket *srv;
	char dir[64], path[96];
};

static struct fixture *fx_new(const struct sysctl_socket_options *opts)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/rcs-attack-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	chmod(f->dir, 0755); /* non-root threads must reach the socket */
	snprintf(f->path, sizeof(f->path), "%s/control.sock", f->dir);
	f->tree = sysctl_tree_new();
	assert_non_null(f->tree);
	assert_int_equal(sysctl_register_table(f->tree, "vm", vm_table, 2, &f->h), 0);
	assert_int_equal(sysctl_set(f->tree, "vm.swappiness", "60", 2, NULL), 0);
	/*
	 * Freeing a replaced string starts liburcu's call_rcu worker (once
	 * per process), here before any server thread: the worker's thread
	 * state, which liburcu never frees, then sits on a fresh stack, where
	 * the valgrind suppression knows it, not on a cached one that a
	 * server thread allocated.
	 */
	assert_int_equal(sysctl_set(f->tree, "vm.big", "x", 1, NULL), 0);
	assert_int_equal(sysctl_set(f->tree, "vm.big", "y", 1, NULL), 0);
	assert_int_equal(sysctl_socket_start_opts(f->tree, f->path, 0666, opts, &f->srv), 0);
	return f;
}

static void fx_free(struct fixture *f)
{
	sysctl_socket_stop(f->srv);
	sysctl_unregister_table(f->h);
	sysctl_tree_free(f->tree);
	rmdir(f->dir);
	free(f);
}

static int connect_to(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct timeval tv = { 5, 0 }; /* a server bug fails the test, not hangs it */
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	memcpy(addr.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/*
 * Read one line (a byte at a time: nothing of the next line is taken) into
 * @buf without its '\n'. Return its length, or -1 at EOF, error or timeout.
 */
static int read_line(int fd, char *buf, size_t size)
{
	size_t n = 0;

	while (n + 1 < size) {
		ssize_t r = recv(fd, buf + n, 1, 0);

		if (r <= 0)
			return -1;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return (int)n;
}

/* Send @req and read its one-line reply into @buf; -1 when the server closed. */
static int ask(int fd, const char *req, char *buf, size_t size)
{
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req))
		return -1;
	return read_line(fd, buf, size);
}

/* A fresh client is still served. */
static void still_answers(struct fixture *f)
{
	char line[64];
	int fd = connect_to(f->path);

	assert_true(fd >= 0);
	assert_true(ask(fd, "GET vm.swappiness\n", line, sizeof(line)) > 0);
	assert_string_equal(line, "OK 60");
	close(fd);
}

/* ---- floods from other uids ---- */

#define FLOOD_TRIES 80

struct flood {
	const char *path;
	uid_t uid;
	int fds[FLOOD_TRIES];
	int nfds;	 /* connections the server took (kept open) */
	int refused;	 /* "too many clients" (or closed at once) */
	int watching;	 /* of nfds, in WATCH */
	int watch_refused; /* WATCH answered EAGAIN */
	int bad;	 /* unexpected replies */
};

/*
 * Runs as @uid in its own thread: the raw setres*id syscalls change only
 * the calling thread's credentials (glibc's wrappers would change every
 * thread), and SO_PEERCRED takes the connecting thread's. The descriptors
 * stay open after the thread ends: the server still sees @uid on them.
 */
static void *flood_main(void *arg)
{
	struct flood *fl = arg;
	char line[256];

	if (syscall(SYS_setgroups, 0, NULL) || syscall(SYS_setresgid, fl->uid, fl->uid, fl->uid) ||
	    syscall(SYS_setresuid, fl->uid, fl->uid, fl->uid)) {
		fl->bad = -1;
		return NULL;
	}
	for (int i = 0; i < FLOOD_TRIES; i++) {
		int fd = connect_to(fl->path);

		if (fd < 0) {
			fl->refused++;
			continue;
		}
		/* A round trip tells a served connection from a refused one. */
		if (ask(fd, "GET vm.swappiness\n", line, sizeof(line)) < 0 ||
		    strncmp(line, "ERR 11 EAGAIN too many clients", 30) == 0) {
			fl->refused++;
			close(fd);
			continue;
		}
		if (strcmp(line, "OK 60") != 0) {
			fprintf(stderr, "uid %u: GET -> \"%s\"\n", (unsigned)fl->uid, line);
			fl->bad++;
		}
		fl->fds[fl->nfds++] = fd;
		/* Then park it in a WATCH, which never times out as idle would. */
		if (ask(fd, "WATCH vm.swappiness\n", line, sizeof(line)) < 0) {
			fl->bad++;
		} else if (strncmp(line, "OK ", 3) == 0) {
			fl->watching++;
		} else if (strncmp(line, "ERR 11 EAGAIN vm.swappiness: too many watches", 45) == 0) {
			fl->watch_refused++;
		} else {
			fprintf(stderr, "uid %u: WATCH -> \"%s\"\n", (unsigned)fl->uid, line);
			fl->bad++;
		}
	}
	return NULL;
}

static bool root_or_skip(void)
{
	if (geteuid() == 0)
		return true;
	print_message("skipped: not root, cannot become other users\n");
	return false;
}

/*
 * Four local users open every connection they can and park them in WATCH;
 * root must still be served, on several connections at once.
 */
static void test_flood_root_served(void **state)
{
	static struct flood fl[4];
	struct fixture *f;
	pthread_t t;
	int root_fds[8], others = 0;
	char line[256];

	(void)state;
	if (!root_or_skip())
		skip();
	f = fx_new(NULL); /* the defaults rcusysd serves with */
	for (int u = 0; u < 4; u++) {
		memset(&fl[u], 0, sizeof(fl[u]));
		fl[u].path = f->path;
		fl[u].uid = 65534 - (uid_t)u;
		assert_int_equal(pthread_create(&t, NULL, flood_main, &fl[u]), 0);
		assert_int_equal(pthread_join(t, NULL), 0);
		print_message("uid %u: %d connections taken (%d watching, %d watches refused), "
			      "%d refused\n", (unsigned)fl[u].uid, fl[u].nfds, fl[u].watching,
			      fl[u].watch_refused, fl[u].refused);
		assert_int_equal(fl[u].bad, 0);
		assert_true(fl[u].refused > 0); /* none got all it asked for */
		others += fl[u].nfds;
	}
	/* Root: several connections at once, each served, while the flood stays. */
	for (int i = 0; i < 8; i++) {
		root_fds[i] = connect_to(f->path);
		assert_true(root_fds[i] >= 0);
		if (ask(root_fds[i], "GET vm.swappiness\n", line, sizeof(line)) < 0)
			fail_msg("root connection %d: closed by the server", i);
		if (strcmp(line, "OK 60") != 0)
			fail_msg("root connection %d: \"%s\"", i, line);
	}
	/* One uid cannot take what the next could still have had. */
	assert_true(fl[1].nfds > 0);
	/* Nor park every connection it has in WATCH. */
	assert_true(fl[0].watch_refused > 0);
	print_message("attack flood (4 uids, %d connections held): root served on 8: held\n",
		      others);
	for (int i = 0; i < 8; i++)
		close(root_fds[i]);
	for (int u = 0; u < 4; u++)
		for (int i = 0; i < fl[u].nfds; i++)
			close(fl[u].fds[i]);
	/* Slots come back when the flood leaves: a fresh non-root user is served. */
	for (int tries = 0;; tries++) {
		struct flood again = { .path = f->path, .uid = 65530 };

		assert_int_equal(pthread_create(&t, NULL, flood_main, &again), 0);
		assert_int_equal(pthread_join(t, NULL), 0);
		for (int i = 0; i < again.nfds; i++)
			close(again.fds[i]);
		if (again.nfds > fl[0].nfds / 2)
			break;
		assert_true(tries < 50); /* hang guard: about 10 s */
		usleep(200000);
	}
	fx_free(f);
}

/* ---- watchers that stop reading ---- */

struct reader {
	int fd;
	int alive, changed, other;
	int eof; /* the server closed on it */
	int quit; /* atomic */
};

/* A watcher that keeps reading until told to quit (then shuts its side). */
static void *reader_main(void *arg)
{
	struct reader *r = arg;
	char line[256];

	while (!__atomic_load_n(&r->quit, __ATOMIC_ACQUIRE)) {
		struct pollfd p = { .fd = r->fd, .events = POLLIN };

		if (poll(&p, 1, 100) <= 0)
			continue;
		if (read_line(r->fd, line, sizeof(line)) < 0) {
			__atomic_store_n(&r->eof, 1, __ATOMIC_RELEASE);
			break;
		}
		if (strncmp(line, "ALIVE ", 6) == 0)
			__atomic_add_fetch(&r->alive, 1, __ATOMIC_RELEASE);
		else if (strncmp(line, "CHANGED vm.swappiness ", 22) == 0)
			__atomic_add_fetch(&r->changed, 1, __ATOMIC_RELEASE);
		else
			r->other++;
	}
	return NULL;
}

static void test_stuck_watcher_dropped(void **state)
{
	struct sysctl_socket_options o = { .watch_keepalive_ms = 1000 };
	struct fixture *f = fx_new(&o);
	struct reader r = { 0 };
	struct pollfd p;
	pthread_t t;
	char line[256], rest[4096];
	ssize_t n;
	int stuck;

	(void)state;
	r.fd = connect_to(f->path);
	assert_true(r.fd >= 0);
	assert_true(ask(r.fd, "WATCH vm.swappiness\n", line, sizeof(line)) > 0);
	assert_memory_equal(line, "OK ", 3);
	assert_int_equal(pthread_create(&t, NULL, reader_main, &r), 0);
	/* The stuck watcher reads the OK, then nothing more. */
	stuck = connect_to(f->path);
	assert_true(stuck >= 0);
	assert_true(ask(stuck, "WATCH vm.swappiness\n", line, sizeof(line)) > 0);
	assert_memory_equal(line, "OK ", 3);
	/* Hang guard: without a liveness rule the server keeps it for ever. */
	p = (struct pollfd){ .fd = stuck, .events = POLLRDHUP };
	if (poll(&p, 1, 15000) != 1)
		fail_msg("a watcher that stopped reading was not dropped within 15 s");
	assert_true(p.revents & (POLLRDHUP | POLLHUP));
	/* What it was sent: keepalive lines only, then EOF. */
	n = recv(stuck, rest, sizeof(rest) - 1, 0);
	assert_true(n > 0);
	rest[n] = '\0';
	assert_memory_equal(rest, "ALIVE ", 6);
	while (n > 0)
		n = recv(stuck, rest, sizeof(rest), 0);
	assert_int_equal(n, 0);
	close(stuck);
	/* The reading watcher lives on through keepalives and still hears changes. */
	for (int i = 0; __atomic_load_n(&r.alive, __ATOMIC_ACQUIRE) < 2 && !__atomic_load_n(&r.eof, __ATOMIC_ACQUIRE); i++) {
		assert_true(i < 1000); /* hang guard: 10 s */
		usleep(10000);
	}
	assert_int_equal(sysctl_set(f->tree, "vm.swappiness", "61", 2, NULL), 0);
	for (int i = 0; !__atomic_load_n(&r.changed, __ATOMIC_ACQUIRE) &&
			 !__atomic_load_n(&r.eof, __ATOMIC_ACQUIRE); i++) {
		assert_true(i < 500); /* hang guard: 5 s */
		usleep(10000);
	}
	__atomic_store_n(&r.quit, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	print_message("reading watcher: %d ALIVE, %d CHANGED; stuck watcher dropped: held\n",
		      r.alive, r.changed);
	assert_int_equal(r.eof, 0);
	assert_int_equal(r.other, 0);
	assert_true(r.alive >= 2);
	assert_int_equal(r.changed, 1);
	close(r.fd);
	fx_free(f);
}

/* ---- a request line dripped a byte at a time ---- */

static void test_slow_drip_dropped(void **state)
{
	struct sysctl_socket_options o = { .read_timeout_ms = 1000 };
	struct fixture *f = fx_new(&o);
	static const char prefix[] = "SET vm.big ";
	char buf[256];
	int fd = connect_to(f->path), sent = 0;
	ssize_t n;

	(void)state;
	assert_true(fd >= 0);
	/*
	 * One byte every 50 ms, far inside the read timeout each time; the line
	 * as a whole must still end within it. Hang guard: 300 bytes (15 s).
	 */
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char byte = sent < (int)sizeof(prefix) - 1 ? prefix[sent] : 'x';

		if (poll(&p, 1, 0) == 1)
			break; /* the server spoke (or closed) */
		if (send(fd, &byte, 1, MSG_NOSIGNAL) != 1)
			break;
		if (++sent >= 300)
			fail_msg("a line dripped for 15 s was never cut off");
		usleep(50000);
	}
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_string_equal(buf, "ERR 110 ETIMEDOUT request line not finished in time\n");
	print_message("slow drip: cut off after %d bytes: held\n", sent);
	close(fd);
	still_answers(f);
	fx_free(f);
}

/* ---- a long reply read a trickle at a time ---- */

static void test_trickle_reader_dropped(void **state)
{
	struct sysctl_socket_options o = { .read_timeout_ms = 1000 };
	struct fixture *f = fx_new(&o);
	size_t len = BIG_MAX - 1, got = 0;
	char *value = malloc(len), *buf = malloc(64 * 1024);
	bool whole = false;
	int fd, reads = 0;

	(void)state;
	assert_non_null(value);
	assert_non_null(buf);
	memset(value, 'b', len);
	assert_int_equal(sysctl_set(f->tree, "vm.big", value, len, NULL), 0);
	fd = connect_to(f->path);
	assert_true(fd >= 0);
	assert_int_equal(send(fd, "GET vm.big\n", 11, MSG_NOSIGNAL), 11);
	/*
	 * 64 KiB every 300 ms: room in the socket opens far more often than
	 * the timeout, but the whole reply (about 1 MiB) would take at least
	 * 4.5 s, and a reply must be sent whole within the read timeout.
	 */
	for (;;) {
		ssize_t n = recv(fd, buf, 64 * 1024, 0);

		if (n <= 0)
			break; /* dropped (EOF), or the 5 s hang guard */
		got += (size_t)n;
		if (buf[n - 1] == '\n') {
			whole = true;
			break;
		}
		reads++;
		usleep(300000);
	}
	print_message("trickle reader: %zu of %zu reply bytes in %d reads, %s\n", got, len + 4,
		      reads, whole ? "whole reply sent: failed" : "then dropped: held");
	assert_false(whole);
	assert_true(got < len);
	close(fd);
	free(value);
	free(buf);
	still_answers(f);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flood_root_served),
		cmocka_unit_test(test_stuck_watcher_dropped),
		cmocka_unit_test(test_slow_drip_dropped),
		cmocka_unit_test(test_trickle_reader_dropped),
	};
	int ret = cmocka_run_group_tests(tests, NULL, NULL);

	rcustring_destroy(&big);
	rcustring_barrier();
	return ret;
}
