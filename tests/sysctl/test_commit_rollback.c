/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A write the commit hook refuses is rolled back exactly: the stored data
 * of the library's kinds comes back byte for byte (2 jiffies stayed 2, not
 * the 0 its text "0" gives; a minmax value outside its bounds, which its
 * handler would refuse as text, stays), the change is not counted, no
 * callback runs; a program's own handler that refuses its old text makes
 * the write fail with -ENOTRECOVERABLE.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "rcustring/sysctl.h"

static int refuse(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	(void)e, (void)ch, (void)arg;
	return -ENOSPC;
}

static void quiet(void *arg, const char *message)
{
	(void)arg, (void)message;
}

static int calls;

static void on_change(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	(void)e, (void)ch, (void)arg;
	calls++;
}

/* A program's handler that takes "ok..." only: its old text "old" cannot go back. */
static char opaque[16] = "old";

static int picky(const struct ctl_table *t, int write, void *buf, size_t *lenp, off_t *ppos)
{
	if (write && (*lenp < 2 || memcmp(buf, "ok", 2)))
		return -EINVAL;
	if (write) {
		size_t n = *lenp < sizeof(opaque) - 1 ? *lenp : sizeof(opaque) - 1;

		memcpy(opaque, buf, n);
		opaque[n] = '\0';
		*ppos += (off_t)*lenp;
		return 0;
	}
	return proc_dostring(t, write, buf, lenp, ppos);
}

static int one = 1, hundred = 100;
static int jiffies = 2, bounded = 0, vec[3] = { 7, -8, 9 };
static char str[32] = "  blanks kept  ";

static struct ctl_table table[] = {
	{ .procname = "jiffies", .data = &jiffies, .maxlen = sizeof(int), .mode = 0644,
	  .proc_handler = proc_dointvec_jiffies },
	{ .procname = "bounded", .data = &bounded, .maxlen = sizeof(int), .mode = 0644,
	  .proc_handler = proc_dointvec_minmax, .extra1 = &one, .extra2 = &hundred },
	{ .procname = "vec", .data = vec, .maxlen = sizeof(vec), .mode = 0644,
	  .proc_handler = proc_dointvec },
	{ .procname = "str", .data = str, .maxlen = sizeof(str), .mode = 0644,
	  .proc_handler = proc_dostring },
	{ .procname = "opaque", .data = opaque, .maxlen = sizeof(opaque), .mode = 0644,
	  .proc_handler = picky },
};

static void refused(struct sysctl_tree *t, const char *path, const char *value, int want)
{
	struct sysctl_entry *e = sysctl_lookup(t, path);
	struct sysctl_callback *cb;
	uint64_t before;

	assert_non_null(e);
	before = sysctl_entry_changes(e);
	assert_int_equal(sysctl_entry_on_change(e, on_change, NULL, &cb), 0);
	calls = 0;
	assert_int_equal(sysctl_set(t, path, value, strlen(value), NULL), want);
	assert_int_equal(sysctl_entry_changes(e), before); /* counts nothing */
	assert_int_equal(calls, 0);                        /* tells no one */
	sysctl_callback_remove(cb);
	sysctl_entry_put(e);
}

static void test_rollback(void **state)
{
	struct sysctl_tree *t = sysctl_tree_new();
	struct sysctl_table_header *h;

	(void)state;
	assert_non_null(t);
	sysctl_tree_set_log(t, quiet, NULL);
	assert_int_equal(sysctl_register_table(t, "app", table, 5, &h), 0);
	sysctl_tree_set_commit(t, refuse, NULL);

	refused(t, "app.jiffies", "5", -ENOSPC);
	assert_int_equal(jiffies, 2); /* its text "0" would have stored 0 */
	refused(t, "app.bounded", "50", -ENOSPC);
	assert_int_equal(bounded, 0); /* below min: its text would be refused */
	refused(t, "app.vec", "1 2", -ENOSPC);
	assert_int_equal(vec[0], 7);
	assert_int_equal(vec[1], -8);
	assert_int_equal(vec[2], 9);
	refused(t, "app.str", "x", -ENOSPC);
	assert_string_equal(str, "  blanks kept  ");
	refused(t, "app.opaque", "ok-new", -ENOTRECOVERABLE);
	assert_string_equal(opaque, "ok-new"); /* the handler refused "old": said so */

	sysctl_tree_set_commit(t, NULL, NULL);
	sysctl_unregister_table(h);
	sysctl_tree_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rollback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
