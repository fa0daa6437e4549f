/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one file check (trusted_file.h): the directory chain, the file's
 * type, owner and mode, an open that cannot hang or follow a link, and a
 * read with a cap. Linked by rcusysd and rcusysctl alike.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trusted_file.h"

#define UNSAFE_WRITE (S_IWGRP | S_IWOTH)

static int refuse(char *why, size_t why_size, int err, const char *fmt, unsigned a, unsigned b)
{
	snprintf(why, why_size, fmt, a, b);
	return err;
}

static const char *type_name(mode_t mode)
{
	return S_ISFIFO(mode) ? "a FIFO" : S_ISDIR(mode) ? "a directory" :
	       S_ISSOCK(mode) ? "a socket" : S_ISCHR(mode) || S_ISBLK(mode) ? "a device" : "unknown type";
}

/* Root's, or the caller's own uid's (a daemon not run as root trusts itself). */
static int check_owner_mode(const struct stat *st, const char *what, char *why, size_t why_size)
{
	char fmt[128];

	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(fmt, sizeof(fmt), "%s is owned by uid %%u (must be root or uid %%u)", what);
		return refuse(why, why_size, -EPERM, fmt, (unsigned)st->st_uid, (unsigned)geteuid());
	}
	if (st->st_mode & UNSAFE_WRITE) {
		snprintf(fmt, sizeof(fmt), "%s is writable by group or others (mode %%04o)", what);
		return refuse(why, why_size, -EPERM, fmt, (unsigned)(st->st_mode & 07777), 0);
	}
	return 0;
}

int trusted_file_openat(int dirfd, const char *name, struct stat *st, char *why, size_t why_size)
{
	struct stat opened;
	int fd, err;

	if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) != 0) {
		err = -errno;
		snprintf(why, why_size, "%s%s", err == -ENOENT ? "" : "cannot inspect it: ", strerror(-err));
		return err;
	}
	if (S_ISLNK(st->st_mode))
		return refuse(why, why_size, -ELOOP, "a symbolic link", 0, 0);
	/* Never opened: a FIFO would hang the read, a directory reads as 2^63 bytes. */
	if (!S_ISREG(st->st_mode)) {
		snprintf(why, why_size, "not a regular file (%s)", type_name(st->st_mode));
		return -EINVAL;
	}
	err = check_owner_mode(st, "the file", why, why_size);
	if (err)
		return err;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		err = -errno;
		snprintf(why, why_size, "cannot open it: %s", strerror(-err));
		return err;
	}
	/* The file checked above, not one swapped in since. */
	if (fstat(fd, &opened) != 0 || opened.st_dev != st->st_dev || opened.st_ino != st->st_ino) {
		close(fd);
		return refuse(why, why_size, -EAGAIN, "it changed while being checked", 0, 0);
	}
	*st = opened;
	return fd;
}

int trusted_file_read_fd(int fd, size_t max, char **text, size_t *len, char *why, size_t why_size)
{
	size_t have = 0, cap = 0;
	char *buf = NULL;

	for (;;) {
		ssize_t n;

		if (have == cap) {
			/* One byte past @max tells a file of exactly @max from a longer one. */
			size_t next = cap ? cap * 2 : 65536;
			char *bigger;

			if (next > max + 1)
				next = max + 1;
			if (next <= cap)
				break;
			bigger = realloc(buf, next + 1);
			if (!bigger) {
				free(buf);
				return refuse(why, why_size, -ENOMEM, "out of memory", 0, 0);
			}
			buf = bigger;
			cap = next;
		}
		n = read(fd, buf + have, cap - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			free(buf);
			snprintf(why, why_size, "cannot read it: %s", strerror(-err));
			return err;
		}
		if (n == 0)
			break;
		have += (size_t)n;
	}
	if (have > max) {
		free(buf);
		return refuse(why, why_size, -EFBIG, "larger than %u MiB",
			      (unsigned)(max >> 20), 0);
	}
	if (!buf && !(buf = malloc(1)))
		return refuse(why, why_size, -ENOMEM, "out of memory", 0, 0);
	buf[have] = '\0';
	*text = buf;
	*len = have;
	return 0;
}

