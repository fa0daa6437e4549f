/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A loop of refused writes must not fill rcusysd's log (the journal, the
 * disk), and must not go uncounted. rcusysd's policy (tools/rcusysd/
 * policy.c) is installed on a tree as the daemon installs it, and takes
 * 10 000 refused writes of one local user (uid 65534, EACCES), 10 000 of
 * the etcd mirror on an entry root executes (EPERM), and 5 of another user.
 * The log (stderr, into a file) must hold at most the burst per source and
 * rule, one "N similar messages suppressed" line each with the exact rest,
 * and every line of the other user; the policy's counters and the tree's
 * refusal counts must say 10 005 and 10 000. Then the limit alone, on a
 * clock the test chooses: a window's end logs its suppressed count and
 * starts a new burst; sources past the slots share the overflow slot.
 * Prints "held: ..." or "failed: ..." per check, as the shell attacks do.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rcustring/sysctl.h>

#include "log.h"
#include "policy.h"
#include "attack_check.h"

#define FLOOD 10000
#define HOUR 3600


/* Lines of the log file @path containing @needle. */
static unsigned long lines_with(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	unsigned long n = 0;

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	if (f)
		fclose(f);
	return n;
}

static int val = 1;
static char helper[64] = "/sbin/helper";
static struct ctl_table table[] = {
	{ "val", &val, sizeof(int), 0644, proc_dointvec, NULL, NULL, "root writes" },
	{ "helper", helper, sizeof(helper), 0644 | SYSCTL_MODE_EXEC, proc_dostring, NULL, NULL,
	  "root executes it" },
};

static int flood_client(struct sysctl_entry *e, uid_t uid, int n)
{
	struct sysctl_caller who = { .uid = uid, .gid = uid, .pid = 4242 };
	int refused = 0;

	for (int i = 0; i < n; i++) {
		size_t len = 2;
		off_t pos = 0;

		refused += sysctl_entry_write(e, &who, "5\n", &len, &pos) == -EACCES;
	}
	return refused;
}

static int flood_mirror(struct sysctl_tree *tree, int n)
{
	int refused = 0;

	for (int i = 0; i < n; i++)
		refused += sysctl_set_from(tree, "app.helper", "/tmp/evil", 9, NULL,
					   SYSCTL_ORIGIN_MIRROR) == -EPERM;
	return refused;
}

/* The daemon's policy against the floods; the log goes to @log. */
static void test_floods(const char *log)
{
	/* One window for the whole run: the suppressed counts are then exact. */
	struct policy p = { .log_limit = { .interval_s = HOUR } };
	struct sysctl_write_stats *st = calloc(1, sizeof(*st));
	struct sysctl_table_header *h;
	struct sysctl_tree *tree;
	struct sysctl_entry *e;
	int by_user, by_other, by_mirror;

	if (!st || !(tree = sysctl_tree_new()) || sysctl_register_table(tree, "app", table, 2, &h) ||
	    policy_install(&p, tree) || !(e = sysctl_lookup(tree, "app.val"))) {
		check("set up the tree and the policy", 0, "%s", strerror(errno));
		exit(1);
	}
	by_user = flood_client(e, 65534, FLOOD);
	by_other = flood_client(e, 1000, 5);
	by_mirror = flood_mirror(tree, FLOOD);
	policy_log_flush(&p, true); /* as rcusysd does at exit */
	fflush(stderr);
	check("every write was refused", by_user == FLOOD && by_other == 5 && by_mirror == FLOOD,
	      "%d, %d, %d refused", by_user, by_other, by_mirror);
	check("the policy counts every refusal",
	      policy_refused(&p, SYSCTL_ORIGIN_CLIENT) == FLOOD + 5 &&
		      policy_refused(&p, SYSCTL_ORIGIN_MIRROR) == FLOOD,
	      "client %llu, mirror %llu",
	      (unsigned long long)policy_refused(&p, SYSCTL_ORIGIN_CLIENT),
	      (unsigned long long)policy_refused(&p, SYSCTL_ORIGIN_MIRROR));
	sysctl_tree_get_write_stats(tree, st);
	check("the tree counts every refusal by errno",
	      st->refused[EACCES] == FLOOD + 5 && st->refused[EPERM] == FLOOD, "EACCES %llu, EPERM %llu",
	      (unsigned long long)st->refused[EACCES], (unsigned long long)st->refused[EPERM]);
	check("the log holds the burst of the user's refusals", lines_with(log, "refused a client's write of app.val") ==
	      LOG_LIMIT_BURST + 5, "%lu lines (burst %d, and 5 of the other user)",
	      lines_with(log, "refused a client's write of app.val"), LOG_LIMIT_BURST);
	check("the rest is one suppressed count", lines_with(log, "refused writes (EACCES) of uid 65534: "
	      "9990 similar messages suppressed") == 1, "%lu such lines", lines_with(log, "of uid 65534: "));
	check("the other user's lines are all there", lines_with(log, "(EACCES) of uid 1000") == 0 &&
	      lines_with(log, "uid 1000) write it") == 5, "%lu lines",
	      lines_with(log, "uid 1000) write it"));
	check("the mirror's flood is held to its burst and counted",
	      lines_with(log, "refused the etcd mirror's write of app.helper") == LOG_LIMIT_BURST &&
	      lines_with(log, "of the etcd mirror: 9990 similar messages suppressed") == 1,
	      "%lu lines, %lu suppressed lines", lines_with(log, "refused the etcd mirror's write"),
	      lines_with(log, "of the etcd mirror: "));
	check("the suppressed total is the rest", log_limit_suppressed(&p.log_limit) == 2 * (FLOOD - LOG_LIMIT_BURST),
	      "%llu", (unsigned long long)log_limit_suppressed(&p.log_limit));
	check("the log stays small", lines_with(log, "rcusysd:") <= 2 * LOG_LIMIT_BURST + 5 + 2,
	      "%lu lines", lines_with(log, "rcusysd:"));
	sysctl_entry_put(e);
	sysctl_unregister_table(h);
	sysctl_tree_free(tree);
	free(st);
}

