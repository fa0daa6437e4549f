/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A sysctl_commit() of several entries in rcusysd's store
 * (tools/rcusysd/persist.h), and the store's start on a file it cannot
 * read. A commit of a string and a number is one journal record; each
 * write, fsync and truncate of its append failing in turn (EIO, a short
 * write), or the record torn at every byte, or a sector of it never
 * written, leaves none of the commit after a restart, never half; a commit
 * whose record would pass 64 MiB is refused whole; each malloc of a
 * commit failing in turn (the store's own, taking the record into what it
 * keeps, among them) refuses it whole or keeps it whole. Then the start: a read
 * of the file failing, a record damaged before the tail, or one of an
 * unknown kind makes persist_apply() fail and leaves the file as it was,
 * byte for byte, where the store used to start empty; a torn tail is
 * still cut. With --writer and --read it is the process
 * test_persist_kill.sh kills while it commits.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rcustring/sysctl.h>
#include <rcustring/sysctl_commit.h>

#include "../failmalloc.h"
#include "journal.h"
#include "log.h"
#include "persist.h"
#include "store_life.h"

enum call { C_PWRITE, C_FSYNC, C_TRUNCATE, C_READ, C_COUNT };
static const char *const call_names[] = { "write", "fsync", "truncate", "read" };

/* The @at-th call of @kind fails with @err (0: a short write of half). */
static struct {
	enum call kind;
	int at, err, seen[C_COUNT];
	bool armed, hit;
	bool then_truncate; /* and the truncate cutting the refused append off fails too */
} fault;

static bool trip(enum call kind)
{
	if (!fault.armed || fault.kind != kind || ++fault.seen[kind] != fault.at)
		return false;
	fault.hit = true;
	fault.armed = fault.then_truncate;
	if (fault.then_truncate)
		fault.kind = C_TRUNCATE, fault.at = fault.seen[C_TRUNCATE] + 1;
	fault.then_truncate = false;
	errno = fault.err;
	return true;
}

static ssize_t f_pwrite(void *arg, int fd, const void *buf, size_t len, off_t off)
{
	(void)arg;
	if (!trip(C_PWRITE))
		return pwrite(fd, buf, len, off);
	if (fault.err)
		return -1;
	/* Half of it lands; the next call finds the disk full. */
	fault.armed = true, fault.err = ENOSPC, fault.at++;
	return pwrite(fd, buf, len > 1 ? len / 2 : len, off);
}

static int f_fsync(void *arg, int fd)
{
	(void)arg;
	return trip(C_FSYNC) ? -1 : fdatasync(fd);
}

static int f_truncate(void *arg, int fd, off_t len)
{
	(void)arg;
	return trip(C_TRUNCATE) ? -1 : ftruncate(fd, len);
}

static ssize_t f_read(void *arg, int fd, void *buf, size_t len)
{
	(void)arg;
	return trip(C_READ) ? -1 : read(fd, buf, len);
}

static const struct persist_io faulty = { .pwrite = f_pwrite, .fsync = f_fsync,
					  .truncate = f_truncate, .read = f_read };

/* One life of a daemon: a string and an int at their defaults, the store applied. */
struct life {
	char s[64];
	int n;
	struct ctl_table table[2];
	struct sysctl_tree *tree;
	struct sysctl_table_header *h;
	struct persist *p;
	int applied; /* persist_apply()'s return */
};

static int life_start(struct life *l, const char *path)
{
	memset(l, 0, sizeof(*l));
	strcpy(l->s, "s-default");
	l->n = -1;
	l->table[0] = (struct ctl_table){ .procname = "s", .data = l->s, .maxlen = sizeof(l->s),
					  .mode = 0644, .proc_handler = proc_dostring };
	l->table[1] = (struct ctl_table){ .procname = "n", .data = &l->n, .maxlen = sizeof(int),
					  .mode = 0644, .proc_handler = proc_dointvec };
	l->tree = sysctl_tree_new();
	if (!l->tree || sysctl_register_table(l->tree, "app", l->table, 2, &l->h))
		return -1;
	return store_start(l->tree, path, &faulty, &l->p, &l->applied);
}

static void life_end(struct life *l)
{
	store_end(l->p, l->h, l->tree);
}

static const struct sysctl_caller client = { 0, 0, 1 };

/* The pair (x, x): "s-<x>" and <x>, set as one commit. */
static int commit_pair(struct life *l, int x)
{
	char s[32], n[16];
	struct sysctl_commit_item it[2] = { { "app.s", s, 0 }, { "app.n", n, 0 } };

	it[0].len = (size_t)snprintf(s, sizeof(s), "s-%d", x);
	it[1].len = (size_t)snprintf(n, sizeof(n), "%d", x);
	return sysctl_commit(l->tree, it, 2, &client, SYSCTL_ORIGIN_CLIENT, NULL);
}

