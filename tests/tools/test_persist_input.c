/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysd's state file held to the standard of every other input
 * (tools/rcusysd/persist.h): a journal with any one of its 8 magic bytes
 * flipped stops the start and is left byte for byte, where it used to be
 * "migrated" as text and replaced by an empty journal, while a real text
 * state file still migrates and a text file with a NUL or a line that is
 * not an assignment is damage too; a record (or a commit's item) whose key
 * holds a NUL under a checksum that holds is damage, and the kept map
 * compares keys by length (ASan: no read past a shorter key); a file over
 * the limit is not read, and the store never writes one; a value that no
 * longer applies is logged with its errno's name and the limit, as the
 * socket words it; 5 000 writes a full disk refuses log at most a burst
 * and one "suppressed" line per uid, and the lines and the suppressed count
 * add up to every refusal. The log (stderr) goes to a file the checks read.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rcustring/sysctl.h>
#include <rcustring/sysctl_commit.h>

#include "journal.h"
#include "kept.h"
#include "log.h"
#include "persist.h"
#include "store_life.h"

static char logpath[256];

/* The log from now on starts empty. */
static void log_reset(void)
{
	fflush(stderr);
	if (ftruncate(2, 0) != 0)
		perror("ftruncate log");
}

/* Lines of the log holding @needle. */
static int log_count(const char *needle)
{
	FILE *f = fopen(logpath, "r");
	char line[8192];
	int n = 0;

	fflush(stderr);
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

static int read_file(const char *path, char *buf, size_t size, size_t *len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size);
	close(fd);
	if (n < 0)
		return -1;
	*len = (size_t)n;
	return 0;
}

static int write_file(const char *path, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	bool ok = fd >= 0 && write(fd, buf, len) == (ssize_t)len;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/* A fresh state directory @dir/@name (mode 0700) and its state file's path. */
static void fresh(const char *dir, char *path, size_t size, const char *name)
{
	char sub[200], cmd[300];

	snprintf(sub, sizeof(sub), "%s/%s", dir, name);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", sub);
	if (system(cmd) != 0 || mkdir(sub, 0700) != 0)
		perror(sub);
	snprintf(path, size, "%s/state.conf", sub);
}

/* One life: app.s (a string of @maxlen bytes) and app.n (0..10 when @minmax). */
struct life {
	char s[4096];
	int n;
	int lo, hi;
	struct ctl_table table[2];
	struct sysctl_tree *tree;
	struct sysctl_table_header *h;
	struct persist *p;
	int applied;
};

static const struct sysctl_caller client = { 1000, 1000, 1 }, other = { 1001, 1001, 2 },
				  third = { 1002, 1002, 3 };

static int life_start_as(struct life *l, const char *path, size_t maxlen, bool minmax,
			 const struct persist_io *io)
{
	memset(l, 0, sizeof(*l));
	strcpy(l->s, "s-default");
	l->n = 1, l->lo = 0, l->hi = 10;
	l->table[0] = (struct ctl_table){ .procname = "s", .data = l->s, .maxlen = maxlen,
					  .mode = 0666, .proc_handler = proc_dostring };
	l->table[1] = (struct ctl_table){ .procname = "n", .data = &l->n, .maxlen = sizeof(int),
					  .mode = 0666, .proc_handler = minmax ?
					  proc_dointvec_minmax : proc_dointvec,
					  .extra1 = &l->lo, .extra2 = &l->hi };
	l->tree = sysctl_tree_new();
	if (!l->tree || sysctl_register_table(l->tree, "app", l->table, 2, &l->h))
		return -1;
	return store_start(l->tree, path, io ? io : &(struct persist_io){ 0 }, &l->p, &l->applied);
}

static int life_start(struct life *l, const char *path)
{
	return life_start_as(l, path, 64, false, NULL);
}

static void life_end(struct life *l)
{
	store_end(l->p, l->h, l->tree);
}

/* ---- finding 2: a flipped magic byte is damage, a text file still migrates ---- */

/* The start on @path refuses (-EBADMSG), applies nothing and leaves the file as @want. */
static void expect_refused(const char *path, const char *want, size_t want_len, const char *ctx)
{
	static char now[1 << 16];
	struct life l;
	size_t len = 0;

	if (life_start(&l, path))
		return check(false, "the store opens", ctx);
	check(l.applied == -EBADMSG, "the start refuses the file (-EBADMSG)", ctx);
	check(!strcmp(l.s, "s-default") && l.n == 1, "nothing of it is applied", ctx);
	check(persist_watch(l.p) == -EBADMSG,
	      "no commit hook: no write can replace the file with a journal of nothing", ctx);
	life_end(&l);
	check(!read_file(path, now, sizeof(now), &len) && len == want_len &&
	      !memcmp(now, want, len), "the file is left byte for byte", ctx);
}

static void flipped_magic(const char *dir)
{
	static char good[1 << 16], bad[1 << 16];
	char path[256], ctx[96], pattern[300];
	struct life l;
	size_t len = 0;
	glob_t g;

	fresh(dir, path, sizeof(path), "magic");
	if (life_start(&l, path))
		return check(false, "the store opens", "magic");
	check(!sysctl_set(l.tree, "app.s", "runtime-value", 13, &client) &&
	      !sysctl_set(l.tree, "app.n", "42", 2, &client), "two values kept", "magic");
	life_end(&l);
	if (read_file(path, good, sizeof(good), &len) || !journal_is(good, len))
		return check(false, "a journal was written", "magic");
	for (int i = 0; i < JOURNAL_MAGIC_LEN; i++) {
		memcpy(bad, good, len);
		bad[i] ^= 0x01;
		write_file(path, bad, len);
		snprintf(ctx, sizeof(ctx), "magic byte %d flipped", i);
		log_reset();
		expect_refused(path, bad, len, ctx);
		check(log_count(": damaged: neither a journal") == 1 && log_count(path) == 1 &&
		      log_count(": a NUL byte)") == 1, "the log names the file, byte and reason", ctx);
		check(log_count("it reads as a journal of 3 records") == 1,
		      "the log says the rest is a journal", ctx);
		check(log_count("values of a text state file") == 0, "nothing is migrated", ctx);
	}
	/* The magic repaired, every value is back. */
	write_file(path, good, len);
	if (life_start(&l, path))
		return;
	check(l.applied == 0 && !strcmp(l.s, "runtime-value") && l.n == 42,
	      "the repaired file applies whole", "magic");
	life_end(&l);
	snprintf(pattern, sizeof(pattern), "%s.migrated-*", path);
	check(glob(pattern, 0, NULL, &g) == GLOB_NOMATCH, "no .migrated file was made", "magic");
	globfree(&g);
}

static void text_files(const char *dir)
{
	static const char text[] = "# rcusysd 0.1\napp.s = text-value\n\napp.n = 7\n";
	static const char bad_line[] = "app.s = text-value\nnot an assignment\napp.n = 7\n";
	static const char with_nul[] = "app.s = text\0value\n";
	char path[256];
	struct life l;

	fresh(dir, path, sizeof(path), "text");
	write_file(path, text, sizeof(text) - 1);
	log_reset();
	if (life_start(&l, path))
		return check(false, "the store opens", "text");
	check(l.applied == 0 && !strcmp(l.s, "text-value") && l.n == 7,
	      "a real text state file still migrates", "text");
	check(persist_holds(l.p, "app.s") && persist_holds(l.p, "app.n"), "both values are kept",
	      "text");
	check(log_count("migrated 2 values of a text state file") == 1, "the migration is logged",
	      "text");
	life_end(&l);
	fresh(dir, path, sizeof(path), "badline");
	write_file(path, bad_line, sizeof(bad_line) - 1);
	log_reset();
	expect_refused(path, bad_line, sizeof(bad_line) - 1, "a text line that is no assignment");
	check(log_count("(byte 19: \"not an assignment\" is not an assignment") == 1,
	      "the log names the byte of the bad line and why", "text");
	fresh(dir, path, sizeof(path), "nul");
	write_file(path, with_nul, sizeof(with_nul) - 1);
	log_reset();
	expect_refused(path, with_nul, sizeof(with_nul) - 1, "a text file holding a NUL");
	check(log_count("(byte 12: a NUL byte)") == 1, "the log names the NUL's byte", "text");
}

/* ---- finding 8: a key holding a NUL is damage; keys compare by length ---- */

static uint32_t crc32c(const unsigned char *p, size_t len)
{
	uint32_t c = 0xffffffffu;

	while (len--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0x82f63b78u ^ (c >> 1) : c >> 1;
	}
	return c ^ 0xffffffffu;
}

static void le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* A SET record of @key (@key_len bytes, any) to "evil\n" at @out, its checksum right; its size. */
static size_t crafted_set(unsigned char *out, const char *key, size_t key_len)
{
	size_t body = 16 + key_len + 5;

	le(out + 4, body, 4);
	out[8] = JOURNAL_SET, out[9] = 0, out[10] = out[11] = 0;
	le(out + 12, key_len, 4);
	le(out + 16, 1796600000, 8);
	memcpy(out + 24, key, key_len);
	memcpy(out + 24 + key_len, "evil\n", 5);
	le(out, crc32c(out + 4, 4 + body), 4);
	return 8 + body;
}

static void nul_keys(const char *dir)
{
	static const char key[] = "app.s\0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
	static unsigned char file[4096];
	struct journal_rec items[2] = {
		{ .op = JOURNAL_SET, .key = "app.s", .key_len = 5, .value = "ok\n", .value_len = 3 },
		{ .op = JOURNAL_SET, .key = "app.n", .key_len = 5, .value = "3\n", .value_len = 2 },
	};
	struct journal_rec c = { .op = JOURNAL_COMMIT };
	struct journal_buf b = { 0 }, pay = { 0 };
	char path[256];
	size_t n;

	/* A kept record, then one whose key is "app.s", a NUL and more (the red team's file). */
	journal_put_magic(&b);
	journal_put(&b, &items[0]);
	memcpy(file, b.data, b.len);
	n = b.len + crafted_set(file + b.len, key, sizeof(key) - 1);
	fresh(dir, path, sizeof(path), "nulkey");
	write_file(path, (char *)file, n);
	log_reset();
	expect_refused(path, (char *)file, n, "a record's key holds a NUL");
	check(log_count("is damaged and is not a torn tail") == 1, "the log calls it damage",
	      "a record's key holds a NUL");
	/* The same key as a commit's item: encoded with a good key, then a byte made NUL. */
	check(journal_commit_payload(&pay, items, 2) == 0, "a commit's items encode", "nul item");
	pay.data[4 + 12 + 3] = '\0'; /* "app.s" -> "app\0s" in the first item */
	c.value = pay.data, c.value_len = pay.len;
	b.len = JOURNAL_MAGIC_LEN;
	check(journal_put(&b, &c) == 0, "the commit record encodes", "nul item");
	fresh(dir, path, sizeof(path), "nulitem");
	write_file(path, b.data, b.len);
	expect_refused(path, b.data, b.len, "a commit item's key holds a NUL");
	/* The encoder refuses what the decoder would. */
	items[0].key = "app\0s";
	check(journal_put(&b, &items[0]) == -EINVAL, "journal_put refuses a key holding a NUL",
	      "encode");
	items[0].key_len = 0;
	check(journal_put(&b, &items[0]) == -EINVAL, "journal_put refuses an empty key", "encode");
	journal_buf_free(&b);
	journal_buf_free(&pay);
}

static size_t fnv(const char *key, size_t len)
{
	uint64_t x = 1469598103934665603ull;

	while (len--)
		x = (x ^ (unsigned char)*key++) * 1099511628211ull;
	return (size_t)x;
}

/*
 * kept_find with a key that is a stored key, a NUL and more, in the same
 * bucket (FNV-1a, as kept.c hashes): compared by length it is another key
 * (under ASan, the old strncmp-and-terminator compare read past the end of
 * the stored key).
 */
static void kept_lengths(void)
{
	struct kept_map m = { 0 };
	char key[80] = "pub.val";
	size_t want;
	bool found = false;

	kept_set(&m, "pub.val", 7, "v", 1, 0, 0);
	want = fnv("pub.val", 7) & (m.nbuckets - 1);
	for (unsigned i = 0; i < 1000000 && !found; i++) {
		snprintf(key + 8, sizeof(key) - 8, "%06u%s", i,
			 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		found = (fnv(key, 71) & (m.nbuckets - 1)) == want;
	}
	check(found, "a longer key in the stored key's bucket found", "kept");
	check(kept_find(&m, key, 71) == NULL, "\"pub.val\\0...\" is not \"pub.val\"", "kept");
	check(kept_find(&m, "pub.val", 7) != NULL, "\"pub.val\" is found", "kept");
	check(kept_find(&m, "pub.va", 6) == NULL, "a prefix is not found", "kept");
	kept_free(&m);
}

/* ---- the bound: a file over the limit is not read, and never written ---- */

static size_t endless;

/* A file that keeps growing while it is read (each read gives all it may). */
static ssize_t grow_read(void *arg, int fd, void *buf, size_t len)
{
	(void)arg, (void)fd, (void)buf;
	endless += len;
	return (ssize_t)len;
}

static void size_bound(const char *dir)
{
	struct persist_io growing = { .read = grow_read };
	char path[256], big[4000];
	struct life l;
	struct stat st;
	int fd, acked = 0, err = 0;


	/* Sparse: one byte over the limit costs no disk. */
	fresh(dir, path, sizeof(path), "big");
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)PERSIST_FILE_MAX + 1) != 0)
		return check(false, "a sparse file", "size");
	close(fd);
	log_reset();
	if (life_start(&l, path))
		return;
	check(l.applied == -EFBIG, "a file over the limit is refused (-EFBIG)", "size");
	life_end(&l);
	check(log_count("over the limit of a state file (EFBIG: 268435456 bytes)") == 1,
	      "the log names the file's size and the limit", "size");
	check(!stat(path, &st) && st.st_size == (off_t)PERSIST_FILE_MAX + 1,
	      "the file is left as it was", "size");
	/* Small at the fstat, endless at the read: the read stops one byte past the limit. */
	fresh(dir, path, sizeof(path), "growing");
	write_file(path, "app.s = x\n", 10);
	if (life_start_as(&l, path, 64, false, &growing))
		return;
	check(l.applied == -EFBIG && endless <= (size_t)PERSIST_FILE_MAX + 1,
	      "a file growing while read is cut one byte past the limit", "size");
	life_end(&l);
	/*
	 * Written, with a limit of 4 KiB: 1 KiB values, ten of them, compact
	 * instead of passing it; a value the compacted file has no room for is
	 * refused (-EFBIG); the file never passes the limit.
	 */
	fresh(dir, path, sizeof(path), "write");
	if (life_start_as(&l, path, sizeof(l.s), false, NULL))
		return;
	persist_set_file_max(l.p, 4096);
	log_reset();
	for (int i = 0; i < 11; i++) {
		size_t n = i < 10 ? 1000 : 3500;

		memset(big, 'a' + i, n);
		snprintf(big + n, sizeof(big) - n, "-%d", i);
		err = sysctl_set(l.tree, "app.s", big, strlen(big), &client);
		acked += !err;
		check(!stat(path, &st) && st.st_size <= 4096, "the file never passes the limit",
		      "size");
	}
	check(acked == 10, "ten 1 KiB values in a 4 KiB file: compacted, every one kept", "size");
	check(err == -EFBIG, "a value with no room even compacted is refused (-EFBIG)", "size");
	check(log_count("cannot persist app.s to ") == 1 &&
	      log_count(": EFBIG: the state file would pass its limit (4096 bytes) even compacted "
			"(the write is refused)") == 1, "the refusal names the entry, errno and limit",
	      "size");
	life_end(&l);
	if (life_start_as(&l, path, sizeof(l.s), false, NULL))
		return;
	check(l.applied == 0 && strlen(l.s) == 1002 && !strcmp(l.s + 1000, "-9"),
	      "the last acknowledged value comes back", "size");
	life_end(&l);
}

