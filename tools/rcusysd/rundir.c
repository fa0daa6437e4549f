/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rundir.h"
#include "trusted_file.h"

#define UNSAFE_WRITE (S_IWGRP | S_IWOTH)

/* @name under @parent: a directory of ours that only we can change. */
static int check_own_dir(int parent, const char *name, const char *shown, struct stat *out, char *why,
			 size_t why_size)
{
	struct stat st;

	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		int err = -errno;

		snprintf(why, why_size, "cannot inspect %s: %s", shown, strerror(-err));
		return err;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(why, why_size, "%s is a symbolic link", shown);
		return -ELOOP;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, why_size, "%s is not a directory", shown);
		return -ENOTDIR;
	}
	if (st.st_uid != geteuid()) {
		snprintf(why, why_size, "%s is owned by uid %u, not by us (uid %u)", shown, (unsigned)st.st_uid,
			 (unsigned)geteuid());
		return -EPERM;
	}
	if (st.st_mode & UNSAFE_WRITE) {
		snprintf(why, why_size, "%s is writable by group or others (mode %04o)", shown,
			 (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	*out = st;
	return 0;
}

int rundir_open(const char *path, char *canon, size_t canon_size, char *why, size_t why_size)
{
	char copy[PATH_MAX], parent_real[PATH_MAX], *slash, *name;
	const char *parent;
	struct stat before, after;
	int pfd, fd, err;

	snprintf(why, why_size, "unknown error");
	if (!*path || strlen(path) >= sizeof(copy)) {
		snprintf(why, why_size, "bad path");
		return -EINVAL;
	}
	strcpy(copy, path);
	for (size_t n = strlen(copy); n > 1 && copy[n - 1] == '/'; n--)
		copy[n - 1] = '\0';
	slash = strrchr(copy, '/');
	if (slash) {
		*slash = '\0';
		name = slash + 1;
		parent = slash == copy ? "/" : copy;
	} else {
		name = copy;
		parent = ".";
	}
	if (!*name || !strcmp(name, ".") || !strcmp(name, "..")) {
		snprintf(why, why_size, "must end in a directory name");
		return -EINVAL;
	}
	if (!realpath(parent, parent_real)) {
		err = -errno;
		snprintf(why, why_size, "cannot resolve %s: %s", parent, strerror(-err));
		return err;
	}
	pfd = trusted_dir_walk(parent_real, why, why_size);
	if (pfd < 0)
		return pfd;
	if (mkdirat(pfd, name, 0755) != 0 && errno != EEXIST) {
		err = -errno;
		snprintf(why, why_size, "cannot create it: %s", strerror(-err));
		close(pfd);
		return err;
	}
	err = check_own_dir(pfd, name, "it", &before, why, why_size);
	fd = err ? err : openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (!err && fd < 0) {
		err = -errno;
		snprintf(why, why_size, "cannot open it: %s", strerror(-err));
	}
	close(pfd);
	if (err)
		return err;
	/* The same directory we checked, not one swapped in after the check. */
	if (fstat(fd, &after) != 0 || after.st_dev != before.st_dev || after.st_ino != before.st_ino) {
		snprintf(why, why_size, "it changed while being checked");
		close(fd);
		return -EAGAIN;
	}
	if ((size_t)snprintf(canon, canon_size, "%s/%s", strcmp(parent_real, "/") ? parent_real : "", name) >=
	    canon_size) {
		snprintf(why, why_size, "path too long");
		close(fd);
		return -ENAMETOOLONG;
	}
	return fd;
}

int rundir_subdir(int dirfd, const char *name, char *why, size_t why_size)
{
	struct stat st;

	if (mkdirat(dirfd, name, 0755) != 0 && errno != EEXIST) {
		int err = -errno;

		snprintf(why, why_size, "cannot create %s: %s", name, strerror(-err));
		return err;
	}
	return check_own_dir(dirfd, name, name, &st, why, why_size);
}
