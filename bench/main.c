/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcustring-bench: every scheme side by side, repeated, then a write storm,
 * then one "summary NAME VALUE" line per figure for scripts.
 *
 *   rcustring-bench [--seconds S] [--reps N] [--readers N] [--only TEXT]
 *                   [--validate]
 *
 * --seconds:  time per configuration and repetition (default 0.5; 0.1 with
 *             --validate).
 * --reps:     repetitions (default 5; 1 with --validate). Each repetition
 *             runs the whole grid once, every scheme of a configuration one
 *             after the other, starting one scheme further each time, so
 *             that the schemes are interleaved in time and a burst of load
 *             hits all of them alike. Tables and summary lines are medians
 *             over the repetitions; a ratio is taken within each repetition
 *             (numerator and denominator measured moments apart), then its
 *             median, minimum and maximum are printed.
 * --readers:  run only N readers (scaling); by default N = 1 and N = 2.
 * --only:     run only the schemes whose name contains TEXT (for profiling);
 *             no write storm and no summary then.
 * --validate: a check, not a measurement (the test suite's 'bench' suite):
 *             every configuration runs until its writer wrote at least
 *             twice, every read is compared in full with the two values
 *             written, and the exit status is 1 if any scheme but "racy
 *             in-place" had a torn read. No figures are judged.
 *
 * Configurations: readers x writer pause (a busy-waited 1 us: a write every
 * 1 us plus the write's own cost while the writer has a core; a 1 ms
 * nanosleep) x value size (24 B, 200 B), each running every scheme. The main ratio figures are taken at the largest reader count run,
 * writer pausing 1 ms, 200-byte values; the "_writer_1us" ones at the same
 * reader count and size with the writer pausing 1 us.
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
	&scheme_baseline, &scheme_baseline_inplace, &scheme_racy,     &scheme_mutex,
	&scheme_rwlock,   &scheme_seqlock,          &scheme_rcu_copy, &scheme_rcu_inplace,
	&scheme_rcu_dup,  &scheme_rcu_copy_inline,  &scheme_rcu_inplace_inline,
	&scheme_bp_copy,  &scheme_memb_copy,        &scheme_memb_auto_copy,
	&scheme_bp_inplace, &scheme_memb_inplace,   &scheme_memb_auto_inplace,
};
#define NSCHEMES (sizeof(schemes) / sizeof(schemes[0]))

/* Writer pauses: index 0 is the "_writer_1us" configuration, the last one the main one. */
static const struct {
	long ns;
	bool spin;
	const char *label;
} pauses[] = {
	{ 1000, true, "1 us (busy wait)" },
	{ 1000000, false, "1 ms (nanosleep)" },
};
static const size_t sizes[] = { 24, 200 };
#define NPAUSES 2
#define NSIZES 2
#define NREADER_COUNTS 2
#define MAX_REPS 51

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

/* One configuration's rows, per repetition. */
typedef struct result group_t[MAX_REPS][NSCHEMES];

static group_t results[NREADER_COUNTS][NPAUSES][NSIZES];
static struct result storms[MAX_REPS];

static struct run run; /* large (per-reader results): not on the stack */

/* --validate: each run waits for this many writes; 0: time alone */
static uint64_t min_writes;
static bool full_check;

static void usage(FILE *f)
{
	fprintf(f, "usage: rcustring-bench [--seconds S] [--reps N] [--readers N] [--only TEXT] "
		   "[--validate]\n"
		   "  --seconds S  time per configuration and repetition (default 0.5, 0.1 with "
		   "--validate)\n"
		   "  --reps N     repetitions, schemes interleaved; medians printed (default 5,\n"
		   "               1 with --validate; at most %d)\n"
		   "  --readers N  run only N readers (default: 1, then 2)\n"
		   "  --only TEXT  run only schemes whose name contains TEXT; no summary\n"
		   "  --validate   check, not measure: every read compared in full with the two\n"
		   "               values written; exit 1 if any scheme but racy in-place tore\n"
		   "               a read, each run lasting until two writes at least\n",
		MAX_REPS);
}

