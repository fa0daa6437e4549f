/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who may write what: one function decides, for an entry and the origin
 * of a write with its principal, whether the write may happen, and every
 * write of the tree asks it (the tree's write check,
 * sysctl_tree_set_check()), whatever front end or file it comes through.
 * The principals: a socket or FUSE caller by its credentials; a settings
 * or tunables file, and the state file, by their owner, which the one
 * file check (trusted_file.h) and the state file's own check hold to root
 * or the daemon's uid; the etcd mirror by the principal the operator
 * configures (--etcd-user; by default the mirror is held as --owner is:
 * the owner bits of every entry, never an entry root executes); the
 * program itself for defaults. Entries whose value root executes
 * (sysctl_entry_exec(): the five helper paths, exec=yes tunables) are
 * written only by root-owned local sources, and by the mirror only when
 * the operator names it (--etcd-allow-exec) and every endpoint is https.
 * rcusysd(8), SECURITY MODEL, has the table.
 */
#ifndef RCUSYSD_POLICY_H
#define RCUSYSD_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rcustring/sysctl.h>

#include "log.h"

/* Origins counted apart (SYSCTL_ORIGIN_CLIENT .. SYSCTL_ORIGIN_MIRROR); others count as the last. */
#define POLICY_ORIGINS (SYSCTL_ORIGIN_MIRROR + 1)

struct policy {
	bool etcd_allow_exec; /* --etcd-allow-exec */
	bool etcd_tls;        /* every --etcd endpoint is https:// */
	/* The etcd mod_revision of the value the mirror is writing, for the log (may be NULL). */
	int64_t (*etcd_revision)(void *arg);
	void *etcd_arg;
	/*
	 * Refusals, each counted here (atomic) and logged under a rate limit
	 * per source and kind (log.h): a client looping on refused writes
	 * fills neither the journal nor the disk, and STATUS and METRICS
	 * still give every one.
	 */
	uint64_t refused[POLICY_ORIGINS];
	struct log_limit log_limit;
};

/*
 * policy_decide - may a write of @origin by @who change @e?
 * @p: the operator's choices (NULL: the defaults, no mirror opt-in)
 * @who: the write's caller as the change record carries it (NULL for the
 *       program, the settings files and the state file)
 *
 * Context: any thread; reads only @e's mode and class.
 * Return: 0, or -EACCES (the mode does not let this principal write) or
 * -EPERM (an entry root executes, and this origin is no root-owned local
 * source), with @why (size @size) naming the rule.
 */
int policy_decide(const struct policy *p, const struct sysctl_entry *e, enum sysctl_origin origin,
		  const struct sysctl_caller *who, char *why, size_t size);

/*
 * policy_install - make @p the write check of @tree: every write asks
 * policy_decide(); a refusal is counted and logged (but a settings
 * file's, which config.c names with its file and line), at most
 * LOG_LIMIT_BURST lines per source (a client's uid, an origin) and rule
 * per window, and an entry root executes set by the mirror is logged at
 * notice. @p must outlive the tree.
 * Context: before the tree is shared. Return: 0 or -EINVAL.
 */
int policy_install(struct policy *p, struct sysctl_tree *tree);

/* Refusals of @origin so far (POLICY_ORIGINS: of every origin). Context: any thread. */
uint64_t policy_refused(struct policy *p, int origin);

/* "client", "program", "file", "state", "mirror": a metric label. */
const char *policy_origin_label(int origin);

/*
 * policy_log_mirror - log a message of the etcd mirror ("etcd: ..."),
 * under the rate limit per kind (its first word: "refused", "cannot", ...):
 * a watch delivering thousands of values the tree refuses logs a burst and
 * a count, as the policy's own refusal lines do. @p NULL: no limit.
 * Context: any thread (the sync's).
 */
void policy_log_mirror(struct policy *p, const char *message);

/*
 * policy_log_flush - log the suppressed counts of refusal windows that
 * ended (every window when @all, at exit). Context: any thread.
 */
void policy_log_flush(struct policy *p, bool all);

/*
 * policy_endpoints_tls - is every endpoint of the ','-separated @endpoints
 * https://? Logs a warning for each http:// one (anyone on its path
 * chooses the tree's values).
 */
bool policy_endpoints_tls(const char *endpoints);

#endif
