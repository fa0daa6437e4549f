/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sysctl tree's internal structures, shared by tree.c (registration,
 * lookup, reads and writes), notify.c (change counter, waiters, callbacks)
 * and audit.c (the ring of write records). Internal to the library.
 */
#ifndef RCUSTRING_LIB_SYSCTL_TREE_H
#define RCUSTRING_LIB_SYSCTL_TREE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <urcu/list.h>
#include <urcu/call-rcu.h>

#include "rcustring/sysctl.h"
#include "entry_lock.h"

struct sysctl_tree {
	/* Serializes register/unregister; lookups take no lock (RCU). */
	pthread_mutex_t lock;
	struct sysctl_entry *root;
	struct cds_list_head headers; /* registered tables, under lock */
	sysctl_log_fn *log;
	void *log_arg;
	uint64_t skip_rng; /* skip list levels (under lock) */
	/* The path index (dir_index.c): every linked node by its path; RCU. */
	struct sysctl_index *index;
	struct sysctl_index *index_old; /* replaced, freed after a grace period */
	size_t index_count;             /* nodes in it (under lock) */
	size_t index_gone;              /* slots marked removed (under lock) */
	/* Owner of every entry (sysctl_tree_set_owner); atomic, 0/0 by default. */
	uid_t owner_uid;
	gid_t owner_gid;
	/* The commit hook (sysctl_tree_set_commit), set before the tree is shared. */
	sysctl_commit_fn *commit;
	void *commit_arg;
	/* The commit listener (sysctl_tree_set_commit_notify), set before the tree is shared. */
	void (*commit_notify)(struct sysctl_tree *, struct sysctl_entry *const *,
			      const uint64_t *, size_t, enum sysctl_origin, void *);
	void *commit_notify_arg;
	/*
	 * The commit sequence (commit.c): odd while a sysctl_commit() stores
	 * its values, so sysctl_snapshot() retries around it; atomic. Written
	 * under commit_lock: commits that share no entry run at once, and two
	 * odd phases side by side would read even while both store.
	 */
	uint64_t commit_seq;
	pthread_mutex_t commit_lock;
	/* The write check (sysctl_tree_set_check), set before the tree is shared. */
	sysctl_check_fn *check;
	void *check_arg;
	/*
	 * Where a new entry's change counter starts (under lock): above every
	 * counter an unregistered entry reached, and the program's base
	 * (sysctl_tree_set_generation_base), so no generation repeats for a path.
	 */
	uint64_t gen_floor;
	/* Write counts (sysctl_tree_get_write_stats), atomic: a write's cost, not a read's. */
	uint64_t writes;
	uint64_t refused[SYSCTL_WRITE_ERRNO_MAX];
	/* Program handlers declared as wrappers (sysctl_tree_wrap_handler), under lock. */
	struct rcs_handler_wrap *wraps;
	size_t nwraps;

	/* Waiters of sysctl_entry_wait() on any entry of this tree. */
	pthread_mutex_t notify_lock;
	pthread_cond_t notify_cond; /* CLOCK_MONOTONIC */
	long waiters;               /* atomic; writers skip the wake-up at 0 */

	/* Audit ring: records[(seq - 1) % SYSCTL_AUDIT_RING]. */
	pthread_mutex_t audit_lock;
	uint64_t audit_seq; /* last seq recorded */
	struct sysctl_audit_record *audit;

	/* Where threads sleep that wait for an entry's locks or a table's drain (entry_lock.h). */
	struct rcs_wait_slot wait_slots[RCS_WAIT_SLOTS];

	/* Test hook (rcs_sysctl_count_probes): rows compared by unregister, under lock. */
	unsigned long *row_probes;
};

/* sysctl_register_table_hooked(): takes the writes, outside the locks. */
struct rcs_table_hook {
	sysctl_write_hook *fn;
	void *arg;
};

/*
 * 64 bytes: rcusysd registers one table per directory of tunables, and
 * the subsystems a few small ones.
 */
struct sysctl_table_header {
	struct sysctl_entry *dir; /* the directory the table lives in (pinned) */
	struct sysctl_tree *tree; /* its entries' (rcs_entry_tree()): the directory may go first */
	uint32_t count;            /* rows (at most INT32_MAX) */
	uint32_t rows_left;        /* not removed by sysctl_unregister_row() (tree->lock) */
	uint32_t refs;             /* atomic: 1 for the registration + 1 per entry */
	uint32_t row_next;         /* after the row removed last (row_map.c; tree->lock) */
	struct cds_list_head node; /* in tree->headers */
	/* NULL, or after entries[] in the header's allocation. */
	const struct rcs_table_hook *hook;
	/* Rows by address, built by the first sysctl_unregister_row() (row_map.c). */
	struct rcs_row_map *row_map;