/* ---- refusals name the entry, the errno and the limit, as the socket does ---- */

static void messages(const char *dir)
{
	char path[256];
	struct life l;

	fresh(dir, path, sizeof(path), "explain");
	if (life_start_as(&l, path, 64, false, NULL))
		return;
	sysctl_set(l.tree, "app.s", "a value of more than sixteen bytes", 34, &client);
	sysctl_set(l.tree, "app.n", "42", 2, &client);
	life_end(&l);
	/* The next start declares app.s with 16 bytes and app.n as 0..10. */
	log_reset();
	if (life_start_as(&l, path, 16, true, NULL))
		return;
	check(l.applied == 0 && !persist_holds(l.p, "app.s") && !persist_holds(l.p, "app.n"),
	      "values that no longer apply are kept no more", "explain");
	life_end(&l);
	check(log_count("app.s: EMSGSIZE: value longer than 15 bytes (not restored; kept no more)")
	      == 1, "a too long value: its entry, errno name and limit", "explain");
	check(log_count("app.n: EINVAL: invalid value (integers 0..10) (not restored; kept no "
			"more)") == 1, "a number out of range: its entry, errno name and bounds",
	      "explain");
}

/* ---- finding 9: a full disk refuses every write; the log stays a few lines ---- */

static ssize_t full_pwrite(void *arg, int fd, const void *buf, size_t len, off_t off)
{
	(void)arg, (void)fd, (void)buf, (void)len, (void)off;
	errno = ENOSPC;
	return -1;
}

