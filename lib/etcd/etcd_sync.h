/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Mirror a prefix of etcd into a sysctl tree, etcd being the source of
 * truth for a fleet of hosts (rcustring-etcd(7)).
 *
 * A sync reads the whole prefix at one revision, applies it, then watches
 * the prefix from that revision + 1. The values of one revision (one etcd
 * transaction) are applied as one commit (sysctl_commit_owner()): a
 * sysctl_snapshot() reader never sees half of a revision (rcustring-etcd(7)
 * says what a refused value does). Each key maps to a tree path (the key
 * less the prefix: "/rcustring/web/kernel/core_pattern" with prefix
 * "/rcustring/web/" is "kernel/core_pattern") and each value is written
 * through the entry's handler as a local write would be, with the same
 * validation and permission check. A value the handler refuses changes
 * nothing; it is logged, counted and reported into etcd under
 * STATUS_PREFIX + the key less the prefix, by a thread of its own that
 * writes such reports in batches. All network work runs on those two
 * threads, or, for a write-through, in the writer's thread with none of the
 * entry's locks held: readers of the tree do not wait for etcd (the
 * writer does; rcustring-etcd(7) says who else may).
 *
 * Replies are hostile input: every field is type-checked (etcd_json.c); a
 * reply that is not etcd's is logged, and the watch reconnects with
 * backoff. The watch asks for progress messages and has an idle deadline
 * (see idle_ms); it requires a leader; hosts start on a random endpoint and
 * fail over to the next on any trouble.
 */
#ifndef RCUSTRING_ETCD_SYNC_H
#define RCUSTRING_ETCD_SYNC_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "rcustring/sysctl.h"

struct etcd_sync;

struct etcd_sync_opts {
	const char *endpoints;     /* "http://127.0.0.1:2379[,URL...]" (required) */
	const char *prefix;        /* "/rcustring/web/" (required; a final '/' is added if missing) */
	const char *host;          /* name in status keys; NULL: gethostname() */
	const char *status_prefix; /* NULL: "/rcustring-status/SERVICE/HOST/", SERVICE being
				    * the last component of @prefix */
	const char *cacert, *cert, *key; /* TLS files passed to libcurl (NULL: none / system CA) */
	const char *userpwd; /* "user:password" (etcd_conn_set_userpwd()); NULL: none, or the URL's */
	const struct sysctl_caller *caller; /* whose permissions apply; NULL: uid 0 of this pid */
	int backoff_min_ms, backoff_max_ms; /* reconnect delays (0: 100 and 5000) */
	int idle_ms; /* a watch quiet this long has its member checked (0: 5000) */
	int write_through; /* entries of etcd_sync_own_table(): 0 refuses local writes
			    * (-EROFS), 1 turns them into puts to etcd */
	int key_by_key; /* tests only: write a revision's values one by one, not as one
			 * commit, so that a test can see readers catch half of one */
	sysctl_log_fn *log; /* messages (NULL: stderr); never given a secret or a value */
	void *log_arg;
};

struct etcd_sync_status {
	int connected;        /* a watch stream is established and its member passed the
			       * last idle check (a member frozen since is seen within
			       * idle_ms plus the check's time) */
	int64_t revision;     /* etcd revision the tree holds everything up to */
	int64_t etcd_revision; /* newest revision of the prefix etcd reported (by the
				* watch, or by the idle check, which asks another
				* member when the watched one fails it); writes
				* outside the prefix do not count */
	uint64_t applied;     /* values written into the tree */
	uint64_t refused;     /* values a handler (or the key mapping) refused */
	uint64_t reconnects;  /* watch streams lost and started again */
	uint64_t resyncs;     /* whole-prefix reads after a compaction */
	uint64_t keys;        /* keys of the prefix whose state this host keeps (a key
			       * deleted from etcd is freed once its status key is) */
	struct timespec last_applied; /* CLOCK_REALTIME of the last write (0 if none) */
	char last_error[256]; /* last connection or etcd error, "" if none */
	char endpoint[200];   /* the member watched (no user:password@) */
};

/**
 * etcd_sync_start - start mirroring @opts->prefix into @tree
 *
 * Returns at once; the first read and every reconnect happen on the sync's
 * thread, so a host starts (with its defaults) while etcd is down. @tree
 * must outlive the sync.
 * Return: 0, -EINVAL (missing endpoints or prefix, bad URL), -ENOMEM, or
 * the error of pthread_create.
 */
