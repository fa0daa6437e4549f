/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The state file: every acknowledged write of a client is persisted, so a
 * restart comes back with the values clients set. The file is in sysctl.d
 * syntax ("path = value"), read at start after the -c files, and rewritten
 * whole at each such write: written to a temporary file in the same
 * directory (a random name, opened O_EXCL), fsync'ed, renamed over the old
 * one, and the directory fsync'ed. So whatever moment the daemon (or the
 * machine) dies, the file is the old one or the new one, never a mix or
 * empty. The rewrite is the tree's commit hook (sysctl_tree_set_commit()):
 * it runs inside the write, before the write is acknowledged, and a write
 * it cannot make durable (a full disk, a value the file cannot hold) is
 * refused with the errno and leaves the value as it was.
 *
 * What is kept follows the origin of each write (struct sysctl_change),
 * not the thread that runs it: a client's write (socket, FUSE, CLI) and
 * the state file's own values are kept; a -c file's or the program's
 * value updates a key already kept and adds none; a value mirrored from
 * etcd takes its key out (etcd is its source of truth).
 *
 * The file's directory gets the run directory's checks (rundir.h): it and
 * every directory above must be root's (or ours) and writable by nobody
 * else; the file must be a regular file of ours, not a symbolic link or a
 * FIFO; and ".NAME.lock" beside it is held (flock) while we run, so two
 * daemons never share one state file.
 */
#ifndef RCUSYSD_PERSIST_H
#define RCUSYSD_PERSIST_H

#include <stdbool.h>
#include <stddef.h>

#include <rcustring/sysctl.h>

struct persist;

/*
 * Opens the state file @path: checks and opens its directory (created,
 * mode 0755, if missing), checks the file (it need not exist) and takes
 * its lock. Returns 0 or a negative errno with @why (size @why_size)
 * filled: -EPERM, -ELOOP, -ENOTDIR, -EAGAIN for an unsafe directory or
 * file, -EINVAL for a file that is not regular, -EBUSY when another daemon
 * holds it, other errors as they came.
 */
int persist_open(struct sysctl_tree *tree, const char *path, struct persist **out, char *why,
		 size_t why_size);

/*
 * Applies the state file to the tree, logging lines that fail. Keys that
 * apply stay persisted. Returns 0 or a negative errno (the file unreadable;
 * a missing file is 0).
 */
int persist_apply(struct persist *p);

/*
 * From now on every write of the tree commits to the file (installs the
 * commit hook; again after a reload does nothing). Call once the state
 * file is applied, before the tree is served. Returns 0.
 */
int persist_watch(struct persist *p);

/* Does the state file keep a runtime write of @path (dotted, as sysctl_entry_path())? */
bool persist_holds(struct persist *p, const char *path);

/*
 * Drops @path (NULL: every key) from the state file and rewrites it, so
 * the configuration files' value applies again (rcusysctl --reset).
 * Returns 0, -ENOENT (@path not kept) or a negative errno of the rewrite
 * (then nothing is dropped).
 */
int persist_forget(struct persist *p, const char *path);

/* Removes the commit hook, releases the lock and frees; NULL is fine. */
void persist_close(struct persist *p);

#endif
