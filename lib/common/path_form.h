/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one rule for a sysctl path's two written forms (systemd's sysctl.d
 * rule, which procps follows): when the first separator of a path is '.',
 * dots separate and a '/' stands for a '.' inside a name
 * ("net.ipv4.conf.eth0/200.forwarding"); when it is '/', slashes separate
 * and dots are part of names ("net/ipv4/conf/eth0.200/forwarding"). The
 * tree, the sysctl.d parser, the CLI, rcusysd and the etcd mirror all read
 * paths through it.
 */
#ifndef RCUSTRING_COMMON_PATH_FORM_H
#define RCUSTRING_COMMON_PATH_FORM_H

#include <string.h>

/*
 * Swap every '.' and '/' of @s in place: one form to the other, both ways
 * (how the dotted form is written from a '/' key, and read back).
 */
static inline void rcs_path_swap_separators(char *s)
{
	for (; *s; s++)
		*s = *s == '.' ? '/' : *s == '/' ? '.' : *s;
}

/* Rewrite @path in place to its '/' form (unchanged when already in it). */
static inline void rcs_path_to_slash(char *path)
{
	char *first = strpbrk(path, "./");

	if (first && *first == '.')
		rcs_path_swap_separators(first);
}

#endif
