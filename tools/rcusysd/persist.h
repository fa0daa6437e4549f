/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The store of runtime writes: every acknowledged write of a client is
 * persisted, so a restart comes back with the values clients set, byte
 * for byte. The file (--state, default state.conf) is a journal of
 * checksummed records (journal.h): each commit appends its record, and
 * writers that commit at the same time share one append and one
 * fdatasync (group commit), so a write costs the same with 100 or 100 000
 * kept values. When the journal holds more than about twice what is kept,
 * it is compacted: the kept values written to a temporary file (a random
 * name, O_EXCL), fsync'ed, closed, renamed over the journal, the directory
 * fsync'ed. A record cut by a crash fails its checksum and is cut at the
 * next start; a record damaged before the tail, or a file that cannot be
 * read, stops the start instead (persist_apply()). A sysctl_commit() of
 * several entries is one record, so a crash keeps all of it or none. The
 * commit is the tree's commit hook
 * (sysctl_tree_set_commit()): it runs inside the write, before the write
 * is acknowledged; a write that cannot be made durable (a full disk, an
 * I/O error) is refused with the errno, and so is every write of the same
 * batch, and the tree restores their old values; so is a batch the store
 * has no memory to keep once it is written (ENOMEM). A batch that failed is
 * cut off the journal again (or, when even that fails, the next commit
 * compacts first), so nothing refused comes back at restart.
 *
 * What is kept follows the origin of each write (struct sysctl_change),
 * not the thread that runs it: a client's write (socket, FUSE, CLI) and
 * the store's own values are kept (layer 3 of config.h: they win over the
 * files until rcusysctl --reset, persist_forget()); a settings file's value
 * updates a key already kept and adds none (the files say it again at
 * start and reload); the program's own writes (the defaults a declaration
 * applies) change nothing kept; a value mirrored from etcd takes its key
 * out (etcd is its source of truth).
 *
 * A state file of the sysctl.d text format (rcusysd before 0.2) is
 * migrated once, at start: its values are applied, the journal written in
 * its place, and the old file kept as NAME.migrated-TIME (logged). Only a
 * file that is wholly such text is (no NUL byte, every line an assignment,
 * a comment or blank): a journal whose magic was damaged is damage like
 * any other, not an empty text file.
 *
 * The file's directory gets the run directory's checks (rundir.h): it and
 * every directory above must be root's (or ours) and writable by nobody
 * else; the file must be a regular file of ours, not a symbolic link or a
 * FIFO; and ".NAME.lock" beside it is held (flock) while we run, so two
 * daemons never share one state file.
 *
 * Each start raises the store's epoch (kept in the journal), which
 * persist_epoch() gives: the daemon starts every entry's generation above
 * epoch << SYSCTL_GENERATION_EPOCH_SHIFT, so a generation read before a
 * restart never matches after it.
 */
#ifndef RCUSYSD_PERSIST_H
#define RCUSYSD_PERSIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <rcustring/sysctl.h>

struct persist;

/*
 * The longest state file read or written: 256 MiB. A start reads the file
 * whole, so this bounds its memory; a file longer is refused as damage is
 * (-EFBIG, the start stops, the file left). The store never writes one:
 * an append that would pass it compacts first, and a write that would
 * pass it even then is refused (-EFBIG). It holds four records of the
 * journal's 64 MiB limit, or 100 000 kept values of about 1 KiB each with
 * room for the journal to grow to twice that before it is compacted.
 */
#define PERSIST_FILE_MAX (256u << 20)

/*
 * The system calls of a commit, for tests that make each one fail (each
 * returns as the call does: -1 with errno set). NULL members: the real call.
 */
struct persist_io {
	ssize_t (*pwrite)(void *arg, int fd, const void *buf, size_t len, off_t off);
	int (*fsync)(void *arg, int fd);
	int (*rename)(void *arg, int dirfd, const char *from, const char *to);
	int (*close)(void *arg, int fd);
	int (*truncate)(void *arg, int fd, off_t len);
	ssize_t (*read)(void *arg, int fd, void *buf, size_t len); /* of the file at start */
	void *arg;
};

/*
 * Opens the state file @path: checks and opens its directory (created,
 * mode 0755, if missing), checks the file (it need not exist) and takes
 * its lock. Returns 0 or a negative errno with @why (size @why_size)
 * filled: -EPERM, -ELOOP, -ENOTDIR, -EAGAIN for an unsafe directory or
 * file, -EINVAL for a file that is not regular, -EBUSY when another daemon
 * holds it, other errors as they came.
 * Context: at start, one thread.
 */
int persist_open(struct sysctl_tree *tree, const char *path, struct persist **out, char *why,
		 size_t why_size);

