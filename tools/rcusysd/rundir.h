/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The run directory holds the sockets and the FUSE mount point. Whoever can
 * change it or a directory above it can make rcusysd bind, chmod or mount
 * over a path of their choosing (a symlink at RUN/sys mounts the tree over
 * any directory; a symlink swapped in for a socket between bind and chmod
 * gets its target chmod'ed), so it is checked before anything is created in
 * it, and an unsafe one is refused. The directories above it are walked as
 * every file's directories are (trusted_dir_walk(), trusted_file.h).
 */
#ifndef RCUSYSD_RUNDIR_H
#define RCUSYSD_RUNDIR_H

#include <stddef.h>

/*
 * Opens the run directory @path, creating it (mode 0755) if missing, and
 * checks it: every directory above it must be owned by root or by us and
 * not writable by group or others unless sticky (like /tmp); the run
 * directory itself must be a real directory (not a symlink) owned by us
 * and not writable by group or others. @canon (size @canon_size) receives
 * its path with symlinks above it resolved, the path everything below it is
 * made through. Returns the directory's fd (O_CLOEXEC), or a negative errno
 * with @why (size @why_size) saying what is wrong: -EPERM (owner or mode),
 * -ELOOP (a symlink), -ENOTDIR, -EAGAIN (changed while checked) for an
 * unsafe directory, other errors (-EACCES, -ENOENT...) as they came.
 */
int rundir_open(const char *path, char *canon, size_t canon_size, char *why, size_t why_size);

/*
 * Makes sure @name in the run directory @dirfd is a directory owned by us
 * and not writable by group or others (creating it if missing), so a mount
 * there lands in the run directory. Returns 0 or a negative errno with @why
 * filled; -ENOTCONN etc. come back as they are (a stale mount).
 */
int rundir_subdir(int dirfd, const char *name, char *why, size_t why_size);

#endif
