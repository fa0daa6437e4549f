/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Scale benchmark of the sysctl tree: does the cost per entry stay flat as
 * the tree grows? For each size N it builds two trees of N proc_dointvec
 * entries:
 *   flat    one table of N entries in one directory;
 *   spread  N/100 tables of 100 entries, one per directory, the
 *           directories side by side under one parent;
 * and measures registration (seconds in all and ns per entry), lookups of
 * existing paths in random order over all N (lookup_ns: sysctl_lookup + put;
 * the path is formatted into a stack buffer first, as a front end receives
 * it), then over the same 1000 paths again and again (hot_ns: the working
 * set no longer grows with N, so what is left is the structure), a walk of the
 * whole subtree (ns per entry; the order is checked) and unregistration.
 * Each figure is the median of --reps runs, in CPU time of the thread. A
 * reference line gives the cost of one cache miss at that working set.
 *
 * The anchor (lfht_ns): liburcu's own RCU hash table (cds_lfht, liburcu-cds)
 * keyed by the same full paths, one flat table, looked up in the same
 * random order in the same run, doing what sysctl_lookup() + put does for a
 * caller: hash the path, find it, pin the node with a reference and drop
 * it. Its node keeps the path inline, as the tree keeps short names.
 *
 * Usage: rcustring-tree-scale-bench [--sizes 1000,10000,100000] [--reps R]
 *                                   [--lookups L]
 * Ends with "summary <name> <n>" lines (when 1000 and 100000 are both run).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define _LGPL_SOURCE
#include <urcu-bp.h>
#include <urcu/rculfhash.h>

#include "rcustring/sysctl.h"

#define PER_DIR 100
#define MAX_SIZES 8
#define MAX_REPS 15

/*
 * CPU time of this thread, not wall time: on a loaded machine the wall
 * clock mostly measures the other programs. (Caches are still shared.)
 */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "rcustring-tree-scale-bench: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static unsigned long long rng = 88172645463325252ULL;

static unsigned long long xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Entry names "e<i>": table order is not name order (e10 < e2). */
static char **make_names(long n)
{
	char **names = malloc((size_t)n * sizeof(*names));

	if (!names)
		die("malloc", ENOMEM);
	for (long i = 0; i < n; i++) {
		names[i] = malloc(24);
		if (!names[i])
			die("malloc", ENOMEM);
		snprintf(names[i], 24, "e%ld", i);
	}
	return names;
}

/* Cheap formatting, so that lookups are not dominated by snprintf. */
static char *put_num(char *p, long v)
{
	char tmp[24];
	int k = 0;

	do {
		tmp[k++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (k)
		*p++ = tmp[--k];
	return p;
}

static void path_of(char *buf, int spread, long i)
{
	char *p = buf;

	if (spread) {
		memcpy(p, "scale.spread.d", 14);
		p = put_num(p + 14, i / PER_DIR);
		memcpy(p, ".e", 2);
		p = put_num(p + 2, i);
	} else {
		memcpy(p, "scale.flat.e", 12);
		p = put_num(p + 12, i);
	}
	*p = '\0';
}

struct layout {
	struct ctl_table *tbl;
	struct sysctl_table_header **hdr;
	long ntables, per_table;
};

struct walk_state {
	long count;
	char last[64];
	int unordered;
};

static int walk_one(struct sysctl_entry *e, void *arg)
{
	struct walk_state *w = arg;
	const char *p = sysctl_entry_path(e);

	if (w->count && strcmp(w->last, p) >= 0)
		w->unordered = 1;
	snprintf(w->last, sizeof(w->last), "%s", p);
	w->count++;
	return 0;
}

struct result {
	double reg_s, lookup_ns, hot_ns, walk_ns, unreg_s, lfht_ns;
};

/* ---- the anchor: one cds_lfht over the full paths ---- */

struct flat_node {
	struct cds_lfht_node node;
	long refs;
	char path[48];
};

/* FNV-1a over the whole path, mixed as the tree mixes its per-name hash. */
static unsigned long path_hash(const char *p)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *p; p++) {
		h ^= (unsigned char)*p;
		h *= 1099511628211ULL;
	}
	return (unsigned long)(h ^ (h >> 32));
}

static int flat_match(struct cds_lfht_node *node, const void *key)
{
	return !strcmp(caa_container_of(node, struct flat_node, node)->path, key);
}

/* A table of the @n paths of the layout, and its nodes in *@nodes. */
static struct cds_lfht *flat_build(long n, int spread, struct flat_node **nodes)
{
	unsigned long size = 1;
	struct cds_lfht *ht;
	struct flat_node *v = calloc((size_t)n, sizeof(*v));

