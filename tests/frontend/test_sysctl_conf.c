/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysctl.d parser: comments, separators, '-' prefix, globs, errors. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "sysctl_conf.h"
#include "../failmalloc.h"

struct seen {
	char out[2048];  /* "key=value[!][*]@line;" per item */
	char errs[512];  /* "line:message;" per error */
};

static int on_item(const struct sysctl_conf_item *it, void *arg)
{
	struct seen *s = arg;
	size_t n = strlen(s->out);

	snprintf(s->out + n, sizeof(s->out) - n, "%s=%s%s%s@%u;", it->key, it->value,
		 it->ignore_failure ? "!" : "", it->glob ? "*" : "", it->line);
	return 0;
}

static void on_error(unsigned line, const char *msg, void *arg)
{
	struct seen *s = arg;
	size_t n = strlen(s->errs);

	snprintf(s->errs + n, sizeof(s->errs) - n, "%u:%s;", line, msg);
}

static int parse(const char *text, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	return sysctl_conf_parse(text, strlen(text), on_item, on_error, s);
}

static void test_assignments_and_comments(void **state)
{
	struct seen s;

	(void)state;
	assert_int_equal(parse("# comment\n; also comment\n\n   \n"
			       "kernel.core_pattern = |/bin/crash %p\n"
			       "\tkernel.modprobe=/sbin/modprobe  \r\n"
			       "fs.ocfs2.nm.hb_ctl_path =\n", &s), 0);
	assert_string_equal(s.out, "kernel/core_pattern=|/bin/crash %p@5;"
				   "kernel/modprobe=/sbin/modprobe@6;"
				   "fs/ocfs2/nm/hb_ctl_path=@7;");
	assert_string_equal(s.errs, "");
}

/* systemd sysctl.d(5): the first separator decides how the key is read. */
static void test_separator_rule(void **state)
{
	struct seen s;

	(void)state;
	assert_int_equal(parse("net.ipv4.conf.enp3s0/200.forwarding = 1\n"
			       "net/ipv4/conf/enp3s0.200/forwarding = 1\n", &s), 0);
	assert_string_equal(s.out, "net/ipv4/conf/enp3s0.200/forwarding=1@1;"
				   "net/ipv4/conf/enp3s0.200/forwarding=1@2;");
}

/* The two path forms: every dotted name reads back as the key it names. */
static void test_dotted_round_trip(void **state)
{
	static const char *const keys[] = { "app/limit", "net/conf/eth0.200/x", "vlan.d/eth0.300/mtu",
					    "a", "x.y" };
	static const char *const shown[] = { "app.limit", "net.conf.eth0/200.x",
					     "/vlan.d/eth0.300/mtu", "a", "/x.y" };
	char name[64], back[64], cut[8];

	(void)state;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		assert_ptr_equal(sysctl_conf_dotted(keys[i], name, sizeof(name)), name);
		assert_string_equal(name, shown[i]);
		snprintf(back, sizeof(back), "%s", name);
		sysctl_conf_normalize_key(back);
		assert_string_equal(back + (back[0] == '/'), keys[i]);
	}
	/* Bounded: cut, never past @size. */
	sysctl_conf_dotted("net/conf/eth0.200/x", cut, sizeof(cut));
	assert_string_equal(cut, "net.con");
}

static void test_ignore_failure_and_globs(void **state)
{
	struct seen s;

	(void)state;
	assert_int_equal(parse("-kernel.hotplug = /sbin/hotplug\n"
			       " - net.ipv4.conf.*.rp_filter = 2\n", &s), 0);
	assert_string_equal(s.out, "kernel/hotplug=/sbin/hotplug!@1;"
				   "net/ipv4/conf/*/rp_filter=2!*@2;");
}

static void test_value_keeps_inner_equals_and_spaces(void **state)
{
	struct seen s;

	(void)state;
	assert_int_equal(parse("kernel.poweroff_cmd = /sbin/poweroff -f a=b\n", &s), 0);
	assert_string_equal(s.out, "kernel/poweroff_cmd=/sbin/poweroff -f a=b@1;");
}