/* The pair live in @l: x, or -2 when its halves differ (-1: both defaults). */
static int pair_of(const struct life *l)
{
	int x;

	if (!strcmp(l->s, "s-default"))
		return l->n == -1 ? -1 : -2;
	return sscanf(l->s, "s-%d", &x) == 1 && x == l->n ? x : -2;
}

/* After a restart the pair is @want, whole. */
static void expect_pair(const char *path, int want, const char *ctx)
{
	char what[160];
	struct life l;

	if (life_start(&l, path)) {
		check(false, "the store opens again", ctx);
		return;
	}
	snprintf(what, sizeof(what), "after a restart the pair is %d (s=\"%s\" n=%d)", want, l.s,
		 l.n);
	check(l.applied == 0 && pair_of(&l) == want, what, ctx);
	life_end(&l);
}

/* ---- one record per commit ---- */

static int count_rec(const struct journal_rec *r, void *arg)
{
	int *n = arg;

	n[0]++;
	n[1] += r->op == JOURNAL_COMMIT;
	return 0;
}

/* The whole file at @path into @buf (@size); its length or -1. */
static ssize_t slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t len = fd >= 0 ? read(fd, buf, size) : -1;

	if (fd >= 0)
		close(fd);
	return len;
}

static int spill(const char *path, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n = fd >= 0 ? write(fd, buf, len) : -1;

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

/* Records in the journal at @path: n[0] of them, n[1] commits. */
static void records(const char *path, int n[2])
{
	static char buf[1 << 16];
	ssize_t len = slurp(path, buf, sizeof(buf));
	size_t good;

	n[0] = n[1] = 0;
	if (len >= JOURNAL_MAGIC_LEN)
		journal_parse(buf + JOURNAL_MAGIC_LEN, (size_t)len - JOURNAL_MAGIC_LEN, count_rec, n,
			      &good);
}

static void fresh(const char *dir, char *path, size_t size, const char *sub)
{
	char cmd[300];

	snprintf(path, size, "%s/%s/state.conf", dir, sub);
	snprintf(cmd, sizeof(cmd), "rm -rf %s/%s", dir, sub);
	if (system(cmd) != 0)
		printf("cannot clean %s/%s\n", dir, sub);
}

static void one_record(const char *dir)
{
	char path[256], what[128];
	struct persist_stats st;
	struct life l;
	int before[2], after[2];
	uint64_t values;

	fresh(dir, path, sizeof(path), "one");
	if (life_start(&l, path))
		return;
	records(path, before);
	persist_get_stats(l.p, &st);
	check(!commit_pair(&l, 1) && pair_of(&l) == 1, "a commit of a pair is acknowledged, live",
	      "one record");
	values = st.records;
	persist_get_stats(l.p, &st);
	check(st.records == values + 2, "the commit counts two values made durable", "one record");
	records(path, after);
	snprintf(what, sizeof(what), "the commit of two entries is one commit record (%d records, "
		 "%d commits more)", after[0] - before[0], after[1] - before[1]);
	check(after[0] - before[0] == 1 && after[1] - before[1] == 1, what, "one record");
	check(!commit_pair(&l, 1), "the same pair again is acknowledged", "one record");
	records(path, before);
	check(before[0] == after[0], "the same pair again writes nothing (kept exactly)", "one record");
	check(!sysctl_set(l.tree, "app.s", "single", 6, &client), "a single write", "one record");
	records(path, after);
	check(after[0] == before[0] + 1 && after[1] == before[1], "a single write is a plain record",
	      "one record");
	life_end(&l);
	if (life_start(&l, path))
		return;
	/* Old records and commit records read together. */
	check(!strcmp(l.s, "single") && l.n == 1, "plain and commit records replay in order",
	      "one record");
	life_end(&l);
}

/* ---- the commit's append failing ---- */

/* A durable pair 1, then pair 2 committed with the fault armed; none or all of 2 after. */
static void one_fault(const char *dir, enum call kind, int at, int err)
{
	char path[256], ctx[96];
	struct life l;
	int rc, want;

	snprintf(ctx, sizeof(ctx), "%s #%d fails with %s", call_names[kind], at,
		 err ? strerror(err) : "a short write");
	fresh(dir, path, sizeof(path), "fault");
	if (life_start(&l, path))
		return;
	commit_pair(&l, 1);
	memset(&fault, 0, sizeof(fault));
	fault.kind = kind, fault.at = at, fault.err = err, fault.armed = true;
	if (kind == C_TRUNCATE) /* the fsync fails, then cutting the append off */
		fault.kind = C_FSYNC, fault.then_truncate = true;
	rc = commit_pair(&l, 2);
	want = rc ? 1 : 2;
	check(pair_of(&l) == want, rc ? "a refused commit leaves the old pair live" :
				       "an acknowledged commit is live", ctx);
	fault.armed = false;
	life_end(&l);
	printf("%s: %s, the commit %s\n", ctx, fault.hit ? "injected" : "not reached",
	       rc ? "refused" : "acknowledged");
	check(!fault.hit || rc != 0, "the commit whose append failed is refused", ctx);
	expect_pair(path, want, ctx);
}

static void append_faults(const char *dir)
{
	int hits = 0;

	/*
	 * A commit appends with one write and one fsync; the second fails only
	 * where a commit takes two appends (key by key: half of it kept).
	 */
	for (int at = 1; at <= 2; at++) {
		one_fault(dir, C_PWRITE, at, EIO);
		hits += fault.hit;
		one_fault(dir, C_PWRITE, at, 0);
		hits += fault.hit;
		one_fault(dir, C_FSYNC, at, EIO);
		hits += fault.hit;
	}
	one_fault(dir, C_FSYNC, 1, ENOSPC);
	hits += fault.hit;
	one_fault(dir, C_TRUNCATE, 1, EIO);
	hits += fault.hit;
	printf("append faults: %d injected into commits\n", hits);
	check(hits >= 5, "each first call of the commit's append fails once", "append faults");
}

/* ---- a torn commit record ---- */

static void torn_commit(const char *dir)
{
	static char whole[1 << 16], cut[1 << 16];
	char path[256], ctx[96];
	struct stat st;
	struct life l;
	ssize_t len;
	off_t start;
	int tried = 0;

	fresh(dir, path, sizeof(path), "torn");
	if (life_start(&l, path))
		return;
	commit_pair(&l, 1);
	stat(path, &st);
	start = st.st_size;
	commit_pair(&l, 2);
	life_end(&l);
	len = slurp(path, whole, sizeof(whole));
	/* Every length the file can have after a crash inside the append of pair 2. */
	for (off_t at = start; at < len; at++, tried++) {
		snprintf(ctx, sizeof(ctx), "the commit record cut after %lld of its %lld bytes",
			 (long long)(at - start), (long long)(len - start));
		if (spill(path, whole, (size_t)at) || truncate(path, at))
			check(false, "the cut file is written", ctx);
		expect_pair(path, 1, ctx);
	}
	/* Its sector never written (zeros to its end), the next one written. */
	size_t next = ((size_t)len + 511) / 512 * 512;

	memcpy(cut, whole, (size_t)len);
	memset(cut + start, 0, next - (size_t)start);
	memcpy(cut + next, whole + start, (size_t)(len - start));
	cut[next + 20] ^= 1; /* the later record fails too: only the zeros make it a tail */
	spill(path, cut, next + (size_t)(len - start));
	expect_pair(path, 1, "the commit record's sector zeros, a torn record after it");
	printf("torn commit: %d cuts, each restarted with pair 1\n", tried);
}
/* ---- a commit too big for one record ---- */

#define BIG_N 5
#define BIG_LEN (13u << 20) /* 5 of them pass 64 MiB; each is under the store's 16 MiB */

static void too_big_journal(void)
{
	static char key[] = "app.k";
	struct journal_rec it[BIG_N];
	struct journal_buf b = { 0 };
	char *max = malloc(JOURNAL_RECORD_MAX);
	int err;

	for (int i = 0; i < BIG_N; i++)
		it[i] = (struct journal_rec){ .op = JOURNAL_SET, .key = key, .key_len = 5,
					      .value = "", .value_len = BIG_LEN };
	/* The size is checked before a byte is copied: the values need not exist. */
	err = journal_commit_payload(&b, it, BIG_N);
	check(err == -EFBIG && b.len == 0, "a commit record over 64 MiB is -EFBIG, nothing encoded",
	      "too big");
	/* Exactly the limit: the record's fixed part, the count, one item. */
	it[0].value = max;
	it[0].value_len = JOURNAL_RECORD_MAX - 16 - 4 - 12 - 5;
	err = max ? journal_commit_payload(&b, it, 1) : -ENOMEM;
	check(!err, "a commit record of exactly 64 MiB is encoded", "too big");
	it[0].value_len++;
	journal_buf_free(&b);
	check(journal_commit_payload(&b, it, 1) == -EFBIG, "one byte more is -EFBIG", "too big");
	journal_buf_free(&b);
	free(max);
}

/* Through the store: five 13 MiB values committed together are refused whole. */
static void too_big(const char *dir)
{
	struct ctl_table t[BIG_N];
	char names[BIG_N][4], *data[BIG_N], path[256], why[256], *value = malloc(BIG_LEN);
	struct sysctl_commit_item it[BIG_N];
	struct sysctl_table_header *h;
	struct sysctl_tree *tree = sysctl_tree_new();
	struct persist *p = NULL;
	struct stat before, after;
	int err = -ENOMEM, same = 0;

	too_big_journal();
	fresh(dir, path, sizeof(path), "big");
	for (int i = 0; i < BIG_N; i++) {
		snprintf(names[i], sizeof(names[i]), "b%d", i);
		data[i] = calloc(1, BIG_LEN + 1);
		t[i] = (struct ctl_table){ .procname = names[i], .data = data[i],
					   .maxlen = BIG_LEN + 1, .mode = 0644,
					   .proc_handler = proc_dostring };
		it[i] = (struct sysctl_commit_item){ .path = NULL, .value = value, .len = BIG_LEN };
	}
	if (!tree || !value || sysctl_register_table(tree, "big", t, BIG_N, &h) ||
	    persist_open(tree, path, &p, why, sizeof(why)) || persist_apply(p) ||
	    persist_watch(p)) {
		check(false, "a tree of five 13 MiB strings with the store", "too big");
		goto out;
	}
	memset(value, 'v', BIG_LEN);
	static const char *const paths[BIG_N] = { "big.b0", "big.b1", "big.b2", "big.b3", "big.b4" };
	for (int i = 0; i < BIG_N; i++)
		it[i].path = paths[i];
	stat(path, &before);
	err = sysctl_commit(tree, it, BIG_N, &client, SYSCTL_ORIGIN_CLIENT, NULL);
	stat(path, &after);
	for (int i = 0; i < BIG_N; i++)
		same += data[i][0] == '\0';
	check(err == -EFBIG, "a commit of 65 MiB is refused with -EFBIG", "too big");
	printf("too big: %d of %d values unchanged, the file %lld -> %lld bytes\n", same, BIG_N,
	       (long long)before.st_size, (long long)after.st_size);
	check(same == BIG_N && before.st_size == after.st_size,
	      "the refused commit changes no value and writes nothing", "too big");
	sysctl_unregister_table(h);
out:
	persist_close(p);
	sysctl_tree_free(tree);
	for (int i = 0; i < BIG_N; i++)
		free(data[i]);
	free(value);
}

/* ---- a store that cannot be read refuses the start ---- */

/* The journal at @path replaced by @buf (@len); then a start must fail with @want, the file kept. */
static void refused(const char *path, const char *buf, size_t len, int want, const char *ctx)
{
	static char back[1 << 16];
	char what[128];
	struct life l;
	ssize_t n;

	if (spill(path, buf, len) || life_start(&l, path)) {
		check(false, "the store opens", ctx);
		return;
	}
	snprintf(what, sizeof(what), "the start fails with %s (got %s)", strerror(-want),
		 strerror(-l.applied));
	check(l.applied == want, what, ctx);
	check(pair_of(&l) == -1, "nothing of the file is applied", ctx);
	check(persist_watch(l.p) == want, "persist_watch() refuses too: no commit writes the file",
	      ctx);
	life_end(&l);
	n = slurp(path, back, sizeof(back));
	check(n == (ssize_t)len && !memcmp(back, buf, len), "the file is left byte for byte", ctx);
}

static void start_refused(const char *dir)
{
	static char whole[1 << 16], bad[1 << 16];
	struct journal_buf b = { 0 };
	struct journal_rec r = { .op = 9, .key = "app.s", .key_len = 5, .value = "x", .value_len = 1 };
	char path[256], items[4 + 12 + 5 + 1];
	struct stat st;
	struct life l;
	ssize_t len;
	off_t mid, at_commit;

	fresh(dir, path, sizeof(path), "start");
	if (life_start(&l, path))
		return;
	stat(path, &st);
	at_commit = st.st_size;
	commit_pair(&l, 1);
	stat(path, &st);
	mid = st.st_size;
	sysctl_set(l.tree, "app.s", "later", 5, &client);
	life_end(&l);
	len = slurp(path, whole, sizeof(whole));
	memset(&fault, 0, sizeof(fault));
	fault.kind = C_READ, fault.at = 1, fault.err = EIO, fault.armed = true;
	refused(path, whole, (size_t)len, -EIO, "a read of the file fails with EIO");
	fault.armed = false;
	memcpy(bad, whole, (size_t)len);
	bad[mid - 3] ^= 0x20; /* in the commit record, a record after it */
	refused(path, bad, (size_t)len, -EBADMSG, "a commit record damaged before the tail");
	/* Its length made to run past the end: a record after it tells it was no cut append. */
	memcpy(bad, whole, (size_t)len);
	bad[at_commit + 6] ^= 0x01;
	refused(path, bad, (size_t)len, -EBADMSG, "a commit record's length damaged past the end");
	/* Records whose checksum holds but that no version of ours wrote. */
	memcpy(bad, whole, (size_t)len);
	journal_put(&b, &r);
	memcpy(bad + len, b.data, b.len);
	refused(path, bad, (size_t)len + b.len, -EBADMSG, "a last record of an unknown kind");
	journal_buf_free(&b);
	memcpy(items, "\3\0\0\0" "\1\0\0\0" "\5\0\0\0" "\1\0\0\0" "app.s" "x", sizeof(items));
	r = (struct journal_rec){ .op = JOURNAL_COMMIT, .value = items, .value_len = sizeof(items) };
	journal_put(&b, &r);
	memcpy(bad + len, b.data, b.len);
	refused(path, bad, (size_t)len + b.len, -EBADMSG, "a commit record of 3 items holding 1");
	journal_buf_free(&b);
	spill(path, whole, (size_t)len);
	if (life_start(&l, path))
		return;
	check(l.applied == 0 && !strcmp(l.s, "later") && l.n == 1,
	      "the file put back starts with its values", "start refused");
	life_end(&l);
}

/* ---- a process to SIGKILL (test_persist_kill.sh) ---- */

/* --read: the pair the store gives after a restart, "s n" ("unreadable" when it refused). */
static int read_pair(const char *path)
{
	struct life l;

	if (life_start(&l, path))
		return 1;
	if (l.applied)
		printf("unreadable: %s\n", strerror(-l.applied));
	else
		printf("%s %d\n", l.s, l.n);
	life_end(&l);
	return 0;
}

/* --writer: commits pairs (x, x) from the last one on, each acknowledged x on a line of its own. */
static int writer(const char *path)
{
	struct life l;
	int x;

	if (life_start(&l, path) || l.applied)
		return 1;
	x = pair_of(&l);
	for (x = x < 0 ? 1 : x + 1;; x++) {
		char line[16];
		int n = snprintf(line, sizeof(line), "%d\n", x);

		if (commit_pair(&l, x))
			return printf("refused\n"), 1;
		if (write(1, line, (size_t)n) != n)
			return 1;
	}
}

/* ---- out of memory inside a commit ---- */

/*
 * Each malloc of a commit failing in turn, the last ones those of the
 * store taking the record into what it keeps, after the append: the
 * commit is refused or kept whole, in the tree and after a restart (a
 * compaction at close writes what the store keeps), never half.
 */
static void out_of_memory(const char *dir)
{
	char path[256], ctx[64];
	int refused = 0, n;

	fresh(dir, path, sizeof(path), "nomem");
	for (n = 1; n < 200; n++) {
		struct life l;
		long calls;
		int rc, want;

		if (life_start(&l, path))
			return;
		commit_pair(&l, 2 * n - 1);
		failmalloc_arm(n);
		rc = commit_pair(&l, 2 * n);
		calls = failmalloc_disarm();
		want = rc ? 2 * n - 1 : 2 * n;
		snprintf(ctx, sizeof(ctx), "malloc #%d of a commit fails", n);
		check(pair_of(&l) == want, rc ? "the refused commit leaves the old pair live" :
					       "the acknowledged commit is live", ctx);
		life_end(&l);
		expect_pair(path, want, ctx);
		refused += rc != 0;
		if (calls < n)
			break; /* the commit made fewer mallocs: each failed once */
	}
	printf("out of memory: %d mallocs of a commit failed in turn, %d refused it\n", n - 1,
	       refused);
	check(refused >= 5, "the failures reach the commit", "out of memory");
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/persist-commit-XXXXXX", cmd[64];

	log_set_level(LOG_EMERG); /* each refusal is logged */
	if (argc == 3 && !strcmp(argv[1], "--read"))
		return read_pair(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--writer"))
		return writer(argv[2]);
	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	one_record(dir);
	append_faults(dir);
	torn_commit(dir);
	too_big(dir);
	start_refused(dir);
	out_of_memory(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	printf("persist-commit: %d checks, %d failed\n", nchecks, nfailed);
	return nfailed != 0;
}