	/*
	 * Sized for @n from the start: an automatic resize runs later in
	 * liburcu's worker thread, and on a loaded machine it was seen still
	 * pending when the lookups began (long chains, 5x slower lookups).
	 */
	while (size < (unsigned long)n)
		size <<= 1;
	ht = cds_lfht_new(size, size, 0, 0, NULL);

	if (!ht || !v)
		die("cds_lfht_new", ENOMEM);
	rcu_read_lock();
	for (long i = 0; i < n; i++) {
		path_of(v[i].path, spread, i);
		cds_lfht_node_init(&v[i].node);
		cds_lfht_add(ht, path_hash(v[i].path), &v[i].node);
	}
	rcu_read_unlock();
	*nodes = v;
	return ht;
}

static double flat_loop(struct cds_lfht *ht, int spread, const long *order, long lookups)
{
	char path[96];
	double t0 = now_s();

	for (long k = 0; k < lookups; k++) {
		struct cds_lfht_iter iter;
		struct cds_lfht_node *node;
		struct flat_node *f = NULL;

		path_of(path, spread, order[k]);
		rcu_read_lock();
		cds_lfht_lookup(ht, path_hash(path), flat_match, path, &iter);
		node = cds_lfht_iter_get_node(&iter);
		if (node) {
			f = caa_container_of(node, struct flat_node, node);
			uatomic_inc(&f->refs);
		}
		rcu_read_unlock();
		if (!f)
			die(path, ENOENT);
		uatomic_dec(&f->refs);
	}
	return (now_s() - t0) * 1e9 / (double)lookups;
}

static void flat_free(struct cds_lfht *ht, struct flat_node *nodes, long n)
{
	struct cds_lfht_iter iter;

	rcu_read_lock();
	for (long i = 0; i < n; i++) {
		cds_lfht_lookup(ht, path_hash(nodes[i].path), flat_match, nodes[i].path, &iter);
		if (cds_lfht_del(ht, cds_lfht_iter_get_node(&iter)))
			die("cds_lfht_del", ENOENT);
	}
	rcu_read_unlock();
	if (cds_lfht_destroy(ht, NULL))
		die("cds_lfht_destroy", EBUSY);
	synchronize_rcu(); /* deleted nodes are freed after a grace period */
	free(nodes);
}

#define HOT_SET 1000

/* ns per sysctl_lookup + put of the paths order[0..lookups-1] index. */
static double lookup_loop(struct sysctl_tree *tree, int spread, const long *order, long lookups,
			  long modulo)
{
	char path[96];
	double t0 = now_s();

	for (long k = 0; k < lookups; k++) {
		struct sysctl_entry *e;

		path_of(path, spread, order[k % modulo]);
		e = sysctl_lookup(tree, path);
		if (!e)
			die(path, errno);
		sysctl_entry_put(e);
	}
	return (now_s() - t0) * 1e9 / (double)lookups;
}

static struct result run_once(long n, int spread, char **names, int *data, long lookups)
{
	struct sysctl_tree *tree = sysctl_tree_new();
	struct layout l;
	struct walk_state w = { 0 };
	struct result r;
	char path[96];
	long *order;
	double t0;
	int err;

	if (!tree)
		die("sysctl_tree_new", errno);
	l.per_table = spread ? PER_DIR : n;
	l.ntables = spread ? (n + PER_DIR - 1) / PER_DIR : 1;
	l.tbl = malloc((size_t)n * sizeof(*l.tbl));
	l.hdr = malloc((size_t)l.ntables * sizeof(*l.hdr));
	order = malloc((size_t)lookups * sizeof(*order));
	if (!l.tbl || !l.hdr || !order)
		die("malloc", ENOMEM);
	for (long i = 0; i < n; i++)
		l.tbl[i] = (struct ctl_table){ names[i], &data[i], sizeof(int), 0644, proc_dointvec,
					       NULL, NULL, NULL };
	for (long k = 0; k < lookups; k++)
		order[k] = (long)(xorshift() % (unsigned long long)n);

	t0 = now_s();
	for (long t = 0; t < l.ntables; t++) {
		long first = t * l.per_table, cnt = n - first < l.per_table ? n - first : l.per_table;

		if (spread) {
			char *p = path;

			memcpy(p, "scale.spread.d", 14);
			*put_num(p + 14, t) = '\0';
		} else {
			snprintf(path, sizeof(path), "scale.flat");
		}
		err = sysctl_register_table(tree, path, &l.tbl[first], (size_t)cnt, &l.hdr[t]);
		if (err)
			die("register", err);
	}
	r.reg_s = now_s() - t0;

