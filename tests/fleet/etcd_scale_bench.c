/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The mirror at 100 000 keys (issue 40), in one process and without the
 * network, so that what is timed is ours: a tree of N int tunables, a sync
 * that has mirrored N keys into them, then "a reload that changes nothing"
 * as rcusysd makes one: the settings layer asks etcd_sync_holds() for each
 * entry, and the prefix is read again (its range reply decoded and each
 * kv compared with the tree, as after etcd_sync_rescan()). The reply's text
 * is built before the clock starts: receiving it is etcd's and curl's
 * time. Sizes 10 000 and 100 000 run interleaved, REPS times; medians.
 * The memory line is the RSS the mirror added to the tree of tunables
 * (key state, the entries held, the tables), per key, at 100 000, each
 * measured in a process of its own (--rss N), whose heap holds nothing
 * freed by an earlier run that the mirror could reuse unseen.
 *
 *   etcd-scale-bench [REPS]     (default 5)
 *   etcd-scale-bench --rss N    (one mirror of N keys: its bytes per key)
 * Summary lines: etcd_reload_100k_s (target <= 2), etcd_rss_per_key_bytes
 * (target <= 200), etcd_reload_linearity (100k over 10k, divided by 10:
 * target <= 1.3).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "etcd_sync_int.h"

#define PREFIX "/bench/"
#define MAX_REPS 15

struct mirror {
	struct sysctl_tree *tree;
	struct etcd_sync *sync;
	struct sysctl_table_header *hdr;
	struct ctl_table *rows;
	int *data;
	char (*names)[24];
	char *reply;
	size_t reply_len;
};

static void quiet(void *arg, const char *msg)
{
	(void)arg, (void)msg;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static size_t put_b64(char *out, const char *in)
{
	size_t n = strlen(in), o = 0;

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)in[i] << 16 |
			     (i + 1 < n ? (unsigned char)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? (unsigned char)in[i + 2] : 0);

		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? b64[v & 63] : '=';
	}
	return o;
}

/* etcd's range reply for the N keys, as its gateway writes it. */
static int build_reply(struct mirror *m, size_t n)
{
	size_t cap = 64 + n * 160, len;
	char *p = malloc(cap);

	if (!p)
		return -1;
	len = (size_t)sprintf(p, "{\"header\":{\"revision\":\"%zu\"},\"kvs\":[", n);
	for (size_t i = 0; i < n; i++) {
		char key[64], value[24];

		snprintf(key, sizeof(key), PREFIX "app/k%zu", i);
		snprintf(value, sizeof(value), "%zu", i + 7);
		len += (size_t)sprintf(p + len, "%s{\"key\":\"", i ? "," : "");
		len += put_b64(p + len, key);
		len += (size_t)sprintf(p + len, "\",\"create_revision\":\"%zu\",\"mod_revision\":"
					       "\"%zu\",\"version\":\"1\",\"value\":\"", i + 1, i + 1);
		len += put_b64(p + len, value);
		len += (size_t)sprintf(p + len, "\"}");
	}
	len += (size_t)sprintf(p + len, "],\"count\":\"%zu\"}", n);
	m->reply = p;
	m->reply_len = len;
	return 0;
}

static int apply_kv(void *arg, const struct etcd_kv *kv)
{
	etcd_read_add(arg, kv);
	return 0;
}

/* What full_read() does with a reply, without the network. */
static int read_prefix(struct mirror *m)
{
	struct etcd_conn c = { 0 };
	int64_t rev;
	int err = etcd_range_text(&c, m->reply, m->reply_len, PREFIX, &rev, apply_kv, m->sync);

	if (err)
		etcd_read_drop(m->sync);
	else
		etcd_read_flush(m->sync); /* the values that differ, committed by revision */
	return err;
}

static int setup(struct mirror *m, size_t n)
{
	struct etcd_sync_opts so = { .endpoints = "http://127.0.0.1:9", .prefix = PREFIX,
				     .host = "h", .log = quiet };

	memset(m, 0, sizeof(*m));
	m->rows = calloc(n, sizeof(*m->rows));
	m->data = calloc(n, sizeof(*m->data));
	m->names = calloc(n, sizeof(*m->names));
	m->tree = sysctl_tree_new();
	if (!m->rows || !m->data || !m->names || !m->tree)
		return -1;
	for (size_t i = 0; i < n; i++) {
		snprintf(m->names[i], sizeof(m->names[i]), "k%zu", i);
		m->rows[i] = (struct ctl_table){ .procname = m->names[i], .data = &m->data[i],
						 .maxlen = sizeof(int), .mode = 0644,
						 .proc_handler = proc_dointvec };
	}
	if (sysctl_register_table(m->tree, "app", m->rows, n, &m->hdr))
		return -1;
	return etcd_sync_new(m->tree, &so, &m->sync) ? -1 : 0;
}

