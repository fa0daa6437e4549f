/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysctl_commit(): a refused item changes nothing and is named, a path
 * twice is refused, the commit hook is called once and sees every entry
 * (a single write still sees one), the listener is told once, a hook's
 * refusal puts every value back, and a program's own handler is refused.
 * A hooked table's entry is refused too, its hook never called, but its
 * owner's sysctl_commit_owner() commits it with the others (origin MIRROR).
 * The tree's write counts hold a commit's values, and a refusal once.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "rcustring/rcustring.h"
#include "rcustring/sysctl.h"
#include "rcustring/sysctl_commit.h"

static struct rcustring host;
static int port = 80, zero = 0, top = 65535;
static char note[16] = "n";

static int own(const struct ctl_table *t, int write, void *buf, size_t *lenp, off_t *ppos)
{
	return proc_dostring(t, write, buf, lenp, ppos);
}

static struct ctl_table table[] = {
	{ .procname = "host", .data = &host, .maxlen = 16, .mode = 0644,
	  .proc_handler = proc_rcu_string },
	{ .procname = "port", .data = &port, .maxlen = sizeof(int), .mode = 0644,
	  .proc_handler = proc_dointvec_minmax, .extra1 = &zero, .extra2 = &top },
	{ .procname = "note", .data = note, .maxlen = sizeof(note), .mode = 0644,
	  .proc_handler = own },
};

/* A hooked table, as the etcd mirror registers the entries etcd owns. */
static int mirrored = 1, write_hook_calls;
static struct ctl_table owned[] = {
	{ .procname = "weight", .data = &mirrored, .maxlen = sizeof(int), .mode = 0644,
	  .proc_handler = proc_dointvec_minmax, .extra1 = &zero, .extra2 = &top },
};

static int write_hook(void *arg, struct sysctl_entry *e, const struct sysctl_caller *who,
		      const char *buf, size_t len, const uint64_t *expected)
{
	(void)arg, (void)e, (void)who, (void)buf, (void)len, (void)expected;
	write_hook_calls++;
	return -EROFS; /* the owner applies values; a local write is refused */
}

static int hook_calls, hook_seen, hook_err, notified, notified_n;
static enum sysctl_origin notified_origin;

static int hook(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	(void)e, (void)arg;
	hook_calls++;
	hook_seen = (int)sysctl_change_entries(ch, NULL, NULL);
	return hook_err;
}

static void listener(struct sysctl_tree *t, struct sysctl_entry *const *e, const uint64_t *seqs,
		     size_t n, enum sysctl_origin origin, void *arg)
{
	(void)t, (void)e, (void)seqs, (void)arg;
	notified++;
	notified_origin = origin;
	notified_n = (int)n;
}

static struct sysctl_tree *tree;
static struct sysctl_table_header *hdr, *owned_hdr;

static void value_is(const char *path, const char *want)
{
	char buf[64];

	assert_true(sysctl_get(tree, path, buf, sizeof(buf)) > 0);
	buf[strcspn(buf, "\n")] = '\0';
	assert_string_equal(buf, want);
}

static int commit2(const char *p0, const char *v0, const char *p1, const char *v1, size_t *failed)
{
	struct sysctl_commit_item it[2] = { { p0, v0, strlen(v0) }, { p1, v1, strlen(v1) } };

	return sysctl_commit(tree, it, 2, NULL, SYSCTL_ORIGIN_PROGRAM, failed);
}

static void test_refusals(void **state)
{
	struct sysctl_write_stats before, after;
	size_t failed = 99;

	(void)state;
	assert_int_equal(sysctl_tree_get_write_stats(tree, &before), 0);
	assert_int_equal(commit2("app.host", "b", "app.port", "70000", &failed), -EINVAL);
	assert_int_equal(failed, 1); /* the port is named */
	assert_int_equal(commit2("app.host", "a-value-too-long!", "app.port", "1", &failed),
			 -EMSGSIZE);
	assert_int_equal(failed, 0);
	assert_int_equal(commit2("app.port", "1", "app.port", "2", &failed), -EINVAL);
	assert_int_equal(failed, 1); /* one path twice */
	assert_int_equal(commit2("app.host", "b", "app.note", "x", &failed), -EOPNOTSUPP);
	assert_int_equal(failed, 1);
	assert_int_equal(commit2("app.host", "b", "app.nope", "x", &failed), -ENOENT);
	assert_int_equal(failed, 1);
	value_is("app.host", "a");
	value_is("app.port", "80");
	assert_int_equal(sysctl_tree_get_write_stats(tree, &after), 0);
	assert_int_equal(after.written, before.written);
	assert_int_equal(after.refused[EINVAL], before.refused[EINVAL] + 2);
	assert_int_equal(after.refused[EMSGSIZE], before.refused[EMSGSIZE] + 1);
	assert_int_equal(after.refused[EOPNOTSUPP], before.refused[EOPNOTSUPP] + 1);
	assert_int_equal(after.refused[ENOENT], before.refused[ENOENT]);
	assert_int_equal(hook_calls, 0);
	assert_int_equal(notified, 0);
}

