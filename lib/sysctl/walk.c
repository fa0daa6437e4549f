/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Walks of the sysctl tree (sysctl_walk, sysctl_list_dir): the nodes are
 * collected with a reference under RCU, then the callback runs on each
 * outside every RCU section, so it may sleep, read and write.
 */
#define _LGPL_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <urcu-bp.h>
#include <urcu/rculist.h>

#include "rcustring/sysctl.h"
#include "entry.h"
#include "tree.h"

struct snapshot {
	struct sysctl_entry **v;
	size_t n, cap;
	int err;
};

/* Reference @e into @s (inside an RCU section: no sleeping, just malloc). */
static void snap_add(struct snapshot *s, struct sysctl_entry *e)
{
	if (s->err)
		return;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		struct sysctl_entry **v = realloc(s->v, cap * sizeof(*v));

		if (!v) {
			s->err = -ENOMEM;
			return;
		}
		s->v = v;
		s->cap = cap;
	}
	sysctl_entry_get(e);
	s->v[s->n++] = e;
}

static void snap_files(struct snapshot *s, struct sysctl_entry *e, int depth)
{
	struct sysctl_entry *c;

	if (!e->is_dir) {
		snap_add(s, e);
		return;
	}
	if (depth > RCS_MAX_DEPTH)
		return;
	cds_list_for_each_entry_rcu(c, &rcs_entry_dir(e)->children, sibling)
		snap_files(s, c, depth + 1);
}

/*
 * Callbacks run on a snapshot of referenced entries taken under RCU, not
 * inside the read-side section: they may sleep, write, or even unregister.
 */
static int snap_run(struct snapshot *s, int (*fn)(struct sysctl_entry *e, void *arg), void *arg)
{
	int ret = s->err;

	for (size_t i = 0; i < s->n; i++) {
		if (!ret && sysctl_entry_live(s->v[i]))
			ret = fn(s->v[i], arg);
		sysctl_entry_put(s->v[i]);
	}
	free(s->v);
	return ret;
}

int sysctl_walk(struct sysctl_tree *tree, const char *prefix,
		int (*fn)(struct sysctl_entry *e, void *arg), void *arg)
{
	struct snapshot s = { 0 };
	struct sysctl_entry *e;
	int err;

	if (!fn)
		return -EINVAL;
	err = rcs_sysctl_lookup_ref(tree, prefix, &e);
	if (err)
		return err;
	rcu_read_lock();
	snap_files(&s, e, 0);
	rcu_read_unlock();
	sysctl_entry_put(e);
	return snap_run(&s, fn, arg);
}

int sysctl_list_dir(struct sysctl_tree *tree, const char *path,
		    int (*fn)(struct sysctl_entry *child, void *arg), void *arg)
{
	struct snapshot s = { 0 };
	struct sysctl_entry *e, *c;
	int err;

	if (!fn)
		return -EINVAL;
	err = rcs_sysctl_lookup_ref(tree, path, &e);
	if (err)
		return err;
	if (!e->is_dir) {
		sysctl_entry_put(e);
		return -ENOTDIR;
	}
	rcu_read_lock();
	cds_list_for_each_entry_rcu(c, &rcs_entry_dir(e)->children, sibling)
		snap_add(&s, c);
	rcu_read_unlock();
	sysctl_entry_put(e);
	return snap_run(&s, fn, arg);
}
