/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysd's STATUS and METRICS answers (report.h): read from the parts'
 * own counters (persist_get_stats, etcd_sync_status, sysctl_fuse_get_stats,
 * sysctl_budget_get_usage) at request time, so nothing on a read or write
 * path does any work for them. The tree's write counts and the socket's
 * request counts are the library's own lines, written before these.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rcustring/sysctl_socket.h>

#include "../../lib/common/text_escape.h"

#include "log.h"
#include "report.h"
#ifdef HAVE_ETCD
#include "etcd_sync.h"
#endif

void report_reloaded(struct report *r, int failures, int stopped, int is_reload)
{
	__atomic_store_n(&r->reload_failures, failures, __ATOMIC_RELAXED);
	__atomic_store_n(&r->reload_stopped, stopped, __ATOMIC_RELAXED);
	__atomic_store_n(&r->reload_time, (int64_t)time(NULL), __ATOMIC_RELAXED);
	if (is_reload)
		__atomic_add_fetch(&r->reloads, 1, __ATOMIC_RELAXED);
}

static void put_time(FILE *f, const char *key, int64_t t)
{
	struct tm tm;
	time_t tt = (time_t)t;
	char buf[64];

	if (t && gmtime_r(&tt, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm))
		fprintf(f, "%s %s\n", key, buf);
	else
		fprintf(f, "%s never\n", key);
}

/*
 * "KEY TEXT" for text from outside the daemon (an etcd error, a path):
 * escaped as the log escapes it, so that a newline in it cannot forge the
 * next STATUS line ("\netcd.connected 1") nor a control byte reach the
 * terminal of the one who asks. etcd.last_error comes escaped already;
 * escaping escaped text changes nothing, so it shows escaped once.
 */
static void put_text(FILE *f, const char *key, const char *text)
{
	size_t len = strlen(text);
	char *buf = malloc(4 * len + 1);

	if (buf)
		rcs_text_escape(buf, 4 * len + 1, text, len);
	fprintf(f, "%s %s\n", key, buf ? buf : "(out of memory)");
	free(buf);
}

static void status_persist(struct report *r, FILE *f)
{
	struct persist_stats st;

	if (!r->persist) {
		fputs("persist.store none\n", f);
		return;
	}
	persist_get_stats(r->persist, &st);
	put_text(f, "persist.store", r->store);
	fprintf(f, "persist.kept %" PRIu64 "\npersist.commits %" PRIu64 "\npersist.failures %" PRIu64
		   "\n", st.kept, st.batches, st.failures);
	put_time(f, "persist.last_commit", st.last_commit.tv_sec);
}

static void status_etcd(struct report *r, FILE *f)
{
#ifdef HAVE_ETCD
	struct etcd_sync_status st;

	if (r->etcd) {
		etcd_sync_status(r->etcd, &st);
		put_text(f, "etcd.endpoint", st.endpoint);
		fprintf(f, "etcd.connected %d\netcd.revision %" PRId64 "\netcd.lag %" PRId64
			   "\netcd.applied %" PRIu64 "\n", st.connected, st.revision,
			st.etcd_revision > st.revision ? st.etcd_revision - st.revision : 0,
			st.applied);
		/* etcd's own words (a watch's cancel_reason): the etcd server's, not ours. */
		put_text(f, "etcd.last_error", st.last_error[0] ? st.last_error : "none");
		fprintf(f, "etcd.keys %" PRIu64 "\netcd.untracked %" PRIu64
			   "\netcd.reports_dropped %" PRIu64 "\n", st.keys, st.untracked,
			st.reports_dropped);
		return;
	}
#endif
	(void)r;
	fputs("etcd.endpoint none\n", f);
}

/*
 * Who holds the handles: for root the REPORT_BUDGET_TOP uids holding most,
 * most first; for anyone else its own uid alone (report_budget_uids).
 */
static void status_budget_uids(struct report *r, const struct sysctl_caller *who, FILE *f)
{
	struct sysctl_budget_uid top[REPORT_BUDGET_TOP];
	size_t nuids = 0;
	int n = report_budget_uids(r, who, top, &nuids);

	if (n < 0)
		return;
	fprintf(f, "budget.uids %zu\n", nuids);
	for (int i = 0; i < n; i++)
		fprintf(f, "budget.uid.%u.handles %u\nbudget.uid.%u.units %u\n", (unsigned)top[i].uid,
			top[i].handles, (unsigned)top[i].uid, top[i].units);
}

static void status_budget(struct report *r, const struct sysctl_caller *who, FILE *f)
{
	struct sysctl_budget_usage u;

	if (sysctl_budget_get_usage(r->budget, 0, &u) != 0)
		return;
	fprintf(f, "budget.units %u\nbudget.units_root %u\nbudget.units_others %u\n"
		   "budget.total %u\nbudget.per_uid %u\n",
		u.all, u.units, u.others, u.limits.total, u.limits.per_uid);
	status_budget_uids(r, who, f);
}

/* Every refusal counted, however few of them the log shows (log.h). */
static void status_policy(struct report *r, FILE *f)
{
	if (!r->policy)
		return;
	fprintf(f, "policy.refused %" PRIu64 "\nlog.suppressed %" PRIu64 "\n",
		policy_refused(r->policy, POLICY_ORIGINS), log_limit_suppressed(&r->policy->log_limit));
}

static int write_status(struct report *r, const struct sysctl_caller *who, FILE *f)
{
	unsigned long tunables = report_tunables(r);
	int failures = __atomic_load_n(&r->reload_failures, __ATOMIC_RELAXED);

	fprintf(f, "version %s\nuptime %.0f\ntunables %lu\nreload.count %" PRIu64 "\n",
		RCUSYSD_VERSION, report_uptime(r), tunables,
		__atomic_load_n(&r->reloads, __ATOMIC_RELAXED));
	put_time(f, "reload.last", __atomic_load_n(&r->reload_time, __ATOMIC_RELAXED));
	fprintf(f, "reload.result %s\nreload.failures %d\n",
		__atomic_load_n(&r->reload_stopped, __ATOMIC_RELAXED) ? "stopped" :
		failures ? "errors" : "ok", failures);
	status_policy(r, f);
	status_persist(r, f);
	status_etcd(r, f);
	status_budget(r, who, f);
	fprintf(f, "fuse %s\n", r->fs ? "mounted" : "none");
	return 0;
}

void report_notify_line(struct report *r, char *buf, size_t size)
{
	unsigned long tunables = report_tunables(r);
	int failures = __atomic_load_n(&r->reload_failures, __ATOMIC_RELAXED);
	int n;

	n = snprintf(buf, size, "STATUS=%lu tunables; last %s %s", tunables,
		     __atomic_load_n(&r->reloads, __ATOMIC_RELAXED) ? "reload" : "start",
		     failures ? "had errors (see the log)" : "ok");
#ifdef HAVE_ETCD
	if (r->etcd && n > 0 && (size_t)n < size) {
		struct etcd_sync_status st;

		etcd_sync_status(r->etcd, &st);
		snprintf(buf + n, size - (size_t)n, "; etcd %s at revision %" PRId64,
			 st.connected ? "connected" : "disconnected", st.revision);
	}
#else
	(void)n;
#endif
}

int report_write(void *arg, int what, const struct sysctl_caller *who, FILE *out)
{
	struct report *r = arg;

	if (what == SYSCTL_SOCKET_STATUS)
		return write_status(r, who, out);
	if (what == SYSCTL_SOCKET_METRICS)
		return report_metrics(r, who, out);
	return -EINVAL;
}
