/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The control socket's STATUS and METRICS for a program embedding the
 * library: its report callback's lines come back, one "STATUS" or
 * "METRIC" line each and escaped, after the server's own metrics; a
 * write and a refused write move rcustring_writes_total and
 * rcustring_writes_refused_total{errno="EINVAL"}, a GET the socket's
 * reads (counted per connection, summed at the scrape, kept when the
 * connection ends); the callback's error is the reply's; without a
 * callback STATUS answers "OK 0"; "STATUS x" is malformed; the callback
 * is told the peer's credentials.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "rcustring/sysctl_socket.h"
#include "socket_client.h"

static int level = 1, lmin = 0, lmax = 10;
static struct ctl_table app_table[] = {
	{ .procname = "level", .data = &level, .maxlen = sizeof(int), .mode = 0644,
	  .proc_handler = proc_dointvec_minmax, .extra1 = &lmin, .extra2 = &lmax },
};
static int report_err;
static struct sysctl_caller report_who = { (uid_t)-1, (gid_t)-1, -1 };

static int report(void *arg, int what, const struct sysctl_caller *who, FILE *out)
{
	report_who = *who;
	if (report_err)
		return report_err;
	if (what == SYSCTL_SOCKET_STATUS)
		fprintf(out, "program %s\nodd a\\b\ttab\n", (const char *)arg);
	else
		fputs("# TYPE myprog_jobs gauge\nmyprog_jobs 3\n", out);
	return 0;
}

/* Send @req, gather the reply's lines up to its OK or ERR line into one string. */
static char *reply(struct sock_client *c, const char *req)
{
	char *all = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&all, &len);
	struct sock_reply r;

	assert_non_null(f);
	assert_int_equal(send(sock_client_fd(c), req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
	do {
		assert_int_equal(sock_client_reply(c, &r), 0);
		if (r.kind == SOCK_REPLY_ERR)
			fprintf(f, "ERR %d %.*s\n", -r.err, (int)r.text_len, r.text);
		else
			fprintf(f, "%s%.*s\n", r.kind == SOCK_REPLY_OK ? "OK " : "", (int)r.text_len,
				r.text);
	} while (r.kind == SOCK_REPLY_DATA);
	fclose(f);
	return all;
}

/* The value of sample @name in a METRICS reply, or -1. */
static long long sample(const char *all, const char *name)
{
	char want[160];
	const char *p;

	snprintf(want, sizeof(want), "\nMETRIC %s ", name);
	p = strstr(all, want);
	return p ? strtoll(p + strlen(want), NULL, 10) : -1;
}

static void test_report(void **state)
{
	struct sysctl_socket_options o = { .report = report, .report_arg = "embedded" };
	char dir[] = "/tmp/rcs-report-XXXXXX", path[64], *all;
	struct sysctl_table_header *h;
	struct sysctl_tree *t = sysctl_tree_new();
	struct sysctl_socket *s;
	struct sock_client *c, *c2;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/control.sock", dir);
	assert_int_equal(sysctl_register_table(t, "app", app_table, 1, &h), 0);
	assert_int_equal(sysctl_socket_start_opts(t, path, 0600, &o, &s), 0);
	assert_int_equal(sock_client_connect(path, &c), 0);

	all = reply(c, "STATUS\n");
	assert_string_equal(all, "STATUS program embedded\nSTATUS odd a\\\\b\\ttab\nOK 2\n");
	free(all);
	/* The callback learns who asked (rcusysd shows a non-root peer less). */
	assert_int_equal(report_who.uid, geteuid());
	assert_int_equal(report_who.pid, getpid());
	all = reply(c, "STATUS x\n");
	assert_string_equal(all, "ERR 22 unexpected text after the request\n");
	free(all);

	/* Reads on a connection that then ends still count. */
	assert_int_equal(sock_client_connect(path, &c2), 0);
	free(reply(c2, "GET app.level\n"));
	free(reply(c2, "SET app.level 5\n"));
	free(reply(c2, "SET app.level 50\n"));
	sock_client_close(c2);
	usleep(100000);
	/* The server joins ended connections before it accepts one. */
	assert_int_equal(sock_client_connect(path, &c2), 0);
	free(reply(c, "GET app.level\n"));

	all = reply(c2, "METRICS\n");
	sock_client_close(c2);
	assert_int_equal(sample(all, "rcustring_writes_total"), 1);
	assert_int_equal(sample(all, "rcustring_writes_refused_total{errno=\"EINVAL\"}"), 1);
	assert_int_equal(sample(all, "rcustring_socket_reads_total"), 2);
	assert_int_equal(sample(all, "rcustring_socket_requests_total{verb=\"SET\"}"), 2);
	assert_int_equal(sample(all, "myprog_jobs"), 3);
	assert_non_null(strstr(all, "\nMETRIC # TYPE myprog_jobs gauge\n"));
	free(all);

	report_err = -EIO;
	all = reply(c, "STATUS\n");
	assert_string_equal(all, "ERR 5 status: Input/output error\n");
	free(all);
	report_err = 0;

	sock_client_close(c);
	sysctl_socket_stop(s);
	/* No callback: the server's metrics, no status lines. */
	assert_int_equal(sysctl_socket_start(t, path, 0600, &s), 0);
	assert_int_equal(sock_client_connect(path, &c), 0);
	all = reply(c, "STATUS\n");
	assert_string_equal(all, "OK 0\n");
	free(all);
	sock_client_close(c);
	sysctl_socket_stop(s);
	sysctl_unregister_table(h);
	sysctl_tree_free(t);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_report) };

	return cmocka_run_group_tests(tests, NULL, NULL);
}
