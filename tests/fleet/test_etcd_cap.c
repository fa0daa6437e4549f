/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A hostile etcd cannot grow the mirror's per-key state without bound (the
 * 4th attack campaign's finding 4: 400 000 refused keys grew rcusysd by
 * 81 MB, for as long as they stayed). In one process, without the network:
 * the watch's own apply (etcd_apply_revision, as a watch message's
 * revisions reach it) is fed 250 000 keys that name no entry. Counted, not
 * timed: the keys kept stop at ETCD_UNNAMED_MAX, the rest are counted in
 * etcd.untracked, the report queue holds one report per key kept, and the
 * RSS the keys past the cap add stays under 4 MB (about 37 MB before).
 * What the fleet relies on still holds past the cap: the first keys keep
 * their status report, a key naming an entry is applied and a refusal of
 * its value reported, and a key past the cap is applied once a reload
 * declares its entry. Then a queue lowered to 1000 drops and counts the
 * reports past it, and values refused before the write (a newline inside)
 * do not take keys naming no entry past a cap lowered to 1000.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etcd_sync_int.h"

#define PREFIX "/cap/"
#define N_KEYS 250000
#define PER_REV 40 /* keys of one revision: they go through one commit */
#define RSS_PAST_CAP_MAX (4L << 20)

static int failures;
static int cap_lines; /* lines saying the cap was reached */

/* Not printed: 250 000 refusals. Counts the cap's line, which must not start
 * as the refusals do ("refused"): rcusysd rate-limits lines by first word. */
static void quiet(void *arg, const char *msg)
{
	(void)arg;
	cap_lines += strstr(msg, "etcd.untracked") && strncmp(msg, "refused", 7);
}

static void check(int ok, const char *what, long long got, long long want)
{
	printf("%s %s (got %lld, want %lld)\n", ok ? "ok  " : "FAIL", what, got, want);
	failures += !ok;
}

static long rss_bytes(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f && fscanf(f, "%ld %ld", &pages, &rss) != 2)
		rss = 0;
	if (f)
		fclose(f);
	return rss * sysconf(_SC_PAGESIZE);
}

static void kv_make(struct etcd_kv *kv, char *key, const char *path, const char *value,
		    int64_t rev)
{
	*kv = (struct etcd_kv){ .key = key, .value = (char *)value, .mod_revision = rev,
				.value_len = strlen(value) };
	kv->key_len = (size_t)snprintf(key, 64, PREFIX "%s", path);
}

/* Keys nx/key<i> for i in [from, to) set to @value, PER_REV to a revision, as the
 * watch applies them. */
static void put_unnamed_value(struct etcd_sync *s, size_t from, size_t to, const char *value)
{
	static char keys[PER_REV][64];
	struct etcd_kv kvs[PER_REV];
	const struct etcd_kv *group[PER_REV];

	for (size_t i = from; i < to;) {
		size_t n = 0;

		for (; i < to && n < PER_REV; i++, n++) {
			char path[32];

			snprintf(path, sizeof(path), "nx/key%07zu", i);
			kv_make(&kvs[n], keys[n], path, value, 10 + (int64_t)(i / PER_REV));
			group[n] = &kvs[n];
		}
		etcd_apply_revision(s, group, n, false);
	}
}

static void put_unnamed(struct etcd_sync *s, size_t from, size_t to)
{
	put_unnamed_value(s, from, to, "x");
}

/* Is a refusal naming @err queued for @key's status key? */
static bool report_queued(struct etcd_sync *s, const char *key, const char *err)
{
	struct key_state *k;
	bool yes;

	pthread_mutex_lock(&s->lock);
	k = etcd_key_find(s, key);
	yes = k && k->queued && k->report && strstr(k->report, err);
	pthread_mutex_unlock(&s->lock);
	return yes;
}

/* One value for @path at @rev through the watch's apply (@resync: a re-read's). */
static void put_one(struct etcd_sync *s, const char *path, const char *value, int64_t rev,
		    bool resync)
{
	char key[64];
	struct etcd_kv kv;

	kv_make(&kv, key, path, value, rev);
	etcd_apply(s, &kv, resync);
}

static void past_cap(struct etcd_sync *s, struct sysctl_tree *tree, int *num)
{
	static int late;
	struct ctl_table row = { .procname = "key0200000", .data = &late,
				 .maxlen = sizeof(int), .mode = 0644,
				 .proc_handler = proc_dointvec };
	struct sysctl_table_header *hdr;
	struct etcd_sync_status st;

	put_one(s, "app/num", "42", 20000, false);
	check(*num == 42, "a key naming an entry is applied past the cap", *num, 42);
	put_one(s, "app/num", "not-a-number", 20001, false);
	check(report_queued(s, PREFIX "app/num", "EINVAL"),
	      "its refused value has its status report queued", 0, 1);
	if (sysctl_register_table(tree, "nx", &row, 1, &hdr)) {
		check(0, "the reload's table registered", 0, 1);
		return;
	}
	put_one(s, "nx/key0200000", "7", 5010, true);
	check(late == 7, "a key past the cap is applied by a re-read once its entry exists",
	      late, 7);
	etcd_sync_status(s, &st);
	check(st.applied == 2, "values applied", (long long)st.applied, 2);
	sysctl_unregister_table(hdr);
}

