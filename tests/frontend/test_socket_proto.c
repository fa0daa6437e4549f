/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Control socket protocol: request parser table, escaping, reply lines. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rcustring/sysctl_socket.h"
#include "socket_proto.h"

struct row {
	const char *line;
	size_t len; /* 0: strlen */
	int ret;
	enum sock_verb verb;
	const char *path, *value;
	unsigned long long seq;
};

static void check_row(const struct row *r)
{
	struct sock_request req;
	const char *why;
	size_t len = r->len ? r->len : strlen(r->line);
	int ret = sock_parse_request(r->line, len, &req, &why);

	if (ret != r->ret)
		fail_msg("\"%s\": got %d want %d", r->line, ret, r->ret);
	if (ret) {
		assert_non_null(why);
		return;
	}
	assert_int_equal(req.verb, r->verb);
	if (r->path) {
		assert_int_equal(req.path_len, strlen(r->path));
		assert_memory_equal(req.path, r->path, req.path_len);
	} else {
		assert_int_equal(req.path_len, 0);
	}
	if (r->value) {
		assert_int_equal(req.value_len, strlen(r->value));
		assert_memory_equal(req.value, r->value, req.value_len);
	} else {
		assert_null(req.value);
	}
	assert_int_equal(req.after_seq, r->seq);
}

