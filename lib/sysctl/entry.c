/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One node of the sysctl tree (an entry or a directory): allocation, the
 * references that keep it, the unlink that hides it from new lookups,
 * freeing, and what programs may ask of it. A node unlinked from the tree
 * keeps its "linked" reference until a grace period has passed
 * (call_rcu), so a reader that found it can still take a reference; it is
 * freed when the last reference goes.
 */
#define _LGPL_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <urcu-bp.h>

#include "rcustring/sysctl.h"
#include "dir_index.h"
#include "entry_lock.h"
#include "entry.h"
#include "tree.h"

void rcs_header_put(struct sysctl_table_header *h)
{
	if (__atomic_sub_fetch(&h->refs, 1, __ATOMIC_ACQ_REL))
		return;
	rcs_row_map_free(h);
	free(h);
}

static void entry_free(struct sysctl_entry *e)
{
	struct sysctl_table_header *h = e->header;

	free(e);
	if (h)
		rcs_header_put(h);
}

void sysctl_entry_get(struct sysctl_entry *e)
{
	if (e)
		__atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
}

void sysctl_entry_put(struct sysctl_entry *e)
{
	/*
	 * The last reference can only go after the linked reference, which
	 * is dropped a grace period after the unlink: no reader can find the
	 * node any more, so it is freed at once.
	 */
	if (e && __atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) == 0)
		entry_free(e);
}

static void linked_ref_drop_rcu(struct rcu_head *head)
{
	sysctl_entry_put(caa_container_of(head, struct sysctl_entry, rcu));
}

void rcs_entry_unlink(struct sysctl_entry *e)
{
	__atomic_store_n(&e->live, 0, __ATOMIC_SEQ_CST);
	dir_index_unlink(e->parent, e);
	CMM_STORE_SHARED(e->parent, NULL); /* lookups read it under RCU */
	call_rcu(&e->rcu, linked_ref_drop_rcu);
}

/*
 * Raise @e's in-flight count: while it is raised, the row and what it
 * points to stay (unregister drains it). False, with nothing held, once
 * the entry is unregistered: a call on a dead entry does not touch the
 * count, so a drain waits only for calls that started before it.
 */
bool rcs_entry_use(struct sysctl_entry *e)
{
	if (!__atomic_load_n(&e->live, __ATOMIC_SEQ_CST))
		return false;
	__atomic_add_fetch(&e->inflight, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&e->live, __ATOMIC_SEQ_CST))
		return true;
	rcs_entry_unuse(e);
	return false;
}

void rcs_entry_unuse(struct sysctl_entry *e)
{
	if (__atomic_sub_fetch(&e->inflight, 1, __ATOMIC_SEQ_CST) == 0 &&
	    !__atomic_load_n(&e->live, __ATOMIC_SEQ_CST))
		rcs_event_wake(rcs_entry_tree(e), e);
}

void rcs_entry_drain(struct sysctl_entry *e)
{
	for (;;) {
		uint32_t ticket = rcs_event_ticket(rcs_entry_tree(e), e);

		if (!__atomic_load_n(&e->inflight, __ATOMIC_SEQ_CST))
			return;
		rcs_event_sleep(rcs_entry_tree(e), e, ticket);
	}
}

/* @parent_path '.' @name (@nlen bytes) at @p, NUL-terminated. */
static void join_path(char *p, const char *parent_path, size_t plen, const char *name, size_t nlen)
{
	size_t at = plen;

	memcpy(p, parent_path, plen);
	if (plen)
		p[at++] = '.';
	/* A '.' inside a name shows as '/', as procps prints it. */
	for (size_t i = 0; i < nlen; i++)
		p[at + i] = name[i] == '.' ? '/' : name[i];
	p[at + nlen] = '\0';
}

/*
 * A new node with one reference, or NULL with errno set. One allocation
 * holds it all: the node, its skip links, a directory's part (struct
 * sysctl_dir, for directories alone), its dotted path, its name when too
 * long for iname, and a copy of @desc (NULL: none).
 */
