/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The store (tools/rcusysd/persist.h) under injected faults: each write,
 * fsync, rename, close and truncate of a commit (and of the compactions
 * at start and at rcusysctl --reset -a) fails in turn, once, with EIO,
 * ENOSPC or a short write, while a script of client writes and forgets
 * runs. For each: a refused write leaves the entry's old value live; after
 * a restart (a new tree, the store applied) every key holds exactly its
 * last acknowledged value, so nothing acknowledged is lost and nothing
 * refused is kept. Then writers in threads with one failing fsync: exactly
 * the writers of that batch are refused. Then a torn and a damaged last
 * record: cut at start, the rest kept, and the journal appends after the
 * cut.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rcustring/sysctl.h>

#include "journal.h"
#include "log.h"
#include "persist.h"
#include "store_life.h"

#define NKEYS 4
#define NTHREADS 8

enum call { C_PWRITE, C_FSYNC, C_RENAME, C_CLOSE, C_TRUNCATE, C_COUNT };
static const char *const call_names[] = { "write", "fsync", "rename", "close", "truncate" };

/* The armed fault: the @at-th call of @kind fails with @err (0: a short write). */
struct fault {
	pthread_mutex_t lock;
	enum call kind;
	int at, err, seen;
	bool armed, hit, short_done;
	bool chain; /* and the truncate that cuts the refused batch off fails too */
	bool slow_fsync; /* each fsync takes 2 ms, as a disk's does (tmpfs: ~0) */
};

static struct fault fault = { .lock = PTHREAD_MUTEX_INITIALIZER };
/* 1: this call fails (errno set); 2: write half, then fail the rest; 0: real. */
static int trip(enum call kind)
{
	int r = 0;

	pthread_mutex_lock(&fault.lock);
	if (fault.armed && fault.kind == kind && ++fault.seen == fault.at) {
		fault.hit = true;
		fault.armed = fault.chain;
		fault.chain = false;
		if (fault.armed)
			fault.kind = C_TRUNCATE, fault.at = 1, fault.seen = 0;
		r = fault.err ? 1 : 2;
		errno = fault.err;
	} else if (fault.short_done && kind == C_PWRITE) {
		fault.short_done = false; /* the rest of a short write: the disk is full */
		r = 1;
		errno = ENOSPC;
	}
	if (r == 2)
		fault.short_done = true;
	pthread_mutex_unlock(&fault.lock);
	return r;
}

static ssize_t f_pwrite(void *arg, int fd, const void *buf, size_t len, off_t off)
{
	int t = trip(C_PWRITE);

	(void)arg;
	if (t == 1)
		return -1;
	return pwrite(fd, buf, t == 2 && len > 1 ? len / 2 : len, off);
}

static int f_fsync(void *arg, int fd)
{
	(void)arg;
	if (trip(C_FSYNC))
		return -1;
	if (fault.slow_fsync)
		usleep(2000); /* writers that come meanwhile wait to join the next batch */
	return fdatasync(fd);
}

static int f_rename(void *arg, int dirfd, const char *from, const char *to)
{
	(void)arg;
	return trip(C_RENAME) ? -1 : renameat(dirfd, from, dirfd, to);
}

static int f_close(void *arg, int fd)
{
	(void)arg;
	if (trip(C_CLOSE)) {
		close(fd); /* as Linux: the descriptor is gone even when close reports an error */
		return -1;
	}
	return close(fd);
}

static int f_truncate(void *arg, int fd, off_t len)
{
	(void)arg;
	return trip(C_TRUNCATE) ? -1 : ftruncate(fd, len);
}

static const struct persist_io faulty = { f_pwrite, f_fsync, f_rename, f_close, f_truncate,
					  NULL, NULL };

/* One daemon's life: a tree of NKEYS strings at their defaults, the store applied. */
static int life_start(struct keys_life *l, const char *path)
{
	return keys_life_start(l, path, NKEYS, &faulty);
}


