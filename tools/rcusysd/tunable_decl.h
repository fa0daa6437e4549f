/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One declaration of the tunables file, parsed (tunable_decl.c) and then
 * registered and kept by tunables.c. Internal to rcusysd.
 */
#ifndef RCUSYSD_TUNABLE_DECL_H
#define RCUSYSD_TUNABLE_DECL_H

#include <stddef.h>
#include <string.h>

#include <rcustring/rcustring.h>
#include <rcustring/sysctl.h>

/* One keyword of the file: the element type and unit of a handler kind. */
struct type {
	const char *name; /* as written in the file */
	const char *elem; /* struct sysctl_handler_info.type */
	const char *unit; /* struct sysctl_handler_info.unit */
};

union bound {
	int i;
	unsigned int u;
	unsigned long ul;
};

struct tunable {
	/*
	 * procname points inside path; desc is ours (NULL: none); extra1
	 * and extra2 point to the bounds, kept after the signature
	 * (tunable_pack()) by the kinds that have them.
	 */
	struct ctl_table table;
	struct sysctl_table_header *header;
	/*
	 * Memory counts at scale (100 000 tunables): what only some kinds
	 * need is allocated for those alone, one value of up to a long lives
	 * here, not in an allocation of its own, and the storage of the three
	 * kinds shares one field (tunable_info()'s flags tell which).
	 */
	union {
		struct rcustring *str;  /* strings */
		unsigned long *bitmap;  /* bitmaps: table.data points here */
		void *data;             /* elements: &one, or allocated for a vector */
	};
	unsigned long one;      /* the value of a single-element kind */
	unsigned count;         /* elements (1 unless TYPE[N]) */
	unsigned line;
	char *default_value;    /* NULL: none, or once applied */
	struct tunable *next;
	/*
	 * '/' form with a leading '/', for sysctl_set; then, after its NUL,
	 * the signature: what must not change across a reload
	 * (tunable_sig()); then the bounds, where the kind has them.
	 * Allocated with the tunable (tunables.c tunable_pack()): no
	 * pointer to either.
	 */
	char path[];
};

static inline const char *tunable_sig(const struct tunable *t)
{
	return t->path + strlen(t->path) + 1;
}

/* The handler's kind (NULL until the declaration's type is parsed). */
static inline const struct sysctl_handler_info *tunable_info(const struct tunable *t)
{
	return t->table.proc_handler ? sysctl_handler_info(t->table.proc_handler) : NULL;
}

/*
 * Parses one declaration (PATH TYPE [key=value ...]) into @t, zeroed by
 * the caller and not registered yet, its path and signature into *@path
 * and *@sig (malloc'd; t->table.procname points into *@path) and its
 * bounds into @bounds (t->table.extra1 and extra2 point there), for the
 * caller to pack with @t (t->path has no room yet); tunables.c frees @t,
 * *@path and *@sig either way. @why points to a static text or to @buf
 * (size @bufsize). Return 0, -EINVAL or -ENOMEM.
 */
int tunable_parse_line(char *line, struct tunable *t, char **path, char **sig,
		       union bound bounds[2], const char **why, char *buf, size_t bufsize);

#endif