	/* Uniformly over all N: the working set grows with N (cache misses). */
	{
		/*
		 * The anchor, interleaved with the tree's loop (lfht, tree,
		 * lfht: the mean of the two lfht passes), so a burst of load
		 * falls on both.
		 */
		struct flat_node *nodes;
		struct cds_lfht *ht = flat_build(n, spread, &nodes);
		double a = flat_loop(ht, spread, order, lookups);

		r.lookup_ns = lookup_loop(tree, spread, order, lookups, lookups);
		r.lfht_ns = (a + flat_loop(ht, spread, order, lookups)) / 2;
		flat_free(ht, nodes, n);
	}
	/*
	 * The same HOT_SET paths over and over, after one pass to bring them
	 * into the caches: what the structure itself costs.
	 */
	lookup_loop(tree, spread, order, lookups < HOT_SET ? lookups : HOT_SET,
		    lookups < HOT_SET ? lookups : HOT_SET);
	r.hot_ns = lookup_loop(tree, spread, order, lookups,
			       lookups < HOT_SET ? lookups : HOT_SET);

	t0 = now_s();
	err = sysctl_walk(tree, spread ? "scale.spread" : "scale.flat", walk_one, &w);
	r.walk_ns = (now_s() - t0) * 1e9 / (double)n;
	if (err)
		die("walk", err);
	if (w.count != n || w.unordered) {
		fprintf(stderr, "rcustring-tree-scale-bench: walk saw %ld of %ld entries%s\n", w.count,
			n, w.unordered ? ", out of order" : "");
		exit(1);
	}

	t0 = now_s();
	for (long t = 0; t < l.ntables; t++)
		sysctl_unregister_table(l.hdr[t]);
	r.unreg_s = now_s() - t0;
	sysctl_tree_free(tree);
	free(order);
	free(l.hdr);
	free(l.tbl);
	return r;
}

/*
 * Reference: ns per dependent load from a random cache line of @mib MiB
 * (a pointer chase through one random cycle), what one cache miss costs
 * at the working set of the largest tree. No lookup can cost less than
 * the misses it must take.
 */
static double miss_ns(size_t mib, long loads)
{
	size_t lines = mib * 1024 * 1024 / 64, stride = 64 / sizeof(size_t);
	size_t *mem = malloc(lines * 64), *perm = malloc(lines * sizeof(*perm)), at = 0;
	double t0;

	if (!mem || !perm)
		die("malloc", ENOMEM);
	for (size_t i = 0; i < lines; i++)
		perm[i] = i;
	for (size_t i = lines - 1; i > 0; i--) {
		size_t j = (size_t)(xorshift() % (i + 1)), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t i = 0; i < lines; i++)
		mem[perm[i] * stride] = perm[(i + 1) % lines] * stride;
	free(perm);
	t0 = now_s();
	for (long k = 0; k < loads; k++)
		at = mem[at];
	t0 = now_s() - t0;
	if (at == (size_t)-1) /* keeps the chase */
		puts("");
	free(mem);
	return t0 * 1e9 / (double)loads;
}

