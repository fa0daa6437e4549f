/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One row per handler kind: what registration checks, what
 * sysctl_entry_explain() says about bounds, and what sysctl_handler_info()
 * tells programs. A new kind is its conversion function (handlers_int.c)
 * and one row here. A program's handler that wraps one of these (checks,
 * logs, then calls it on the same table) declares its base per tree, and
 * its rows are then the base's kind: same checks, same locks, same copies.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rcustring/sysctl.h"
#include "handlers.h"
#include "tree.h"

static void int_text(const void *p, char *buf, size_t size)
{
	snprintf(buf, size, "%d", __atomic_load_n((const int *)p, __ATOMIC_RELAXED));
}

static void uint_text(const void *p, char *buf, size_t size)
{
	snprintf(buf, size, "%u", __atomic_load_n((const unsigned int *)p, __ATOMIC_RELAXED));
}

static void ulong_text(const void *p, char *buf, size_t size)
{
	snprintf(buf, size, "%lu", __atomic_load_n((const unsigned long *)p, __ATOMIC_RELAXED));
}

/* Bounds in jiffies, shown in the milliseconds the file reads (1000 * j / HZ, as a read). */
static void ulong_ms_text(const void *p, char *buf, size_t size)
{
	unsigned long j = __atomic_load_n((const unsigned long *)p, __ATOMIC_RELAXED);

	snprintf(buf, size, "%lu", 1000UL * j / SYSCTL_HZ);
}

#define USER_HZ_UNIT "1/100 s"
_Static_assert(SYSCTL_USER_HZ == 100, "USER_HZ_UNIT names SYSCTL_USER_HZ");

#define MM SYSCTL_HF_MINMAX
#define S SYSCTL_HF_SIGNED
#define ONE SYSCTL_HF_SINGLE

/* handler, keyword, unit, element bytes, bound bytes, flags, bound text, NULL bounds mean. */
#define ROW(h, type, unit, elem, bound, flags, text, lo, hi) \
	{ h, { h, #h, type, unit, elem, bound, flags }, text, lo, hi }

static const struct rcs_handler_row rows[] = {
	ROW(proc_dostring, "string", "", 0, 0, SYSCTL_HF_STRING, NULL, NULL, NULL),
	ROW(proc_rcu_string, "string", "", 0, 0, SYSCTL_HF_STRING | SYSCTL_HF_RCU, NULL, NULL,
	    NULL),
	ROW(proc_dointvec, "int", "", sizeof(int), 0, S, NULL, NULL, NULL),
	ROW(proc_dointvec_minmax, "int", "", sizeof(int), sizeof(int), S | MM | SYSCTL_HF_ONE_BOUND,
	    int_text, NULL, NULL),
	ROW(proc_douintvec, "uint", "", sizeof(unsigned int), 0, ONE, NULL, NULL, NULL),
	ROW(proc_douintvec_minmax, "uint", "", sizeof(unsigned int), sizeof(unsigned int),
	    ONE | MM | SYSCTL_HF_ONE_BOUND, uint_text, NULL, NULL),
	/* The kernel's u8 bounds are unsigned int (SYSCTL_ZERO, ...); none means 0..255. */
	ROW(proc_dou8vec_minmax, "u8", "", sizeof(uint8_t), sizeof(unsigned int), ONE | MM,
	    uint_text, "0", "255"),
	ROW(proc_doulongvec_minmax, "ulong", "", sizeof(unsigned long), sizeof(unsigned long),
	    MM | SYSCTL_HF_ONE_BOUND, ulong_text, NULL, NULL),
	/* No plain variant exists, so bounds are optional. */
	ROW(proc_doulongvec_ms_jiffies_minmax, "ulong", "ms", sizeof(unsigned long),
	    sizeof(unsigned long), MM, ulong_ms_text, NULL, NULL),
	ROW(proc_dobool, "bool", "", sizeof(bool), 0, ONE | S, NULL, NULL, NULL),
	ROW(proc_dointvec_jiffies, "int", "s", sizeof(int), 0, S, NULL, NULL, NULL),
	ROW(proc_dointvec_userhz_jiffies, "int", USER_HZ_UNIT, sizeof(int), 0, S, NULL, NULL,
	    NULL),
	ROW(proc_dointvec_ms_jiffies, "int", "ms", sizeof(int), 0, S, NULL, NULL, NULL),
	ROW(proc_do_large_bitmap, "bitmap", "", 0, 0, SYSCTL_HF_BITMAP, NULL, NULL, NULL),
};

const struct rcs_handler_row *rcs_handler_row(proc_handler *handler)
{
	if (!handler)
		return NULL;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].handler == handler)
			return &rows[i];
	return NULL;
}

const struct sysctl_handler_info *sysctl_handler_info_at(size_t index)
{
	return index < sizeof(rows) / sizeof(rows[0]) ? &rows[index].info : NULL;
}

const struct sysctl_handler_info *sysctl_handler_info(proc_handler *handler)
{
	const struct rcs_handler_row *row = rcs_handler_row(handler);

	return row ? &row->info : NULL;
}

const struct rcs_handler_row *rcs_tree_handler_row(const struct sysctl_tree *tree,
						   proc_handler *handler)
{
	const struct rcs_handler_row *row = rcs_handler_row(handler);

	for (size_t i = 0; !row && handler && i < tree->nwraps; i++)
		if (tree->wraps[i].wrapper == handler)
			row = tree->wraps[i].base;
	return row;
}

int sysctl_tree_wrap_handler(struct sysctl_tree *tree, proc_handler *wrapper, proc_handler *base)
{
	const struct rcs_handler_row *row = rcs_handler_row(base), *had;
	struct rcs_handler_wrap *grown;
	int err = 0;

	/* A library handler is its own kind: it wraps nothing. */
	if (!tree || !wrapper || !row || rcs_handler_row(wrapper))
		return -EINVAL;
	pthread_mutex_lock(&tree->lock);
	had = rcs_tree_handler_row(tree, wrapper);
	if (had) {
		/* Registered rows already follow the first base: it stays. */
		err = had == row ? 0 : -EEXIST;
	} else if (!(grown = realloc(tree->wraps, (tree->nwraps + 1) * sizeof(*grown)))) {
		err = -ENOMEM;
	} else {
		tree->wraps = grown;
		tree->wraps[tree->nwraps++] = (struct rcs_handler_wrap){ wrapper, row };
	}
	pthread_mutex_unlock(&tree->lock);
	return err;
}

const struct sysctl_handler_info *sysctl_tree_handler_info(struct sysctl_tree *tree,
							   proc_handler *handler)
{
	const struct rcs_handler_row *row;

	if (!tree)
		return sysctl_handler_info(handler);
	pthread_mutex_lock(&tree->lock);
	row = rcs_tree_handler_row(tree, handler);
	pthread_mutex_unlock(&tree->lock);
	return row ? &row->info : NULL;
}
