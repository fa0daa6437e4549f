/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fleet-bench: how fast a value put in etcd reaches a reader of a mirroring
 * tree, beside etcdctl watch on the same puts; how many values one instance
 * applies per second; and how long readers wait while a write-through's put
 * goes unanswered.
 *
 *   fleet-bench URL[,URL...] [--changes N] [--batches B] [--reps R] [--propagation-only]
 *   fleet-bench URL --load PREFIX N     put N keys PREFIX kI = I + 1 (in 100-key txns)
 *
 * One process: a tree, its etcd sync (prefix /rcustring-bench/PID/), and a
 * client of its own. Propagation: R repetitions (default 5) of N changes
 * (default 1 000): put a new value; a reader thread of the mirroring tree,
 * blocked on the entry's change (sysctl_entry_wait()), copies the value and
 * timestamps it. The time runs from just before the put to that copy: the
 * put's own reply is not waited for (a reader of the tree does not wait for
 * the writer's answer; before 2026-12-07 the bench's reader was the thread
 * that made the put, so every figure was at least the put's round trip,
 * printed now as put_reply). The same puts are watched side by side
 * (fleet_watchers.c), each timed from the same start: by `etcdctl watch`
 * (gRPC, on the first
 * endpoint; to its line's arrival), by a bare reader of the JSON gateway's
 * watch stream, the path the mirror takes (to the chunk's arrival), and by
 * a change callback of the mirror's entry (the apply, in the thread that
 * read the stream: the mirror's time without the reader's wake). So the
 * gateway's own cost (gateway_vs_etcdctl) is told from the mirror's
 * (fleet_vs_gateway, fleet_applied_vs_gateway). Each figure is the median
 * over the repetitions of that repetition's percentile or ratio. Apply
 * rate: B transactions of 100 puts each (one per entry, one revision per
 * transaction), timed from the first put to the last value applied; the put
 * side is batched so that the figure is the instance's, not the client's
 * round trips. Read stall: a second tree owns two entries (a proc_rcu_string
 * and a proc_dointvec) in write-through against an endpoint that accepts
 * connections and never answers; two readers read both while one
 * write-through of each waits for its put (5 s, the request timeout; the
 * two share one connection, so the phase lasts about 10 s), and for as long
 * with no write, in 5 interleaved rounds (medians with min-max printed).
 * The reader thread's context switches (getrusage RUSAGE_THREAD, taken
 * around each batch of 64 reads of one entry) tell why a read took long: it
 * slept (a voluntary switch: it waited for a lock or for I/O), it was
 * preempted (an involuntary switch alone: the scheduler gave the core away,
 * which on shared cores costs tens to hundreds of ms whatever the read
 * does), or it was quiet (no switch in its batch: its time is the read's
 * own). --read-stall runs that part alone, with no etcd. --read-stall-test
 * MS is its test (make check): one write phase; it fails unless the puts
 * waited at least 2 s (else it proves nothing) and each entry was read
 * meanwhile, and it fails if a read of either entry slept, took MS
 * milliseconds or more with no context switch, or 4 * MS in all.
 * Prints
 *   summary {fleet_propagation,etcdctl_watch,gateway_watch,fleet_applied,put_reply}_{p50,p99}_ms X
 *   summary fleet_vs_etcdctl_watch_p50 X     (target <= 1.1)
 *   summary fleet_vs_etcdctl_watch_p99 X     (target <= 1.2)
 *   summary fleet_vs_gateway_watch_{p50,p99} X         the mirror over the gateway's floor
 *   summary gateway_vs_etcdctl_watch_{p50,p99} X       the gateway's own cost
 *   summary fleet_applied_vs_gateway_watch_{p50,p99} X the same, without the reader's wake
 *   summary fleet_applied_per_s X
 *   summary fleet_read_stall_baseline_max_ms X      the longest quiet read, no write
 *   summary fleet_read_stall_max_ms X               the same, puts unanswered (target <= 10)
 *   summary fleet_read_stall_vs_baseline_max X      per round, the second / the first
 *   summary fleet_read_stall_baseline_sleeps N      voluntary switches in reads, no write
 *   summary fleet_read_stall_sleeps N               the same, puts unanswered (target 0)
 *   summary fleet_read_stall_baseline_wall_max_ms X the longest read of all, no write
 *   summary fleet_read_stall_wall_max_ms X          the same, puts unanswered (information)
 * the maxima as medians of the rounds, the sleeps summed over them.
 * --propagation-only stops after the propagation lines (bench_fleet_ab.sh
 * runs two builds' in turn against one cluster).
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "etcd_http.h"
#include "etcd_sync.h"
#include "fleet_watchers.h"

#define ENTRIES 100

static struct rcustring value = RCUSTRING_INITIALIZER(64, "none");
static int ints[ENTRIES];
static char names[ENTRIES][16];
static struct ctl_table one[] = {
	{ "value", &value, 64, 0644, proc_rcu_string, NULL, NULL, "propagation probe" },
};
static struct ctl_table many[ENTRIES];

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void quiet(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "fleet-bench: %s\n", msg);
}