/*
 * persist_open() for rcusysd --check-config: the same checks of the
 * directory and the file, but no lock is taken and nothing is removed;
 * persist_apply() then reads and applies the store and writes nothing (no
 * migration, no compaction). Returns as persist_open() does, less -EBUSY.
 * Context: at start, one thread.
 */
int persist_open_check(struct sysctl_tree *tree, const char *path, struct persist **out,
		       char *why, size_t why_size);

/*
 * Reads the store (migrating a text state file), raises its epoch, applies
 * the kept values to the tree (a value that no longer applies is logged
 * and kept no more) and writes the journal compacted. A torn tail (a
 * crash during an append) is cut, logged. Returns 0 or a negative errno,
 * logged with the file's name: the file cannot be opened or read (-EIO,
 * ...), is longer than PERSIST_FILE_MAX (-EFBIG), a record before the tail
 * is damaged or names a key journal_key_ok() refuses (-EBADMSG), or it is
 * neither a journal nor wholly a text state file (-EBADMSG, the byte and
 * the reason logged); a missing file is 0. On an error nothing is applied or written, persist_watch() and
 * every commit return the same errno, and the caller must not start
 * (starting empty would drop every kept value at the next write).
 * Context: at start, after persist_open() and persist_set_io(), one thread.
 */
int persist_apply(struct persist *p);

/* The epoch persist_apply() raised (0 before it). Context: any thread. */
uint64_t persist_epoch(const struct persist *p);

/*
 * From now on every write of the tree commits to the store (installs the
 * commit hook; again after a reload does nothing): a single write as one
 * record, a sysctl_commit() of several entries as one record holding all
 * of them, refused whole (-EFBIG, logged) when that record would pass
 * the journal's limit of 64 MiB. Call once the store is applied, before
 * the tree is served. Returns 0, or persist_apply()'s errno when it
 * failed (no hook installed).
 * Context: before the tree is shared.
 */
int persist_watch(struct persist *p);

/*
 * Does the store hold a runtime write of @path (dotted, as sysctl_entry_path())?
 * Context: any thread.
 */
bool persist_holds(struct persist *p, const char *path);

/*
 * Writes the kept value of @path back when the entry holds another (a
 * tunable declared again at reload starts at its default, which the store
 * never takes for a runtime write). Returns 0, -ENOENT (not kept, no
 * entry) or the write's negative errno.
 * Context: any thread, not inside the tree's handlers or callbacks.
 */
int persist_restore(struct persist *p, const char *path);

/*
 * Drops @path (NULL: every key) from the store, durably, so the
 * configuration files' value applies again (rcusysctl --reset).
 * Returns 0, -ENOENT (@path not held) or a negative errno of the write;
 * when it fails, the store is as it was.
 * Context: any thread, not inside the tree's handlers or callbacks.
 */
int persist_forget(struct persist *p, const char *path);

/*
 * Commits made durable so far: fsyncs of the journal, batches, values
 * written (each entry of a commit counts), compactions;
 * batches refused (the append or fdatasync failed, or they could not be
 * taken into memory: nothing of them kept);
 * values the journal holds now; when the last batch became durable
 * (CLOCK_REALTIME, 0 if none); and each batch's append-and-sync time,
 * latency[i] counting those at most persist_latency_le[i] seconds
 * (cumulative, as Prometheus' histogram buckets; the last is +Inf).
 */
#define PERSIST_LATENCY_BUCKETS 9
extern const double persist_latency_le[PERSIST_LATENCY_BUCKETS];
struct persist_stats {
	uint64_t syncs, batches, records, compactions;
	uint64_t failures, kept;
	struct timespec last_commit;
	uint64_t latency[PERSIST_LATENCY_BUCKETS];
	uint64_t latency_sum_ns;
};

/* Context: any thread. */
void persist_get_stats(struct persist *p, struct persist_stats *out);

/*
 * The rate limit of the lines of writes that cannot be persisted (a full
 * disk refuses every write: each would log a line), shared with the
 * daemon's other refusal lines (policy.h): per uid for a client's write,
 * per origin otherwise, and per errno, LOG_LIMIT_BURST lines a window,
 * then "N similar messages suppressed". Until it is called (and for
 * @l NULL) the store uses a limit of its own, flushed at persist_close().
 * @p may be NULL (no store).
 * Context: before the tree is served, one thread.
 */
struct log_limit;
void persist_set_log_limit(struct persist *p, struct log_limit *l);

/*
 * A limit of the state file other than PERSIST_FILE_MAX (tests, which
 * reach a small one). Context: before persist_apply().
 */
void persist_set_file_max(struct persist *p, size_t max);

/* Replaces the commit's system calls (tests). Context: before persist_apply(). */
void persist_set_io(struct persist *p, const struct persist_io *io);

/* Removes the commit hook, releases the lock and frees; NULL is fine. */
void persist_close(struct persist *p);

#endif