static void test_malformed_lines_reported_and_skipped(void **state)
{
	struct seen s;
	char big[SYSCTL_CONF_LINE_MAX + 32];

	(void)state;
	assert_int_equal(parse("no assignment here\n = value\n-=x\na.b = 1\n", &s), 3);
	assert_string_equal(s.errs, "1:\"no assignment here\" is not an assignment (expected key = value);"
			    "2:empty key (expected key = value);3:empty key (expected key = value);");
	assert_string_equal(s.out, "a/b=1@4;");

	memset(big, 'k', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	big[10] = '=';
	assert_int_equal(parse(big, &s), 1);
	assert_string_equal(s.errs, "1:line too long (at most 66560 bytes);");

	memset(&s, 0, sizeof(s));
	assert_int_equal(sysctl_conf_parse("a=1\n\0b=2\nc=3", 12, on_item, on_error, &s), 1);
	assert_string_equal(s.out, "a=1@1;c=3@3;");
	assert_string_equal(s.errs, "2:NUL byte in line;");
}

static int stop_at_second(const struct sysctl_conf_item *it, void *arg)
{
	(void)arg;
	return it->line == 2 ? 42 : 0;
}

static void test_callback_stops_parse_and_enomem(void **state)
{
	(void)state;
	assert_int_equal(sysctl_conf_parse("a=1\nb=2\nc=3\n", 12, stop_at_second, NULL, NULL), 42);
	failmalloc_arm(1);
	assert_int_equal(sysctl_conf_parse("a=1\n", 4, stop_at_second, NULL, NULL), -ENOMEM);
	failmalloc_disarm();
	/* No trailing newline, NULL callbacks: still counts errors. */
	assert_int_equal(sysctl_conf_parse("x\ny=1", 5, NULL, NULL, NULL), 1);
}

/* systemd-sysctl's merge: a repeated key goes last; an explicit key beats every glob. */
static void test_set_explicit_beats_glob(void **state)
{
	struct sysctl_conf_set *set = sysctl_conf_set_new();
	const char *a = "app.limit = 33\napp.l* = 7\napp.x = 1\n", *b = "app.x = 2\napp.* = 9\n";
	const struct sysctl_conf_item *it;

	(void)state;
	assert_non_null(set);
	assert_int_equal(sysctl_conf_set_add(set, "a.conf", a, strlen(a), NULL, NULL), 0);
	assert_int_equal(sysctl_conf_set_add(set, "b.conf", b, strlen(b), NULL, NULL), 0);
	it = sysctl_conf_set_lookup(set, "app/limit");
	assert_string_equal(it->value, "33");
	assert_string_equal(it->file, "a.conf");
	it = sysctl_conf_set_lookup(set, "app/lx");
	assert_string_equal(it->value, "9"); /* the last glob that matches */
	assert_string_equal(sysctl_conf_set_lookup(set, "/app/x")->value, "2");
	assert_string_equal(sysctl_conf_set_lookup(set, "app/x")->file, "b.conf");
	assert_null(sysctl_conf_set_lookup(set, "other/x"));
	assert_null(sysctl_conf_set_lookup(set, "app/sub/x")); /* '*' stops at '/' */
	/* app.x moved last: a.conf's line is gone. */
	assert_int_equal(sysctl_conf_set_count(set), 4);
	assert_string_equal(sysctl_conf_set_item(set, 2)->key, "app/x");
	assert_int_equal(sysctl_conf_set_item(set, 2)->line, 1);
	sysctl_conf_set_free(set);
}

/* The set's stop: asked every SYSCTL_CONF_STOP_EVERY lines with the file; true ends the parse. */
struct stop_log {
	unsigned asked[8], n, stop_at;
};

static bool stop_at_line(void *arg, const char *file, unsigned line)
{
	struct stop_log *l = arg;

	assert_string_equal(file, "big.conf");
	if (l->n < 8)
		l->asked[l->n++] = line;
	return line >= l->stop_at;
}

static void test_set_stop_every_few_hundred_lines(void **state)
{
	struct sysctl_conf_set *set = sysctl_conf_set_new();
	struct stop_log l = { .stop_at = 2 * SYSCTL_CONF_STOP_EVERY };
	size_t cap = 4 * SYSCTL_CONF_STOP_EVERY * 16, len = 0;
	char *text = malloc(cap);

	(void)state;
	assert_non_null(set);
	assert_non_null(text);
	for (unsigned i = 0; i < 4 * SYSCTL_CONF_STOP_EVERY; i++)
		len += (size_t)snprintf(text + len, cap - len, "k%u = %u\n", i, i);
	sysctl_conf_set_stop(set, stop_at_line, &l);
	assert_int_equal(sysctl_conf_set_add(set, "big.conf", text, len, NULL, NULL), -EINTR);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.asked[0], SYSCTL_CONF_STOP_EVERY);
	assert_int_equal(l.asked[1], 2 * SYSCTL_CONF_STOP_EVERY);
	/* Stopped there: the lines before it are in, none after. */
	assert_int_equal(sysctl_conf_set_count(set), 2 * SYSCTL_CONF_STOP_EVERY - 1);
	sysctl_conf_set_stop(set, NULL, NULL);
	assert_int_equal(sysctl_conf_set_add(set, "big.conf", text, len, NULL, NULL), 0);
	assert_int_equal(sysctl_conf_set_count(set), 4 * SYSCTL_CONF_STOP_EVERY);
	sysctl_conf_set_free(set);
	free(text);
}

static void test_list_dirs_merges_by_name(void **state)
{
	char tmpl[] = "/tmp/sysctl-conf-XXXXXX", path[256], *dirs, **paths;
	const char *files[] = { "etc/20-b.conf", "usr/20-b.conf", "usr/10-a.conf", "usr/x.txt" };
	ssize_t n;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", tmpl, i ? "usr" : "etc");
		assert_int_equal(mkdir(path, 0700), 0);
	}
	for (size_t i = 0; i < 4; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", tmpl, files[i]);
		assert_non_null(f = fopen(path, "w"));
		fclose(f);
	}
	assert_true(asprintf(&dirs, "%s/etc:%s/missing:%s/usr", tmpl, tmpl, tmpl) > 0);
	n = sysctl_conf_list_dirs(dirs, &paths);
	assert_int_equal(n, 2);
	snprintf(path, sizeof(path), "%s/usr/10-a.conf", tmpl);
	assert_string_equal(paths[0], path);
	snprintf(path, sizeof(path), "%s/etc/20-b.conf", tmpl);
	assert_string_equal(paths[1], path);
	sysctl_conf_free_paths(paths, (size_t)n);
	free(dirs);
	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/%s", tmpl, files[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/etc", tmpl);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/usr", tmpl);
	rmdir(path);
	rmdir(tmpl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_assignments_and_comments),
		cmocka_unit_test(test_separator_rule),
		cmocka_unit_test(test_dotted_round_trip),
		cmocka_unit_test(test_ignore_failure_and_globs),
		cmocka_unit_test(test_value_keeps_inner_equals_and_spaces),
		cmocka_unit_test(test_malformed_lines_reported_and_skipped),
		cmocka_unit_test(test_callback_stops_parse_and_enomem),
		cmocka_unit_test(test_set_explicit_beats_glob),
		cmocka_unit_test(test_set_stop_every_few_hundred_lines),
		cmocka_unit_test(test_list_dirs_merges_by_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