int main(int argc, char **argv)
{
	long sizes[MAX_SIZES] = { 1000, 10000, 100000 }, lookups = 200000, maxn = 0;
	int nsizes = 3, reps = 3;
	double lookup_at[2][2] = { { 0 } }, hot_at[2][2] = { { 0 } }, reg_100k[2] = { -1, -1 };
	double vs_lfht[2][3] = { { 0 } }; /* at 100 000, per layout: median, min, max */
	char **names;
	int *data;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
			char *s = argv[++i], *end;

			nsizes = 0;
			while (*s && nsizes < MAX_SIZES) {
				sizes[nsizes] = strtol(s, &end, 10);
				if (end == s || sizes[nsizes] <= 0)
					goto usage;
				nsizes++;
				s = *end == ',' ? end + 1 : end;
			}
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
			if (reps < 1 || reps > MAX_REPS)
				goto usage;
		} else if (!strcmp(argv[i], "--lookups") && i + 1 < argc) {
			lookups = atol(argv[++i]);
			if (lookups < 1)
				goto usage;
		} else {
			goto usage;
		}
	}
	for (int s = 0; s < nsizes; s++)
		maxn = sizes[s] > maxn ? sizes[s] : maxn;
	names = make_names(maxn);
	data = calloc((size_t)maxn, sizeof(*data));
	if (!data)
		die("calloc", ENOMEM);

	printf("%-7s %8s %10s %13s %10s %10s %10s %12s %9s %13s\n", "layout", "N", "register_s",
	       "register_ns/e", "lookup_ns", "hot_ns", "walk_ns/e", "unregister_s", "lfht_ns",
	       "tree/lfht");
	for (int s = 0; s < nsizes; s++) {
		for (int spread = 0; spread < 2; spread++) {
			double reg[MAX_REPS], look[MAX_REPS], hot[MAX_REPS], walk[MAX_REPS],
				unreg[MAX_REPS], lfht[MAX_REPS], ratio[MAX_REPS], rmed;
			struct result m;

			for (int r = 0; r < reps; r++) {
				struct result x = run_once(sizes[s], spread, names, data, lookups);

				reg[r] = x.reg_s;
				look[r] = x.lookup_ns;
				hot[r] = x.hot_ns;
				walk[r] = x.walk_ns;
				unreg[r] = x.unreg_s;
				lfht[r] = x.lfht_ns;
				ratio[r] = x.lookup_ns / x.lfht_ns;
			}
			m.reg_s = median(reg, reps);
			m.lookup_ns = median(look, reps);
			m.hot_ns = median(hot, reps);
			m.walk_ns = median(walk, reps);
			m.unreg_s = median(unreg, reps);
			m.lfht_ns = median(lfht, reps);
			rmed = median(ratio, reps); /* sorts ratio[]: min and max at the ends */
			printf("%-7s %8ld %10.4f %13.0f %10.0f %10.0f %10.0f %12.4f %9.0f %5.2f %.2f-%.2f\n",
			       spread ? "spread" : "flat", sizes[s], m.reg_s,
			       m.reg_s * 1e9 / (double)sizes[s], m.lookup_ns, m.hot_ns, m.walk_ns,
			       m.unreg_s, m.lfht_ns, rmed, ratio[0], ratio[reps - 1]);
			fflush(stdout);
			if (sizes[s] == 1000) {
				lookup_at[spread][0] = m.lookup_ns;
				hot_at[spread][0] = m.hot_ns;
			}
			if (sizes[s] == 100000) {
				lookup_at[spread][1] = m.lookup_ns;
				hot_at[spread][1] = m.hot_ns;
				reg_100k[spread] = m.reg_s;
				vs_lfht[spread][0] = rmed;
				vs_lfht[spread][1] = ratio[0];
				vs_lfht[spread][2] = ratio[reps - 1];
			}
		}
	}
	printf("reference: one dependent load from a random line of 64 MiB: %.0f ns\n",
	       miss_ns(64, lookups));
	printf("(medians of %d runs, thread CPU time; %ld random lookups per run over all N, then\n"
	       " over the same %d paths (hot_ns); spread: %d entries per directory)\n", reps,
	       lookups, HOT_SET, PER_DIR);
	for (long i = 0; i < maxn; i++)
		free(names[i]);
	free(names);
	free(data);
	rcustring_barrier();

	if (reg_100k[0] >= 0) {
		double rf = lookup_at[0][0] > 0 ? lookup_at[0][1] / lookup_at[0][0] : 0;
		double rs = lookup_at[1][0] > 0 ? lookup_at[1][1] / lookup_at[1][0] : 0;

		/* The one-directory table is the case that was quadratic. */
		printf("summary tree_register_100k_s %.3f\n", reg_100k[0]);
		printf("summary tree_register_100k_spread_s %.3f\n", reg_100k[1]);
		if (rf > 0) {
			/* The worse of the two layouts. */
			printf("summary tree_lookup_ns_100k_vs_1k %.2f\n", rf > rs ? rf : rs);
			printf("summary tree_lookup_ns_100k_vs_1k_flat %.2f\n", rf);
			printf("summary tree_lookup_ns_100k_vs_1k_spread %.2f\n", rs);
			rf = hot_at[0][1] / hot_at[0][0];
			rs = hot_at[1][1] / hot_at[1][0];
			printf("summary tree_lookup_hot_ns_100k_vs_1k %.2f\n", rf > rs ? rf : rs);
		}
		/* The worse layout first, as tree_lookup_ns_100k_vs_1k; then each. */
		int w = vs_lfht[1][0] > vs_lfht[0][0];

		printf("summary tree_lookup_vs_lfht_100k %.2f # the worse layout (%s): median of %d, min "
		       "%.2f max %.2f; sysctl_lookup+put / cds_lfht lookup+ref of the same full paths, "
		       "same random order; target <= 1.0\n",
		       vs_lfht[w][0], w ? "spread" : "flat", reps, vs_lfht[w][1], vs_lfht[w][2]);
		for (int l = 0; l < 2; l++)
			printf("summary tree_lookup_vs_lfht_100k_%s %.2f # median of %d, min %.2f max %.2f\n",
			       l ? "spread" : "flat", vs_lfht[l][0], reps, vs_lfht[l][1], vs_lfht[l][2]);
	}
	return 0;
usage:
	fprintf(stderr, "usage: %s [--sizes N,N,...] [--reps R] [--lookups L]\n", argv[0]);
	return 2;
}
