/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcustring-bench: every scheme side by side in one run, then a write storm,
 * then one "summary NAME VALUE" line per figure for scripts.
 *
 *   rcustring-bench [--seconds S] [--readers N] [--only TEXT] [--validate]
 *
 * --seconds:  time per configuration (default 0.5; 0.1 with --validate).
 * --readers:  run only N readers (scaling); by default N = 1 and N = 2.
 * --only:     run only the schemes whose name contains TEXT (for profiling);
 *             no write storm and no summary then.
 * --validate: a check, not a measurement (the test suite's 'bench' suite):
 *             every configuration runs until its writer wrote at least
 *             twice, and the exit status is 1 if any scheme but "racy
 *             in-place" had a torn read. No figures are judged.
 *
 * Configurations: readers x writer pause (1 us, 1 ms) x value size (24 B,
 * 200 B), each running every scheme. The ratio figures are taken at the
 * largest reader count run, writer pausing 1 ms, 200-byte values.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rcustring/rcustring.h>

#include "bench.h"

static const struct scheme *const schemes[] = {
	&scheme_baseline, &scheme_baseline_inplace, &scheme_racy,    &scheme_mutex,
	&scheme_rwlock,   &scheme_seqlock,          &scheme_rcu_copy, &scheme_rcu_inplace,
	&scheme_rcu_dup,  &scheme_bp_copy,          &scheme_memb_copy,
};
#define NSCHEMES (sizeof(schemes) / sizeof(schemes[0]))

static const long pauses_ns[] = { 1000, 1000000 };
static const size_t sizes[] = { 24, 200 };
#define NPAUSES 2
#define NSIZES 2
#define NREADER_COUNTS 2

/* The written values: static, since rcustring keeps values[0] as its default. */
static char values[NSIZES][2][VALUE_CAP];

struct result {
	double reads_per_reader; /* per wall second */
	double cpu_ns;           /* per read */
	double writes_per_s;
	uint64_t torn;
	uint64_t writes;
	uint64_t pending_peak;
};

static struct result results[NREADER_COUNTS][NPAUSES][NSIZES][NSCHEMES];

static struct run run; /* large (per-reader results): not on the stack */

/* --validate: each run waits for this many writes; 0: time alone */
static uint64_t min_writes;

static void usage(FILE *f)
{
	fprintf(f, "usage: rcustring-bench [--seconds S] [--readers N] [--only TEXT] [--validate]\n"
		   "  --seconds S  time per configuration (default 0.5, 0.1 with --validate)\n"
		   "  --readers N  run only N readers (default: 1, then 2)\n"
		   "  --only TEXT  run only schemes whose name contains TEXT; no summary\n"
		   "  --validate   check, not measure: exit 1 if any scheme but racy in-place\n"
		   "               tore a read, each run lasting until two writes at least\n");
}

static void measure(const struct scheme *s, unsigned readers, long pause_ns, unsigned size_idx,
		    double seconds, struct result *out)
{
	uint64_t reads = 0, cpu = 0, torn = 0;
	int err;

	memset(&run, 0, sizeof(run));
	run.scheme = s;
	run.values[0] = values[size_idx][0];
	run.values[1] = values[size_idx][1];
	run.len = sizes[size_idx];
	run.pause_ns = pause_ns;
	run.readers = readers;
	run.min_writes = min_writes;
	err = run_one(&run, seconds);
	if (err) {
		fprintf(stderr, "rcustring-bench: %s: %s\n", s->name, strerror(-err));
		exit(1);
	}
	for (unsigned i = 0; i < readers; i++) {
		reads += run.res[i].reads;
		cpu += run.res[i].cpu_ns;
		torn += run.res[i].torn;
	}
	out->reads_per_reader = (double)reads / readers / run.wall_s;
	out->cpu_ns = reads ? (double)cpu / (double)reads : 0;
	out->writes_per_s = (double)run.writes / run.wall_s;
	out->torn = torn;
	out->writes = run.writes;
	out->pending_peak = run.pending_peak;
}

static void print_header(void)
{
	printf("  %-22s %15s %12s %12s %10s %8s\n", "scheme", "reads/s/reader", "cpu ns/read",
	       "writes/s", "torn", "pending");
}

static void print_row(const struct scheme *s, const struct result *r)
{
	char writes[32] = "-", pending[32] = "-";

	if (s->write)
		snprintf(writes, sizeof(writes), "%.0f", r->writes_per_s);
	if (s->pending_peak)
		snprintf(pending, sizeof(pending), "%llu", (unsigned long long)r->pending_peak);
	printf("  %-22s %15.0f %12.1f %12s %10llu %8s\n", s->name, r->reads_per_reader, r->cpu_ns,
	       writes, (unsigned long long)r->torn, pending);
	fflush(stdout);
}

static unsigned scheme_index(const struct scheme *s)
{
	for (unsigned i = 0; i < NSCHEMES; i++)
		if (schemes[i] == s)
			return i;
	abort();
}

static int is_rcustring(const struct scheme *s)
{
	return s == &scheme_rcu_copy || s == &scheme_rcu_inplace || s == &scheme_rcu_dup;
}

static const struct result *row(const struct result *group, const struct scheme *s)
{
	return &group[scheme_index(s)];
}

/*
 * --validate: no torn read but in the racy scheme, and the writer wrote
 * both values at least (else a torn count of 0 proves nothing). Prints
 * what failed; returns whether the run passed.
 */
static bool check_run(const struct scheme *s, const struct result *r, unsigned readers,
		      long pause_ns, size_t size)
{
	bool ok = true;

	if (s->write && r->writes < min_writes) {
		printf("validate: FAIL %s (R=%u, pause %ld ns, %zu B): %llu writes, want %llu\n",
		       s->name, readers, pause_ns, size, (unsigned long long)r->writes,
		       (unsigned long long)min_writes);
		ok = false;
	}
	if (s != &scheme_racy && r->torn) {
		printf("validate: FAIL %s (R=%u, pause %ld ns, %zu B): %llu torn reads\n", s->name,
		       readers, pause_ns, size, (unsigned long long)r->torn);
		ok = false;
	}
	return ok;
}

/* One "summary NAME VALUE # comment" line; the first three fields are fixed. */
static void summary_line(const char *name, double value, int decimals, const char *where,
			 const char *what)
{
	char num[32];

	snprintf(num, sizeof(num), "%.*f", decimals, value);
	printf("summary %-27s %-11s # %s%s\n", name, num, where, what);
}

/*
 * The figures for scripts. Ratios come from @group: the largest reader count
 * run (@R), writer pausing 1 ms, 200-byte values.
 */
static void print_summary(const struct result *group, unsigned R, const struct result *storm,
			  uint64_t torn_rcu, uint64_t torn_racy, uint64_t max_pending)
{
	const struct result *base = row(group, &scheme_baseline);
	const struct result *base_inplace = row(group, &scheme_baseline_inplace);
	const struct result *copy = row(group, &scheme_rcu_copy);
	double rpr = copy->reads_per_reader;
	char where[64], bound[64];

	snprintf(where, sizeof(where), "R=%u, writer 1 ms, 200 B: ", R);
	snprintf(bound, sizeof(bound), "highest peak of old versions; bound %d",
		 RCUSTRING_PENDING_MAX);
	summary_line("copy_vs_baseline_cpu_ns", copy->cpu_ns / base->cpu_ns, 3, where,
		     "rcustring copy / baseline copy");
	summary_line("inplace_vs_baseline_cpu_ns",
		     row(group, &scheme_rcu_inplace)->cpu_ns / base_inplace->cpu_ns, 3, where,
		     "rcustring in-place / baseline in-place");
	summary_line("vs_mutex_reads_per_reader", rpr / row(group, &scheme_mutex)->reads_per_reader,
		     2, where, "rcustring copy / mutex");
	summary_line("vs_rwlock_reads_per_reader", rpr / row(group, &scheme_rwlock)->reads_per_reader,
		     2, where, "rcustring copy / rwlock");
	summary_line("vs_seqlock_reads_200B", rpr / row(group, &scheme_seqlock)->reads_per_reader, 2,
		     where, "rcustring copy / seqlock");
	summary_line("torn_rcustring", (double)torn_rcu, 0, "", "all rcustring rows and the storm");
	summary_line("torn_racy", (double)torn_racy, 0, "", "all racy rows");
	summary_line("writes_per_s", storm->writes_per_s, 0, "", "write storm");
	summary_line("max_pending", (double)max_pending, 0, "", bound);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "readers", required_argument, NULL, 'r' },
		{ "only", required_argument, NULL, 'o' },
		{ "validate", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned reader_counts[NREADER_COUNTS] = { 1, 2 }, ncounts = 2, last;
	double seconds = 0;
	const char *only = NULL;
	bool validate = false;
	unsigned bad = 0;
	uint64_t torn_rcu = 0, torn_racy = 0, torn_other = 0, max_pending = 0;
	struct rcustring_stats before, after;
	struct result storm;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "s:r:o:vh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			seconds = strtod(optarg, &end);
			if (*end || !(seconds > 0 && seconds <= 3600)) {
				fprintf(stderr, "rcustring-bench: bad --seconds '%s'\n", optarg);
				return 2;
			}
			break;
		case 'r':
			reader_counts[0] = (unsigned)strtoul(optarg, &end, 10);
			if (*end || reader_counts[0] == 0 || reader_counts[0] > MAX_READERS) {
				fprintf(stderr, "rcustring-bench: --readers must be 1..%d\n", MAX_READERS);
				return 2;
			}
			ncounts = 1;
			break;
		case 'o':
			only = optarg;
			break;
		case 'v':
			validate = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (seconds == 0)
		seconds = validate ? 0.1 : 0.5;
	if (validate)
		min_writes = 2;

	for (unsigned z = 0; z < NSIZES; z++)
		for (unsigned v = 0; v < 2; v++)
			memset(values[z][v], 'a' + (int)v, sizes[z]);

	printf("rcustring-bench: %.2f s per configuration; every read of every scheme is "
	       "checked (length, first == last char)\n",
	       seconds);
	for (unsigned ri = 0; ri < ncounts; ri++) {
		for (unsigned p = 0; p < NPAUSES; p++) {
			for (unsigned z = 0; z < NSIZES; z++) {
				printf("\nR=%u readers, writer pause %s, value %zu B\n", reader_counts[ri],
				       pauses_ns[p] == 1000 ? "1 us" : "1 ms", sizes[z]);
				print_header();
				for (unsigned k = 0; k < NSCHEMES; k++) {
					struct result *res = &results[ri][p][z][k];

					if (only && !strstr(schemes[k]->name, only))
						continue;
					measure(schemes[k], reader_counts[ri], pauses_ns[p], z, seconds,
						res);
					print_row(schemes[k], res);
					bad += validate && !check_run(schemes[k], res, reader_counts[ri],
								      pauses_ns[p], sizes[z]);
					if (schemes[k] == &scheme_racy)
						torn_racy += res->torn;
					else if (is_rcustring(schemes[k]))
						torn_rcu += res->torn;
					else
						torn_other += res->torn;
					if (is_rcustring(schemes[k]) && res->pending_peak > max_pending)
						max_pending = res->pending_peak;
				}
			}
		}
	}

	if (only)
		return 0;

	/* Write storm: rcustring_set back to back, readers copying meanwhile. */
	last = ncounts - 1;
	rcustring_get_stats(&before);
	measure(&scheme_rcu_copy, reader_counts[last], 0, NSIZES - 1, seconds, &storm);
	rcustring_get_stats(&after);
	printf("\nWrite storm: one writer calling rcustring_set with no pause, R=%u readers "
	       "copying, value %zu B\n",
	       reader_counts[last], sizes[NSIZES - 1]);
	print_header();
	print_row(&scheme_rcu_copy, &storm);
	printf("  writes throttled (waited for a grace period): %llu; pending bound "
	       "RCUSTRING_PENDING_MAX = %d\n",
	       (unsigned long long)(after.throttled - before.throttled), RCUSTRING_PENDING_MAX);
	bad += validate && !check_run(&scheme_rcu_copy, &storm, reader_counts[last], 0,
				      sizes[NSIZES - 1]);
	torn_rcu += storm.torn;
	if (storm.pending_peak > max_pending)
		max_pending = storm.pending_peak;

	printf("\ntorn reads in the other synchronized schemes (mutex, rwlock, seqlock, "
	       "urcu flavors): %llu\n\n",
	       (unsigned long long)torn_other);
	print_summary(results[last][NPAUSES - 1][NSIZES - 1], reader_counts[last], &storm,
		      torn_rcu, torn_racy, max_pending);
	if (validate) {
		printf("validate: %s (torn reads allowed only in \"%s\")\n",
		       bad ? "FAILED" : "every synchronized scheme read whole values",
		       scheme_racy.name);
		return bad ? 1 : 0;
	}
	return 0;
}