static void spread(double *v, int n, double out[3]);

static double pct(const double *sorted, int n, double p)
{
	return sorted[(size_t)((n - 1) * p)];
}

/* ---- propagation, beside etcdctl watch and a bare gateway reader ---- */

#define PROP_REPS_MAX 64

/*
 * The series, each timed from just before the put: 0 the mirror's reader
 * (a thread woken by the entry's change, timed after its copy), 1 etcdctl
 * watch, 2 the bare gateway reader, 3 the mirror's apply (a change
 * callback, in the sync thread that read the stream: no wake), 4 the put's
 * reply to the thread that made it (information: no watcher waits for it).
 */
#define SERIES 5
#define WATCHERS 4 /* series 0..3 arrive in a watcher; 4 is timed by the putter */
static const char *const series_name[SERIES] = { "fleet_propagation", "etcdctl_watch",
						 "gateway_watch", "fleet_applied", "put_reply" };

struct prop_rep {
	double p50[SERIES], p99[SERIES], max[SERIES];
};

/* The watchers (1..3 of the series) are up once each saw a put made after it started. */
static int warm_up(struct etcd_conn *c, const char *key, struct ref_watch *w, int nw)
{
	for (int i = 0; i < 50; i++) {
		int warm = 0;

		for (int k = 0; k < nw; k++)
			warm += __atomic_load_n(&w[k].warm_ns, __ATOMIC_ACQUIRE) != 0;
		if (warm == nw)
			return 0;
		etcd_put(c, key, "warm", 4, NULL);
		usleep(100000);
	}
	for (int k = 0; k < nw; k++)
		if (!__atomic_load_n(&w[k].warm_ns, __ATOMIC_ACQUIRE))
			fprintf(stderr, "fleet-bench: %s saw nothing\n", w[k].what);
	return 1;
}

/* The mirror's apply, in the thread that applied it. */
static void on_applied(struct sysctl_entry *e, const struct sysctl_change *change, void *arg)
{
	int64_t t = fleet_now_ns();
	char got[64];

	(void)e, (void)change;
	if (rcustring_copy(&value, got, sizeof(got)) >= 0)
		ref_watch_arrived(arg, got, strlen(got), t);
}

/* The mirror's reader: blocks on the entry's change, copies, timestamps. */
struct tree_reader {
	struct sysctl_entry *e;
	struct ref_watch *w;
	bool stop; /* atomic */
};

static void *tree_reader(void *arg)
{
	struct tree_reader *r = arg;
	uint64_t seen = sysctl_entry_changes(r->e);
	char got[64];

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		int64_t now = sysctl_entry_wait(r->e, seen, 100);

		if (now < 0)
			continue;
		seen = (uint64_t)now;
		if (rcustring_copy(&value, got, sizeof(got)) >= 0)
			ref_watch_arrived(r->w, got, strlen(got), fleet_now_ns());
	}
	return NULL;
}

/* One change: put v@i, then wait until every watcher (series 0..3) saw it. */
static int one_change(struct etcd_conn *c, const char *key, struct ref_watch *w, int i,
		      double lat[SERIES])
{
	int64_t t0 = fleet_now_ns();
	char want[64];

	snprintf(want, sizeof(want), "v%d", i);
	if (etcd_put(c, key, want, strlen(want), NULL)) {
		fprintf(stderr, "fleet-bench: put: %s\n", c->err);
		return 1;
	}
	lat[4] = (double)(fleet_now_ns() - t0) / 1e6;
	for (int k = 0; k < WATCHERS; k++) {
		int64_t at = ref_watch_wait(&w[k].arrived_ns[i]);

		if (!at) {
			fprintf(stderr, "fleet-bench: %s missed %s\n", w[k].what, want);
			return 1;
		}
		lat[k] = (double)(at - t0) / 1e6;
	}
	return 0;
}

