/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket's requests of several entries: MSET and MAPPLY as one
 * commit (a refused item named, nothing written, the connection going on),
 * MGET from one snapshot, MWATCH reporting a commit as one EVENT line (its
 * keepalives, a stuck watcher dropped), the parser's bounds, and a
 * multi-set that never finishes (its deadline).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "rcustring/sysctl_commit.h"
#include "rcustring/sysctl_socket.h"
#include "socket_client.h"

static struct rcustring host = RCUSTRING_INITIALIZER(64, "a");
static int port = 1, port_min = 1, port_max = 65535, fixed = 5;

static struct ctl_table backend_table[] = {
	{ "host", &host, 64, 0644, proc_rcu_string, NULL, NULL, "a string" },
	{ "port", &port, sizeof(int), 0644, proc_dointvec_minmax, &port_min, &port_max, "an int" },
	{ "fixed", &fixed, sizeof(int), 0444, proc_dointvec, NULL, NULL, "read-only" },
};

struct fixture {
	struct sysctl_tree *tree;
	struct sysctl_table_header *h;
	struct sysctl_socket *srv;
	char dir[64], path[96];
};

static struct fixture *fx_new_opts(const struct sysctl_socket_options *o)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/rcs-multi-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/control.sock", f->dir);
	f->tree = sysctl_tree_new();
	assert_non_null(f->tree);
	assert_int_equal(sysctl_register_table(f->tree, "backend", backend_table, 3, &f->h), 0);
	assert_int_equal(sysctl_set(f->tree, "backend.host", "a", 1, NULL), 0);
	assert_int_equal(sysctl_set(f->tree, "backend.port", "1", 1, NULL), 0);
	assert_int_equal(sysctl_socket_start_opts(f->tree, f->path, 0600, o, &f->srv), 0);
	return f;
}

static struct fixture *fx_new(int read_timeout_ms)
{
	struct sysctl_socket_options o = { .read_timeout_ms = read_timeout_ms };

	return fx_new_opts(&o);
}

static void fx_free(struct fixture *f)
{
	sysctl_socket_stop(f->srv);
	sysctl_unregister_table(f->h);
	sysctl_tree_free(f->tree);
	rmdir(f->dir);
	free(f);
}

static struct sock_client *conn(struct fixture *f)
{
	struct sock_client *c;
	struct timeval tv = { 5, 0 }; /* a server bug fails the test, not hangs it */