	/* The rows' entries, allocated with the header (most tables are small);
	 * NULL for a row removed alone. */
	struct sysctl_entry *entries[];
};

/*
 * The tree's index, so that neither a lookup nor an insert walks the
 * children of a directory one by one (the kernel keeps an rb-tree per
 * directory); listings walk the sorted lists, one step per entry:
 *   - one hash table of every node, keyed by its dotted path (the hash in
 *     sysctl_entry.hash), read under RCU: a lookup hashes the whole path
 *     once and loads one slot and the node it names, then checks the
 *     names up the parents (directories, few and hot), as liburcu's
 *     cds_lfht keyed by full paths would; a child of a known directory is
 *     found from the directory's hash. Open addressing, each slot the
 *     node's address tagged with bits of its hash, so that a probe loads
 *     only the node it finds (dir_index.c). Growing it builds a new table
 *     while readers still probe the old one, publishes it, and frees the
 *     old one after a grace period;
 *   - per directory, a skip list over the sorted children list, for
 *     writers only (under tree->lock): finds the insert position in
 *     O(log n), so the children list stays sorted for readers' walks at no
 *     cost to them. Level 0 is the children list itself; a child is on
 *     levels 1..skip_levels too, each level with a probability of 1/4
 *     given the one below (dir_index_skip_levels()), linked through
 *     skip[level - 1] and the directory's skip_head[level - 1].
 *     SYSCTL_SKIP_LEVELS such levels keep a search at O(log n) up to about
 *     4^12 = 16M children.
 */
#define SYSCTL_SKIP_LEVELS 12

struct sysctl_index {
	size_t mask;      /* slots - 1 (a power of two) */
	uintptr_t slot[]; /* tagged nodes (dir_index.c); RCU */
};

/* What only a directory has (allocated with it: rcs_entry_alloc()). */
struct sysctl_dir {
	struct sysctl_tree *tree;
	struct cds_list_head children; /* sorted by name; RCU */
	long pins; /* tables registered right here (under tree->lock) */
	struct sysctl_entry *skip_head[SYSCTL_SKIP_LEVELS]; /* under tree->lock */
};

struct sysctl_entry {
	/*
	 * What a lookup touches, first and in 64 bytes: hash, name (inline
	 * when short), reference, liveness and the parent, so that finding an
	 * entry costs one cache miss for it and one for its slot.
	 * (Aligning entries to a cache line was measured: the padding cost
	 * more than it saved.)
	 */
	uint32_t hash; /* of path, not finished (dir_index.h) */
	uint16_t namelen;
	uint8_t is_dir;
	uint8_t live; /* atomic; 0 once unlinked */
	long refs;    /* atomic: 1 while linked (dropped after a grace period) + users */
	/* Under tree->lock while linked; read under RCU by lookups (atomic). */
	struct sysctl_entry *parent;
	char iname[16]; /* the name when shorter; else after the path (rcs_entry_name()) */

	/* What a walk touches too, in the next line: the list and the path. */
	struct cds_list_head sibling; /* in the parent's children, sorted by name; RCU */
	uint16_t mode;       /* read and write bits (0666), 0555 for a directory */
	uint8_t skip_levels; /* how many levels of the parent's skip list it is in (skip[]) */
	bool locked_reads : 1; /* the handler needs the data lock for reads */
	bool exec : 1;         /* SYSCTL_MODE_EXEC: written by uid 0 alone */
	bool has_desc : 1;     /* a copy of the row's description follows the path */
	/*
	 * The writer lock, the data lock and the callback lock (entry_lock.h):
	 * writes are serialized so that the audit's old/new pair is consistent;
	 * handlers that change their data in place (every one but
	 * proc_rcu_string) write under the data lock exclusive and reads
	 * through the tree hold it shared, so no reader copies the data while
	 * a writer changes it (writers preferred: readers cannot starve them;
	 * proc_rcu_string readers never take it); the callback lock guards
	 * callbacks.
	 */
	uint32_t lockw;
	/*
	 * Calls of the row's handler (and reads of its row) running now: a
	 * call raises it and then checks live; unregister clears live and
	 * then waits for 0 (both seq_cst, so one of them sees the other), like
	 * the kernel's use counts in proc_sysctl.c. Per entry, so removing one
	 * row waits for that row's calls alone.
	 */
	uint32_t inflight;
	/* Copied at registration: explanations need it without the table. */
	int maxlen;
	/*
	 * Small fields share words above: at 100 000 entries every hole
	 * costs. The tree is the header's or the directory's (rcs_entry_tree()).
	 */
	struct sysctl_table_header *header; /* NULL for directories */
	const struct ctl_table *table;      /* NULL for directories */
	/*
	 * Resolved at registration: the row of the handler's kind (its
	 * declared base's for a wrapper), NULL for a program's own handler.
	 * Every question about the handler asks it.
	 */
	const struct rcs_handler_row *kind;
	uint64_t changes; /* atomic */
	/*
	 * Atomic: (number of the latest change told to callbacks << 8) | its
	 * origin, in one word so a callback reads a number and its origin that
	 * belong together. Only grows (rcs_sysctl_stamp).
	 */
	uint64_t stamp;
	const struct sysctl_change *writing; /* the write in progress; under the writer lock */