/*
 * A settings file's write with a caller that is not root: the socket never
 * sends one (a non-root APPLY is that client's write), so the policy refuses
 * it rather than take it as root's settings, whatever the mode lets the
 * user write (here everyone may write the entry).
 */
static void test_file_from_user(void)
{
	static char open_val[64] = "def";
	static struct ctl_table open_table[] = {
		{ "val", open_val, sizeof(open_val), 0666, proc_dostring, NULL, NULL, "anyone" },
	};
	const struct sysctl_caller nobody = { .uid = 65534, .gid = 65534, .pid = 4242 };
	struct policy p = { .log_limit = { .interval_s = HOUR } };
	struct sysctl_table_header *h;
	struct sysctl_tree *tree = sysctl_tree_new();
	struct sysctl_entry *e;
	char why[256] = "";
	int as_file, as_client, decided;

	if (!tree || sysctl_register_table(tree, "open", open_table, 1, &h) || policy_install(&p, tree) ||
	    !(e = sysctl_lookup(tree, "open.val"))) {
		check("set up the second tree", 0, "%s", strerror(errno));
		exit(1);
	}
	as_file = sysctl_set_from(tree, "open.val", "file", 4, &nobody, SYSCTL_ORIGIN_FILE);
	check("a user's write sent as a settings file's is refused",
	      as_file == -EACCES && !strcmp(open_val, "def"), "returned %d, the value is %s", as_file,
	      open_val);
	decided = policy_decide(&p, e, SYSCTL_ORIGIN_FILE, &nobody, why, sizeof(why));
	check("the refusal names the uid", decided == -EACCES && strstr(why, "uid 65534"), "%d: %s",
	      decided, why);
	as_client = sysctl_set_from(tree, "open.val", "user", 4, &nobody, SYSCTL_ORIGIN_CLIENT);
	check("the same user's own write is written", as_client == 0 && !strcmp(open_val, "user"),
	      "returned %d, the value is %s", as_client, open_val);
	sysctl_entry_put(e);
	sysctl_unregister_table(h);
	sysctl_tree_free(tree);
}

/* The limit alone, on a chosen clock (seconds). */
static void test_windows(const char *log)
{
	struct log_limit l = { .interval_s = 5, .burst = 3 };
	const int64_t s = 1000000000;
	int ok = 0, later = 0, over = 0;
	char key[32];

	log_limit_init(&l);
	for (int i = 0; i < 10; i++)
		ok += log_limit_at(&l, "window test", LOG_WARNING, 100 * s);
	fflush(stderr);
	check("a window gives its burst", ok == 3 && lines_with(log, "window test: ") == 0, "%d lines", ok);
	later = log_limit_at(&l, "window test", LOG_WARNING, 105 * s);
	fflush(stderr);
	check("its end logs the suppressed count and starts a new burst",
	      later && lines_with(log, "window test: 7 similar messages suppressed") == 1,
	      "allowed %d, %lu lines", later, lines_with(log, "window test: 7 similar"));
	/* Sources beyond the slots share one: 40 keys at once, 2 lines each. */
	for (int i = 0; i < 40; i++) {
		snprintf(key, sizeof(key), "source %d", i);
		for (int j = 0; j < 2; j++)
			over += !log_limit_at(&l, key, LOG_WARNING, 200 * s);
	}
	/*
	 * "window test"'s window ended at 110 s, so its slot is free again: 32
	 * keys take the slots, 8 share the overflow (16 lines, burst 3).
	 */
	check("sources past the slots share one overflow slot", over == 13, "%d suppressed", over);
	log_limit_flush(&l, 200 * s, true);
	fflush(stderr);
	check("the overflow's count names it", lines_with(log, "lines of further sources (32 sources busy): "
	      "13 similar messages suppressed") == 1, "%lu lines", lines_with(log, "further sources"));
}

int main(void)
{
	char log[] = "/tmp/attack-log-flood.XXXXXX";
	int fd = mkstemp(log);

	if (fd < 0 || dup2(fd, STDERR_FILENO) < 0) {
		perror("log file");
		return 1;
	}
	close(fd);
	log_init();
	test_floods(log);
	test_windows(log);
	test_file_from_user();
	if (nfailed) {
		FILE *f = fopen(log, "r");
		char line[4096];

		printf("the log's first lines:\n");
		for (int i = 0; f && i < 60 && fgets(line, sizeof(line), f); i++)
			fputs(line, stdout);
		if (f)
			fclose(f);
	}
	unlink(log);
	return nfailed ? 1 : 0;
}
