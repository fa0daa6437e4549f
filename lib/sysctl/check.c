/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysctl_entry_check(): run an entry's handler on a scratch copy of its
 * data, to learn whether it would take a value without changing anything.
 * The copy follows the handler's descriptor (handler_info.c; a declared
 * wrapper's is its base's), never
 * maxlen alone: a bitmap's maxlen counts bits and its data is a pointer to
 * the bitmap, an RCU string's data is a struct rcustring.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "entry_lock.h"
#include "entry.h"
#include "handlers.h"
#include "tree.h"

#define LONG_BITS (CHAR_BIT * sizeof(unsigned long))

struct scratch {
	struct ctl_table t;
	struct rcustring str;  /* SYSCTL_HF_RCU */
	unsigned long *bitmap; /* SYSCTL_HF_BITMAP: t.data points to it */
	void *copy;            /* everything else: maxlen bytes */
	bool str_live;
};

/* Fill @sc from @orig; the caller holds the entry's read lock if it has one. */
static int scratch_init(struct scratch *sc, const struct ctl_table *orig, unsigned int flags)
{
	memset(sc, 0, sizeof(*sc));
	sc->t = *orig;
	if (flags & SYSCTL_HF_RCU) {
		int err = rcustring_init(&sc->str, rcustring_maxlen(orig->data), "");

		if (err)
			return err;
		sc->str_live = true;
		sc->t.data = &sc->str;
	} else if (flags & SYSCTL_HF_BITMAP) {
		size_t words = ((size_t)orig->maxlen + LONG_BITS - 1) / LONG_BITS;
		unsigned long *const *src = orig->data;

		sc->bitmap = calloc(words ? words : 1, sizeof(unsigned long));
		if (!sc->bitmap)
			return -ENOMEM;
		if (src && *src)
			memcpy(sc->bitmap, *src, words * sizeof(unsigned long));
		sc->t.data = &sc->bitmap;
	} else if (orig->data && orig->maxlen > 0) {
		sc->copy = malloc((size_t)orig->maxlen);
		if (!sc->copy)
			return -ENOMEM;
		memcpy(sc->copy, orig->data, (size_t)orig->maxlen);
		sc->t.data = sc->copy;
	}
	return 0;
}

static void scratch_free(struct scratch *sc)
{
	if (sc->str_live)
		rcustring_destroy(&sc->str);
	free(sc->bitmap);
	free(sc->copy);
}

int sysctl_entry_check(struct sysctl_entry *e, const char *value, size_t len)
{
	struct scratch sc;
	off_t pos = 0;
	int err;

	if (!e || (!value && len))
		return -EINVAL;
	if (e->is_dir)
		return -EISDIR;
	if (!e->kind)
		return -EOPNOTSUPP; /* a program's own handler: its data is unknown */
	if (!rcs_entry_use(e))
		return -ENOENT;
	if (e->locked_reads)
		rcs_elock_read(e);
	err = scratch_init(&sc, e->table, e->kind->info.flags);
	if (e->locked_reads)
		rcs_elock_read_unlock(e);
	if (!err)
		err = sc.t.proc_handler(&sc.t, 1, (void *)value, &len, &pos);
	rcs_entry_unuse(e);
	scratch_free(&sc);
	return err;
}