/* The 1-minute load average, or -1 if /proc/loadavg cannot be read. */
static double loadavg(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double l = -1;

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

static void measure(const struct scheme *s, unsigned readers, unsigned pause_idx,
		    unsigned size_idx, double seconds, struct result *out)
{
	uint64_t reads = 0, cpu = 0, torn = 0;
	int err;

	memset(&run, 0, sizeof(run));
	run.scheme = s;
	run.values[0] = values[size_idx][0];
	run.values[1] = values[size_idx][1];
	run.len = sizes[size_idx];
	run.pause_ns = pauses[pause_idx].ns;
	run.pause_spin = pauses[pause_idx].spin;
	run.full_check = full_check;
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median, minimum and maximum of @n values (sorted in place). */
struct spread {
	double median, min, max;
};

static struct spread spread_of(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return (struct spread){
		.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2,
		.min = v[0],
		.max = v[n - 1],
	};
}

/* One field of a result, for spread_of() over repetitions. */
enum field { F_READS, F_CPU, F_WRITES };

static double field(const struct result *r, enum field f)
{
	return f == F_READS ? r->reads_per_reader : f == F_CPU ? r->cpu_ns : r->writes_per_s;
}

static struct spread over_reps(const struct result *per_rep, size_t stride, unsigned reps,
			       enum field f)
{
	double v[MAX_REPS];

	for (unsigned i = 0; i < reps; i++)
		v[i] = field((const struct result *)((const char *)per_rep + i * stride), f);
	return spread_of(v, reps);
}

static void print_header(void)
{
	printf("  %-22s %15s %12s %15s %12s %10s %8s\n", "scheme", "reads/s/reader", "cpu ns/read",
	       "cpu ns min-max", "writes/s", "torn", "pending");
}

/*
 * One table row: medians over @reps repetitions of @per_rep (spaced @stride
 * bytes apart), the CPU ns spread, torn reads summed and the highest
 * pending peak.
 */
static void print_row(const struct scheme *s, const struct result *per_rep, size_t stride,
		      unsigned reps)
{
	char writes[32] = "-", pending[32] = "-", range[32];
	struct spread rd = over_reps(per_rep, stride, reps, F_READS);
	struct spread cpu = over_reps(per_rep, stride, reps, F_CPU);
	struct spread wr = over_reps(per_rep, stride, reps, F_WRITES);
	uint64_t torn = 0, peak = 0;

	for (unsigned i = 0; i < reps; i++) {
		const struct result *r = (const struct result *)((const char *)per_rep + i * stride);

		torn += r->torn;
		if (r->pending_peak > peak)
			peak = r->pending_peak;
	}
	if (s->write)
		snprintf(writes, sizeof(writes), "%.0f", wr.median);
	if (s->pending_peak)
		snprintf(pending, sizeof(pending), "%llu", (unsigned long long)peak);
	snprintf(range, sizeof(range), "%.1f-%.1f", cpu.min, cpu.max);
	printf("  %-22s %15.0f %12.1f %15s %12s %10llu %8s\n", s->name, rd.median, cpu.median, range,
	       writes, (unsigned long long)torn, pending);
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
	return s == &scheme_rcu_copy || s == &scheme_rcu_inplace || s == &scheme_rcu_dup ||
	       s == &scheme_rcu_copy_inline || s == &scheme_rcu_inplace_inline;
}

/*
 * --validate: no torn read but in the racy scheme, and the writer wrote
 * both values at least (else a torn count of 0 proves nothing). Prints
 * what failed; returns whether the run passed.
 */
static bool check_run(const struct scheme *s, const struct result *r, unsigned readers,
		      const char *pause, size_t size)
{
	bool ok = true;

	if (s->write && r->writes < min_writes) {
		printf("validate: FAIL %s (R=%u, pause %s, %zu B): %llu writes, want %llu\n",
		       s->name, readers, pause, size, (unsigned long long)r->writes,
		       (unsigned long long)min_writes);
		ok = false;
	}
	if (s != &scheme_racy && r->torn) {
		printf("validate: FAIL %s (R=%u, pause %s, %zu B): %llu torn reads\n", s->name,
		       readers, pause, size, (unsigned long long)r->torn);
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
	printf("summary %-37s %-11s # %s%s\n", name, num, where, what);
}

/*
 * A ratio figure: @num / @den in @group, taken within each repetition, then
 * its median as the value and its minimum and maximum in the comment.
 */
static void summary_ratio(const char *name, const group_t *group, unsigned reps,
			  const struct scheme *num, const struct scheme *den, enum field f,
			  int decimals, const char *where, const char *what)
{
	double v[MAX_REPS];
	struct spread sp;
	char comment[192];

	for (unsigned i = 0; i < reps; i++) {
		double d = field(&(*group)[i][scheme_index(den)], f);

		v[i] = d > 0 ? field(&(*group)[i][scheme_index(num)], f) / d : 0;
	}
	sp = spread_of(v, reps);
	snprintf(comment, sizeof(comment), "median of %u, min %.*f max %.*f; %s", reps, decimals,
		 sp.min, decimals, sp.max, what);
	summary_line(name, sp.median, decimals, where, comment);
}

/* The median over the repetitions of @s's CPU ns in @group. */
static double median_cpu(const group_t *group, unsigned reps, const struct scheme *s)
{
	double v[MAX_REPS];

	for (unsigned i = 0; i < reps; i++)
		v[i] = field(&(*group)[i][scheme_index(s)], F_CPU);
	return spread_of(v, reps).median;
}

/*
 * @num against the best of the @nden liburcu schemes @dens (the flavor a
 * user would pick for this very read): the one with the lowest median over
 * the repetitions, the ratio taken within each repetition as for every ratio.
 * Not the cheapest of @dens in each repetition: the least of three noisy
 * samples is lower than one sample of the same thing, so that ratio leans
 * against @num by the noise alone; it is printed beside, as NAME_per_rep_min.
 */
static void summary_vs_best(const char *name, const group_t *group, unsigned reps,
			    const struct scheme *num, const struct scheme *const *dens, unsigned nden,
			    const char *where, const char *what)
{
	double v[MAX_REPS], m[8];
	unsigned best = 0, won[8] = { 0 };
	struct spread sp;
	char comment[320], line[96];
	size_t used;

	for (unsigned d = 0; d < nden; d++) {
		m[d] = median_cpu(group, reps, dens[d]);
		if (m[d] < m[best])
			best = d;
	}
	for (unsigned i = 0; i < reps; i++) {
		double d = field(&(*group)[i][scheme_index(dens[best])], F_CPU);

		v[i] = d > 0 ? field(&(*group)[i][scheme_index(num)], F_CPU) / d : 0;
	}
	sp = spread_of(v, reps);
	used = (size_t)snprintf(comment, sizeof(comment),
				"median of %u, min %.3f max %.3f; %s; best flavor by median: %s; medians (ns):",
				reps, sp.min, sp.max, what, dens[best]->name);
	for (unsigned d = 0; d < nden && used < sizeof(comment); d++)
		used += (size_t)snprintf(comment + used, sizeof(comment) - used, " %s %.2f",
					 dens[d]->name, m[d]);
	summary_line(name, sp.median, 3, where, comment);

	for (unsigned i = 0; i < reps; i++) {
		unsigned low = 0;

		for (unsigned d = 1; d < nden; d++)
			if (field(&(*group)[i][scheme_index(dens[d])], F_CPU) <
			    field(&(*group)[i][scheme_index(dens[low])], F_CPU))
				low = d;
		double d = field(&(*group)[i][scheme_index(dens[low])], F_CPU);

		won[low]++;
		v[i] = d > 0 ? field(&(*group)[i][scheme_index(num)], F_CPU) / d : 0;
	}
	sp = spread_of(v, reps);
	used = (size_t)snprintf(comment, sizeof(comment),
				"median of %u, min %.3f max %.3f; against the cheapest flavor of each "
				"repetition (biased up by the noise); cheapest:",
				reps, sp.min, sp.max);
	for (unsigned d = 0; d < nden && used < sizeof(comment); d++)
		used += (size_t)snprintf(comment + used, sizeof(comment) - used, " %s %u",
					 dens[d]->name, won[d]);
	snprintf(line, sizeof(line), "%s_per_rep_min", name);
	summary_line(line, sp.median, 3, where, comment);
}

/*
 * The figures for scripts. Ratios come from @main (the largest reader count
 * run, @R, writer pausing 1 ms, 200-byte values) and @busy (same with the
 * writer pausing 1 us).
 */
static void print_summary(const group_t *main_group, const group_t *busy, unsigned R, unsigned reps,
			  uint64_t torn_rcu, uint64_t torn_racy, uint64_t max_pending,
			  double load_start, double load_end)
{
	struct spread storm = over_reps(storms, sizeof(storms[0]), reps, F_WRITES);
	char where[64], busy_where[64], bound[64], storm_what[96];

	snprintf(where, sizeof(where), "R=%u, writer 1 ms, 200 B: ", R);
	snprintf(busy_where, sizeof(busy_where), "R=%u, writer 1 us, 200 B: ", R);
	snprintf(bound, sizeof(bound), "highest peak of old versions; bound %d",
		 RCUSTRING_PENDING_MAX);
	summary_ratio("copy_vs_baseline_cpu_ns", main_group, reps, &scheme_rcu_copy,
		      &scheme_baseline, F_CPU, 3, where, "rcustring copy / baseline copy");
	summary_ratio("inplace_vs_baseline_cpu_ns", main_group, reps, &scheme_rcu_inplace,
		      &scheme_baseline_inplace, F_CPU, 3, where,
		      "rcustring in-place / baseline in-place");
	summary_ratio("copy_vs_baseline_cpu_ns_writer_1us", busy, reps, &scheme_rcu_copy,
		      &scheme_baseline, F_CPU, 3, busy_where, "rcustring copy / baseline copy");
	summary_ratio("inplace_vs_baseline_cpu_ns_writer_1us", busy, reps, &scheme_rcu_inplace,
		      &scheme_baseline_inplace, F_CPU, 3, busy_where,
		      "rcustring in-place / baseline in-place");
	summary_ratio("copy_inline_vs_baseline_cpu_ns", main_group, reps, &scheme_rcu_copy_inline,
		      &scheme_baseline, F_CPU, 3, where,
		      "rcustring_copy_inline() / baseline copy");
	summary_ratio("inplace_inline_vs_baseline_cpu_ns", main_group, reps,
		      &scheme_rcu_inplace_inline, &scheme_baseline_inplace, F_CPU, 3, where,
		      "inline section / baseline in-place");
	summary_ratio("memb_vs_bp_cpu_ns", main_group, reps, &scheme_memb_copy, &scheme_bp_copy, F_CPU,
		      3, where, "urcu memb copy / urcu bp copy");
	summary_ratio("memb_auto_vs_bp_cpu_ns", main_group, reps, &scheme_memb_auto_copy,
		      &scheme_bp_copy, F_CPU, 3, where, "urcu memb auto copy / urcu bp copy");
	/*
	 * Against the best flavor (below), split in two: rcustring against
	 * urcu bp, the library's flavor (the call's cost, the same code), and
	 * the flavors against each other.
	 */
	summary_ratio("copy_vs_urcu_bp_copy", main_group, reps, &scheme_rcu_copy, &scheme_bp_copy,
		      F_CPU, 3, where, "rcustring copy / urcu bp copy: the exported call's cost");
	summary_ratio("copy_inline_vs_urcu_bp_copy", main_group, reps, &scheme_rcu_copy_inline,
		      &scheme_bp_copy, F_CPU, 3, where,
		      "rcustring_copy_inline() / urcu bp copy: the same code on the same flavor");
	summary_ratio("inplace_inline_vs_urcu_bp_inplace", main_group, reps,
		      &scheme_rcu_inplace_inline, &scheme_bp_inplace, F_CPU, 3, where,
		      "rcustring in-place inline / urcu bp in-place: the same code on the same flavor");
	summary_ratio("memb_vs_bp_inplace_cpu_ns", main_group, reps, &scheme_memb_inplace,
		      &scheme_bp_inplace, F_CPU, 3, where, "urcu memb in-place / urcu bp in-place");
	summary_vs_best("copy_vs_urcu_best_copy", main_group, reps, &scheme_rcu_copy,
			(const struct scheme *const[]){ &scheme_bp_copy, &scheme_memb_copy,
							&scheme_memb_auto_copy }, 3, where,
			"rcustring copy / the best urcu flavor's copy; target <= 1.05");
	/*
	 * In place, like with like: liburcu's section is inline when its user
	 * defines _LGPL_SOURCE (flavor.c does); rcustring's is inline through
	 * <rcustring/static/rcustring.h>, its opt-in counterpart. The exported
	 * calls' cost is the second line.
	 */
	summary_vs_best("inplace_vs_urcu_inplace", main_group, reps, &scheme_rcu_inplace_inline,
			(const struct scheme *const[]){ &scheme_bp_inplace, &scheme_memb_inplace,
							&scheme_memb_auto_inplace }, 3, where,
			"rcustring in-place inline / the best urcu flavor's in-place; target <= 1.05");
	summary_vs_best("inplace_exported_vs_urcu_inplace", main_group, reps, &scheme_rcu_inplace,
			(const struct scheme *const[]){ &scheme_bp_inplace, &scheme_memb_inplace,
							&scheme_memb_auto_inplace }, 3, where,
			"rcustring in-place (exported lock calls) / the best urcu flavor's in-place");
	summary_vs_best("copy_vs_urcu_best_copy_writer_1us", busy, reps, &scheme_rcu_copy,
			(const struct scheme *const[]){ &scheme_bp_copy, &scheme_memb_copy,
							&scheme_memb_auto_copy }, 3, busy_where,
			"rcustring copy / the best urcu flavor's copy");
	summary_vs_best("inplace_vs_urcu_inplace_writer_1us", busy, reps, &scheme_rcu_inplace_inline,
			(const struct scheme *const[]){ &scheme_bp_inplace, &scheme_memb_inplace,
							&scheme_memb_auto_inplace }, 3, busy_where,
			"rcustring in-place inline / the best urcu flavor's in-place");
	summary_ratio("vs_mutex_reads_per_reader", main_group, reps, &scheme_rcu_copy, &scheme_mutex,
		      F_READS, 2, where, "rcustring copy / mutex");
	summary_ratio("vs_rwlock_reads_per_reader", main_group, reps, &scheme_rcu_copy,
		      &scheme_rwlock, F_READS, 2, where, "rcustring copy / rwlock");
	summary_ratio("vs_seqlock_reads_200B", main_group, reps, &scheme_rcu_copy, &scheme_seqlock,
		      F_READS, 2, where, "rcustring copy / seqlock");
	summary_line("torn_rcustring", (double)torn_rcu, 0, "", "all rcustring rows and the storm");
	summary_line("torn_racy", (double)torn_racy, 0, "", "all racy rows");
	snprintf(storm_what, sizeof(storm_what), "write storm, median of %u, min %.0f max %.0f", reps,
		 storm.min, storm.max);
	summary_line("writes_per_s", storm.median, 0, "", storm_what);
	summary_line("max_pending", (double)max_pending, 0, "", bound);
	summary_line("loadavg_start", load_start, 2, "", "1-minute load average, /proc/loadavg");
	summary_line("loadavg_end", load_end, 2, "", "1-minute load average, /proc/loadavg");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "reps", required_argument, NULL, 'n' },
		{ "readers", required_argument, NULL, 'r' },
		{ "only", required_argument, NULL, 'o' },
		{ "validate", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned reader_counts[NREADER_COUNTS] = { 1, 2 }, ncounts = 2, last, reps = 0;
	double seconds = 0, load_start, load_end;
	const char *only = NULL;
	bool validate = false;
	unsigned bad = 0;
	uint64_t torn_rcu = 0, torn_racy = 0, torn_other = 0, max_pending = 0, throttled = 0;
	struct rcustring_stats before, after;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "s:n:r:o:vh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			seconds = strtod(optarg, &end);
			if (*end || !(seconds > 0 && seconds <= 3600)) {
				fprintf(stderr, "rcustring-bench: bad --seconds '%s'\n", optarg);
				return 2;
			}
			break;
		case 'n':
			reps = (unsigned)strtoul(optarg, &end, 10);
			if (*end || reps == 0 || reps > MAX_REPS) {
				fprintf(stderr, "rcustring-bench: --reps must be 1..%d\n", MAX_REPS);
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
	if (reps == 0)
		reps = validate ? 1 : 5;
	if (validate) {
		min_writes = 2;
		full_check = true;
	}

	for (unsigned z = 0; z < NSIZES; z++)
		for (unsigned v = 0; v < 2; v++)
			memset(values[z][v], 'a' + (int)v, sizes[z]);

	load_start = loadavg();
	last = ncounts - 1;
	printf("rcustring-bench: %.2f s per configuration, %u repetition%s interleaved; every read "
	       "of every scheme is checked (%s); load average %.2f\n",
	       seconds, reps, reps > 1 ? "s" : "",
	       full_check ? "in full against both values" : "length, first == last char",
	       load_start);
	for (unsigned rep = 0; rep < reps; rep++) {
		for (unsigned ri = 0; ri < ncounts; ri++)
			for (unsigned p = 0; p < NPAUSES; p++)
				for (unsigned z = 0; z < NSIZES; z++)
					for (unsigned i = 0; i < NSCHEMES; i++) {
						/* Rotate the order: no scheme always runs first. */
						unsigned k = (i + rep) % NSCHEMES;
						struct result *res = &results[ri][p][z][rep][k];

						if (only && !strstr(schemes[k]->name, only))
							continue;
						measure(schemes[k], reader_counts[ri], p, z, seconds, res);
					}
		if (only)
			continue;
		/* Write storm: rcustring_set back to back, readers copying meanwhile. */
		rcustring_get_stats(&before);
		measure(&scheme_rcu_copy, reader_counts[last], 0, NSIZES - 1, seconds, &storms[rep]);
		rcustring_get_stats(&after);
		throttled += after.throttled - before.throttled;
		printf("repetition %u/%u done, load average %.2f\n", rep + 1, reps, loadavg());
		fflush(stdout);
	}
	load_end = loadavg();

	for (unsigned ri = 0; ri < ncounts; ri++) {
		for (unsigned p = 0; p < NPAUSES; p++) {
			for (unsigned z = 0; z < NSIZES; z++) {
				printf("\nR=%u readers, writer pause %s, value %zu B (median of %u)\n",
				       reader_counts[ri], pauses[p].label, sizes[z], reps);
				print_header();
				for (unsigned k = 0; k < NSCHEMES; k++) {
					const struct scheme *s = schemes[k];

					if (only && !strstr(s->name, only))
						continue;
					print_row(s, &results[ri][p][z][0][k], sizeof(results[ri][p][z][0]),
						  reps);
					for (unsigned rep = 0; rep < reps; rep++) {
						const struct result *res = &results[ri][p][z][rep][k];

						bad += validate && !check_run(s, res, reader_counts[ri],
									      pauses[p].label, sizes[z]);
						if (s == &scheme_racy)
							torn_racy += res->torn;
						else if (is_rcustring(s))
							torn_rcu += res->torn;
						else
							torn_other += res->torn;
						if (is_rcustring(s) && res->pending_peak > max_pending)
							max_pending = res->pending_peak;
					}
				}
			}
		}
	}
	if (only)
		return 0;

	printf("\nWrite storm: one writer calling rcustring_set with no pause, R=%u readers "
	       "copying, value %zu B (median of %u)\n",
	       reader_counts[last], sizes[NSIZES - 1], reps);
	print_header();
	print_row(&scheme_rcu_copy, storms, sizeof(storms[0]), reps);
	printf("  writes throttled (waited for a grace period): %llu; pending bound "
	       "RCUSTRING_PENDING_MAX = %d\n",
	       (unsigned long long)throttled, RCUSTRING_PENDING_MAX);
	for (unsigned rep = 0; rep < reps; rep++) {
		bad += validate && !check_run(&scheme_rcu_copy, &storms[rep], reader_counts[last],
					      "none", sizes[NSIZES - 1]);
		torn_rcu += storms[rep].torn;
		if (storms[rep].pending_peak > max_pending)
			max_pending = storms[rep].pending_peak;
	}

	printf("\ntorn reads in the other synchronized schemes (mutex, rwlock, seqlock, "
	       "urcu flavors): %llu\n\n",
	       (unsigned long long)torn_other);
	print_summary(&results[last][NPAUSES - 1][NSIZES - 1], &results[last][0][NSIZES - 1],
		      reader_counts[last], reps, torn_rcu, torn_racy, max_pending, load_start, load_end);
	if (validate) {
		printf("validate: %s (torn reads allowed only in \"%s\")\n",
		       bad ? "FAILED" : "every synchronized scheme read whole values",
		       scheme_racy.name);
		return bad ? 1 : 0;
	}
	return 0;
}
