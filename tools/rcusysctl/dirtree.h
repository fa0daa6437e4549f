/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A sysctl tree seen as files under a root directory: the FUSE mount of
 * rcusysd, or /proc/sys itself. Keys are '/'-separated (see
 * sysctl_conf_normalize_key); display names use procps' dotted form
 * (sysctl_conf_dotted).
 */
#ifndef RCUSYSCTL_DIRTREE_H
#define RCUSYSCTL_DIRTREE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Reads the whole value of @key into @buf (NUL-terminated) through one open.
 * Returns the length, -EFBIG when it does not fit, or -errno.
 */
ssize_t dirtree_read(const char *root, const char *key, char *buf, size_t size);

/* Writes @value to @key in one write(). Returns 0 or -errno. */
int dirtree_write(const char *root, const char *key, const char *value);

/* 0 for an existing regular file, -EISDIR for a directory, -errno otherwise. */
int dirtree_stat(const char *root, const char *key);

/*
 * Calls @fn for every file under @key ("" for all) in sorted order, with its
 * key. Returns 0, -errno, or @fn's non-zero value.
 */
int dirtree_walk(const char *root, const char *key, int (*fn)(const char *key, void *arg), void *arg);

#endif