	assert_int_equal(sock_client_connect(f->path, &c), 0);
	setsockopt(sock_client_fd(c), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return c;
}

/* Send @req raw; the next reply line must be @want (OK/ERR lines rebuilt whole). */
static void expect(struct sock_client *c, const char *req, const char *want)
{
	struct sock_reply r;
	char got[8192];

	if (*req)
		assert_int_equal(send(sock_client_fd(c), req, strlen(req), MSG_NOSIGNAL),
				 (ssize_t)strlen(req));
	assert_int_equal(sock_client_reply(c, &r), 0);
	if (r.kind == SOCK_REPLY_DATA)
		snprintf(got, sizeof(got), "%.*s", (int)r.text_len, r.text);
	else if (r.kind == SOCK_REPLY_OK)
		snprintf(got, sizeof(got), "OK%s%.*s", r.text_len ? " " : "", (int)r.text_len, r.text);
	else
		snprintf(got, sizeof(got), "ERR %d %.*s", -r.err, (int)r.text_len, r.text);
	if (strcmp(got, want) != 0)
		fail_msg("%s-> got \"%s\" want \"%s\"", req, got, want);
}

static void test_mset_mget(void **state)
{
	struct fixture *f = fx_new(0);
	struct sock_client *c = conn(f);

	(void)state;
	expect(c, "MSET 2\nbackend.host b b\nbackend.port 2\n", "OK 2");
	expect(c, "MGET backend.host backend.port\n", "VALUE backend.host b b");
	expect(c, "", "VALUE backend.port 2");
	expect(c, "", "OK 2");
	/* MAPPLY is the same commit with a settings file's origin. */
	expect(c, "MAPPLY 2\nbackend.host c\nbackend.port 3\n", "OK 2");
	expect(c, "MGET backend.port\n", "VALUE backend.port 3");
	expect(c, "", "OK 1");
	sock_client_close(c);
	fx_free(f);
}

/* Every refusal names its item, writes nothing, and the connection goes on. */
static void test_mset_refused(void **state)
{
	struct fixture *f = fx_new(0);
	struct sock_client *c = conn(f);

	(void)state;
	expect(c, "MSET 2\nbackend.host zzz\nbackend.port 70000\n",
	       "ERR 22 backend.port: invalid value (integers 1..65535) (item 2 of 2; nothing written)");
	expect(c, "MSET 2\nbackend.host zzz\nbackend.fixed 6\n",
	       "ERR 13 backend.fixed: permission denied (item 2 of 2; nothing written)");
	expect(c, "MSET 2\nbackend.nope 1\nbackend.host zzz\n",
	       "ERR 2 backend.nope: No such file or directory (item 1 of 2; nothing written)");
	expect(c, "MSET 2\nbackend.host zzz\nbackend/host yyy\n",
	       "ERR 22 backend/host: named twice in one commit (item 2 of 2; nothing written)");
	expect(c, "MSET 2\nbackend.host zzz\nbackend.port\n",
	       "ERR 22 item 2 of 2: missing value (SET <path> <value>) (nothing written)");
	expect(c, "MGET backend.host backend.port\n", "VALUE backend.host a");
	expect(c, "", "VALUE backend.port 1");
	expect(c, "", "OK 2");
	expect(c, "MGET backend.host backend.nope\n",
	       "ERR 2 backend.nope: No such file or directory");
	sock_client_close(c);
	fx_free(f);
}

static void test_parse_bounds(void **state)
{
	struct sock_request req;
	struct sock_item it;
	const char *why;
	char line[SYSCTL_SOCKET_LINE_MAX + 8];
	size_t n = 0;

	(void)state;
	assert_int_equal(sock_parse_request("MSET 64", 7, &req, &why), 0);
	assert_int_equal(req.count, SYSCTL_COMMIT_MAX);
	assert_int_equal(sock_parse_request("MSET 65", 7, &req, &why), -EINVAL);
	assert_string_equal(why, "count of items not in 1..64 (SYSCTL_COMMIT_MAX)");
	assert_int_equal(sock_parse_request("MSET 0", 6, &req, &why), -EINVAL);
	assert_int_equal(sock_parse_request("MSET x", 6, &req, &why), -EINVAL);
	assert_int_equal(sock_parse_request("MSET", 4, &req, &why), -EINVAL);
	assert_int_equal(sock_parse_request("MGET a  b", 9, &req, &why), -EINVAL);
	assert_int_equal(sock_parse_request("MGET a ", 7, &req, &why), -EINVAL);
	assert_int_equal(sock_parse_request("MGET a b", 8, &req, &why), 0);
	assert_int_equal(req.count, 2);
	/* 64 paths parse; a 65th is refused. */
	for (int i = 0; i < SYSCTL_COMMIT_MAX; i++)
		n += (size_t)sprintf(line + n, "%s%d", i ? " " : "MWATCH ", i);
	assert_int_equal(sock_parse_request(line, n, &req, &why), 0);
	assert_int_equal(req.count, SYSCTL_COMMIT_MAX);
	n += (size_t)sprintf(line + n, " x");
	assert_int_equal(sock_parse_request(line, n, &req, &why), -EINVAL);
	assert_int_equal(sock_parse_item("a.b  two words ", 15, &it, &why), 0);
	assert_int_equal(it.value_len, 11); /* " two words " */
	assert_int_equal(sock_parse_item("a.b", 3, &it, &why), -EINVAL);
	assert_int_equal(sock_parse_item("a\x01 1", 4, &it, &why), -EINVAL);
	memset(line, 'a', sizeof(line));
	assert_int_equal(sock_parse_item(line, SYSCTL_SOCKET_LINE_MAX, &it, &why), -E2BIG);
}

/* A commit is one EVENT of both entries; a single SET an EVENT of one. */
static void test_mwatch(void **state)
{
	struct fixture *f = fx_new(0);
	struct sock_client *w = conn(f), *c = conn(f);
	struct sysctl_commit_item items[2] = { { "backend.host", "q r", 3 },
					       { "backend.port", "9", 1 } };

	(void)state;
	expect(w, "MWATCH backend.host backend.port\n", "OK 2");
	expect(w, "", "EVENT 2 backend.host 1 a backend.port 1 1");
	expect(c, "MSET 2\nbackend.host b\nbackend.port 2\n", "OK 2");
	expect(w, "", "EVENT 2 backend.host 2 b backend.port 2 2");
	expect(c, "SET backend.port 3\n", "OK");
	expect(w, "", "EVENT 1 backend.port 3 3");
	assert_int_equal(sysctl_commit(f->tree, items, 2, NULL, SYSCTL_ORIGIN_PROGRAM, NULL), 0);
	expect(w, "", "EVENT 2 backend.host 3 q\\x20r backend.port 4 9");
	expect(c, "MWATCH backend.host backend.nope\n",
	       "ERR 2 backend.nope: No such file or directory");
	sock_client_close(w);
	sock_client_close(c);
	fx_free(f);
}

/*
 * A quiet MWATCH gets "ALIVE" lines (no counter: WATCH's carry one); a
 * watcher that reads nothing is dropped once a keepalive finds its lines
 * unread, and the one that reads lives on.
 */
static void test_mwatch_keepalive(void **state)
{
	struct sysctl_socket_options o = { .watch_keepalive_ms = 200 };
	struct fixture *f = fx_new_opts(&o);
	struct sock_client *w = conn(f), *s = conn(f);
	const char *req = "MWATCH backend.host\n";
	struct pollfd p;
	char rest[256];
	ssize_t n, got = 0;
	int stuck;

	(void)state;
	expect(w, "MWATCH backend.host backend.port\n", "OK 2");
	expect(w, "", "EVENT 2 backend.host 1 a backend.port 1 1");
	expect(w, "", "ALIVE");
	stuck = sock_client_fd(s);
	assert_int_equal(send(stuck, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
	/* Hang guard: without the liveness rule the server keeps it for ever. */
	p = (struct pollfd){ .fd = stuck, .events = POLLRDHUP };
	if (poll(&p, 1, 5000) != 1)
		fail_msg("an MWATCH that read nothing was not dropped within 5 s");
	/* What it was sent: its reply and first event, no keepalive, then EOF. */
	while ((n = recv(stuck, rest + got, sizeof(rest) - 1 - (size_t)got, 0)) > 0)
		got += n;
	rest[got] = '\0';
	assert_string_equal(rest, "OK 1\nEVENT 1 backend.host 1 a\n");
	expect(w, "", "ALIVE");
	sock_client_close(s);
	sock_client_close(w);
	fx_free(f);
}

/* Item lines that never come: the whole multi-set has one deadline, and writes nothing. */
static void test_mset_deadline(void **state)
{
	struct fixture *f = fx_new(300);
	struct sock_client *c = conn(f), *d = conn(f);

	(void)state;
	expect(c, "MSET 2\nbackend.host late\n",
	       "ERR 110 multi-set items not all in, in time (nothing written)");
	expect(d, "MGET backend.host\n", "VALUE backend.host a");
	sock_client_close(c);
	sock_client_close(d);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mset_mget),
		cmocka_unit_test(test_mset_refused),
		cmocka_unit_test(test_parse_bounds),
		cmocka_unit_test(test_mwatch),
		cmocka_unit_test(test_mwatch_keepalive),
		cmocka_unit_test(test_mset_deadline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