/* @changes changes from index @first; their percentiles into @r. */
static int prop_rep(struct etcd_conn *c, const char *key, struct ref_watch *w, int first,
		    int changes, struct prop_rep *r)
{
	double *lat[SERIES], l[SERIES];
	int err = 0;

	for (int k = 0; k < SERIES; k++)
		if (!(lat[k] = calloc((size_t)changes, sizeof(double))))
			err = 1;
	for (int i = 0; !err && i < changes; i++) {
		err = one_change(c, key, w, first + i, l);
		for (int k = 0; !err && k < SERIES; k++)
			lat[k][i] = l[k];
	}
	for (int k = 0; k < SERIES; k++) {
		if (!err) {
			qsort(lat[k], (size_t)changes, sizeof(double), cmp_double);
			r->p50[k] = pct(lat[k], changes, 0.5);
			r->p99[k] = pct(lat[k], changes, 0.99);
			r->max[k] = lat[k][changes - 1];
		}
		free(lat[k]);
	}
	return err;
}

/* The ratios printed: series a over series b, per repetition. */
static const struct {
	const char *name, *target50, *target99;
	int a, b;
} ratios[] = {
	{ "fleet_vs_etcdctl_watch", "; target <= 1.1", "; target <= 1.2", 0, 1 },
	{ "fleet_vs_gateway_watch", "", "", 0, 2 },
	{ "gateway_vs_etcdctl_watch", "", "", 2, 1 },
	{ "fleet_applied_vs_gateway_watch", "", "", 3, 2 },
};

/* Median (min, max) over the repetitions: of series @k's p50 or p99, or of ratio -@k-1's. */
static void over_reps(const struct prop_rep *r, int reps, bool p50, int k, double out[3])
{
	double v[PROP_REPS_MAX];

	for (int i = 0; i < reps; i++) {
		const double *p = p50 ? r[i].p50 : r[i].p99;

		v[i] = k >= 0 ? p[k] : p[ratios[-k - 1].a] / p[ratios[-k - 1].b];
	}
	spread(v, reps, out);
}

static void prop_print(const struct prop_rep *r, int reps, int changes)
{
	double m[3];

	for (int i = 0; i < reps; i++)
		printf("propagation, repetition %d of %d changes: p50/p99 (max) ms: fleet %.3f/%.3f "
		       "(%.1f), etcdctl watch %.3f/%.3f (%.1f), gateway reader %.3f/%.3f (%.1f), "
		       "fleet applied %.3f/%.3f (%.1f), put reply %.3f/%.3f (%.1f)\n", i + 1,
		       changes, r[i].p50[0], r[i].p99[0], r[i].max[0], r[i].p50[1], r[i].p99[1],
		       r[i].max[1], r[i].p50[2], r[i].p99[2], r[i].max[2], r[i].p50[3], r[i].p99[3],
		       r[i].max[3], r[i].p50[4], r[i].p99[4], r[i].max[4]);
	for (int k = 0; k < SERIES; k++)
		for (int p50 = 1; p50 >= 0; p50--) {
			over_reps(r, reps, p50, k, m);
			printf("summary %s_%s_ms %.3f # median of %d repetitions (min-max %.3f-%.3f)\n",
			       series_name[k], p50 ? "p50" : "p99", m[0], reps, m[1], m[2]);
		}
	for (int k = 0; k < (int)(sizeof(ratios) / sizeof(ratios[0])); k++)
		for (int p50 = 1; p50 >= 0; p50--) {
			over_reps(r, reps, p50, -k - 1, m);
			printf("summary %s_%s %.3f # per repetition, median of %d (min-max "
			       "%.3f-%.3f)%s\n", ratios[k].name, p50 ? "p50" : "p99", m[0], reps, m[1],
			       m[2], p50 ? ratios[k].target50 : ratios[k].target99);
		}
}

