/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysd's METRICS lines in the Prometheus text exposition format
 * (version 0.0.4): one "# HELP" and "# TYPE" per family, then its samples.
 * Names start with "rcusysd_"; the library writes its "rcustring_" ones
 * (socket requests and reads, writes and refusals by errno) before these.
 * Also what STATUS shares: report_uptime, report_tunables and the budget
 * rows a peer may see (report_budget_uids).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "report.h"
#ifdef HAVE_ETCD
#include "etcd_sync.h"
#endif

static int count_entry(struct sysctl_entry *e, void *arg)
{
	*(unsigned long *)arg += !sysctl_entry_is_dir(e);
	return 0;
}

unsigned long report_tunables(const struct report *r)
{
	unsigned long n = 0;

	sysctl_walk(r->tree, "", count_entry, &n);
	return n;
}

double report_uptime(const struct report *r)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - r->started.tv_sec) +
	       (double)(now.tv_nsec - r->started.tv_nsec) / 1e9;
}

int report_budget_uids(struct report *r, const struct sysctl_caller *who,
		       struct sysctl_budget_uid top[REPORT_BUDGET_TOP], size_t *nuids)
{
	struct sysctl_budget_usage u;
	int err;

	if (who->uid == 0)
		return sysctl_budget_top_uids(r->budget, top, REPORT_BUDGET_TOP, nuids);
	err = sysctl_budget_top_uids(r->budget, top, 0, nuids);
	if (!err)
		err = sysctl_budget_get_usage(r->budget, who->uid, &u);
	if (err)
		return err;
	top[0] = (struct sysctl_budget_uid){ .uid = who->uid, .units = u.units };
	for (int k = 0; k < SYSCTL_HANDLE_KINDS; k++) {
		top[0].by_kind[k] = u.handles[k];
		top[0].handles += u.handles[k];
	}
	return top[0].handles || top[0].units;
}

/*
 * A label value by the exposition format's own rules: a backslash, a
 * double quote and a newline each become a backslash and the character
 * ('n' for the newline), so that no value ends its sample or forges
 * another. Every label value whose text is not a number goes through
 * here, so one taken from outside later (an endpoint, a key) is safe.
 */
static void put_label_value(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f), fputc(*v, f);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void one(FILE *f, const char *name, const char *type, const char *help, double v)
{
	family(f, name, type, help);
	fprintf(f, "%s %.17g\n", name, v);
}

static void metrics_fuse(struct report *r, FILE *f)
{
	struct sysctl_fuse_stats st;
	const struct { const char *op; const uint64_t *v; } ops[] = {
		{ "lookup", &st.lookup }, { "getattr", &st.getattr }, { "open", &st.open },
		{ "read", &st.read },	  { "write", &st.write },     { "readdir", &st.readdir },
		{ "release", &st.release }, { "poll", &st.poll },
	};

	if (!r->fs || sysctl_fuse_get_stats(r->fs, &st) != 0)
		return;
	family(f, "rcusysd_fuse_requests_total", "counter",
	       "FUSE requests by operation (op=\"all\": every kind); op=\"read\" is the mount's reads.");
	fprintf(f, "rcusysd_fuse_requests_total{op=\"all\"} %" PRIu64 "\n", st.requests);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		fprintf(f, "rcusysd_fuse_requests_total{op=\"%s\"} %" PRIu64 "\n", ops[i].op, *ops[i].v);
}

static void metrics_policy(struct report *r, FILE *f)
{
	if (!r->policy)
		return;
	family(f, "rcusysd_policy_refused_total", "counter",
	       "Writes the policy refused, by origin (each one, however few the log shows).");
	for (int o = 0; o < POLICY_ORIGINS; o++) {
		if (o == SYSCTL_ORIGIN_PROGRAM) /* never refused */
			continue;
		fputs("rcusysd_policy_refused_total{origin=\"", f);
		put_label_value(f, policy_origin_label(o));
		fprintf(f, "\"} %" PRIu64 "\n", policy_refused(r->policy, o));
	}
	one(f, "rcusysd_log_suppressed_total", "counter",
	    "Refusal log lines left out by the rate limit (each counted above).",
	    (double)log_limit_suppressed(&r->policy->log_limit));
}

