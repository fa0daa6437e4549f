/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * FUSE front end: serves a sysctl tree as files, the way /proc/sys does, so
 * cat, echo, poll() and the procps sysctl tool work on it (bind-mount it
 * over /proc/sys in a private mount namespace for procps).
 *
 * Never bind the mount over /proc/sys in the serving process's own mount
 * namespace: only in the readers' (e.g. `unshare -m --propagation private
 * sh -c 'mount --bind MNT /proc/sys; sysctl -a'`). The serving process
 * reads /proc/sys itself without asking: glibc's free() opens
 * /proc/sys/vm/overcommit_memory (once, when it first shrinks a thread's
 * heap) while holding that heap's arena lock. With the mount bound there,
 * that open() becomes a request to this same process, and the thread
 * serving it can block on the held arena lock: every request then waits
 * forever. Nothing here can stop a library of the process from reading
 * /proc/sys, so the rule is the caller's.
 *
 * Files: mode bits are the entries' modes, checked for the caller like
 * /proc/sys (root is held to the owner bits); size 0 and direct I/O; a
 * value is parsed and committed inside write(), so the writer gets the
 * error; poll() reports POLLERR|POLLPRI once the entry changed since the
 * file was opened or last polled.
 *
 * Each open file reads exactly one value: a read at offset 0 (the first
 * read, or one after seeking back to 0) copies the whole value, and reads
 * at later offsets are served from that copy, so a reader reading in
 * several read() calls never joins the head of one value to the tail of
 * the next (/proc/sys can). A first read past offset 0 takes the copy too.
 * Values longer than 16 MiB read as -EFBIG.
 * Every handle counts against a handle budget (sysctl_budget.h), per uid:
 * an open file, an open directory, and a polled file (one more). uids other
 * than 0 share SYSCTL_FUSE_MAX_OPEN - SYSCTL_FUSE_ROOT_RESERVE units, each
 * at most SYSCTL_FUSE_MAX_OPEN_PER_UID; past its own share open() and
 * opendir() fail with EMFILE, past the users' common share with ENFILE.
 * Root may use every unit. An open file holds a copy of the value it read,
 * sized to the value; an open directory a compact copy of its names (taken
 * at opendir, again at a rewind), about 8 bytes and the name per child;
 * a copy bigger than SYSCTL_BUDGET_UNIT_BYTES costs one unit per
 * SYSCTL_BUDGET_UNIT_BYTES, so a read or rewind past the share fails with
 * EMFILE or ENFILE too; a first poll() past the share gets POLLERR at once
 * (the kernel's answer to a failed poll request) and no later wake-up.
 * Copies are freed at close. The mount has a budget
 * of its own with these defaults; a program serving the same users on other
 * front ends gives it theirs (sysctl_fuse_set_budget()).
 *
 * Names: a FUSE path is looked up with '/' as separator, so a '.' is part
 * of a name at any depth ("/eth0.200/mtu", "/app.d/sub/x"). Names come
 * only from registered tables and fail as on /proc/sys: creating one
 * (open with O_CREAT, mkdir, mknod, symlink, link) is ENOENT, unlink and
 * rmdir EACCES, rename ENOENT (over an existing name EACCES), chmod and
 * chown EPERM. Setting times (touch) changes nothing and answers as there:
 * root and the tree's owner any time, others "now" on what they may write
 * (else EACCES), a time given EPERM.
 *
 * Caching: values never (direct I/O); names and attributes for up to 1 s
 * (entry and attribute timeouts), so a table unregistered or registered
 * again with another mode may show its old names and modes to stat() for
 * that long, while open() always asks the tree. Listings are READDIRPLUS:
 * each name comes with its attributes, so procps' sysctl -a costs four
 * requests per entry (OPEN, READ, READ at end of file, RELEASE), and close()
 * sends no FLUSH.
 */
#ifndef RCUSTRING_SYSCTL_FUSE_H
#define RCUSTRING_SYSCTL_FUSE_H

#include <stdint.h>

#include "rcustring/sysctl.h"
#include "rcustring/sysctl_budget.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sysctl_fuse;

/* A mount's own budget (sysctl_budget.h's defaults). */
#define SYSCTL_FUSE_MAX_OPEN SYSCTL_BUDGET_TOTAL
#define SYSCTL_FUSE_ROOT_RESERVE SYSCTL_BUDGET_ROOT_RESERVE
#define SYSCTL_FUSE_MAX_OPEN_PER_UID SYSCTL_BUDGET_PER_UID

/**
 * sysctl_fuse_mount - mount @tree at @mountpoint (an existing directory)
 *
 * Mounted with allow_other when run as root, so other users see the tree
 * with the entries' permissions. Return: 0 or a negative errno: -ENODEV
 * when /dev/fuse is missing or not usable, -ENOENT, -ENOTDIR or -EACCES
 * for the mountpoint, -ENOMEM, -EINVAL for options libfuse refuses, the
 * mount's own error (-EPERM when mounting is not allowed, ...), -EIO
 * when libfuse failed without one.
 */
RCUSTRING_API int sysctl_fuse_mount(struct sysctl_tree *tree, const char *mountpoint,
				    struct sysctl_fuse **out);

/**
 * sysctl_fuse_set_budget - count the handles of @fs against @budget
 *
 * Instead of the mount's own (NULL: back to its own). Give the same
 * budget to every front end serving the same users (the control socket's
 * sysctl_socket_options.budget), so that what a uid holds on one counts on
 * all. @budget must outlive the mount (free it after sysctl_fuse_unmount()).
 * Context: before sysctl_fuse_loop(), from the thread that mounted.
 * Return: 0, -EINVAL for a NULL @fs, -EBUSY once a file or directory is open.
 */
RCUSTRING_API int sysctl_fuse_set_budget(struct sysctl_fuse *fs, struct sysctl_budget *budget);

/**
 * sysctl_fuse_loop - serve requests on several threads until
 * sysctl_fuse_exit(), SIGTERM, SIGINT or SIGHUP, or an external unmount
 * Return: 0 on a clean stop, a negative errno otherwise.
 */
RCUSTRING_API int sysctl_fuse_loop(struct sysctl_fuse *fs);

/**
 * sysctl_fuse_exit - make sysctl_fuse_loop() return
 *
 * Call from a thread other than the loop's, not from a signal handler (it
 * sends the mount one request to wake a worker).
 */
RCUSTRING_API void sysctl_fuse_exit(struct sysctl_fuse *fs);

/**
 * sysctl_fuse_unmount - unmount and free; call after the loop returned
 *
 * Files still open are closed here (the kernel will not release them any
 * more): their change callbacks are removed, so later writes of the tree
 * no longer reach this file system.
 * Context: not inside a read-side section (rcustring_read_lock()): it
 * waits for a grace period before freeing what other mounts' request
 * counting may still walk past.
 */
RCUSTRING_API void sysctl_fuse_unmount(struct sysctl_fuse *fs);

/*
 * Requests the kernel has sent a mount since it was mounted, counted as
 * they are read from /dev/fuse: every kind, including those libfuse
 * answers by itself. A benchmark's yardstick (each request is a round trip
 * to this process), steady where timings are not.
 */
struct sysctl_fuse_stats {
	uint64_t requests; /* all requests, of the kinds below and any other */
	uint64_t lookup, getattr, access;
	uint64_t open, read, write, flush, release;
	uint64_t opendir, readdir, readdirplus, releasedir;
	uint64_t forget; /* FORGET and BATCH_FORGET requests */
	uint64_t poll;
};

/**
 * sysctl_fuse_get_stats - the request counts of @fs so far
 * Context: any thread, while @fs is mounted.
 * Return: 0, or -EINVAL for a NULL argument.
 */
RCUSTRING_API int sysctl_fuse_get_stats(struct sysctl_fuse *fs, struct sysctl_fuse_stats *st);

#ifdef __cplusplus
}
#endif

#endif