static void test_one_commit(void **state)
{
	struct sysctl_entry *h = sysctl_lookup(tree, "app.host"), *p = sysctl_lookup(tree, "app.port");
	uint64_t hc = sysctl_entry_changes(h), pc = sysctl_entry_changes(p);
	struct sysctl_write_stats before, after;
	size_t failed;

	(void)state;
	hook_calls = notified = 0;
	assert_int_equal(sysctl_tree_get_write_stats(tree, &before), 0);
	assert_int_equal(commit2("app.host", "b", "app.port", "8080", &failed), 0);
	assert_int_equal(sysctl_tree_get_write_stats(tree, &after), 0);
	assert_int_equal(after.written, before.written + 2);
	assert_int_equal(hook_calls, 1);
	assert_int_equal(hook_seen, 2);
	assert_int_equal(notified, 1);
	assert_int_equal(notified_n, 2);
	assert_int_equal(sysctl_entry_changes(h), hc + 1);
	assert_int_equal(sysctl_entry_changes(p), pc + 1);
	/* The hook refuses: both values go back, nothing counted or told. */
	hook_err = -ENOSPC;
	assert_int_equal(commit2("app.host", "ccc", "app.port", "9", &failed), -ENOSPC);
	hook_err = 0;
	value_is("app.host", "b");
	value_is("app.port", "8080");
	assert_int_equal(sysctl_entry_changes(h), hc + 1);
	assert_int_equal(notified, 1);
	/* A single write is what it was: the hook sees its one entry. */
	assert_int_equal(sysctl_set(tree, "app.port", "1", 1, NULL), 0);
	assert_int_equal(hook_seen, 1);
	assert_int_equal(notified, 1);
	sysctl_entry_put(h);
	sysctl_entry_put(p);
}

static void test_owner(void **state)
{
	struct sysctl_commit_item it[2] = { { "app.port", "81", 2 }, { "mirror.weight", "7", 1 } };
	size_t failed = 99;

	(void)state;
	hook_calls = notified = write_hook_calls = 0;
	/* Anyone else's commit: the hook would take the write later, apart. */
	assert_int_equal(sysctl_commit(tree, it, 2, NULL, SYSCTL_ORIGIN_PROGRAM, &failed),
			 -EOPNOTSUPP);
	assert_int_equal(failed, 1);
	assert_int_equal(write_hook_calls, 0);
	value_is("app.port", "1");
	/* The owner's: one commit of both, past the write hook. */
	assert_int_equal(sysctl_commit_owner(tree, it, 2, NULL, &failed), 0);
	value_is("app.port", "81");
	value_is("mirror.weight", "7");
	assert_int_equal(write_hook_calls, 0);
	assert_int_equal(hook_calls, 1);
	assert_int_equal(hook_seen, 2);
	assert_int_equal(notified, 1);
	assert_int_equal(notified_origin, SYSCTL_ORIGIN_MIRROR);
	/* Its refusals are a commit's: the value checked, nothing stored. */
	it[1].value = "-1";
	it[1].len = 2;
	assert_int_equal(sysctl_commit_owner(tree, it, 2, NULL, &failed), -EINVAL);
	assert_int_equal(failed, 1);
	value_is("mirror.weight", "7");
	/* A program's own handler stays out of the owner's commits too. */
	it[1] = (struct sysctl_commit_item){ "app.note", "x", 1 };
	assert_int_equal(sysctl_commit_owner(tree, it, 2, NULL, &failed), -EOPNOTSUPP);
	assert_int_equal(failed, 1);
	/* A single write of the hooked entry still goes to its hook. */
	assert_int_equal(sysctl_set(tree, "mirror.weight", "8", 1, NULL), -EROFS);
	assert_int_equal(write_hook_calls, 1);
	value_is("mirror.weight", "7");
}

static int setup(void **state)
{
	(void)state;
	tree = sysctl_tree_new();
	if (!tree || rcustring_init(&host, 16, "a") ||
	    sysctl_register_table(tree, "app", table, 3, &hdr) ||
	    sysctl_register_table_hooked(tree, "mirror", owned, 1, write_hook, NULL, &owned_hdr))
		return -1;
	sysctl_tree_set_commit(tree, hook, NULL);
	sysctl_tree_set_commit_notify(tree, listener, NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sysctl_unregister_table(owned_hdr);
	sysctl_unregister_table(hdr);
	sysctl_tree_free(tree);
	rcustring_destroy(&host);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_one_commit),
		cmocka_unit_test(test_owner),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