/* What each key must hold after a restart: the last acknowledged value, or the default. */
struct model {
	char value[NKEYS][64];
};

static void model_init(struct model *m)
{
	for (int i = 0; i < NKEYS; i++)
		snprintf(m->value[i], sizeof(m->value[i]), "default%d", i);
}

static const struct sysctl_caller client = { 0, 0, 1 };

/* A client's write; the live value checked: the new one, or (refused) the old one. */
static void do_write(struct keys_life *l, struct model *m, int k, const char *v, const char *ctx)
{
	char path[16], old[64];
	int err;

	snprintf(path, sizeof(path), "app.k%d", k);
	snprintf(old, sizeof(old), "%s", l->data[k]);
	/* An empty value is written as a line holding nothing, as "echo > file" does. */
	err = sysctl_set(l->tree, path, *v ? v : "\n", *v ? strlen(v) : 1, &client);
	if (!err)
		snprintf(m->value[k], sizeof(m->value[k]), "%s", v);
	check(!strcmp(l->data[k], err ? old : v),
	      err ? "a refused write leaves the old value live" : "an acknowledged write is live", ctx);
}

/* The script: new keys, rewrites, an empty value, blanks, a forget, a forget of all. */
static void script(struct keys_life *l, struct model *m, const char *ctx)
{
	do_write(l, m, 1, "one", ctx);
	do_write(l, m, 0, "  zero with blanks  ", ctx);
	do_write(l, m, 2, "", ctx);
	if (!persist_forget(l->p, "app.k1"))
		snprintf(m->value[1], sizeof(m->value[1]), "default1");
	do_write(l, m, 3, "three", ctx);
	if (!persist_forget(l->p, NULL))
		for (int i = 0; i < NKEYS; i++)
			snprintf(m->value[i], sizeof(m->value[i]), "default%d", i);
	do_write(l, m, 0, "after", ctx);
	do_write(l, m, 2, "again", ctx);
}

static void expect_model(const char *path, const struct model *m, const char *ctx)
{
	struct keys_life l;
	char what[160];

	if (life_start(&l, path)) {
		check(false, "the store opens again", ctx);
		return;
	}
	for (int i = 0; i < NKEYS; i++) {
		snprintf(what, sizeof(what), "after a restart app.k%d holds \"%s\" (got \"%s\")", i,
			 m->value[i], l.data[i]);
		check(!strcmp(l.data[i], m->value[i]), what, ctx);
	}
	keys_life_end(&l);
}

