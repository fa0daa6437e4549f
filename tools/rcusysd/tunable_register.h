/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsed tunables (tunable_decl.h) into the tree: a directory's tunables
 * as one table (one header per directory, not per tunable: memory counts
 * at 100 000 of them), then each default written through its handler.
 * Internal to rcusysd.
 */
#ifndef RCUSYSD_TUNABLE_REGISTER_H
#define RCUSYSD_TUNABLE_REGISTER_H

#include <stddef.h>

#include <rcustring/sysctl.h>

#include "tunable_decl.h"

/* Told of a tunable left unregistered: the error and a message naming it. */
typedef void tunable_fail_fn(void *arg, struct tunable *t, int err, const char *why);

/*
 * Registers the @n tunables @v (none registered yet; @v is reordered)
 * and writes their defaults. One the tree refuses, or whose default its
 * handler refuses, is left unregistered (t->header NULL) and passed to
 * @fail. Returns how many failed.
 */
size_t tunables_register(struct sysctl_tree *tree, struct tunable **v, size_t n,
			 tunable_fail_fn *fail, void *arg);

/* Removes @t's entry (its table goes with its last row); no-op if none. */
void tunable_unregister(struct tunable *t);

#endif
