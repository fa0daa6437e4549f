/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one check every file rcusysd reads goes through (rcusysd(8),
 * SECURITY MODEL): settings and tunables files of every directory of the
 * search path, -c and -t files, and (through trusted_file_openat()) the
 * state file. rcusysd applies them as root, and some entries name programs
 * root runs, so whoever can change a file, or swap it, chooses what root
 * executes. A file is read only if it is a regular file owned by root or
 * by the daemon's uid, writable by neither group nor others, in a
 * directory of the same owners that neither group nor others may write
 * (sticky or not), under directories that pass the run directory's check
 * (rundir_walk()); it is opened O_NOFOLLOW|O_NONBLOCK, after an lstat that
 * refuses anything but a regular file, so a FIFO, a device or a directory
 * named like a settings file is never opened, and read with a cap. The
 * one symbolic link taken is systemd's mask: a link to /dev/null reads as
 * an empty file.
 */
#ifndef RCUSYSD_TRUSTED_FILE_H
#define RCUSYSD_TRUSTED_FILE_H

#include <stddef.h>
#include <sys/stat.h>

/* The largest settings or tunables file read (100 000 tunables take about 5 MB). */
#define TRUSTED_FILE_MAX ((size_t)64 << 20)

/*
 * trusted_file_openat - open @name in the directory @dirfd for reading, if
 * it may decide what root does
 *
 * @dirfd must have been checked (rundir_walk(), rundir_open()); @name is
 * one component. @st gets the file's status.
 * Context: any thread.
 * Return: the fd (O_CLOEXEC), or a negative errno with @why (size
 * @why_size) saying what is wrong: -ELOOP (a symbolic link), -EINVAL (not
 * a regular file: a FIFO, a directory, a device), -EPERM (owner or mode),
 * -EAGAIN (swapped between the check and the open), others as they came
 * (-ENOENT).
 */
int trusted_file_openat(int dirfd, const char *name, struct stat *st, char *why,
			size_t why_size);

/*
 * trusted_file_read_fd - read the open @fd whole, at most @max bytes
 *
 * *@text gets a NUL-terminated copy (malloc'd) and *@len its length.
 * Context: any thread.
 * Return: 0, -EFBIG (longer than @max), -ENOMEM, or the read's errno,
 * with @why filled.
 */
int trusted_file_read_fd(int fd, size_t max, char **text, size_t *len, char *why,
			 size_t why_size);

/*
 * trusted_file_read - the whole check for @path, then its text
 *
 * @path's directory is resolved (realpath) and walked from "/"
 * (rundir_walk()), then checked itself (owner, and no write bit for group
 * or others, sticky or not), then the file (trusted_file_openat()), then
 * read (trusted_file_read_fd()).
 * Context: any thread.
 * Return: 0 with *@text and *@len as trusted_file_read_fd() gives them, 1
 * with "" for a file masked by a symbolic link to /dev/null, or a negative
 * errno with @why naming the reason (the caller names @path).
 */
int trusted_file_read(const char *path, size_t max, char **text, size_t *len, char *why,
		      size_t why_size);

#endif