int etcd_sync_start(struct sysctl_tree *tree, const struct etcd_sync_opts *opts,
		    struct etcd_sync **out);

/**
 * etcd_sync_new, etcd_sync_run - etcd_sync_start() in two steps, so that
 * tables can be handed to etcd_sync_own_table() before the first read
 * (which would otherwise refuse keys of entries not registered yet).
 * After a failed etcd_sync_run(), etcd_sync_stop() frees @s.
 */
int etcd_sync_new(struct sysctl_tree *tree, const struct etcd_sync_opts *opts,
		  struct etcd_sync **out);
int etcd_sync_run(struct etcd_sync *s);

/** etcd_sync_status - a copy of the counters; any thread, never waits for etcd */
void etcd_sync_status(struct etcd_sync *s, struct etcd_sync_status *st);

/**
 * etcd_sync_register_status - publish the status as read-only entries
 * @dir: directory in the sync's tree ("etcd" gives etcd.connected,
 *       etcd.revision, etcd.lag, etcd.applied, etcd.refused, etcd.reconnects,
 *       etcd.resyncs, etcd.keys, etcd.last_error, etcd.endpoint)
 * Unregister with sysctl_unregister_table() before etcd_sync_stop().
 */
int etcd_sync_register_status(struct etcd_sync *s, const char *dir,
			      struct sysctl_table_header **out);

/**
 * etcd_sync_own_table - register @table under @dir with etcd as its owner
 *
 * Like sysctl_register_table() (same checks, same errors; and -EINVAL for
 * a row whose handler the library does not describe, sysctl_handler_info(),
 * as its values could not be checked), but a local write to one of these
 * entries (control socket, FUSE, sysctl_set) is not applied directly
 * (sysctl_register_table_hooked()). Read-only mirror: it fails with -EROFS.
 * Write-through: the value is checked by the entry's handler on a scratch
 * copy (a refused value fails locally and reaches nobody), then put to etcd
 * with a compare on the key's mod_revision as this host last applied it (0
 * after a delete: the key is created), outside the entry's locks; the tree
 * changes when the watch delivers the put, so every host applies the same
 * sequence, and one accepted write is one change. A compare that fails
 * (etcd's key moved past what this host applied) gives -EAGAIN; a
 * conditional write (sysctl_entry_write_if) whose generation moved gives
 * -ESTALE; etcd unreachable gives -ECONNREFUSED or -ETIMEDOUT. Plain writes
 * compare with what the host applied, not with what the writer read: a
 * read-modify-write must use the conditional write. Writes must start at
 * position 0 (-EINVAL otherwise). Reads are the entries' own. @table must
 * outlive the registration; unregister with sysctl_unregister_table()
 * before etcd_sync_stop().
 */
int etcd_sync_own_table(struct etcd_sync *s, const char *dir, struct ctl_table *table,
			size_t count, struct sysctl_table_header **out);

/**
 * etcd_sync_holds - does the entry at @path hold a value from etcd?
 *
 * True once a value of its key was applied (or found already there); a
 * later refused value or a delete in etcd leaves the entry with that value,
 * so it still counts. Lets a caller that writes the tree from other sources (a
 * settings file read again) leave etcd's values alone. Any thread.
 */
bool etcd_sync_holds(struct etcd_sync *s, const char *path);

/**
 * etcd_sync_applying_revision - the etcd mod_revision of the value the
 * mirror is writing into the tree right now, 0 when it writes none
 *
 * For a policy that judges the mirror's writes (origin
 * SYSCTL_ORIGIN_MIRROR) and logs what it refused or let through: called
 * from within that write (a permission check or a change callback run by
 * sysctl_set_owner()), it names the etcd change being applied. Any thread;
 * from any other context the answer is only a hint.
 */
int64_t etcd_sync_applying_revision(struct etcd_sync *s);

/**
 * etcd_sync_rescan - read the whole prefix again soon (within about a
 * second), applying what differs: after a reload declared new entries, the
 * values refused for want of them are applied. Any thread.
 */
void etcd_sync_rescan(struct etcd_sync *s);

/**
 * etcd_sync_stop - end the watch, join the threads, free @s (NULL: no-op)
 *
 * Status reports still queued get one more try, within one second in all
 * (rcustring-etcd(7)); a request already in flight ends within its timeout.
 */
void etcd_sync_stop(struct etcd_sync *s);

#endif /* RCUSTRING_ETCD_SYNC_H */
