/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one check every file goes through before its text decides what root
 * does (rcusysd(8), SECURITY MODEL; rcusysctl(8), FILES): rcusysd's
 * settings and tunables files of every directory of the search path, its
 * -c and -t files and (through trusted_file_openat()) its state file, and
 * the files rcusysctl applies as root's settings (--system, and -p as
 * root). Both tools link this one copy, so a file one of them refuses the
 * other refuses too, with the same words. Some entries name programs root
 * runs, so whoever can change a file, or swap it, chooses what root
 * executes. A file is read only if it is a regular file owned by root or
 * by the caller's uid, writable by neither group nor others, in a
 * directory of the same owners that neither group nor others may write
 * (sticky or not), under directories owned by root or the caller that
 * group and others may not write unless sticky (trusted_dir_walk()); it
 * is opened O_NOFOLLOW|O_NONBLOCK, after an lstat that refuses anything
 * but a regular file, so a FIFO, a device or a directory named like a
 * settings file is never opened, and read with a cap. The one symbolic
 * link taken is systemd's mask: a link to /dev/null reads as an empty
 * file.
 */
#ifndef RCUSTRING_TRUSTED_FILE_H
#define RCUSTRING_TRUSTED_FILE_H

#include <stddef.h>
#include <sys/stat.h>

/* The largest settings or tunables file read (100 000 tunables take about 5 MB). */
#define TRUSTED_FILE_MAX ((size_t)64 << 20)

/*
 * trusted_file_openat - open @name in the directory @dirfd for reading, if
 * it may decide what root does
 *
 * @dirfd must have been checked (trusted_dir_walk(), rundir_open()); @name is
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
 * (trusted_dir_walk()), then checked itself (owner, and no write bit for group
 * or others, sticky or not), then the file (trusted_file_openat()), then
 * read (trusted_file_read_fd()).
 * Context: any thread.
 * Return: 0 with *@text and *@len as trusted_file_read_fd() gives them, 1
 * with "" for a file masked by a symbolic link to /dev/null, or a negative
 * errno with @why naming the reason (the caller names @path).
 */
int trusted_file_read(const char *path, size_t max, char **text, size_t *len, char *why,
		      size_t why_size);

/*
 * trusted_file_read_secret - trusted_file_read() for a file holding a
 * secret (rcusysd --etcd-credentials): also refused when group or others
 * may read it (-EPERM, "the file is readable by group or others (mode
 * 0644)"), and no mask (a link is refused).
 * Context: any thread. Return: 0 with *@text and *@len, or a negative
 * errno with @why filled.
 */
int trusted_file_read_secret(const char *path, size_t max, char **text, size_t *len, char *why,
			     size_t why_size);

/*
 * trusted_dir_walk - open @dir after checking it and every directory above
 *
 * @dir is absolute, with no symbolic link (realpath()'s result); each
 * level from "/" must be owned by root or by the caller's uid and not
 * writable by group or others unless sticky (like /tmp). The fd returned
 * is @dir itself, through which a file in it can be opened with nothing
 * swapped in meanwhile.
 * Context: any thread.
 * Return: an O_PATH fd (O_CLOEXEC), or a negative errno with @why (size
 * @why_size) filled: -EPERM (owner or mode), -ELOOP or -ENOENT (a level
 * changed since it was resolved), others as they came.
 */
int trusted_dir_walk(const char *dir, char *why, size_t why_size);

/*
 * trusted_file_read_plain - @path's text, for writes that are the
 * caller's own (rcusysctl -p FILE run by a user other than root)
 *
 * No owner or directory rule, since nothing is done with more rights than
 * the caller's, but the same type rule and cap: @path (symbolic links
 * followed, as any program of the user would) must be a regular file,
 * opened O_NONBLOCK only after stat() said so and checked again with
 * fstat(), so a FIFO or a device never blocks nor is read.
 * Context: any thread.
 * Return: 0 with *@text and *@len as trusted_file_read_fd() gives them, or
 * a negative errno with @why filled: -EINVAL (not a regular file), -EAGAIN
 * (swapped between the check and the open), -EFBIG, others as they came.
 */
int trusted_file_read_plain(const char *path, size_t max, char **text, size_t *len, char *why,
			    size_t why_size);

/*
 * trusted_file_verdict - the word both tools put before a refusal's @why:
 * "cannot read" for a file that is missing or unreadable (-ENOENT,
 * -EACCES, -EIO), "refused" for one the check turned down. Their lines
 * read "PATH: VERDICT: WHY (skipped)".
 * Context: any thread. Return: a static string.
 */
const char *trusted_file_verdict(int err);

#endif