static int propagation(struct sysctl_tree *tree, struct etcd_conn *c, const char *endpoints,
		       const char *prefix, int changes, int reps)
{
	struct sysctl_entry *e = sysctl_lookup(tree, "bench/value");
	struct prop_rep r[PROP_REPS_MAX];
	struct sysctl_callback *cb = NULL;
	struct ref_watch w[WATCHERS];
	struct tree_reader reader = { .e = e, .w = &w[0] };
	pthread_t reader_thread;
	char key[128];
	int err = 0, n = changes * reps;

	snprintf(key, sizeof(key), "%sbench/value", prefix);
	for (int k = 0; k < WATCHERS; k++)
		w[k] = (struct ref_watch){ .fd = -1 }; /* ref_watch_stop() of one never started */
	if (!e || ref_watch_init(&w[0], "the mirror's reader", n) ||
	    pthread_create(&reader_thread, NULL, tree_reader, &reader))
		return 1;
	if (ref_watch_etcdctl(&w[1], endpoints, key, n) ||
	    ref_watch_gateway(&w[2], endpoints, key, n) ||
	    ref_watch_init(&w[3], "the mirror's apply", n) ||
	    sysctl_entry_on_change(e, on_applied, &w[3], &cb) || warm_up(c, key, w, WATCHERS))
		err = 1;
	/* All watch the same puts: each repetition sees the same load. */
	for (int i = 0; !err && i < reps; i++)
		err = prop_rep(c, key, w, i * changes, changes, &r[i]);
	sysctl_callback_remove(cb);
	__atomic_store_n(&reader.stop, true, __ATOMIC_RELEASE);
	pthread_join(reader_thread, NULL);
	for (int k = 0; k < WATCHERS; k++)
		ref_watch_stop(&w[k]);
	sysctl_entry_put(e);
	if (!err)
		prop_print(r, reps, changes);
	return err;
}

/* ---- apply rate ---- */

static int apply_rate(struct etcd_sync *sync, struct etcd_conn *c, const char *prefix,
		      int batches)
{
	static char kbuf[ENTRIES][128], vbuf[ENTRIES][16];
	const char *keys[ENTRIES], *vals[ENTRIES];
	struct etcd_sync_status st;
	uint64_t base;
	double t0, t1;

	etcd_sync_status(sync, &st);
	base = st.applied;
	t0 = now_ms();
	for (int b = 0; b < batches; b++) {
		for (int i = 0; i < ENTRIES; i++) {
			snprintf(kbuf[i], sizeof(kbuf[i]), "%smany/k%d", prefix, i);
			snprintf(vbuf[i], sizeof(vbuf[i]), "%d", b + 1);
			keys[i] = kbuf[i];
			vals[i] = vbuf[i];
		}
		if (etcd_put_many(c, keys, vals, ENTRIES)) {
			fprintf(stderr, "fleet-bench: txn: %s\n", c->err);
			return 1;
		}
	}
	for (int i = 0; i < 60000; i++) { /* 60 s hang guard */
		etcd_sync_status(sync, &st);
		if (st.applied - base >= (uint64_t)batches * ENTRIES)
			break;
		usleep(1000);
	}
	t1 = now_ms();
	if (st.applied - base < (uint64_t)batches * ENTRIES) {
		fprintf(stderr, "fleet-bench: only %llu of %d applied\n",
			(unsigned long long)(st.applied - base), batches * ENTRIES);
		return 1;
	}
	printf("applied %d values in %.1f ms\n", batches * ENTRIES, t1 - t0);
	printf("summary fleet_applied_per_s %.0f\n", batches * ENTRIES * 1e3 / (t1 - t0));
	return 0;
}

/* ---- readers while a write-through's put goes unanswered ---- */

static struct rcustring wt_str = RCUSTRING_INITIALIZER(64, "initial");
static int wt_num = 1;
static struct ctl_table wt_table[] = {
	{ "str", &wt_str, 64, 0644, proc_rcu_string, NULL, NULL, "read-stall probe (RCU)" },
	{ "num", &wt_num, sizeof(int), 0644, proc_dointvec, NULL, NULL, "read-stall probe (int)" },
};

/*
 * What the reads of one entry (0: the RCU string, 1: the int) did over a
 * phase, told by the reader thread's context switches (getrusage
 * RUSAGE_THREAD) across each batch of STALL_BATCH reads of that entry: a
 * read that waits for a lock or for I/O sleeps (a voluntary switch); one
 * the scheduler took the core from shows an involuntary switch alone. Only
 * the reads and clock reads run inside a batch, and clock reads never
 * sleep, so a batch with no voluntary switch had no read that slept, and
 * the reads of a batch with no switch at all are quiet: their time is the
 * read's own (interrupts and a hypervisor's steal aside). One getrusage a
 * read would cost several times the read itself.
 */
#define STALL_BATCH 64