static int run_cap(void)
{
	struct sysctl_tree *tree = sysctl_tree_new();
	struct etcd_sync_opts so = { .endpoints = "http://127.0.0.1:9", .prefix = PREFIX,
				     .host = "h", .log = quiet };
	static int num;
	struct ctl_table row = { .procname = "num", .data = &num, .maxlen = sizeof(int),
				 .mode = 0644, .proc_handler = proc_dointvec };
	struct sysctl_table_header *hdr;
	struct etcd_sync_status st;
	struct etcd_sync *s;
	long rss_start, rss_cap, rss_end;

	if (!tree || sysctl_register_table(tree, "app", &row, 1, &hdr) ||
	    etcd_sync_new(tree, &so, &s)) {
		printf("FAIL: setup\n");
		return 1;
	}
	rss_start = rss_bytes();
	put_unnamed(s, 0, ETCD_UNNAMED_MAX);
	rss_cap = rss_bytes();
	printf("RSS of the %d keys kept, each with a queued report: %ld bytes a key\n",
	       ETCD_UNNAMED_MAX, (rss_cap - rss_start) / ETCD_UNNAMED_MAX);
	put_unnamed(s, ETCD_UNNAMED_MAX, N_KEYS);
	rss_end = rss_bytes();
	etcd_sync_status(s, &st);
	check(st.keys == ETCD_UNNAMED_MAX, "keys kept stop at the cap", (long long)st.keys,
	      ETCD_UNNAMED_MAX);
	check(st.untracked == N_KEYS - ETCD_UNNAMED_MAX, "keys past the cap counted",
	      (long long)st.untracked, N_KEYS - ETCD_UNNAMED_MAX);
	check(st.refused == N_KEYS, "every key refused", (long long)st.refused, N_KEYS);
	check(s->queued == ETCD_UNNAMED_MAX, "one report queued per key kept",
	      (long long)s->queued, ETCD_UNNAMED_MAX);
	check(rss_end - rss_cap < RSS_PAST_CAP_MAX, "RSS the keys past the cap added (bytes)",
	      rss_end - rss_cap, RSS_PAST_CAP_MAX);
	check(report_queued(s, PREFIX "nx/key0000000", "ENOENT") &&
	      report_queued(s, PREFIX "nx/key0099999", "ENOENT"),
	      "keys within the cap have their status report", 0, 1);
	check(!etcd_key_revision(s, PREFIX "nx/key0100000"), "a key past the cap has no state",
	      etcd_key_revision(s, PREFIX "nx/key0100000"), 0);
	check(cap_lines == 1, "one line says the cap was reached", cap_lines, 1);
	past_cap(s, tree, &num);
	sysctl_unregister_table(hdr);
	etcd_sync_stop(s);
	sysctl_tree_free(tree);
	return 0;
}

/* A mirror of an empty tree, its etcd never reached (the tests feed it replies). */
static int mirror_new(struct sysctl_tree **tree, struct etcd_sync **s)
{
	struct etcd_sync_opts so = { .endpoints = "http://127.0.0.1:9", .prefix = PREFIX,
				     .host = "h", .log = quiet };

	*tree = sysctl_tree_new();
	if (!*tree || etcd_sync_new(*tree, &so, s)) {
		printf("FAIL: setup\n");
		sysctl_tree_free(*tree);
		return 1;
	}
	return 0;
}

static void mirror_free(struct sysctl_tree *tree, struct etcd_sync *s)
{
	etcd_sync_stop(s);
	sysctl_tree_free(tree);
}

/* The report queue lowered to 1000: the refusals past it are counted, not queued. */
static int run_queue(void)
{
	struct sysctl_tree *tree;
	struct etcd_sync_status st;
	struct etcd_sync *s;

	if (mirror_new(&tree, &s))
		return 1;
	s->queue_max = 1000;
	put_unnamed(s, 0, 3000);
	etcd_sync_status(s, &st);
	check(s->queued == 1000, "the report queue stops at its cap", (long long)s->queued, 1000);
	check(st.reports_dropped == 2000, "the reports past it counted",
	      (long long)st.reports_dropped, 2000);
	check(report_queued(s, PREFIX "nx/key0000999", "ENOENT") &&
	      !report_queued(s, PREFIX "nx/key0001000", "ENOENT"),
	      "the first 1000 queued, the next not", 0, 1);
	mirror_free(tree, s);
	return 0;
}

/*
 * A value refused before it reaches the tree (a newline inside it) says
 * nothing of the key's entry: keys naming none stay counted as such, so
 * that such values do not slip past the cap (here lowered to 1000).
 */
static int run_bad_values(void)
{
	struct sysctl_tree *tree;
	struct etcd_sync_status st;
	struct etcd_sync *s;

	if (mirror_new(&tree, &s))
		return 1;
	s->unnamed_max = 1000;
	put_unnamed_value(s, 0, 3000, "a\nb");
	etcd_sync_status(s, &st);
	check(st.keys == 1000, "keys of values refused before the write stop at the cap",
	      (long long)st.keys, 1000);
	check(st.untracked == 2000, "the ones past it counted", (long long)st.untracked, 2000);
	mirror_free(tree, s);
	return 0;
}

int main(void)
{
	if (run_cap() || run_queue() || run_bad_values())
		return 1;
	if (failures) {
		printf("FAIL: %d check(s)\n", failures);
		return 1;
	}
	printf("PASS: the per-key state of keys naming no entry is bounded\n");
	return 0;
}
