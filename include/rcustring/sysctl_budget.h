/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The handle budget: what local users may hold open in a program that
 * serves its tree to them, counted per uid in one place for every way in.
 * Every handle a front end keeps for a caller (an open file or directory
 * of the FUSE tree, a poller, a control-socket connection, a WATCH, a
 * connection to a program's own socket) takes units from one budget, and
 * gives them back when it closes. uid 0 may take every unit; other uids
 * share all but root_reserve of them, each at most per_uid (and at most
 * kind_per_uid[kind] handles of one kind), so no local user can pin the
 * program's memory or shut root out. A handle that holds more than
 * unit_bytes of memory (a directory listing, the value an open file read)
 * costs one unit per unit_bytes it holds, so its memory is bounded with
 * its count.
 *
 * A program that serves the same users on several front ends (rcusysd:
 * FUSE, the control socket, its events socket) makes one budget and hands
 * it to each (sysctl_fuse_set_budget(), sysctl_socket_options.budget), so
 * that what a user holds on one is what it cannot hold on another. A front
 * end given none makes its own with the defaults.
 */
#ifndef RCUSTRING_SYSCTL_BUDGET_H
#define RCUSTRING_SYSCTL_BUDGET_H

#include <stddef.h>
#include <sys/types.h>

#include "rcustring/rcustring.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sysctl_budget;

/* The defaults of a zero field of struct sysctl_budget_limits. */
#define SYSCTL_BUDGET_TOTAL 4096
#define SYSCTL_BUDGET_ROOT_RESERVE 1024
#define SYSCTL_BUDGET_PER_UID 1024
#define SYSCTL_BUDGET_UNIT_BYTES 16384

/* What a handle is (each kind may have its own cap per uid). */
enum sysctl_handle_kind {
	SYSCTL_HANDLE_FILE,  /* an open file of the FUSE tree */
	SYSCTL_HANDLE_DIR,   /* an open directory of the FUSE tree */
	SYSCTL_HANDLE_POLL,  /* a polled FUSE file (its change callback) */
	SYSCTL_HANDLE_CONN,  /* a connection to a socket */
	SYSCTL_HANDLE_WATCH, /* a control-socket connection in WATCH */
	SYSCTL_HANDLE_KINDS
};

/* Limits of a budget; zero fields take the defaults above. */
struct sysctl_budget_limits {
	unsigned total;        /* units of every uid together (SYSCTL_BUDGET_TOTAL) */
	unsigned root_reserve; /* of total, units only uid 0 may take (total / 4) */
	unsigned per_uid;      /* units of one uid other than 0 (total / 4, at least 1) */
	/* Handles of one kind per uid other than 0 (0: only per_uid caps them). */
	unsigned kind_per_uid[SYSCTL_HANDLE_KINDS];
	size_t unit_bytes; /* memory one unit covers (SYSCTL_BUDGET_UNIT_BYTES) */
};

/* What one uid holds, and what every uid holds. */
struct sysctl_budget_usage {
	unsigned units;                        /* of the uid asked about */
	unsigned handles[SYSCTL_HANDLE_KINDS]; /* of the uid asked about, by kind */
	unsigned others;                       /* units of every uid but 0 */
	unsigned all;                          /* units of every uid */
	struct sysctl_budget_limits limits;    /* with the defaults filled in */
};

/* One uid's holdings, as sysctl_budget_top_uids() lists them. */
struct sysctl_budget_uid {
	uid_t uid;
	unsigned units;                        /* what it holds costs */
	unsigned handles;                      /* of every kind */
	unsigned by_kind[SYSCTL_HANDLE_KINDS]; /* handles by kind */
};

/**
 * sysctl_budget_new - a budget with @limits (NULL: the defaults)
 * Context: any thread.
 * Return: 0, -EINVAL (root_reserve over total), or -ENOMEM.
 */
RCUSTRING_API int sysctl_budget_new(const struct sysctl_budget_limits *limits,
				    struct sysctl_budget **out);

/**
 * sysctl_budget_free - free @b (NULL: a no-op)
 * Context: after every front end it was given to has stopped.
 */
RCUSTRING_API void sysctl_budget_free(struct sysctl_budget *b);

/**
 * sysctl_budget_units - the units a handle holding @bytes of memory costs
 *
 * One, or one per unit_bytes (or part) of @bytes where that is more: the
 * first unit_bytes come with the handle.
 * Context: any thread.
 */
RCUSTRING_API unsigned sysctl_budget_units(const struct sysctl_budget *b, size_t bytes);

/**
 * sysctl_budget_take - count a handle of @kind for @uid, costing @units
 *
 * @units may be 0: the handle then counts only against its kind's cap
 * (a connection that becomes a WATCH on a server that already counted it).
 * Context: any thread; never sleeps beyond a short lock.
 * Return: 0; -EMFILE when @uid's own share (per_uid, or its kind's cap) is
 * taken; -ENFILE when the units other uids share (total - root_reserve),
 * or all of them, are taken; -ENOMEM. Nothing is counted on error.
 */
RCUSTRING_API int sysctl_budget_take(struct sysctl_budget *b, uid_t uid,
				     enum sysctl_handle_kind kind, unsigned units);

/**
 * sysctl_budget_resize - change what a counted handle of @uid costs
 *
 * From @from units to @to (a listing or a copy taken again, bigger or
 * smaller). Growing is checked as sysctl_budget_take() checks; shrinking
 * always succeeds.
 * Context: any thread.
 * Return: 0, -EMFILE or -ENFILE (the handle keeps costing @from).
 */
RCUSTRING_API int sysctl_budget_resize(struct sysctl_budget *b, uid_t uid, unsigned from,
				       unsigned to);

/**
 * sysctl_budget_put - give back a handle sysctl_budget_take() counted
 * @units: what it costs now (after any sysctl_budget_resize())
 * Context: any thread.
 */
RCUSTRING_API void sysctl_budget_put(struct sysctl_budget *b, uid_t uid,
				     enum sysctl_handle_kind kind, unsigned units);

/**
 * sysctl_budget_get_usage - what @uid holds now, and every uid
 * Context: any thread.
 * Return: 0, or -EINVAL for a NULL argument.
 */
RCUSTRING_API int sysctl_budget_get_usage(struct sysctl_budget *b, uid_t uid,
					  struct sysctl_budget_usage *u);

/**
 * sysctl_budget_top_uids - the uids holding the most handles now
 * @out: room for @max uids, filled most handles first (then most units,
 *       then the lowest uid)
 * @nuids: set to how many uids hold something (may be more than @max;
 *         NULL: not wanted)
 *
 * For a report of who holds what (rcusysd's STATUS and METRICS) that stays
 * bounded however many uids hold handles: @max rows, one pass over the
 * uids holding something, under the budget's lock.
 * Context: any thread.
 * Return: the rows filled (0 to @max), or -EINVAL for a NULL @b, or a NULL
 * @out with @max above 0.
 */
RCUSTRING_API int sysctl_budget_top_uids(struct sysctl_budget *b, struct sysctl_budget_uid *out,
					 size_t max, size_t *nuids);

#ifdef __cplusplus
}
#endif

#endif /* RCUSTRING_SYSCTL_BUDGET_H */