struct stall_tally {
	unsigned long reads;
	unsigned long sleeps;      /* voluntary switches during reads */
	unsigned long faulted;     /* batches that slept with a page fault */
	unsigned long preempted;   /* involuntary switches in batches that never slept */
	unsigned long quiet_reads; /* reads of batches with no switch */
	double quiet_max;          /* the longest of those */
	double wall_max;           /* the longest read of all */
};

struct stall {
	struct sysctl_tree *tree;
	int stop; /* atomic */
	struct stall_tally t[2];
	pthread_mutex_t lock;
};

static void tally_add(struct stall_tally *to, const struct stall_tally *from)
{
	to->reads += from->reads;
	to->sleeps += from->sleeps;
	to->faulted += from->faulted;
	to->preempted += from->preempted;
	to->quiet_reads += from->quiet_reads;
	if (from->quiet_max > to->quiet_max)
		to->quiet_max = from->quiet_max;
	if (from->wall_max > to->wall_max)
		to->wall_max = from->wall_max;
}

/* One batch of reads of @path into @t. */
static void stall_batch(struct stall *st, const char *path, struct stall_tally *t)
{
	struct rusage r0, r1;
	double max = 0;
	char buf[64];

	getrusage(RUSAGE_THREAD, &r0);
	for (int i = 0; i < STALL_BATCH; i++) {
		double t0 = now_ms(), dt;

		sysctl_get(st->tree, path, buf, sizeof(buf));
		dt = now_ms() - t0;
		if (dt > max)
			max = dt;
	}
	getrusage(RUSAGE_THREAD, &r1);
	t->reads += STALL_BATCH;
	if (max > t->wall_max)
		t->wall_max = max;
	if (r1.ru_nvcsw != r0.ru_nvcsw) {
		t->sleeps += (unsigned long)(r1.ru_nvcsw - r0.ru_nvcsw);
		if (r1.ru_minflt != r0.ru_minflt || r1.ru_majflt != r0.ru_majflt)
			t->faulted++;
	} else if (r1.ru_nivcsw != r0.ru_nivcsw) {
		t->preempted += (unsigned long)(r1.ru_nivcsw - r0.ru_nivcsw);
	} else {
		t->quiet_reads += STALL_BATCH;
		if (max > t->quiet_max)
			t->quiet_max = max;
	}
}

static void *stall_reader(void *arg)
{
	static const char *const path[2] = { "wt/str", "wt/num" };
	struct stall *st = arg;
	struct stall_tally t[2] = { 0 };
	char buf[64];

	/* The thread's first read registers it with RCU (a mutex, maybe an
	 * mmap): a one-time cost, not a wait for etcd; left out. */
	for (int k = 0; k < 2; k++)
		sysctl_get(st->tree, path[k], buf, sizeof(buf));
	while (!__atomic_load_n(&st->stop, __ATOMIC_ACQUIRE))
		for (int k = 0; k < 2; k++)
			stall_batch(st, path[k], &t[k]);
	pthread_mutex_lock(&st->lock);
	for (int k = 0; k < 2; k++)
		tally_add(&st->t[k], &t[k]);
	pthread_mutex_unlock(&st->lock);
	return NULL;
}

static void *stall_writer(void *arg)
{
	struct stall *st = arg;
	static int which;
	int me = __atomic_fetch_add(&which, 1, __ATOMIC_RELAXED) % 2; /* one of each a phase */

	/* Blocks until the put times out: the endpoint never answers. */
	sysctl_set(st->tree, me ? "wt/num" : "wt/str", me ? "7" : "written", me ? 1 : 7, NULL);
	return NULL;
}

/* A listening socket that never accepts: connections complete, requests wait. */
static int blackhole(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&a, &len))
		return -1;
	*port = ntohs(a.sin_port);
	return fd;
}

/* The two readers' reads over one phase, both kinds together (st->t keeps
 * them apart): while a write-through of each entry waits for its unanswered
 * put, or for @ms with no write. */
static struct stall_tally stall_phase(struct stall *st, bool writes, double *ms)
{
	struct stall_tally all = { 0 };
	pthread_t r[2], w[2];
	double t0;

