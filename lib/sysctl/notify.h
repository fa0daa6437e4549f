/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A change callback, as notify.c runs it and watch.c adds and removes it.
 * Internal to the library.
 */
#ifndef RCUSTRING_LIB_SYSCTL_NOTIFY_H
#define RCUSTRING_LIB_SYSCTL_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "rcustring/sysctl.h"

struct sysctl_callback {
	/* The next of e->callbacks, in the order added; under the entry's callback lock. */
	struct sysctl_callback *next;
	struct sysctl_entry *e;    /* referenced */
	sysctl_change_fn *fn;
	void *arg;
	/* Under the entry's callback lock: */
	uint64_t done;    /* counter passed to the last call that returned */
	uint64_t handoff; /* latest change left to the runner by a callback's write */
	bool running;     /* some thread is inside fn */
	bool removed;     /* unlinked by sysctl_callback_remove */
	bool told_gone;   /* called with SYSCTL_ORIGIN_REMOVED */
};

#endif
