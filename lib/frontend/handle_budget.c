/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The handle budget (sysctl_budget.h): one count per uid of what it holds
 * open on every front end, with root's reserve, shared by the FUSE tree,
 * the control socket and a program's own sockets. The uids holding
 * something are a short array searched in order: a uid leaves it when it
 * holds nothing, so its length is bounded by the units, and a few uids
 * hold handles at a time.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rcustring/sysctl_budget.h"

struct uid_use {
	uid_t uid;
	unsigned units;
	unsigned handles[SYSCTL_HANDLE_KINDS];
};

struct sysctl_budget {
	struct sysctl_budget_limits lim;
	pthread_mutex_t lock;
	struct uid_use *uids; /* those holding a unit or a handle */
	size_t nuids, cap;
	unsigned others; /* units of uids other than 0 */
	unsigned all;
};

static int fill_defaults(struct sysctl_budget_limits *l)
{
	if (!l->total)
		l->total = SYSCTL_BUDGET_TOTAL;
	if (!l->root_reserve)
		l->root_reserve = l->total / 4; /* SYSCTL_BUDGET_ROOT_RESERVE of the default */
	if (!l->per_uid)
		l->per_uid = l->total / 4 ? l->total / 4 : 1;
	if (!l->unit_bytes)
		l->unit_bytes = SYSCTL_BUDGET_UNIT_BYTES;
	return l->root_reserve > l->total ? -EINVAL : 0;
}

int sysctl_budget_new(const struct sysctl_budget_limits *limits, struct sysctl_budget **out)
{
	struct sysctl_budget *b;
	int err;

	if (!out)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	if (limits)
		b->lim = *limits;
	err = fill_defaults(&b->lim);
	if (!err)
		err = -pthread_mutex_init(&b->lock, NULL);
	if (err) {
		free(b);
		return err;
	}
	*out = b;
	return 0;
}

void sysctl_budget_free(struct sysctl_budget *b)
{
	if (!b)
		return;
	pthread_mutex_destroy(&b->lock);
	free(b->uids);
	free(b);
}

unsigned sysctl_budget_units(const struct sysctl_budget *b, size_t bytes)
{
	size_t unit = b ? b->lim.unit_bytes : SYSCTL_BUDGET_UNIT_BYTES;
	size_t n = bytes / unit + (bytes % unit != 0);

	if (n >= (size_t)(1u << 30))
		return 1u << 30; /* past any total: refused, never wrapped */
	return n ? (unsigned)n : 1;
}

/* @uid's entry, added when @add; NULL when absent or out of memory. Under b->lock. */
static struct uid_use *find_uid(struct sysctl_budget *b, uid_t uid, bool add)
{
	for (size_t i = 0; i < b->nuids; i++)
		if (b->uids[i].uid == uid)
			return &b->uids[i];
	if (!add)
		return NULL;
	if (b->nuids == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 8;
		struct uid_use *p = realloc(b->uids, cap * sizeof(*p));

		if (!p)
			return NULL;
		b->uids = p;
		b->cap = cap;
	}
	memset(&b->uids[b->nuids], 0, sizeof(b->uids[0]));
	b->uids[b->nuids].uid = uid;
	return &b->uids[b->nuids++];
}

static void drop_if_empty(struct sysctl_budget *b, struct uid_use *u)
{
	if (u->units)
		return;
	for (int k = 0; k < SYSCTL_HANDLE_KINDS; k++)
		if (u->handles[k])
			return;
	*u = b->uids[--b->nuids];
}

/* Whether @u (NULL: holds nothing yet) may take @more units; under b->lock. */
static int fits(const struct sysctl_budget *b, uid_t uid, const struct uid_use *u, unsigned more)
{
	const struct sysctl_budget_limits *l = &b->lim;
	unsigned mine = u ? u->units : 0;

	if (more > l->total - b->all)
		return -ENFILE;
	if (uid == 0)
		return 0;
	if (more > l->per_uid - (mine < l->per_uid ? mine : l->per_uid))
		return -EMFILE;
	if (b->others + more > l->total - l->root_reserve)
		return -ENFILE;
	return 0;
}

static void charge(struct sysctl_budget *b, struct uid_use *u, long delta)
{
	u->units = (unsigned)((long)u->units + delta);
	b->all = (unsigned)((long)b->all + delta);
	if (u->uid != 0)
		b->others = (unsigned)((long)b->others + delta);
}