static void test_requests(void **state)
{
	static const struct row rows[] = {
		{ "GET kernel.core_pattern", 0, 0, SOCK_GET, "kernel.core_pattern", NULL, 0 },
		{ "GET /fs/ocfs2.x/y", 0, 0, SOCK_GET, "/fs/ocfs2.x/y", NULL, 0 },
		{ "SET kernel.core_pattern |/bin/crash %p %e", 0, 0, SOCK_SET,
		  "kernel.core_pattern", "|/bin/crash %p %e", 0 },
		{ "SET k  two spaces kept ", 0, 0, SOCK_SET, "k", " two spaces kept ", 0 },
		{ "SET k ", 0, 0, SOCK_SET, "k", "", 0 },
		{ "SET k \\n raw", 0, 0, SOCK_SET, "k", "\\n raw", 0 },
		{ "LIST", 0, 0, SOCK_LIST, NULL, NULL, 0 },
		{ "LIST kernel", 0, 0, SOCK_LIST, "kernel", NULL, 0 },
		{ "DUMP", 0, 0, SOCK_DUMP, NULL, NULL, 0 },
		{ "DUMP net.ipv4", 0, 0, SOCK_DUMP, "net.ipv4", NULL, 0 },
		{ "DESCRIBE vm.swappiness", 0, 0, SOCK_DESCRIBE, "vm.swappiness", NULL, 0 },
		{ "WATCH vm.swappiness", 0, 0, SOCK_WATCH, "vm.swappiness", NULL, 0 },
		{ "AUDIT", 0, 0, SOCK_AUDIT, NULL, NULL, 0 },
		{ "AUDIT 42", 0, 0, SOCK_AUDIT, NULL, NULL, 42 },
		{ "AUDIT 18446744073709551609", 0, 0, SOCK_AUDIT, NULL, NULL, 18446744073709551609ULL },
		{ "GENERATION kernel.x", 0, 0, SOCK_GENERATION, "kernel.x", NULL, 0 },
		{ "SETIF kernel.x 3 a b ", 0, 0, SOCK_SETIF, "kernel.x", "a b ", 0 },
		{ "SETIF kernel.x 0 ", 0, 0, SOCK_SETIF, "kernel.x", "", 0 },
		/* malformed */
		{ "GENERATION", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "GENERATION kernel.x 3", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "SETIF", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "SETIF kernel.x", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "SETIF kernel.x 3", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "SETIF kernel.x  v", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "SETIF kernel.x x v", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "SETIF kernel.x -1 v", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "SETIF kernel.x 18446744073709551616 v", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "get kernel.x", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "FROB kernel.x", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "GETX kernel.x", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "GET", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "GET ", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "GET  kernel.x", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "GET kernel.x extra", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "GET kernel.x ", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "GET ker\tnel", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "GET ker\rnel", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "GET a\0b", 7, -EINVAL, 0, NULL, NULL, 0 },
		{ "\0\0\0", 3, -EINVAL, 0, NULL, NULL, 0 },
		{ "SET", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "SET kernel.x", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "DESCRIBE", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "WATCH", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "LIST ", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "LIST a b", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "DUMP ", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "DUMP a b", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "dump", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "AUDIT ", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "AUDIT x", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "AUDIT -1", 0, -EINVAL, 0, NULL, NULL, 0 },
		{ "AUDIT 99999999999999999999", 0, -EINVAL, 0, NULL, NULL, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check_row(&rows[i]);
}

/* SETIF's generation: the largest uint64_t and nothing above it. */
static void test_setif_generation(void **state)
{
	struct sock_request req;
	const char *why;
	const char *max = "SETIF k 18446744073709551615 v";

	(void)state;
	assert_int_equal(sock_parse_request(max, strlen(max), &req, &why), 0);
	assert_true(req.expected == UINT64_MAX);
	assert_int_equal(sock_parse_request("SETIF k 42 v", 12, &req, &why), 0);
	assert_true(req.expected == 42);
	assert_int_equal(req.value_len, 1);
}

static void test_line_limit(void **state)
{
	char *line = malloc(SYSCTL_SOCKET_LINE_MAX + 1);
	struct sock_request req;
	const char *why;

	(void)state;
	assert_non_null(line);
	memcpy(line, "SET k ", 6);
	memset(line + 6, 'v', SYSCTL_SOCKET_LINE_MAX - 6);
	/* LINE_MAX - 1 bytes plus the '\n' fit exactly. */
	assert_int_equal(sock_parse_request(line, SYSCTL_SOCKET_LINE_MAX - 1, &req, &why), 0);
	assert_int_equal(req.value_len, SYSCTL_SOCKET_LINE_MAX - 7);
	assert_int_equal(sock_parse_request(line, SYSCTL_SOCKET_LINE_MAX, &req, &why), -E2BIG);
	assert_non_null(strstr(why, "too long"));
	free(line);
}

static void roundtrip(const char *in, size_t len, bool spaces, const char *want)
{
	char out[256], back[256];
	size_t n = sock_escape(in, len, out, sizeof(out), spaces);

	assert_int_equal(n, strlen(want));
	assert_string_equal(out, want);
	assert_null(memchr(out, '\n', n));
	assert_int_equal(sock_unescape(out, n, back), (long)len);
	assert_memory_equal(back, in, len);
}

static void test_escaping(void **state)
{
	char all[256], esc[1100], back[300];
	size_t n;

	(void)state;
	roundtrip("plain value", 11, false, "plain value");
	roundtrip("plain value", 11, true, "plain\\x20value");
	roundtrip("a\\b", 3, false, "a\\\\b");
	roundtrip("l1\nl2\t", 6, false, "l1\\nl2\\t");
	roundtrip("\x01\x1f\x7f", 3, false, "\\x01\\x1f\\x7f");
	roundtrip("nul\0x", 5, false, "nul\\x00x");
	roundtrip("caf\xc3\xa9", 5, false, "caf\xc3\xa9"); /* UTF-8 passes */
	roundtrip("", 0, true, "");
	/* Every byte value survives. */
	for (int i = 0; i < 256; i++)
		all[i] = (char)i;
	n = sock_escape(all, 256, esc, sizeof(esc), true);
	assert_true(n < sizeof(esc));
	assert_null(memchr(esc, '\n', n));
	assert_null(memchr(esc, ' ', n));
	assert_int_equal(sock_unescape(esc, n, back), 256);
	assert_memory_equal(back, all, 256);
	/* A small buffer is cut but terminated; the length says what was needed. */
	assert_int_equal(sock_escape("a\nb", 3, esc, 3, false), 4);
	assert_string_equal(esc, "a\\");
	/* Bad escapes. */
	assert_int_equal(sock_unescape("x\\", 2, back), -EINVAL);
	assert_int_equal(sock_unescape("\\q", 2, back), -EINVAL);
	assert_int_equal(sock_unescape("\\x4", 3, back), -EINVAL);
	assert_int_equal(sock_unescape("\\xg0", 4, back), -EINVAL);
	assert_int_equal(sock_unescape("\\x4A", 4, back), 1);
	assert_int_equal(back[0], 'J');
}

static void test_replies(void **state)
{
	struct sock_reply r;
	const char *l;

	(void)state;
	l = "OK core";
	assert_int_equal(sock_parse_reply(l, strlen(l), &r), 0);
	assert_int_equal(r.kind, SOCK_REPLY_OK);
	assert_int_equal(r.text_len, 4);
	assert_memory_equal(r.text, "core", 4);
	assert_int_equal(sock_parse_reply("OK", 2, &r), 0);
	assert_int_equal(r.kind, SOCK_REPLY_OK);
	assert_int_equal(r.text_len, 0);
	assert_int_equal(sock_parse_reply("OK ", 3, &r), 0);
	assert_int_equal(r.text_len, 0);
	l = "ERR 90 EMSGSIZE kernel.core_pattern: value longer than 127 bytes";
	assert_int_equal(sock_parse_reply(l, strlen(l), &r), 0);
	assert_int_equal(r.kind, SOCK_REPLY_ERR);
	assert_int_equal(r.err, -EMSGSIZE);
	assert_int_equal(r.text_len, strlen("kernel.core_pattern: value longer than 127 bytes"));
	assert_memory_equal(r.text, "kernel.core_pattern:", 20);
	l = "ERR x";
	assert_int_equal(sock_parse_reply(l, strlen(l), &r), -EINVAL);
	l = "OKAY";
	assert_int_equal(sock_parse_reply(l, strlen(l), &r), 0);
	assert_int_equal(r.kind, SOCK_REPLY_DATA);
	l = "ENTRY 0644 rw kernel.x";
	assert_int_equal(sock_parse_reply(l, strlen(l), &r), 0);
	assert_int_equal(r.kind, SOCK_REPLY_DATA);
	assert_int_equal(r.text_len, strlen(l));
}

static void test_errnames(void **state)
{
	char buf[16];

	(void)state;
	assert_string_equal(sock_errname(ENOENT, buf, sizeof(buf)), "ENOENT");
	assert_string_equal(sock_errname(E2BIG, buf, sizeof(buf)), "E2BIG");
	assert_string_equal(sock_errname(EAGAIN, buf, sizeof(buf)), "EAGAIN");
	assert_string_equal(sock_errname(EMSGSIZE, buf, sizeof(buf)), "EMSGSIZE");
	assert_string_equal(sock_errname(ESTALE, buf, sizeof(buf)), "ESTALE"); /* SETIF refused */
	assert_string_equal(sock_errname(4242, buf, sizeof(buf)), "E4242");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requests),  cmocka_unit_test(test_line_limit),
		cmocka_unit_test(test_escaping),  cmocka_unit_test(test_replies),
		cmocka_unit_test(test_errnames), cmocka_unit_test(test_setif_generation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