static void metrics_persist(struct report *r, FILE *f)
{
	struct persist_stats st;

	if (!r->persist)
		return;
	persist_get_stats(r->persist, &st);
	one(f, "rcusysd_persist_commits_total", "counter", "Durable commits (journal batches synced).",
	    (double)st.batches);
	one(f, "rcusysd_persist_records_total", "counter", "Values made durable.", (double)st.records);
	one(f, "rcusysd_persist_failures_total", "counter", "Commits refused (append or sync failed).",
	    (double)st.failures);
	one(f, "rcusysd_persist_kept", "gauge", "Values the state file keeps.", (double)st.kept);
	one(f, "rcusysd_persist_last_commit_timestamp_seconds", "gauge",
	    "When the last commit became durable (0: none yet).", (double)st.last_commit.tv_sec);
	family(f, "rcusysd_persist_commit_seconds", "histogram",
	       "Time of a commit's append and fdatasync.");
	for (int i = 0; i < PERSIST_LATENCY_BUCKETS; i++) {
		if (isinf(persist_latency_le[i]))
			fprintf(f, "rcusysd_persist_commit_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n",
				st.latency[i]);
		else
			fprintf(f, "rcusysd_persist_commit_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
				persist_latency_le[i], st.latency[i]);
	}
	fprintf(f, "rcusysd_persist_commit_seconds_sum %.9f\nrcusysd_persist_commit_seconds_count %"
		   PRIu64 "\n", (double)st.latency_sum_ns / 1e9, st.latency[PERSIST_LATENCY_BUCKETS - 1]);
}

static void metrics_etcd(struct report *r, FILE *f)
{
#ifdef HAVE_ETCD
	struct etcd_sync_status st;

	if (!r->etcd)
		return;
	etcd_sync_status(r->etcd, &st);
	one(f, "rcusysd_etcd_connected", "gauge", "1 while the etcd watch is up.", st.connected);
	one(f, "rcusysd_etcd_revision", "gauge", "etcd revision the tree holds everything up to.",
	    (double)st.revision);
	one(f, "rcusysd_etcd_lag_revisions", "gauge", "etcd's newest revision of the prefix minus ours.",
	    st.etcd_revision > st.revision ? (double)(st.etcd_revision - st.revision) : 0);
	one(f, "rcusysd_etcd_applies_total", "counter", "Values from etcd written into the tree.",
	    (double)st.applied);
	one(f, "rcusysd_etcd_refused_total", "counter", "Values from etcd the tree refused.",
	    (double)st.refused);
	one(f, "rcusysd_etcd_reconnects_total", "counter", "etcd watch streams started again.",
	    (double)st.reconnects);
#else
	(void)r, (void)f;
#endif
}

/* Per uid, bounded: the REPORT_BUDGET_TOP uids holding most handles; a non-root peer's own. */
static void metrics_budget_uids(struct report *r, const struct sysctl_caller *who, FILE *f)
{
	struct sysctl_budget_uid top[REPORT_BUDGET_TOP];
	size_t nuids = 0;
	int n = report_budget_uids(r, who, top, &nuids);

	if (n < 0)
		return;
	one(f, "rcusysd_budget_uids", "gauge", "Uids holding a handle now.", (double)nuids);
	family(f, "rcusysd_budget_uid_handles", "gauge",
	       "Handles held, by uid (the " REPORT_BUDGET_TOP_TEXT
	       " uids holding most; to a non-root peer its own).");
	for (int i = 0; i < n; i++)
		fprintf(f, "rcusysd_budget_uid_handles{uid=\"%u\"} %u\n", (unsigned)top[i].uid,
			top[i].handles);
	family(f, "rcusysd_budget_uid_units", "gauge",
	       "Handle budget units in use, by uid (the same uids).");
	for (int i = 0; i < n; i++)
		fprintf(f, "rcusysd_budget_uid_units{uid=\"%u\"} %u\n", (unsigned)top[i].uid,
			top[i].units);
}

int report_metrics(struct report *r, const struct sysctl_caller *who, FILE *f)
{
	struct sysctl_budget_usage u;

	family(f, "rcusysd_build_info", "gauge", "rcusysd's version, as a label.");
	fputs("rcusysd_build_info{version=\"", f);
	put_label_value(f, RCUSYSD_VERSION);
	fputs("\"} 1\n", f);
	one(f, "rcusysd_uptime_seconds", "gauge", "Seconds since rcusysd started.", report_uptime(r));
	one(f, "rcusysd_tunables", "gauge", "Entries of the tree.", (double)report_tunables(r));
	one(f, "rcusysd_reloads_total", "counter", "Reloads (SIGHUP).",
	    (double)__atomic_load_n(&r->reloads, __ATOMIC_RELAXED));
	one(f, "rcusysd_reload_failures", "gauge", "Problems the files had at the last start or reload.",
	    __atomic_load_n(&r->reload_failures, __ATOMIC_RELAXED));
	metrics_fuse(r, f);
	metrics_policy(r, f);
	metrics_persist(r, f);
	metrics_etcd(r, f);
	if (sysctl_budget_get_usage(r->budget, 0, &u) == 0) {
		family(f, "rcusysd_budget_units", "gauge",
		       "Handle budget units in use (who=\"root\": uid 0, \"others\": every other uid).");
		fprintf(f, "rcusysd_budget_units{who=\"root\"} %u\nrcusysd_budget_units{who=\"others\"} %u\n",
			u.units, u.others);
		one(f, "rcusysd_budget_units_limit", "gauge", "Handle budget units in all.", u.limits.total);
		metrics_budget_uids(r, who, f);
	}
	return 0;
}