static int quick_fsync(void *arg, int fd)
{
	(void)arg, (void)fd;
	return 0; /* each refusal cuts the journal and syncs: not what is measured */
}

#define FLOOD 5000

static void log_flood(const char *dir)
{
	struct persist_io full = { .pwrite = full_pwrite, .fsync = quick_fsync };
	/* A window longer than the test: counts, not time, decide what is logged. */
	struct log_limit lim = { .interval_s = 3600, .burst = 10 };
	char path[256], line[160];
	int refused[3] = { 0, 0, 0 };
	struct persist_stats st;
	struct life l;

	fresh(dir, path, sizeof(path), "flood");
	if (life_start(&l, path))
		return;
	log_limit_init(&lim);
	persist_set_log_limit(l.p, &lim);
	persist_set_io(l.p, &full);
	log_reset();
	for (int i = 0; i < FLOOD; i++) {
		refused[0] += sysctl_set(l.tree, "app.s", i & 1 ? "odd" : "even", i & 1 ? 3 : 4,
					 &client) == -ENOSPC;
		if (i < 20)
			refused[1] += sysctl_set(l.tree, "app.n", i & 1 ? "3" : "4", 1, &other) ==
				      -ENOSPC;
	}
	/* The commit's counterpart: 100 commits of two entries each, by uid 1002. */
	for (int i = 0; i < 100; i++) {
		struct sysctl_commit_item it[2] = { { "app.s", i & 1 ? "c1" : "c2", 2 },
						    { "app.n", i & 1 ? "5" : "6", 1 } };

		refused[2] += sysctl_commit(l.tree, it, 2, &third, SYSCTL_ORIGIN_CLIENT, NULL) ==
			      -ENOSPC;
	}
	persist_get_stats(l.p, &st);
	check(refused[0] == FLOOD && refused[1] == 20 && refused[2] == 100 &&
	      st.failures == FLOOD + 20 + 100, "every write is refused (ENOSPC) and counted", "flood");
	check(log_count("cannot persist a commit of 2 entries (app.") == 10,
	      "uid 1002's commits: their burst", "flood");
	check(log_count("cannot persist app.s to ") == 10, "uid 1000: its burst of lines", "flood");
	check(log_count("cannot persist app.n to ") == 10,
	      "uid 1001: its own burst, not hidden by uid 1000's", "flood");
	check(log_count(": ENOSPC: No space left on device (the write is refused)") == 30,
	      "each line names the errno", "flood");
	log_limit_flush(&lim, log_now_ns(), true);
	snprintf(line, sizeof(line), "unpersisted writes (ENOSPC) of uid 1000: %d similar messages "
		 "suppressed", FLOOD - 10);
	check(log_count(line) == 1, "one line counts the rest of uid 1000's", "flood");
	check(log_count("unpersisted writes (ENOSPC) of uid 1001: 10 similar messages suppressed") ==
	      1, "and of uid 1001's", "flood");
	check(log_count("unpersisted writes (ENOSPC) of uid 1002: 90 similar messages suppressed") ==
	      1, "and of uid 1002's", "flood");
	check(log_count("rcusysd: ") <= 3 * (10 + 1), "at most burst + 1 lines per uid", "flood");
	check(log_count("rcusysd: ") == 33 &&
	      log_limit_suppressed(&lim) == FLOOD + 20 + 100 - 30,
	      "lines and suppressed add up to every refusal", "flood");
	life_end(&l);
	pthread_mutex_destroy(&lim.lock);
}

int main(void)
{
	char dir[] = "/tmp/persist-input-XXXXXX", cmd[64];
	int fd;

	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	snprintf(logpath, sizeof(logpath), "%s/log", dir);
	/* A sanitizer's report goes there too: kept when a check fails or the test dies. */
	printf("persist-input: the log (stderr) is %s\n", logpath);
	fflush(stdout);
	fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	if (fd < 0 || dup2(fd, 2) < 0)
		return perror(logpath), 1;
	close(fd);
	flipped_magic(dir);
	text_files(dir);
	nul_keys(dir);
	kept_lengths();
	size_bound(dir);
	messages(dir);
	log_flood(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (!nfailed && system(cmd) != 0)
		printf("cannot remove %s\n", dir);
	printf("persist-input: %d checks, %d failed\n", nchecks, nfailed);
	return nfailed != 0;
}
