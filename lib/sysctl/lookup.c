/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Paths as the tree reads them, and the lookup of a node by its path: one
 * pass over the path under RCU, no copy, one probe of the index
 * (dir_index.c), and a reference taken on what was found.
 */
#define _LGPL_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <urcu-bp.h>

#include "common/path_form.h"
#include "rcustring/sysctl.h"
#include "dir_index.h"
#include "entry.h"
#include "tree.h"

/* @path's '/' form (common/path_form.h) in @buf; NULL when it does not fit. */
const char *rcs_slash_form(const char *path, char *buf, size_t size)
{
	if (!memccpy(buf, path, '\0', size))
		return NULL;
	rcs_path_to_slash(buf);
	return buf;
}

/*
 * Split @path (in '/' form, see rcs_slash_form) into components at '/'.
 * Leading and trailing separators are ignored ("/kernel/", FUSE style);
 * empty, "." or ".." components in between are malformed.
 * Return: the number of components, or -EINVAL.
 */
int rcs_split_path(const char *path, struct rcs_path_comp *out, int max)
{
	const char sep = '/';
	const char *p = path, *end = path + strlen(path);
	int n = 0;

	while (p < end && *p == sep)
		p++;
	while (end > p && end[-1] == sep)
		end--;
	while (p < end) {
		const char *q = memchr(p, sep, (size_t)(end - p));
		size_t len = q ? (size_t)(q - p) : (size_t)(end - p);

		if (len == 0 || len > RCS_NAME_MAX_LEN || n == max)
			return -EINVAL;
		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		out[n].s = p;
		out[n].len = len;
		n++;
		p += len + (q ? 1 : 0);
	}
	return n;
}

/*
 * Scan @path (rcs_slash_form's rule: the first separator decides) into its
 * components and the hash of its dotted form, in one pass and with no
 * copy, and look it up in the index under RCU (the caller holds the read
 * lock): the node in *@out, NULL if none; -EINVAL if @path is malformed,
 * as rcs_split_path() would find it (empty, "." or ".." components between
 * separators, too long, too deep).
 */
static int lookup_walk(struct sysctl_tree *tree, const char *path, struct sysctl_entry **out)
{
	struct dir_index_comp comps[RCS_MAX_DEPTH];
	uint32_t h = DIR_INDEX_HASH_INIT;
	const char *p = path;
	int n = 0;
	char sep;

	while (*p && *p != '.' && *p != '/')
		p++;
	sep = *p == '.' ? '.' : '/';
	p = path;
	while (*p == sep)
		p++;
	while (*p) {
		const char *s = p;
		size_t len;

		if (n == RCS_MAX_DEPTH)
			return -EINVAL;
		if (n)
			h = dir_index_hash_step(h, '.');
		for (; *p && *p != sep; p++) /* dotted: a '.' inside a name is '/' */
			h = dir_index_hash_step(h, *p == '.' ? '/' : (unsigned char)*p);
		len = (size_t)(p - s);
		/* Neither form leaves both '.' and '/' inside a component. */
		if (len > RCS_NAME_MAX_LEN || (len == 1 && (s[0] == '.' || s[0] == '/')) ||
		    (len == 2 && (s[0] == '.' || s[0] == '/') && (s[1] == '.' || s[1] == '/')))
			return -EINVAL;
		comps[n++] = (struct dir_index_comp){ s, len };
		if (*p == sep && *++p == sep) { /* empty components: only at the end */
			while (*p == sep)
				p++;
			if (*p)
				return -EINVAL;
		}
	}
	*out = n ? dir_index_find_path(tree, h, comps, n, sep == '.') : tree->root;
	return 0;
}

int rcs_sysctl_lookup_ref(struct sysctl_tree *tree, const char *path, struct sysctl_entry **out)
{
	struct sysctl_entry *e = NULL;
	int err;

	if (!tree || !path)
		return -EINVAL;
	rcu_read_lock();
	err = lookup_walk(tree, path, &e);
	/* Found while it was being unlinked: it is gone already. */
	if (e && !__atomic_load_n(&e->live, __ATOMIC_ACQUIRE))
		e = NULL;
	if (e)
		sysctl_entry_get(e);
	rcu_read_unlock();
	if (err)
		return err;
	if (!e)
		return -ENOENT;
	*out = e;
	return 0;
}

struct sysctl_entry *sysctl_lookup(struct sysctl_tree *tree, const char *path)
{
	struct sysctl_entry *e = NULL;
	int err = rcs_sysctl_lookup_ref(tree, path, &e);

	if (err) {
		errno = -err;
		return NULL;
	}
	return e;
}
