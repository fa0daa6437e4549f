/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dirtree.h"

static int file_path(const char *root, const char *key, char *out)
{
	int n = snprintf(out, PATH_MAX, "%s%s%s", root, *key ? "/" : "", key);

	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

int dirtree_stat(const char *root, const char *key)
{
	char path[PATH_MAX];
	struct stat st;
	int err = file_path(root, key, path);

	if (err)
		return err;
	if (strstr(key, "..") && (strstr(key, "/../") || strncmp(key, "../", 3) == 0))
		return -ENOENT; /* keys never climb out of the root */
	if (stat(path, &st) != 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? -EISDIR : 0;
}

ssize_t dirtree_read(const char *root, const char *key, char *buf, size_t size)
{
	char path[PATH_MAX];
	size_t len = 0;
	ssize_t n;
	int fd, err = file_path(root, key, path);

	if (err)
		return err;
	/*
	 * One open for the whole value: rcustring's FUSE mount serves every
	 * read() of one open file from one copy of the value, so the reads
	 * below can never join two values (a second open could).
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Files report size 0 (like /proc/sys): read until EOF. */
	for (;;) {
		char probe;

		/* A full buffer: one more byte means the value does not fit. */
		n = len + 1 < size ? read(fd, buf + len, size - 1 - len) : read(fd, &probe, 1);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (len + 1 >= size) {
			err = -EFBIG;
			break;
		}
		len += (size_t)n;
	}
	close(fd);
	if (err)
		return err;
	buf[len] = '\0';
	return (ssize_t)len;
}

int dirtree_write(const char *root, const char *key, const char *value)
{
	char path[PATH_MAX];
	size_t len = strlen(value);
	ssize_t n;
	int fd, err = file_path(root, key, path);

	if (err)
		return err;
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* One write(): the tree commits a value per write call. An empty value is
	 * a line holding nothing, as systemd-sysctl writes it: zero bytes change nothing. */
	if (!len)
		value = "\n", len = 1;
	n = write(fd, value, len);
	err = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
	if (close(fd) != 0 && !err)
		err = -errno;
	return err;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int dirtree_walk(const char *root, const char *key, int (*fn)(const char *key, void *arg), void *arg)
{
	char path[PATH_MAX], child[PATH_MAX];
	struct dirent **names;
	int n, ret = 0, err = file_path(root, key, path);

	if (err)
		return err;
	n = scandir(path, &names, NULL, by_name);
	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;

		if (ret == 0 && strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
			if (snprintf(child, sizeof(child), "%s%s%s", key, *key ? "/" : "", name) >= (int)sizeof(child))
				ret = -ENAMETOOLONG;
			else if (dirtree_stat(root, child) == -EISDIR)
				ret = dirtree_walk(root, child, fn, arg);
			else
				ret = fn(child, arg);
		}
		free(names[i]);
	}
	free(names);
	return ret;
}