	memset(st->t, 0, sizeof(st->t));
	__atomic_store_n(&st->stop, 0, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, stall_reader, st);
	t0 = now_ms();
	if (writes) {
		for (int i = 0; i < 2; i++)
			pthread_create(&w[i], NULL, stall_writer, st);
		for (int i = 0; i < 2; i++)
			pthread_join(w[i], NULL);
		*ms = now_ms() - t0;
	} else {
		usleep((useconds_t)(*ms * 1000));
	}
	__atomic_store_n(&st->stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	for (int k = 0; k < 2; k++)
		tally_add(&all, &st->t[k]);
	return all;
}

/* Median, min and max of @n values (sorted in place). */
static void spread(double *v, int n, double out[3])
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	out[0] = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	out[1] = v[0];
	out[2] = v[n - 1];
}

#define STALL_ROUNDS 5

static int failed(const char *why)
{
	printf("FAIL: %s\n", why);
	return 1;
}

/*
 * One write phase; 0 when no read slept while the puts waited and every
 * read took under @limit ms. The RCU string's read takes no lock. The int's
 * takes the entry's data lock for reading (proc_dointvec copies data that a
 * store changes in place), which only the entry's own in-memory stores take
 * for writing (a value applied from the watch, a refused commit's
 * rollback), never the write-through's put; and here none runs, since no
 * put is answered. So neither reader may sleep: one that does waits for
 * something the put holds.
 */
static int stall_test(struct stall *st, double limit)
{
	static const char *const kind[2] = { "RCU string", "int" };
	double ms = 0;
	struct stall_tally all = stall_phase(st, true, &ms);
	int fail = 0;

	printf("fleet-read-stall: %lu reads (%.0f a second) while two write-throughs waited "
	       "%.0f ms for their puts\n", all.reads, ms > 0 ? all.reads * 1e3 / ms : 0.0, ms);
	for (int k = 0; k < 2; k++)
		printf("fleet-read-stall: %s: %lu reads, %lu sleeps (%lu batches with a page "
		       "fault), %lu preemptions; the longest read %.3f ms, the longest quiet "
		       "one %.3f ms (%lu quiet reads)\n", kind[k], st->t[k].reads, st->t[k].sleeps,
		       st->t[k].faulted, st->t[k].preempted, st->t[k].wall_max, st->t[k].quiet_max,
		       st->t[k].quiet_reads);
	if (ms < 2000)
		fail = failed("the puts did not wait: the test proves nothing");
	if (!st->t[0].reads || !st->t[1].reads)
		fail = failed("an entry was not read");
	if (st->t[0].sleeps || st->t[1].sleeps)
		fail = failed("a read slept (waited) during a write-through");
	/* A read's own time is a quiet one's; a preempted read also holds the
	 * time the scheduler gave away (1 043 ms was seen under make check's
	 * load), so its bound is 4 times that, still under the put's 5 s. */
	if (all.quiet_max >= limit) {
		printf("FAIL: a read no context switch interrupted took %.3f ms, at least %.0f\n",
		       all.quiet_max, limit);
		fail = 1;
	}
	if (all.wall_max >= 4 * limit) {
		printf("FAIL: a read took %.3f ms, at least %.0f\n", all.wall_max, 4 * limit);
		fail = 1;
	}
	return fail;
}

/* The rounds of one kind of phase. */
struct stall_rounds {
	double quiet[STALL_ROUNDS], wall[STALL_ROUNDS], preempted[STALL_ROUNDS];
	double q3[3], w3[3], p3[3];
	unsigned long sleeps, faulted, reads, quiet_reads;
};

static void rounds_add(struct stall_rounds *r, int i, const struct stall_tally *t)
{
	r->quiet[i] = t->quiet_max;
	r->wall[i] = t->wall_max;
	r->preempted[i] = (double)t->preempted;
	r->sleeps += t->sleeps;
	r->faulted += t->faulted;
	r->reads += t->reads;
	r->quiet_reads += t->quiet_reads;
}

static void rounds_print(const char *what, struct stall_rounds *r)
{
	spread(r->quiet, STALL_ROUNDS, r->q3);
	spread(r->wall, STALL_ROUNDS, r->w3);
	spread(r->preempted, STALL_ROUNDS, r->p3);
	printf("  %s: longest quiet read %.3f (%.3f-%.3f) ms (quiet: %.2f%% of %lu reads); "
	       "longest read %.3f (%.3f-%.3f) ms, preemptions %.0f (%.0f-%.0f); sleeps %lu in all "
	       "(%lu batches with a page fault)\n", what, r->q3[0], r->q3[1], r->q3[2],
	       r->reads ? 100.0 * (double)r->quiet_reads / (double)r->reads : 0.0, r->reads,
	       r->w3[0], r->w3[1], r->w3[2], r->p3[0], r->p3[1], r->p3[2], r->sleeps, r->faulted);
}

