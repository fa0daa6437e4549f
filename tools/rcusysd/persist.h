/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The state file: every successful write of an entry is persisted, so a
 * restart comes back with the values clients set. The file is in sysctl.d
 * syntax ("path = value"), read at start after the -c files, and rewritten
 * whole after each write: written to a temporary file in the same
 * directory, fsync'ed, renamed over the old one, and the directory
 * fsync'ed. So whatever moment the daemon (or the machine) dies, the file
 * is the old one or the new one, never a mix or empty. The rewrite runs in
 * the change callback, which a write waits for (sysctl_entry_on_change), so
 * a write acknowledged to a client is already on disk.
 */
#ifndef RCUSYSD_PERSIST_H
#define RCUSYSD_PERSIST_H

#include <stdbool.h>
#include <stddef.h>

#include <rcustring/sysctl.h>

struct persist;

/*
 * Opens the state file @path (its directory is created, mode 0755, if
 * missing; the file need not exist). Returns 0 or a negative errno with
 * @why (size @why_size) filled.
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
 * Watches every entry of the tree not yet watched, and stops watching
 * entries unregistered since. Call after start-up and after each reload.
 * Returns 0 or a negative errno.
 */
int persist_watch(struct persist *p);

/*
 * While set in a thread, writes that thread makes rewrite the file but
 * add no new key to it: settings from -c files re-applied at reload stay
 * the files' business, not the state file's.
 */
void persist_set_applying_files(bool on);

/*
 * @fn, asked in the writing thread at each change, says the write is not a
 * local one (a value mirrored from etcd): its key leaves the file, which
 * then restores only what was set on this host. A later local write of the
 * key adds it again. NULL: every write is local.
 */
void persist_set_not_local(bool (*fn)(void));

/* Does the state file hold a runtime write of @path (dotted, as sysctl_entry_path())? */
bool persist_holds(struct persist *p, const char *path);

/*
 * Drops @path (NULL: every key) from the state file and rewrites it, so
 * the configuration files' value applies again (rcusysctl --reset).
 * Returns 0, -ENOENT (@path not held) or a negative errno of the rewrite.
 */
int persist_forget(struct persist *p, const char *path);

/* Stops watching and frees; NULL is fine. */
void persist_close(struct persist *p);

#endif