	/* Change callbacks of this entry (notify.h; under the callback lock). */
	struct sysctl_callback *callbacks;

	struct rcu_head rcu;

	/*
	 * skip[i]: the next child on level i + 1 of the parent's skip list;
	 * allocated for the entry's own levels alone (none for 3 entries in
	 * 4), chosen when it is allocated (dir_index_skip_levels()).
	 */
	struct sysctl_entry *skip[];
};

/*
 * What follows the node in its allocation (rcs_entry_alloc()), found from
 * the node: its skip links, a directory's part, the dotted path, a name
 * too long for iname, the description. No pointers to them are kept: at
 * 100 000 entries each costs 800 kB.
 */
static inline char *rcs_entry_tail(const struct sysctl_entry *e)
{
	return (char *)e + sizeof(*e) + e->skip_levels * sizeof(e->skip[0]);
}

/* A directory's part; NULL for an entry. */
static inline struct sysctl_dir *rcs_entry_dir(const struct sysctl_entry *e)
{
	return e->is_dir ? (struct sysctl_dir *)rcs_entry_tail(e) : NULL;
}

static inline struct sysctl_tree *rcs_entry_tree(const struct sysctl_entry *e)
{
	return e->is_dir ? rcs_entry_dir(e)->tree : e->header->tree;
}

/* The dotted path. */
static inline char *rcs_entry_path(const struct sysctl_entry *e)
{
	return rcs_entry_tail(e) + (e->is_dir ? sizeof(struct sysctl_dir) : 0);
}

static inline const char *rcs_entry_name(const struct sysctl_entry *e)
{
	const char *path;

	if (e->namelen < sizeof(e->iname))
		return e->iname;
	path = rcs_entry_path(e);
	return path + strlen(path) + 1;
}

/* notify.c */
/* Change number @c of @e is published; tell waiters and run callbacks. */
void rcs_sysctl_changed(struct sysctl_entry *e, uint64_t c);
/* Record @origin as the origin of change number @c (before rcs_sysctl_changed). */
void rcs_sysctl_stamp(struct sysctl_entry *e, uint64_t c, enum sysctl_origin origin);
/* @e was unregistered: each callback is called once with SYSCTL_ORIGIN_REMOVED. */
void rcs_sysctl_removed(struct sysctl_entry *e);
void rcs_sysctl_wake_all(struct sysctl_tree *tree);

/* audit.c */
int rcs_audit_init(struct sysctl_tree *tree);
void rcs_audit_fini(struct sysctl_tree *tree);
void rcs_audit_record(struct sysctl_tree *tree, const struct sysctl_caller *who, const char *path,
		      const char *old_value, const char *new_value);
/* Fill @out (SYSCTL_AUDIT_VALUE_MAX bytes) with a value read (@len bytes
 * read into @buf, of SYSCTL_AUDIT_VALUE_MAX + 1), cut with "...". */
void rcs_audit_value_text(char *out, const char *buf, size_t len);

/* tree.c: log "register DIR/NAME: why" through the tree's log function. */
void rcs_sysctl_reg_error(struct sysctl_tree *tree, const char *dir, const char *name,
			  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* lookup.c: look @path up under RCU and take a reference: 0 or -errno. */
int rcs_sysctl_lookup_ref(struct sysctl_tree *tree, const char *path, struct sysctl_entry **out);

/*
 * row_map.c (tree lock held): the index of @row in @h's entries, or -1;
 * adds the rows compared to *@probes. O(1) per call: a map of the
 * rows by address is built on the first call for a table past a few rows.
 */
long rcs_row_find(struct sysctl_table_header *h, const struct ctl_table *row,
		  unsigned long *probes);
/* Frees @h's map (with the header). */
void rcs_row_map_free(struct sysctl_table_header *h);

/*
 * tree.c, for tests: from now on add the rows each sysctl_unregister_row()
 * compares to *@counter (NULL: stop), so a test counts operations instead
 * of timing them. Context: no unregister running.
 */
void rcs_sysctl_count_probes(struct sysctl_tree *tree, unsigned long *counter);

/* entry_io.c: run @e's handler with its in-flight count held */
int rcs_sysctl_call(struct sysctl_entry *e, int write, void *buf, size_t *lenp, off_t *ppos);

#endif