struct sysctl_entry *rcs_entry_alloc(struct sysctl_tree *tree, const char *parent_path,
				     const char *name, size_t namelen, const char *desc, bool is_dir)
{
	int levels = dir_index_skip_levels(tree);
	size_t plen = parent_path ? strlen(parent_path) : 0;
	size_t head = sizeof(struct sysctl_entry) + (size_t)levels * sizeof(void *);
	size_t dir_size = is_dir ? sizeof(struct sysctl_dir) : 0;
	size_t path_size = plen + (plen ? 1 : 0) + namelen + 1; /* as join_path() writes it */
	size_t name_size = namelen < sizeof(((struct sysctl_entry *)0)->iname) ? 0 : namelen + 1;
	size_t desc_size = desc ? strlen(desc) + 1 : 0;
	/* malloc, not calloc: tests fail it on purpose through --wrap=malloc. */
	struct sysctl_entry *e = malloc(head + dir_size + path_size + name_size + desc_size);
	char *tail;

	if (!e) {
		errno = ENOMEM;
		return NULL;
	}
	tail = (char *)e + head;
	memset(e, 0, sizeof(*e));
	e->skip_levels = (uint8_t)levels; /* at most SYSCTL_SKIP_LEVELS */
	e->is_dir = is_dir;
	e->mode = 0555;
	e->live = 1;
	e->refs = 1;
	CDS_INIT_LIST_HEAD(&e->sibling);
	if (is_dir) {
		struct sysctl_dir *d = (struct sysctl_dir *)tail;

		memset(d, 0, sizeof(*d));
		d->tree = tree;
		CDS_INIT_LIST_HEAD(&d->children);
		tail += dir_size;
	}
	e->namelen = (uint16_t)namelen; /* at most RCS_NAME_MAX_LEN */
	join_path(tail, parent_path, plen, name, namelen);
	e->hash = dir_index_path_hash(tail);
	memcpy(name_size ? tail + path_size : e->iname, name, namelen);
	(name_size ? tail + path_size : e->iname)[namelen] = '\0';
	e->has_desc = desc != NULL;
	if (desc)
		memcpy(tail + path_size + name_size, desc, desc_size);
	return e;
}

/* ---- what programs ask of an entry ---- */

int sysctl_entry_is_dir(const struct sysctl_entry *e)
{
	return e ? e->is_dir : 0;
}

const char *sysctl_entry_name(const struct sysctl_entry *e)
{
	return e ? rcs_entry_name(e) : NULL;
}

const char *sysctl_entry_path(const struct sysctl_entry *e)
{
	return e ? rcs_entry_path(e) : NULL;
}

mode_t sysctl_entry_mode(const struct sysctl_entry *e)
{
	return e ? e->mode : 0;
}

int sysctl_entry_exec(const struct sysctl_entry *e)
{
	return e && e->exec;
}

const char *sysctl_entry_desc(const struct sysctl_entry *e)
{
	const char *after_path;

	if (!e || !e->has_desc)
		return NULL;
	/* After the path, and the name when it is not in iname (rcs_entry_alloc()). */
	after_path = rcs_entry_path(e) + strlen(rcs_entry_path(e)) + 1;
	return e->namelen < sizeof(e->iname) ? after_path : after_path + e->namelen + 1;
}

/*
 * The row is the registrant's memory, which may be freed as soon as
 * sysctl_unregister_table() returns: the result is only safe to use by a
 * caller that knows the table stays registered (see sysctl.h).
 */
const struct ctl_table *sysctl_entry_table(const struct sysctl_entry *e)
{
	if (!e || e->is_dir || !sysctl_entry_live(e))
		return NULL;
	return e->table;
}

int sysctl_entry_live(const struct sysctl_entry *e)
{
	return e ? __atomic_load_n(&e->live, __ATOMIC_ACQUIRE) : 0;
}