int sysctl_budget_take(struct sysctl_budget *b, uid_t uid, enum sysctl_handle_kind kind,
		       unsigned units)
{
	struct uid_use *u;
	unsigned cap;
	int err;

	if (!b || (unsigned)kind >= SYSCTL_HANDLE_KINDS)
		return -EINVAL;
	cap = b->lim.kind_per_uid[kind];
	pthread_mutex_lock(&b->lock);
	u = find_uid(b, uid, false);
	err = fits(b, uid, u, units);
	if (!err && uid != 0 && cap && u && u->handles[kind] >= cap)
		err = -EMFILE;
	if (!err && !u && !(u = find_uid(b, uid, true)))
		err = -ENOMEM;
	if (!err) {
		u->handles[kind]++;
		charge(b, u, units);
	}
	pthread_mutex_unlock(&b->lock);
	return err;
}

int sysctl_budget_resize(struct sysctl_budget *b, uid_t uid, unsigned from, unsigned to)
{
	struct uid_use *u;
	int err = 0;

	if (!b)
		return -EINVAL;
	pthread_mutex_lock(&b->lock);
	u = find_uid(b, uid, false);
	if (!u || u->units < from)
		err = -EINVAL; /* not counted here: a caller's bug */
	else if (to > from)
		err = fits(b, uid, u, to - from);
	if (!err)
		charge(b, u, (long)to - (long)from);
	pthread_mutex_unlock(&b->lock);
	return err;
}

void sysctl_budget_put(struct sysctl_budget *b, uid_t uid, enum sysctl_handle_kind kind,
		       unsigned units)
{
	struct uid_use *u;

	if (!b || (unsigned)kind >= SYSCTL_HANDLE_KINDS)
		return;
	pthread_mutex_lock(&b->lock);
	u = find_uid(b, uid, false);
	if (u && u->handles[kind] && u->units >= units) {
		u->handles[kind]--;
		charge(b, u, -(long)units);
		drop_if_empty(b, u);
	}
	pthread_mutex_unlock(&b->lock);
}

int sysctl_budget_get_usage(struct sysctl_budget *b, uid_t uid, struct sysctl_budget_usage *out)
{
	struct uid_use *u;

	if (!b || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&b->lock);
	u = find_uid(b, uid, false);
	if (u) {
		out->units = u->units;
		memcpy(out->handles, u->handles, sizeof(out->handles));
	}
	out->others = b->others;
	out->all = b->all;
	out->limits = b->lim;
	pthread_mutex_unlock(&b->lock);
	return 0;
}

/* Whether @a comes before @b in sysctl_budget_top_uids()'s order. */
static bool ranks_before(const struct sysctl_budget_uid *a, const struct sysctl_budget_uid *b)
{
	if (a->handles != b->handles)
		return a->handles > b->handles;
	if (a->units != b->units)
		return a->units > b->units;
	return a->uid < b->uid;
}

/* @u's row, put in place among the @n (at most @max) rows of @out; the new count. */
static size_t insert_top(struct sysctl_budget_uid *out, size_t n, size_t max, const struct uid_use *u)
{
	struct sysctl_budget_uid row = { .uid = u->uid, .units = u->units };
	size_t at = n;

	for (int k = 0; k < SYSCTL_HANDLE_KINDS; k++) {
		row.by_kind[k] = u->handles[k];
		row.handles += u->handles[k];
	}
	while (at > 0 && ranks_before(&row, &out[at - 1]))
		at--;
	if (at >= max)
		return n;
	if (n == max)
		n--; /* the last row falls off */
	memmove(&out[at + 1], &out[at], (n - at) * sizeof(*out));
	out[at] = row;
	return n + 1;
}

int sysctl_budget_top_uids(struct sysctl_budget *b, struct sysctl_budget_uid *out, size_t max,
			   size_t *nuids)
{
	size_t n = 0;

	if (!b || (!out && max))
		return -EINVAL;
	if (max > INT_MAX)
		max = INT_MAX;
	pthread_mutex_lock(&b->lock);
	for (size_t i = 0; i < b->nuids; i++)
		n = insert_top(out, n, max, &b->uids[i]);
	if (nuids)
		*nuids = b->nuids;
	pthread_mutex_unlock(&b->lock);
	return (int)n;
}