static void one_fault(const char *dir, enum call kind, int at, int err, bool at_start, bool chain)
{
	char path[256], ctx[160], cmd[300];
	struct model m;
	struct keys_life l;

	snprintf(ctx, sizeof(ctx), "%s #%d fails with %s%s%s", call_names[kind], at,
		 err ? strerror(err) : "a short write", at_start ? ", armed at start" : "",
		 chain ? ", and so does the truncate cutting it off" : "");
	snprintf(path, sizeof(path), "%s/s/state.conf", dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s/s", dir);
	if (system(cmd) != 0)
		return;
	model_init(&m);
	/* A first life leaves a journal with a value in it. */
	if (life_start(&l, path))
		return;
	do_write(&l, &m, 3, "before", ctx);
	keys_life_end(&l);
	pthread_mutex_lock(&fault.lock);
	fault = (struct fault){ .lock = fault.lock, .kind = kind, .at = at, .err = err,
				.armed = at_start, .chain = chain };
	pthread_mutex_unlock(&fault.lock);
	if (life_start(&l, path))
		return;
	pthread_mutex_lock(&fault.lock);
	fault.armed = !fault.hit;
	pthread_mutex_unlock(&fault.lock);
	script(&l, &m, ctx);
	pthread_mutex_lock(&fault.lock);
	fault.armed = false;
	pthread_mutex_unlock(&fault.lock);
	keys_life_end(&l);
	expect_model(path, &m, ctx);
}

/* ---- concurrent writers, one failing fsync ---- */

struct writer {
	struct keys_life *l;
	int k, acked, refused;
	char last[64];
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	char path[16], v[64], live[64];

	snprintf(path, sizeof(path), "app.k%d", w->k % NKEYS);
	for (int i = 0; i < 40; i++) {
		snprintf(v, sizeof(v), "w%d-%d", w->k, i);
		if (!sysctl_set(w->l->tree, path, v, strlen(v), &client)) {
			w->acked++;
			snprintf(w->last, sizeof(w->last), "%s", v);
		} else {
			sysctl_get(w->l->tree, path, live, sizeof(live));
			live[strcspn(live, "\n")] = '\0';
			/* Writers of one key take turns: the live value is someone's acknowledged one. */
			if (live[0] != 'w' && strncmp(live, "default", 7))
				w->refused = -1000;
			w->refused++;
		}
	}
	return NULL;
}

static void threads_fault(const char *dir)
{
	char path[256], cmd[300], what[160];
	struct persist_stats st;
	struct writer w[NTHREADS];
	pthread_t t[NTHREADS];
	struct model m;
	struct keys_life l;
	int refused = 0;

	snprintf(path, sizeof(path), "%s/t/state.conf", dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s/t", dir);
	if (system(cmd) != 0 || life_start(&l, path))
		return;
	pthread_mutex_lock(&fault.lock);
	fault = (struct fault){ .lock = fault.lock, .kind = C_FSYNC, .at = 20, .err = EIO,
				.armed = true, .slow_fsync = true };
	pthread_mutex_unlock(&fault.lock);
	for (int i = 0; i < NTHREADS; i++) {
		w[i] = (struct writer){ .l = &l, .k = i };
		pthread_create(&t[i], NULL, writer_main, &w[i]);
	}
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	persist_get_stats(l.p, &st);
	model_init(&m);
	/* Two writers per key: the later acknowledged write of the key is in the tree. */
	for (int i = 0; i < NKEYS; i++)
		snprintf(m.value[i], sizeof(m.value[i]), "%s", l.data[i]);
	for (int i = 0; i < NTHREADS; i++) {
		check(w[i].refused >= 0, "a refused writer sees an acknowledged value live", "threads");
		refused += w[i].refused;
	}
	snprintf(what, sizeof(what), "the failed fsync refused its batch only: %d refused, %d of 320 "
		 "writes in %llu batches", refused, 320 - refused, (unsigned long long)st.batches);
	check(fault.hit && refused >= 1 && refused <= NTHREADS, what, "threads");
	printf("threads: %s\n", what);
	/* Group commit, counted: 8 writers waiting on fsyncs share them. */
	snprintf(what, sizeof(what), "concurrent writers share fsyncs: %llu batches for %llu records",
		 (unsigned long long)st.batches, (unsigned long long)st.records);
	check(st.batches * 2 <= st.records, what, "threads");
	keys_life_end(&l);
	expect_model(path, &m, "threads: the last acknowledged values survive");
}

/* ---- a torn and a damaged last record ---- */

static void torn(const char *dir, bool flip)
{
	char path[256], cmd[300], ctx[64];
	struct journal_buf b = { 0 };
	struct journal_rec r = { .op = JOURNAL_SET, .key = "app.k0", .key_len = 6,
				 .value = "torn\n", .value_len = 5 };
	struct model m;
	struct keys_life l;
	int fd;

	snprintf(ctx, sizeof(ctx), "%s last record", flip ? "a damaged" : "a torn");
	snprintf(path, sizeof(path), "%s/r/state.conf", dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s/r", dir);
	if (system(cmd) != 0 || life_start(&l, path))
		return;
	model_init(&m);
	do_write(&l, &m, 0, "whole", ctx);
	do_write(&l, &m, 1, "also", ctx);
	keys_life_end(&l);
	journal_put(&b, &r);
	if (flip)
		b.data[b.len - 2] ^= 0x20; /* "torn" -> "toRn": the checksum fails */
	fd = open(path, O_WRONLY | O_APPEND);
	if (fd < 0 || write(fd, b.data, flip ? b.len : b.len - 3) < 0)
		check(false, "the record is appended", ctx);
	close(fd);
	journal_buf_free(&b);
	if (life_start(&l, path))
		return;
	check(!strcmp(l.data[0], "whole"), "the last good value, not the cut record's", ctx);
	do_write(&l, &m, 2, "after the cut", ctx);
	keys_life_end(&l);
	expect_model(path, &m, ctx);
}

/*
 * The longest value of a long path comes back byte for byte: 65535 bytes
 * under a path of 12 components of 200 bytes (the text state file lost
 * such a value: its lines were at most 65536 + 1024 bytes).
 */
static void long_value(const char *dir)
{
	static char big[65536], path[12 * 201 + 8], key[12 * 201 + 8], back[65536 + 2];
	struct ctl_table row = { .data = big, .maxlen = sizeof(big), .mode = 0644,
				 .proc_handler = proc_dostring };
	struct sysctl_table_header *h;
	struct sysctl_tree *tree;
	struct persist *p;
	char file[256], why[256], *value = malloc(sizeof(big));
	ssize_t n = -1;

	snprintf(file, sizeof(file), "%s/l/state.conf", dir);
	strcpy(path, "app");
	for (int i = 0; i < 11; i++)
		snprintf(path + strlen(path), sizeof(path) - strlen(path), ".%0200d", i);
	row.procname = "v";
	for (int life = 0; life < 2 && value; life++) {
		strcpy(big, "short");
		tree = sysctl_tree_new();
		if (!tree || sysctl_register_table(tree, path, &row, 1, &h) ||
		    persist_open(tree, file, &p, why, sizeof(why)))
			break;
		persist_apply(p);
		persist_watch(p);
		if (!life) {
			for (size_t i = 0; i < sizeof(big) - 1; i++)
				value[i] = (char)('!' + i % 90);
			snprintf(key, sizeof(key), "%s.v", path);
			check(!sysctl_set(tree, key, value, sizeof(big) - 1, &client),
			      "a 65535-byte value of a 2.4 KiB path is acknowledged", "long value");
		} else {
			n = sysctl_get(tree, key, back, sizeof(back));
		}
		persist_close(p);
		sysctl_unregister_table(h);
		sysctl_tree_free(tree);
	}
	if (n != 65536)
		printf("long value: read %zd bytes back\n", n);
	check(n == 65536 && !memcmp(back, value, 65535) && back[65535] == '\n',
	      "a 65535-byte value of a 2.4 KiB path comes back byte for byte", "long value");
	free(value);
}

int main(int argc, char **argv)
{
	static const int errs[] = { EIO, ENOSPC, 0 };
	char dir[] = "/tmp/persist-faults-XXXXXX", cmd[64];
	int faults = 0;

	(void)argc, (void)argv;
	log_set_level(LOG_EMERG); /* each refusal is logged: thousands of lines */
	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	for (enum call kind = 0; kind < C_COUNT; kind++)
		for (size_t e = 0; e < sizeof(errs) / sizeof(*errs); e++)
			for (int at = 1; at <= 12; at++)
				for (int start = 0; start < 2; start++) {
					if (kind != C_PWRITE && !errs[e])
						continue; /* a short write is a write's */
					one_fault(dir, kind, at, errs[e], start, false);
					faults += fault.hit;
				}
	/* A batch refused, and cutting it off fails too: the next commit compacts. */
	for (int at = 1; at <= 12; at++) {
		one_fault(dir, C_FSYNC, at, EIO, false, true);
		one_fault(dir, C_PWRITE, at, 0, false, true);
	}
	printf("injected %d faults (each call of a commit in turn)\n", faults);
	check(faults >= 100, "the script reaches every kind of call", "coverage");
	threads_fault(dir);
	long_value(dir);
	torn(dir, false);
	torn(dir, true);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	printf("persist-faults: %d checks, %d failed\n", nchecks, nfailed);
	return nfailed != 0;
}