static void teardown(struct mirror *m)
{
	free(m->reply);
	sysctl_unregister_table(m->hdr);
	etcd_sync_stop(m->sync);
	sysctl_tree_free(m->tree);
	free(m->rows);
	free(m->data);
	free(m->names);
}

/* --rss N: the RSS one mirror of @n keys adds, per key, printed. */
static int rss_run(size_t n)
{
	struct mirror m;
	long before;
	int err = -1;

	if (setup(&m, n))
		goto out;
	before = rss_bytes();
	if (build_reply(&m, n) || read_prefix(&m))
		goto out;
	free(m.reply); /* the reply is gone before the RSS is read */
	m.reply = NULL;
	printf("%.1f\n", (double)(rss_bytes() - before) / (double)n);
	err = 0;
out:
	teardown(&m);
	return err ? 1 : 0;
}

/* rss_run() in a process of its own. */
static int rss_per_key(size_t n, double *per_key)
{
	char cmd[64];
	FILE *p;
	int ok;

	snprintf(cmd, sizeof(cmd), "/proc/%d/exe --rss %zu", (int)getpid(), n);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	ok = fscanf(p, "%lf", per_key) == 1;
	return pclose(p) == 0 && ok ? 0 : -1;
}

/* One repetition at size @n: the reload's seconds, and the mirror's bytes per key. */
static int one(size_t n, double *secs, double *per_key)
{
	struct mirror m;
	size_t held = 0;
	double t0;
	int err = -1;

	if (rss_per_key(n, per_key) || setup(&m, n))
		goto out;
	if (build_reply(&m, n) || read_prefix(&m))
		goto out;
	free(m.reply);
	m.reply = NULL;
	if (build_reply(&m, n))
		goto out;
	t0 = now_s();
	for (size_t i = 0; i < n; i++) {
		char path[48];

		snprintf(path, sizeof(path), "app.k%zu", i);
		held += etcd_sync_holds(m.sync, path);
	}
	err = read_prefix(&m);
	*secs = now_s() - t0;
	if (!err && (held != n || m.data[n - 1] != (int)n + 6)) {
		fprintf(stderr, "etcd-scale-bench: %zu of %zu entries held\n", held, n);
		err = -1;
	}
out:
	teardown(&m);
	return err;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 5;
	double t10[MAX_REPS], t100[MAX_REPS], b10[MAX_REPS], b100[MAX_REPS];

	if (argc > 2 && !strcmp(argv[1], "--rss"))
		return rss_run(strtoul(argv[2], NULL, 10));
	if (reps < 1 || reps > MAX_REPS)
		reps = 5;
	for (int r = 0; r < reps; r++) {
		/* Interleaved, the order alternating: a burst of load hits both sizes. */
		int first = r % 2;

		for (int k = 0; k < 2; k++) {
			int big = k ^ first;

			if (one(big ? 100000 : 10000, big ? &t100[r] : &t10[r],
				big ? &b100[r] : &b10[r])) {
				fprintf(stderr, "etcd-scale-bench: a run failed\n");
				return 1;
			}
		}
	}
	double s10 = median(t10, reps), s100 = median(t100, reps), per_key = median(b100, reps);

	printf("etcd mirror reload (holds() per entry + the prefix read again, nothing changed), "
	       "medians of %d: %.4f s at 10 000 keys, %.4f s at 100 000; mirror RSS %.0f bytes "
	       "per key at 100 000 (%.0f at 10 000)\n", reps, s10, s100, per_key,
	       median(b10, reps));
	printf("summary etcd_reload_100k_s %.3f\n", s100);
	printf("summary etcd_rss_per_key_bytes %.0f\n", per_key);
	printf("summary etcd_reload_linearity %.3f\n", s100 / s10 / 10);
	return 0;
}