/* @limit 0: the bench (rounds, medians); else stall_test(). */
static int read_stall(double limit)
{
	struct etcd_sync_opts so = { .prefix = "/rcustring-bench/stall/", .host = "bench",
				     .write_through = 1, .log = quiet };
	struct stall st = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct stall_rounds base = { 0 }, wr = { 0 };
	double ratio[STALL_ROUNDS], r3[3], ms = 5000, seconds = 0;
	struct sysctl_table_header *h;
	struct etcd_sync *sync;
	char url[64];
	int port, fd = blackhole(&port);

	st.tree = sysctl_tree_new();
	if (fd < 0 || !st.tree)
		return 1;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	so.endpoints = url;
	if (etcd_sync_new(st.tree, &so, &sync) ||
	    etcd_sync_own_table(sync, "wt", wt_table, 2, &h) || etcd_sync_run(sync))
		return 1;
	if (limit > 0) {
		int err = stall_test(&st, limit);

		sysctl_unregister_table(h);
		etcd_sync_stop(sync);
		sysctl_tree_free(st.tree);
		close(fd);
		rcustring_destroy(&wt_str);
		return err;
	}
	/* Rounds of a write phase and a no-write phase as long, in alternating
	 * order, so that both see the same load on shared cores. */
	for (int i = 0; i < STALL_ROUNDS; i++) {
		struct stall_tally b, w;

		if (i % 2) {
			b = stall_phase(&st, false, &ms);
			w = stall_phase(&st, true, &ms);
		} else {
			w = stall_phase(&st, true, &ms);
			b = stall_phase(&st, false, &ms);
		}
		rounds_add(&base, i, &b);
		rounds_add(&wr, i, &w);
		ratio[i] = b.quiet_max > 0 ? w.quiet_max / b.quiet_max : 0.0;
		seconds += ms / 1e3;
	}
	spread(ratio, STALL_ROUNDS, r3);
	printf("readers of write-through entries, %d rounds of two phases of %.1f s (mean), "
	       "median (min-max) per phase; quiet reads had no context switch, sleeps are "
	       "voluntary switches during reads, preemptions involuntary ones:\n", STALL_ROUNDS,
	       seconds / STALL_ROUNDS);
	rounds_print("no write", &base);
	rounds_print("puts unanswered", &wr);
	printf("  quiet maximum, puts unanswered / no write, per round: %.3f (%.3f-%.3f); "
	       "%.0f reads/s a phase\n", r3[0], r3[1], r3[2], (double)(base.reads + wr.reads) /
	       (2 * seconds));
	printf("summary fleet_read_stall_baseline_max_ms %.3f # no write; median (min-max %.3f-%.3f) "
	       "of %d rounds\n", base.q3[0], base.q3[1], base.q3[2], STALL_ROUNDS);
	printf("summary fleet_read_stall_max_ms %.3f # median (min-max %.3f-%.3f); target <= 10\n",
	       wr.q3[0], wr.q3[1], wr.q3[2]);
	printf("summary fleet_read_stall_vs_baseline_max %.3f # median (min-max %.3f-%.3f)\n",
	       r3[0], r3[1], r3[2]);
	printf("summary fleet_read_stall_baseline_sleeps %lu # all rounds\n", base.sleeps);
	printf("summary fleet_read_stall_sleeps %lu # all rounds; target 0\n", wr.sleeps);
	/* Information: on shared cores the longest read is a preemption. */
	printf("summary fleet_read_stall_baseline_wall_max_ms %.3f # median (min-max %.3f-%.3f); "
	       "preemptions %.0f (%.0f-%.0f)\n", base.w3[0], base.w3[1], base.w3[2],
	       base.p3[0], base.p3[1], base.p3[2]);
	printf("summary fleet_read_stall_wall_max_ms %.3f # median (min-max %.3f-%.3f); "
	       "preemptions %.0f (%.0f-%.0f)\n", wr.w3[0], wr.w3[1], wr.w3[2], wr.p3[0],
	       wr.p3[1], wr.p3[2]);
	sysctl_unregister_table(h);
	etcd_sync_stop(sync);
	sysctl_tree_free(st.tree);
	close(fd);
	rcustring_destroy(&wt_str);
	return 0;
}

