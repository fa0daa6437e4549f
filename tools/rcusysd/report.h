/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysd's STATUS and METRICS (rcusysd(8), STATUS AND METRICS): what the
 * daemon runs, as "key value" lines and as Prometheus text exposition,
 * given to the control socket as its report callback
 * (sysctl_socket_options.report), and the one-line summary that
 * sd_notify's STATUS= carries. The pointers are set by the main thread
 * before the socket serves and do not change while it does.
 */
#ifndef RCUSYSD_REPORT_H
#define RCUSYSD_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <rcustring/sysctl_budget.h>
#include <rcustring/sysctl_fuse.h>

#include "persist.h"
#include "policy.h"

struct report {
	struct sysctl_tree *tree;
	struct persist *persist; /* NULL: --no-persist */
	const char *store;       /* the state file's path */
	struct sysctl_fuse *fs;  /* NULL: not mounted */
	struct sysctl_budget *budget;
	struct policy *policy;   /* its refusal counts */
	void *etcd;              /* struct etcd_sync, NULL: no --etcd */
	struct timespec started; /* CLOCK_MONOTONIC */
	/* The last start or reload (atomic: the main thread writes them). */
	uint64_t reloads;
	int64_t reload_time; /* CLOCK_REALTIME seconds */
	int reload_failures; /* problems the files had (each logged) */
	int reload_stopped;  /* stopped part way by SIGTERM */
};

/* STATUS and METRICS show the budget of this many uids at most, those holding most handles. */
#define REPORT_BUDGET_TOP 10
#define REPORT_BUDGET_TOP_TEXT "10"

/* Record the start's or a reload's outcome. Context: the main thread. */
void report_reloaded(struct report *r, int failures, int stopped, int is_reload);

/*
 * sysctl_socket_options.report: SYSCTL_SOCKET_STATUS or _METRICS lines to
 * @out for the peer @who. Context: a socket server thread.
 */
int report_write(void *arg, int what, const struct sysctl_caller *who, FILE *out);

/*
 * report_metrics.c: the METRICS lines (Prometheus text exposition); seconds
 * since the start; entries of the tree (directories not counted).
 */
int report_metrics(struct report *r, const struct sysctl_caller *who, FILE *f);
double report_uptime(const struct report *r);
unsigned long report_tunables(const struct report *r);

/*
 * report_budget_uids - the per-uid budget rows @who may see, into @top:
 * for root the REPORT_BUDGET_TOP uids holding most (sysctl_budget_top_uids);
 * for any other uid its own row alone (none while it holds nothing), so no
 * local user learns what the others hold. *@nuids: how many uids hold
 * something (a total, shown to all). Returns the rows or a negative errno.
 * Context: any thread.
 */
int report_budget_uids(struct report *r, const struct sysctl_caller *who,
		       struct sysctl_budget_uid top[REPORT_BUDGET_TOP], size_t *nuids);

/* "STATUS=..." for sd_notify: tunables, the last reload, etcd, in one line. */
void report_notify_line(struct report *r, char *buf, size_t size);

#endif