/* A directory above a file or the run directory: root's or ours, and nobody else may rename in it. */
static int check_ancestor(int fd, const char *name, char *why, size_t why_size)
{
	struct stat st;

	if (fstat(fd, &st) != 0) {
		snprintf(why, why_size, "cannot inspect %s: %s", name, strerror(errno));
		return -errno;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(why, why_size, "%s is owned by uid %u (must be root or uid %u)", name,
			 (unsigned)st.st_uid, (unsigned)geteuid());
		return -EPERM;
	}
	if ((st.st_mode & UNSAFE_WRITE) && !(st.st_mode & S_ISVTX)) {
		snprintf(why, why_size, "%s is writable by group or others (mode %04o) and not sticky", name,
			 (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

/* What trusted_file.h says: each level checked as check_ancestor() does. */
int trusted_dir_walk(const char *dir, char *why, size_t why_size)
{
	char sofar[PATH_MAX] = "";
	size_t at = 0;
	const char *p = dir;
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = check_ancestor(fd, "/", why, why_size);
	while (!err && *p) {
		const char *end;
		char comp[NAME_MAX + 1];
		size_t len;
		int next;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		end = strchrnul(p, '/');
		len = (size_t)(end - p);
		if (len > NAME_MAX || at + len + 2 > sizeof(sofar)) {
			snprintf(why, why_size, "path too long");
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		sofar[at++] = '/';
		memcpy(sofar + at, comp, len + 1);
		at += len;
		/* O_NOFOLLOW: realpath() resolved it, so a symlink here is a swap. */
		next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			err = -errno;
			snprintf(why, why_size, "cannot open %s: %s", sofar, strerror(-err));
			break;
		}
		close(fd);
		fd = next;
		err = check_ancestor(fd, sofar, why, why_size);
		p = end;
	}
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* The file's own directory: no one but its owners may add, remove or rename in it. */
static int open_dir(const char *path, char *name, size_t name_size, char *why, size_t why_size)
{
	char copy[PATH_MAX], real[PATH_MAX], *base;
	struct stat st;
	int fd, err;

	if (snprintf(copy, sizeof(copy), "%s", path) >= (int)sizeof(copy))
		return refuse(why, why_size, -ENAMETOOLONG, "path too long", 0, 0);
	base = basename(copy);
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..") ||
	    snprintf(name, name_size, "%s", base) >= (int)name_size)
		return refuse(why, why_size, -EINVAL, "not a file name", 0, 0);
	snprintf(copy, sizeof(copy), "%s", path); /* basename() may have changed it */
	if (!realpath(dirname(copy), real)) {
		err = -errno;
		snprintf(why, why_size, "cannot resolve its directory: %s", strerror(-err));
		return err;
	}
	fd = trusted_dir_walk(real, why, why_size);
	if (fd < 0)
		return fd;
	/* Sticky does not help here: a user could add a name the daemon reads. */
	err = fstat(fd, &st) != 0 ? -errno : check_owner_mode(&st, "its directory", why, why_size);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* systemd's mask: a symbolic link to /dev/null in a directory only root may change. */
static int masked(int dirfd, const char *name)
{
	char target[16];
	ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);

	if (n < 0)
		return 0;
	target[n] = '\0';
	return !strcmp(target, "/dev/null");
}

/* trusted_file_read() and, with @secret, trusted_file_read_secret(). */
static int read_checked(const char *path, size_t max, bool secret, char **text, size_t *len,
			char *why, size_t why_size)
{
	char name[NAME_MAX + 1];
	struct stat st;
	int dirfd = open_dir(path, name, sizeof(name), why, why_size), fd, err;

	if (dirfd < 0)
		return dirfd;
	fd = trusted_file_openat(dirfd, name, &st, why, why_size);
	if (fd == -ELOOP && !secret && masked(dirfd, name)) {
		close(dirfd);
		*len = 0;
		*text = strdup("");
		return *text ? 1 : -ENOMEM;
	}
	close(dirfd);
	if (fd < 0)
		return fd;
	/* Others could read the secret, and so has it leaked already. */
	if (secret && (st.st_mode & (S_IRWXG | S_IRWXO))) {
		close(fd);
		return refuse(why, why_size, -EPERM, "the file is readable by group or others (mode %04o)",
			      (unsigned)(st.st_mode & 07777), 0);
	}
	err = trusted_file_read_fd(fd, max, text, len, why, why_size);
	close(fd);
	return err;
}

int trusted_file_read(const char *path, size_t max, char **text, size_t *len, char *why,
		      size_t why_size)
{
	return read_checked(path, max, false, text, len, why, why_size);
}

int trusted_file_read_secret(const char *path, size_t max, char **text, size_t *len, char *why,
			     size_t why_size)
{
	return read_checked(path, max, true, text, len, why, why_size);
}

int trusted_file_read_plain(const char *path, size_t max, char **text, size_t *len, char *why,
			    size_t why_size)
{
	struct stat st, opened;
	int fd, err;

	/* stat() first: opening a device may do something, a FIFO may block. */
	if (stat(path, &st) != 0) {
		err = -errno;
		snprintf(why, why_size, "%s", strerror(-err));
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, why_size, "not a regular file (%s)", type_name(st.st_mode));
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		err = -errno;
		snprintf(why, why_size, "cannot open it: %s", strerror(-err));
		return err;
	}
	if (fstat(fd, &opened) != 0 || opened.st_dev != st.st_dev || opened.st_ino != st.st_ino) {
		close(fd);
		return refuse(why, why_size, -EAGAIN, "it changed while being checked", 0, 0);
	}
	err = trusted_file_read_fd(fd, max, text, len, why, why_size);
	close(fd);
	return err;
}

const char *trusted_file_verdict(int err)
{
	return err == -ENOENT || err == -EACCES || err == -EIO ? "cannot read" : "refused";
}
