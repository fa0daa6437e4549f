/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of the tree's write check (sysctl_tree_set_check()): it sees
 * every write with its origin and caller, before the handler; a refusal
 * returns its errno and changes nothing: no handler call, no commit hook
 * call, no change counted, no audit record, no callback.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "rcustring/sysctl.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static int ival = 1;
static int handler_writes, commits, callbacks;
static enum sysctl_origin seen_origin;
static const struct sysctl_caller *seen_who;

/* proc_dointvec, counting the writes that reach it. */
static int counting(const struct ctl_table *t, int write, void *buf, size_t *lenp, off_t *ppos)
{
	handler_writes += write;
	return proc_dointvec(t, write, buf, lenp, ppos);
}

static struct ctl_table tbl[] = {
	{ "i", &ival, sizeof(int), 0644, counting },
};

/* Refuses the mirror's writes, lets every other through. */
static int check(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	(void)e, (void)arg;
	seen_origin = ch->origin;
	seen_who = ch->who;
	return ch->origin == SYSCTL_ORIGIN_MIRROR ? -EPERM : 0;
}

static int commit(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	(void)e, (void)ch, (void)arg;
	commits++;
	return 0;
}

static void on_change(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	(void)e, (void)ch, (void)arg;
	callbacks++;
}

static void test_check_refuses_before_the_handler(void **state)
{
	struct sysctl_caller root = { 0, 0, 1 };
	struct sysctl_audit_record rec[4];
	struct sysctl_table_header *h;
	struct sysctl_callback *cb;
	struct sysctl_tree *t = sysctl_tree_new();
	struct sysctl_entry *e;
	char buf[16];

	(void)state;
	assert_non_null(t);
	assert_int_equal(sysctl_tree_set_check(t, check, NULL), 0);
	assert_int_equal(sysctl_tree_set_commit(t, commit, NULL), 0);
	assert_int_equal(sysctl_register_table(t, "app", tbl, 1, &h), 0);
	e = sysctl_lookup(t, "app.i");
	assert_non_null(e);
	assert_int_equal(sysctl_entry_on_change(e, on_change, NULL, &cb), 0);

	assert_int_equal(sysctl_set_from(t, "app.i", "7", 1, &root, SYSCTL_ORIGIN_MIRROR), -EPERM);
	assert_int_equal(seen_origin, SYSCTL_ORIGIN_MIRROR);
	assert_ptr_equal(seen_who, &root);
	assert_int_equal(ival, 1);
	assert_int_equal(handler_writes, 0);
	assert_int_equal(commits, 0);
	assert_int_equal(callbacks, 0);
	assert_int_equal(sysctl_entry_changes(e), 0);
	assert_int_equal(sysctl_audit_read(t, 0, rec, 4), 0);

	/* Another origin passes, and the check saw it as it was. */
	assert_int_equal(sysctl_set_from(t, "app.i", "8", 1, NULL, SYSCTL_ORIGIN_FILE), 0);
	assert_int_equal(seen_origin, SYSCTL_ORIGIN_FILE);
	assert_null(seen_who);
	assert_int_equal(sysctl_get(t, "app.i", buf, sizeof(buf)), 2);
	assert_string_equal(buf, "8\n");
	assert_int_equal(handler_writes, 1);
	assert_int_equal(commits, 1);
	assert_int_equal(sysctl_entry_changes(e), 1);

	/* Without a check, the mirror's write goes through. */
	assert_int_equal(sysctl_tree_set_check(t, NULL, NULL), 0);
	assert_int_equal(sysctl_set_from(t, "app.i", "9", 1, &root, SYSCTL_ORIGIN_MIRROR), 0);
	assert_int_equal(ival, 9);
	sysctl_callback_remove(cb);
	sysctl_entry_put(e);
	sysctl_unregister_table(h);
	sysctl_tree_free(t);
}

static void test_entry_exec(void **state)
{
	static struct ctl_table rows[] = {
		{ "helper", &ival, sizeof(int), 0644 | SYSCTL_MODE_EXEC, proc_dointvec },
		{ "plain", &ival, sizeof(int), 0644, proc_dointvec },
	};
	struct sysctl_table_header *h;
	struct sysctl_tree *t = sysctl_tree_new();
	struct sysctl_entry *x, *p, *d;

	(void)state;
	assert_int_equal(sysctl_register_table(t, "k", rows, 2, &h), 0);
	x = sysctl_lookup(t, "k.helper");
	p = sysctl_lookup(t, "k.plain");
	d = sysctl_lookup(t, "k");
	assert_int_equal(sysctl_entry_exec(x), 1);
	assert_int_equal(sysctl_entry_exec(p), 0);
	assert_int_equal(sysctl_entry_exec(d), 0);
	assert_int_equal(sysctl_entry_exec(NULL), 0);
	assert_int_equal(sysctl_entry_mode(x), 0644); /* the flag is no mode bit */
	sysctl_entry_put(x), sysctl_entry_put(p), sysctl_entry_put(d);
	sysctl_unregister_table(h);
	sysctl_tree_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_refuses_before_the_handler),
		cmocka_unit_test(test_entry_exec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