/* --load PREFIX N: N keys PREFIX kI = I + 1, in transactions of ENTRIES puts. */
static int load(struct etcd_conn *c, const char *prefix, int n)
{
	static char kbuf[ENTRIES][128], vbuf[ENTRIES][16];
	const char *keys[ENTRIES], *vals[ENTRIES];

	for (int i = 0; i < n; i += ENTRIES) {
		int k = n - i < ENTRIES ? n - i : ENTRIES;

		for (int j = 0; j < k; j++) {
			snprintf(kbuf[j], sizeof(kbuf[j]), "%sk%d", prefix, i + j);
			snprintf(vbuf[j], sizeof(vbuf[j]), "%d", i + j + 1); /* not the default 0 */
			keys[j] = kbuf[j];
			vals[j] = vbuf[j];
		}
		if (etcd_put_many(c, keys, vals, (size_t)k)) {
			fprintf(stderr, "fleet-bench: txn: %s\n", c->err);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct etcd_sync_opts so = { .log = quiet };
	struct sysctl_table_header *h1, *h2;
	struct etcd_sync_status st;
	struct sysctl_tree *tree;
	struct etcd_sync *sync;
	struct etcd_conn c;
	char prefix[64], first[256];
	int changes = 1000, batches = 50, reps = 5, err;
	bool prop_only = false;

	if (argc == 2 && !strcmp(argv[1], "--read-stall")) /* needs no etcd */
		return read_stall(0);
	if (argc == 3 && !strcmp(argv[1], "--read-stall-test"))
		return read_stall(atof(argv[2]) > 0 ? atof(argv[2]) : 1000);
	if (argc < 2) {
		fprintf(stderr, "usage: %s URL [--changes N] [--batches B] [--reps R] "
				"[--propagation-only] | URL --load PREFIX N | --read-stall | "
				"--read-stall-test MS\n", argv[0]);
		return 2;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (etcd_conn_init(&c, argv[1], NULL))
		return 1;
	if (argc == 5 && !strcmp(argv[2], "--load"))
		return load(&c, argv[3], atoi(argv[4]));
	for (int i = 2; i < argc; i += 2) {
		if (!strcmp(argv[i], "--propagation-only")) {
			prop_only = true;
			i--;
		} else if (i + 1 == argc) {
			return 2;
		} else if (!strcmp(argv[i], "--changes"))
			changes = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--batches"))
			batches = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--reps"))
			reps = atoi(argv[i + 1]);
	}
	if (changes < 1 || batches < 1 || reps < 1 || reps > PROP_REPS_MAX)
		return 2;
	snprintf(prefix, sizeof(prefix), "/rcustring-bench/%d/", (int)getpid());
	/*
	 * The mirror watches the member the reference watchers watch (the
	 * first): a follower sees a commit later than the leader, so a mirror
	 * on another member would time the cluster's layout, not the path.
	 */
	snprintf(first, sizeof(first), "%.*s", (int)strcspn(argv[1], ","), argv[1]);
	so.endpoints = first;
	so.prefix = prefix;
	so.host = "bench";
	for (int i = 0; i < ENTRIES; i++) {
		snprintf(names[i], sizeof(names[i]), "k%d", i);
		many[i] = (struct ctl_table){ names[i], &ints[i], sizeof(int), 0644, proc_dointvec,
					      NULL, NULL, "apply-rate probe" };
	}
	tree = sysctl_tree_new();
	if (!tree || sysctl_register_table(tree, "bench", one, 1, &h1) ||
	    sysctl_register_table(tree, "many", many, ENTRIES, &h2))
		return 1;
	if (etcd_sync_start(tree, &so, &sync))
		return 1;
	for (int i = 0; i < 200; i++) { /* 20 s hang guard for the first watch */
		etcd_sync_status(sync, &st);
		if (st.connected)
			break;
		usleep(100000);
	}
	if (!st.connected) {
		fprintf(stderr, "fleet-bench: no watch on %s\n", argv[1]);
		return 1;
	}
	err = propagation(tree, &c, argv[1], prefix, changes, reps);
	if (!err && !prop_only)
		err = apply_rate(sync, &c, prefix, batches);
	etcd_sync_stop(sync);
	sysctl_unregister_table(h1);
	sysctl_unregister_table(h2);
	sysctl_tree_free(tree);
	if (!err && !prop_only)
		err = read_stall(0);
	etcd_conn_free(&c);
	rcustring_destroy(&value);
	rcustring_barrier();
	curl_global_cleanup();
	return err;
}
