/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sysctl tree: ctl_table entries registered under paths, read and
 * written through the kernel's handlers, with change notification and an
 * audit ring. Front ends (FUSE, control socket, CLI) sit on top of this
 * header only.
 *
 * Paths: "kernel.core_pattern" or "kernel/core_pattern". systemd's rule for
 * sysctl.d decides: when the first separator is '/', slashes separate and
 * '.' is part of a name ("net/ipv4/conf/eth0.200/forwarding"); when it is
 * '.', dots separate and '/' stands for a '.' inside a name
 * ("net.ipv4.conf.eth0/200.forwarding", as procps prints it).
 *
 * Errors are negative errno values. Every function may be called from any
 * thread without registration.
 * Size: the tree's whole public API, one header, as the kernel's linux/sysctl.h.
 */
#ifndef RCUSTRING_SYSCTL_H
#define RCUSTRING_SYSCTL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "rcustring/rcustring.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ctl_table;

/*
 * The kernel's handler contract. Read (write == 0): fill @buffer with at
 * most *@lenp bytes of the value's text starting at *@ppos, set *@lenp to
 * the bytes produced and advance *@ppos; *@lenp == 0 means end of file.
 * Write: parse *@lenp bytes of @buffer at *@ppos, set *@lenp to the bytes
 * consumed and advance *@ppos. Return 0 or a negative errno.
 */
typedef int proc_handler(const struct ctl_table *table, int write, void *buffer, size_t *lenp,
			 off_t *ppos);

struct ctl_table {
	const char *procname; /* entry name, no '/' or '.' separators */
	void *data;           /* what the handler reads and writes (see each handler) */
	int maxlen;           /* bytes at data (strings: capacity with NUL) */
	mode_t mode;          /* 0644, 0444, 0200, ... */
	proc_handler *proc_handler;
	void *extra1; /* min for *_minmax handlers (pointer to the element type; NULL: none) */
	void *extra2; /* max (NULL: none) */
	const char *desc; /* one-line description */
};

/*
 * A flag OR'ed into struct ctl_table's mode: root executes what the value
 * names (a helper's path, a core pipe). Such an entry is written by uid 0
 * alone: the tree's owner (sysctl_tree_set_owner()) is held to its "other"
 * bits, and registration refuses a mode that lets group or others write.
 * sysctl_entry_mode() shows the permission bits only.
 */
#define SYSCTL_MODE_EXEC ((mode_t)0x10000000)

/*
 * Handlers (documented in sysctl_handlers(7)).
 * proc_dostring:    data is a char[maxlen], changed in place. A tree
 *                   serializes its own readers with its writers; the
 *                   program's direct readers of data need its own lock.
 * proc_rcu_string:  data is a struct rcustring *; maxlen must equal its
 *                   capacity. Lock-free readers, all-or-nothing writes.
 * proc_dointvec*, proc_douintvec*, proc_doulongvec_*, proc_dobool,
 * proc_dou8vec_minmax:
 *                   data is an array of maxlen / sizeof(element) elements.
 *                   A write stores all of them or none; minmax bounds
 *                   (extra1/extra2, either may be NULL) are read once.
 *                   proc_dou8vec_minmax's bounds are unsigned int, as the
 *                   kernel's.
 * proc_dointvec_jiffies, _userhz_jiffies, _ms_jiffies,
 * proc_doulongvec_ms_jiffies_minmax:
 *                   time in the text (seconds, 1/SYSCTL_USER_HZ seconds,
 *                   milliseconds), jiffies of 1/SYSCTL_HZ second stored.
 * proc_do_large_bitmap:
 *                   data is an unsigned long ** (the bitmap's pointer),
 *                   maxlen the number of bits; text "1-3,5".
 */
RCUSTRING_API proc_handler proc_dostring;
RCUSTRING_API proc_handler proc_rcu_string;
RCUSTRING_API proc_handler proc_dointvec;
RCUSTRING_API proc_handler proc_dointvec_minmax;
RCUSTRING_API proc_handler proc_douintvec;
RCUSTRING_API proc_handler proc_douintvec_minmax;
RCUSTRING_API proc_handler proc_doulongvec_minmax;
RCUSTRING_API proc_handler proc_dobool;
RCUSTRING_API proc_handler proc_dou8vec_minmax;
RCUSTRING_API proc_handler proc_dointvec_jiffies;
RCUSTRING_API proc_handler proc_dointvec_userhz_jiffies;
RCUSTRING_API proc_handler proc_dointvec_ms_jiffies;
RCUSTRING_API proc_handler proc_doulongvec_ms_jiffies_minmax;
RCUSTRING_API proc_handler proc_do_large_bitmap;

/*
 * The tick the jiffies handlers convert to: the kernel's HZ and USER_HZ as
 * Debian's x86-64 kernels build them (CONFIG_HZ=250; USER_HZ is 100 on
 * every architecture Linux supports). Fixed, so that a value stored by one
 * build reads the same in another.
 */
#define SYSCTL_HZ 250
#define SYSCTL_USER_HZ 100

/* Flags of struct sysctl_handler_info. */
#define SYSCTL_HF_STRING 0x01    /* text value; maxlen is the capacity with the NUL */
#define SYSCTL_HF_RCU 0x02       /* data is a struct rcustring *, read without locks */
#define SYSCTL_HF_MINMAX 0x04    /* extra1 / extra2 point to bounds (bound_size bytes) */
#define SYSCTL_HF_ONE_BOUND 0x08 /* registration needs at least one of them */
#define SYSCTL_HF_SINGLE 0x10    /* maxlen must be exactly one element */
#define SYSCTL_HF_SIGNED 0x20    /* a '-' sign is accepted */
#define SYSCTL_HF_BITMAP 0x40    /* data is unsigned long **; maxlen counts bits */

/* What the library knows about one handler kind. */
struct sysctl_handler_info {
	proc_handler *handler;
	const char *name;  /* "proc_dou8vec_minmax" */
	const char *type;  /* element keyword: "string", "int", "uint", "u8", "ulong", "bool",
			    * "bitmap" */
	const char *unit;  /* what the text counts: "" (the stored value), "s", "ms",
			    * "1/100 s" (1/SYSCTL_USER_HZ) */
	size_t elem_size;  /* bytes of one element at data; 0 for strings and bitmaps */
	size_t bound_size; /* bytes at extra1 / extra2; 0 when the handler reads none */
	unsigned int flags; /* SYSCTL_HF_* */
};

/**
 * sysctl_handler_info - describe one of the handlers above
 *
 * The same table drives the tree's registration checks and
 * sysctl_entry_explain(), so a program declaring entries (a tunables file,
 * say) can check a row the way registration will.
 * Context: any thread.
 * Return: the description (static storage), or NULL for a handler the
 * library does not know (a program's own handler: registration then checks
 * only the name, mode and handler).
 */
RCUSTRING_API const struct sysctl_handler_info *sysctl_handler_info(proc_handler *handler);

/**
 * sysctl_handler_info_at - the @index-th handler kind the library knows
 *
 * For a program mapping its own names to handlers (a tunables file's
 * "u8" or "int ms", say): walk from 0 until NULL and match type, unit and
 * flags.
 * Context: any thread.
 * Return: the description (static storage), or NULL past the last one.
 */
RCUSTRING_API const struct sysctl_handler_info *sysctl_handler_info_at(size_t index);

struct sysctl_tree;        /* a tree of tunables */
struct sysctl_table_header; /* one registered table */
struct sysctl_entry;        /* a file (an entry) or a directory in a tree */

/*
 * Where a write comes from. It travels with the change: to the commit hook
 * (sysctl_tree_set_commit()), to the handler (sysctl_entry_writing()) and
 * to change callbacks (struct sysctl_change), whatever thread runs them.
 */
enum sysctl_origin {
	SYSCTL_ORIGIN_CLIENT = 0, /* a front end's client: socket, FUSE (sysctl_set() with a caller) */
	SYSCTL_ORIGIN_PROGRAM,    /* the program itself (no caller; sysctl_entry_notify()) */
	SYSCTL_ORIGIN_FILE,       /* a settings file applied (sysctl.d, rcusysd -c) */
	SYSCTL_ORIGIN_STATE,      /* a state file restored */
	SYSCTL_ORIGIN_MIRROR,     /* a value mirrored from elsewhere (etcd) */
	SYSCTL_ORIGIN_REMOVED,    /* no write: the entry was unregistered (callbacks only) */
};

/* Who asks; used for permission checks and the audit ring. */
struct sysctl_caller {
	uid_t uid;
	gid_t gid;
	pid_t pid;
};

/**
 * sysctl_tree_new - an empty tree
 * Context: any thread.
 * Return: the tree, or NULL with errno ENOMEM or the error of a failed
 * pthread_*_init (EAGAIN, ...); nothing is left allocated then.
 */
RCUSTRING_API struct sysctl_tree *sysctl_tree_new(void);

/**
 * sysctl_tree_free - unregister everything and free the tree
 *
 * No other call on @tree may be running or start. References still held on
 * entries must have been put.
 */
RCUSTRING_API void sysctl_tree_free(struct sysctl_tree *tree);

/**
 * sysctl_register_table - register @count entries under directory @path
 * @path: "" for the root, "kernel", "fs/ocfs2/nm", "fs.ocfs2.nm"
 * @table: entries; the array and what it points to must outlive the
 *         registration
 * @out: receives the handle to unregister with
 *
 * Checked like the kernel's sysctl_check_table: bad or duplicate names
 * (also against entries already registered), missing handler, string
 * handler with maxlen 0, proc_rcu_string whose maxlen differs from its
 * variable's, mode bits beyond 0666 (read and write bits only), minmax
 * handler with neither bound (proc_dou8vec_minmax and
 * proc_doulongvec_ms_jiffies_minmax excepted: there NULL means 0..255 or
 * unchecked), maxlen not a multiple of the element (exactly one for the
 * uint, u8 and bool handlers), bitmap without data or bits. One NULL bound
 * is allowed and leaves that side unchecked (tcp_rmem has only a minimum).
 * Context: any thread, not inside a handler or callback of this tree nor
 * inside an RCU read-side section of the caller's (growing a directory's
 * index may wait for a grace period).
 * Return: 0, -EINVAL (bad table), -EEXIST (name taken), -ENOMEM. On error
 * nothing is registered; a message naming the entry is logged through
 * the tree's log function.
 */
RCUSTRING_API int sysctl_register_table(struct sysctl_tree *tree, const char *path,
					struct ctl_table *table, size_t count,
					struct sysctl_table_header **out);

/**
 * sysctl_register_rows - sysctl_register_table() for rows that are not one
 * array: @rows holds @count pointers to rows that live where the program
 * keeps them (one in each of its objects, say); each row and what it
 * points to must outlive the row's registration.
 *
 * One table header serves every row, so a program of many tunables in a
 * few directories pays for one header per directory, not per tunable;
 * sysctl_unregister_row() removes one row. Checked and refused as
 * sysctl_register_table() (a NULL pointer in @rows: -EINVAL).
 */
RCUSTRING_API int sysctl_register_rows(struct sysctl_tree *tree, const char *path,
				       struct ctl_table *const rows[], size_t count,
				       struct sysctl_table_header **out);

/**
 * sysctl_tree_wrap_handler - declare @wrapper, a program's handler, a
 * wrapper of the library's handler @base in @tree
 *
 * A wrapper checks or logs and calls @base on the same table, so its
 * data is @base's. Declared, rows of @tree that use it are @base's kind:
 * the same registration checks, lock-free reads for proc_rcu_string,
 * sysctl_entry_check() and sysctl_entry_explain(). Undeclared, a
 * program's handler is opaque: reads through the tree take the entry's
 * read lock and its values cannot be checked. Rows registered before the
 * declaration keep what they were registered as.
 * Context: any thread, not inside a handler or callback of @tree.
 * Return: 0 (also when declared again with the same base), -EINVAL
 * (@base not a library handler, or @wrapper is one), -EEXIST (declared
 * with another base), -ENOMEM.
 */
RCUSTRING_API int sysctl_tree_wrap_handler(struct sysctl_tree *tree, proc_handler *wrapper,
					   proc_handler *base);

/**
 * sysctl_tree_handler_info - sysctl_handler_info() that also knows @tree's
 * declared wrappers (sysctl_tree_wrap_handler())
 * Context: any thread, not inside a handler or callback of @tree.
 * Return: the description of @handler, or of its base for a declared
 * wrapper (->handler is the base); NULL for a program's own handler.
 * A NULL @tree asks sysctl_handler_info().
 */
RCUSTRING_API const struct sysctl_handler_info *sysctl_tree_handler_info(struct sysctl_tree *tree,
									 proc_handler *handler);

/**
 * sysctl_write_hook - takes the writes of a hooked table's entries
 * @arg: as given to sysctl_register_table_hooked()
 * @e: the entry written (a reference is held for the call)
 * @who: the writer (NULL: the program itself)
 * @buf, @len: the value, written at position 0
 * @expected: NULL, or the change counter the entry must still have
 *            (sysctl_entry_write_if()); the hook checks it
 *
 * Called instead of the handler, with none of the entry's locks held, so
 * that it may wait (a round trip to the table's owner, etcd say): readers
 * and the owner's writes go on meanwhile. The entry does not change and no
 * change is counted; the owner applies the value later with
 * sysctl_set_owner(). Its return is the write's (0 or a negative errno).
 */
typedef int sysctl_write_hook(void *arg, struct sysctl_entry *e, const struct sysctl_caller *who,
			      const char *buf, size_t len, const uint64_t *expected);

/**
 * sysctl_register_table_hooked - sysctl_register_table() for a table whose
 * values another party owns: every write through the tree (front ends,
 * sysctl_set(), sysctl_entry_write()) goes to @hook instead of the
 * handler, except the owner's sysctl_set_owner(). Reads are the handlers'
 * own, lock-free for proc_rcu_string. A write must start at position 0
 * (-EINVAL otherwise). Return: as sysctl_register_table(), or -EINVAL for
 * a NULL @hook.
 */
RCUSTRING_API int sysctl_register_table_hooked(struct sysctl_tree *tree, const char *path,
					       struct ctl_table *table, size_t count,
					       sysctl_write_hook *hook, void *arg,
					       struct sysctl_table_header **out);

/**
 * sysctl_entry_check - would @e's handler take @value? Runs the handler's
 * write on a scratch copy of the entry's data (copied under the entry's
 * read lock where it has one); the entry is not changed.
 * Context: any thread, no lock of the entry held.
 * Return: 0, the handler's error, or -EOPNOTSUPP for a handler the tree
 * does not describe (sysctl_tree_handler_info()): its data cannot be copied.
 */
RCUSTRING_API int sysctl_entry_check(struct sysctl_entry *e, const char *value, size_t len);

/**
 * sysctl_unregister_table - remove a table's entries
 *
 * Concurrent lookups never see a freed node. Waits until no handler of the
 * table runs any more, so the caller may free the table's data on return.
 * Then calls each change callback of its entries once with
 * SYSCTL_ORIGIN_REMOVED, waiting for a call of it in progress.
 * Context: not from a handler of the table, nor from a change callback of
 * one of its entries (either would wait for itself).
 */
RCUSTRING_API void sysctl_unregister_table(struct sysctl_table_header *header);

/**
 * sysctl_unregister_row - remove the entry of @row, one row of @header
 * (the pointer sysctl_register_rows() was given, or &table[i])
 *
 * As sysctl_unregister_table() for that entry alone: it waits for the
 * calls of that entry's handler, not of the other rows, which stay.
 * Removing the last row that remains unregisters the table: @header is
 * gone then.
 * Context: as sysctl_unregister_table(); calls for one header are made one
 * at a time, never beside sysctl_unregister_table() of it.
 * Return: 0, -ENOENT when @row is not a remaining row of @header, -EINVAL
 * for NULL.
 */
RCUSTRING_API int sysctl_unregister_row(struct sysctl_table_header *header,
					const struct ctl_table *row);

/**
 * sysctl_tree_set_owner - the owner of every entry of @tree
 *
 * Like the owner the kernel gives a network namespace's sysctls (its user
 * namespace's root): a caller with uid @uid is held to an entry's owner
 * bits, as uid 0 is, and a caller with gid @gid to the group bits, as gid 0
 * is; uid 0 and gid 0 keep their access. For a daemon run as a service
 * user: sysctl_tree_set_owner(tree, getuid(), getgid()) lets that user write
 * the 0644 entries it serves, as root could. The default, 0 and 0, is root.
 * Applies to checks from now on (files already open stay open); the FUSE
 * front end shows it as every file's and directory's owner.
 * Context: any thread; a check meanwhile may see the old uid with the new
 * gid.
 * Return: 0, or -EINVAL for a NULL tree or a uid or gid of -1.
 */
RCUSTRING_API int sysctl_tree_set_owner(struct sysctl_tree *tree, uid_t uid, gid_t gid);

/** sysctl_tree_get_owner - the owner set by sysctl_tree_set_owner() (0, 0 by default) */
RCUSTRING_API void sysctl_tree_get_owner(const struct sysctl_tree *tree, uid_t *uid, gid_t *gid);

/** Log hook for registration errors; default writes to stderr. */
typedef void sysctl_log_fn(void *arg, const char *message);
RCUSTRING_API void sysctl_tree_set_log(struct sysctl_tree *tree, sysctl_log_fn *fn, void *arg);

/**
 * sysctl_lookup - find an entry or a directory and take a reference
 * Return: the entry (release with sysctl_entry_put()), or NULL with errno
 * ENOENT or EINVAL (malformed path).
 */
RCUSTRING_API struct sysctl_entry *sysctl_lookup(struct sysctl_tree *tree, const char *path);

/** sysctl_entry_put - drop a reference from sysctl_lookup() or a walk */
RCUSTRING_API void sysctl_entry_put(struct sysctl_entry *e);

/** sysctl_entry_get - take another reference */
RCUSTRING_API void sysctl_entry_get(struct sysctl_entry *e);

RCUSTRING_API int sysctl_entry_is_dir(const struct sysctl_entry *e);
RCUSTRING_API const char *sysctl_entry_name(const struct sysctl_entry *e);
/** Dotted full path as procps prints it: "kernel.core_pattern", "net.ipv4.conf.eth0/200.forwarding". */
RCUSTRING_API const char *sysctl_entry_path(const struct sysctl_entry *e);
/** Mode bits of the entry (0555 for directories); _exec: 1 if root runs its value (MODE_EXEC). */
RCUSTRING_API mode_t sysctl_entry_mode(const struct sysctl_entry *e);
RCUSTRING_API int sysctl_entry_exec(const struct sysctl_entry *e);
RCUSTRING_API const char *sysctl_entry_desc(const struct sysctl_entry *e);
/**
 * sysctl_entry_table - the registered table row of @e
 *
 * Return: the row, or NULL for directories and once the entry is
 * unregistered. Lifetime: the row is the registrant's memory, which it may
 * free as soon as sysctl_unregister_table() returns; a non-NULL result
 * says nothing about the next instant. Only a caller that knows the table
 * stays registered (the registrant itself, or a handler running on it) may
 * read the row or what it points to. Others use sysctl_entry_explain(),
 * sysctl_entry_mode() and sysctl_entry_desc(), which are safe.
 * Context: any thread.
 */
RCUSTRING_API const struct ctl_table *sysctl_entry_table(const struct sysctl_entry *e);

/**
 * sysctl_entry_explain - a one-line reason for @err from a write of @e
 * @err: the negative errno a write of @e returned
 *
 * Names the limit where one applies: "value longer than 127 bytes" for
 * -EMSGSIZE from a string handler, "invalid value (integers 0..200)" for
 * -EINVAL from a minmax handler (">= N" or "<= N" with one bound), else
 * "invalid value" or strerror(). The bounds are read while the table is
 * held registered (its in-flight count raised, as for a handler call), so
 * a concurrent sysctl_unregister_table() waits and the registrant cannot
 * free them under the reader. @buf gets a NUL-terminated text, cut to
 * @size - 1 bytes.
 * Context: any thread, no tree lock held; not inside an RCU read-side
 * section of the caller's (it does not sleep, but unregister waits for it).
 * Return: the text's length, -EINVAL (bad argument, @err not negative),
 * -EISDIR, or -ENOENT (the bounds' table is unregistered).
 */
RCUSTRING_API ssize_t sysctl_entry_explain(struct sysctl_entry *e, int err, char *buf,
					   size_t size);
/** 0 once the entry's table was unregistered (then reads and writes: -ENOENT). */
RCUSTRING_API int sysctl_entry_live(const struct sysctl_entry *e);

/**
 * sysctl_access - may @who read (R_OK) or write (W_OK) @e?
 *
 * Like /proc/sys (test_perm in fs/proc/proc_sysctl.c): uid 0 and the
 * tree's owner uid (sysctl_tree_set_owner()) are checked against the owner
 * bits, gid 0 and the owner gid (@who's gid only: struct sysctl_caller
 * holds no supplementary groups) against the group bits, everyone else
 * against the "other" bits; every requested bit must be set, so neither
 * root nor the owner can write a 0444 entry. Return: 0 or -EACCES.
 */
RCUSTRING_API int sysctl_access(const struct sysctl_entry *e, const struct sysctl_caller *who,
				int mask);

/**
 * sysctl_entry_read - run the handler's read at *@ppos
 *
 * Handlers that change their data in place (every one but proc_rcu_string)
 * are read under the entry's lock, shared with other readers and exclusive
 * with the tree's writes of that entry, so a read through the tree never
 * copies a half-written array. proc_rcu_string reads take no lock.
 * Context: any thread; not from a handler or callback that holds the
 * entry's write in progress.
 * Return: 0 or a negative errno; *@lenp bytes produced. No permission check
 * (front ends call sysctl_access() at open time, as the kernel does).
 */
RCUSTRING_API int sysctl_entry_read(struct sysctl_entry *e, char *buf, size_t *lenp,
				    off_t *ppos);

/**
 * sysctl_entry_read_whole - the whole value of @e, read in one handler call
 * at position 0 into a new buffer, so that it is one value even if a write
 * comes meanwhile
 * @first: the first buffer size tried (0: 4096); a read that fills the
 *         buffer may have been cut, so it is read again into one twice the
 *         size
 * @max: the last size tried is the first at least @max: a value that
 *       fills it gives -EFBIG
 * @out: receives the value, sized to it (free() it); no NUL is added
 * @out_len: receives its length, the final newline included
 * Context: as sysctl_entry_read().
 * Return: 0, -EINVAL, -ENOMEM, -EFBIG, or the handler's error.
 */
RCUSTRING_API int sysctl_entry_read_whole(struct sysctl_entry *e, size_t first, size_t max,
					  char **out, size_t *out_len);

/**
 * sysctl_entry_write - run the handler's write at *@ppos
 *
 * On success the entry's change counter is bumped, waiters and callbacks
 * are told (see sysctl_entry_on_change() for what the write waits for),
 * and the audit ring records @who (may be NULL), the time, the previous
 * and the new value. Writes of one entry are serialized; while the
 * handler of an in-place entry (not proc_rcu_string) writes, the tree's
 * readers of that entry wait.
 * Context: any thread; not from a handler of this entry.
 * Return: 0 or the handler's negative errno.
 */
RCUSTRING_API int sysctl_entry_write(struct sysctl_entry *e, const struct sysctl_caller *who,
				     const char *buf, size_t *lenp, off_t *ppos);

/**
 * sysctl_entry_write_if - sysctl_entry_write(), only while the entry's
 * change counter (sysctl_entry_changes()) is @expected_changes
 *
 * A compare-and-set: the counter is compared under the entry's writer lock,
 * which every write through the tree holds while it bumps the counter, so
 * no such write (through any front end, or the program's
 * sysctl_entry_write() or sysctl_set()) lands between the check and this
 * write. A program that changes the variable itself, not through the tree,
 * takes no lock and bumps no counter: it is not excluded. No permission
 * check, as for sysctl_entry_write().
 * Context: as sysctl_entry_write().
 * Return: 0, -ESTALE (the counter differs: nothing written), or as
 * sysctl_entry_write().
 */
RCUSTRING_API int sysctl_entry_write_if(struct sysctl_entry *e, const struct sysctl_caller *who,
					const char *buf, size_t *lenp, off_t *ppos,
					uint64_t expected_changes);

/**
 * sysctl_entry_write_from - sysctl_entry_write() with the write's origin
 *
 * sysctl_entry_write() is this with SYSCTL_ORIGIN_CLIENT when @who is
 * given and SYSCTL_ORIGIN_PROGRAM when it is NULL.
 * Context and return: as sysctl_entry_write().
 */
RCUSTRING_API int sysctl_entry_write_from(struct sysctl_entry *e, const struct sysctl_caller *who,
					  enum sysctl_origin origin, const char *buf, size_t *lenp,
					  off_t *ppos);

/**
 * sysctl_get - the whole value of @path as its file reads (with '\n')
 *
 * One handler call reads the value whole, so a concurrent write is seen
 * entirely or not at all. @buf gets a NUL-terminated copy and needs
 * length + 1 bytes. Return: the length, -EINVAL, -ENOENT, -EISDIR, -ERANGE
 * (buffer too small), or the handler's error.
 */
RCUSTRING_API ssize_t sysctl_get(struct sysctl_tree *tree, const char *path, char *buf,
				 size_t size);

/**
 * sysctl_set - write @len bytes of @value to @path at position 0, checking
 * @who's permission (NULL: no check, the program itself)
 * Return: 0, -ENOENT, -EISDIR, -EACCES, or the handler's error.
 */
RCUSTRING_API int sysctl_set(struct sysctl_tree *tree, const char *path, const char *value,
			     size_t len, const struct sysctl_caller *who);

/**
 * sysctl_set_from - sysctl_set() with the write's origin (@who may be NULL:
 * no permission check, as for sysctl_set())
 */
RCUSTRING_API int sysctl_set_from(struct sysctl_tree *tree, const char *path, const char *value,
				  size_t len, const struct sysctl_caller *who,
				  enum sysctl_origin origin);

/**
 * sysctl_set_owner - sysctl_set() by the owner of a hooked table
 * (sysctl_register_table_hooked()), whose values are mirrored from
 * elsewhere: the handler applies the value with the usual locks, change
 * count and callbacks, and the write's origin is SYSCTL_ORIGIN_MIRROR.
 * The same write for other entries.
 */
RCUSTRING_API int sysctl_set_owner(struct sysctl_tree *tree, const char *path, const char *value,
				   size_t len, const struct sysctl_caller *who);

/**
 * sysctl_walk - call @fn for every entry (not directory) under @prefix
 * ("" for all) in a stable order (sorted by path component).
 *
 * @fn gets a borrowed entry valid during the call; returning non-zero stops
 * the walk and that value is returned. Return: 0, -ENOENT, -ENOMEM, or @fn's value.
 */
RCUSTRING_API int sysctl_walk(struct sysctl_tree *tree, const char *prefix,
			      int (*fn)(struct sysctl_entry *e, void *arg), void *arg);

/**
 * sysctl_list_dir - call @fn for each direct child of directory @path, sorted
 * Return: 0, -ENOENT, -ENOTDIR, -ENOMEM, or @fn's non-zero value.
 */
RCUSTRING_API int sysctl_list_dir(struct sysctl_tree *tree, const char *path,
				  int (*fn)(struct sysctl_entry *child, void *arg), void *arg);

/* ---- change notification ---- */

/** sysctl_entry_changes - the entry's change counter (successful writes) */
RCUSTRING_API uint64_t sysctl_entry_changes(const struct sysctl_entry *e);

/**
 * sysctl_entry_notify - tell waiters and callbacks that the program changed
 * the entry's data directly (not through a tree write)
 * Context: any thread; runs callbacks as a write does (sysctl_entry_on_change()).
 */
RCUSTRING_API void sysctl_entry_notify(struct sysctl_entry *e);

/**
 * sysctl_entry_wait - block until the change counter differs from @seen
 * @timeout_ms: -1 waits forever
 * Return: the new counter (>= 0), -ETIMEDOUT, or -ENOENT when the entry is
 * unregistered.
 */
RCUSTRING_API int64_t sysctl_entry_wait(struct sysctl_entry *e, uint64_t seen, int timeout_ms);

/*
 * A change record. Change callbacks get one per call: @seq is the counter
 * of the latest change the call covers and @origin that change's origin
 * (SYSCTL_ORIGIN_REMOVED once, with no counter change, when the entry is
 * unregistered); @who is NULL there. The commit hook and the handler get
 * the write in progress: @seq is the number it will have, @who its caller
 * (NULL for the program), valid while they run.
 */
struct sysctl_commit_record; /* the entries of one sysctl_commit() (sysctl_commit.h) */
struct sysctl_change {
	uint64_t seq;
	enum sysctl_origin origin;
	const struct sysctl_caller *who;
	/* NULL for a single write; a commit's entries (sysctl_change_entries()) */
	const struct sysctl_commit_record *commit;
};

struct sysctl_callback;
typedef void sysctl_change_fn(struct sysctl_entry *e, const struct sysctl_change *change,
			      void *arg);

/**
 * sysctl_entry_writing - the write @e's handler is running now
 *
 * For a handler that must know who writes (a mirror letting its own
 * values through): the record of the write in progress.
 * Context: only from @e's handler, during a write.
 * Return: the record, or NULL outside a write.
 */
RCUSTRING_API const struct sysctl_change *sysctl_entry_writing(const struct sysctl_entry *e);

/*
 * A commit hook: makes a write durable before it is acknowledged.
 * Called by every write of every entry of the tree, under the entry's
 * writer lock, after the handler stored the new value and before the
 * change is counted, audited or told to anyone; sysctl_entry_read() of @e
 * (or sysctl_get()) inside it reads the new value. A negative errno
 * refuses the write: the previous value goes back exactly (sysctl_handlers(7);
 * -ENOTRECOVERABLE when a program's handler refuses its old text), nothing
 * is counted, audited or told (a lock-free reader may have seen it).
 * It must not write @e.
 */
typedef int sysctl_commit_fn(struct sysctl_entry *e, const struct sysctl_change *change,
			     void *arg);

/*
 * Writes of a tree's entries so far, by every front end and the program:
 * counted once per write call (not per byte), so the read path is not
 * touched. A write that a check, the commit hook or the handler refuses
 * counts under its errno.
 */
#define SYSCTL_WRITE_ERRNO_MAX 134 /* refused[] covers errno 1 .. this - 1 */
struct sysctl_write_stats {
	uint64_t written;                         /* writes that stored a value */
	uint64_t refused[SYSCTL_WRITE_ERRNO_MAX]; /* by errno; [0]: any errno beyond */
};

/**
 * sysctl_tree_get_write_stats - copy @tree's write counts into @st
 * Context: any thread; takes no lock (each count is read atomically, the
 * whole is not one instant).
 * Return: 0, or -EINVAL for a NULL argument.
 */
RCUSTRING_API int sysctl_tree_get_write_stats(struct sysctl_tree *tree,
					      struct sysctl_write_stats *st);

#define SYSCTL_GENERATION_EPOCH_SHIFT 32 /* base = epoch << this (sysctl_handlers(7)) */
/**
 * sysctl_tree_set_generation_base - add @base to every change counter and where
 * later entries start. Context: before the tree is shared. Return: 0, -EINVAL.
 */
RCUSTRING_API int sysctl_tree_set_generation_base(struct sysctl_tree *tree, uint64_t base);

/**
 * sysctl_tree_set_commit - install the tree's commit hook (NULL: none)
 * Context: before the tree is shared (no write may run meanwhile).
 * Return: 0, or -EINVAL for a NULL tree.
 */
RCUSTRING_API int sysctl_tree_set_commit(struct sysctl_tree *tree, sysctl_commit_fn *fn,
					 void *arg);

/* A write check (sysctl_tree_set_check()): runs in every write before the handler or a hooked
 * table's hook, no tree lock held (@change->seq is 0); a negative errno refuses the write and
 * nothing changes (the write returns it). It must not write @e. Context: the writer's thread. */
typedef int sysctl_check_fn(struct sysctl_entry *e, const struct sysctl_change *change, void *arg);
/** sysctl_tree_set_check - install it (NULL: none). Context: before the tree is shared. */
RCUSTRING_API int sysctl_tree_set_check(struct sysctl_tree *tree, sysctl_check_fn *fn, void *arg);
/**
 * sysctl_entry_on_change - call @fn after each change of @e
 *
 * Guarantees: @fn runs after the change is published, outside every lock
 * of the tree, never concurrently with itself; every change is seen by at
 * least one call that started after it (a burst may be folded into one
 * call with the latest counter); @change->seq only grows, and
 * @change->origin is the origin of change number @change->seq, whichever
 * thread runs the call. When @e is unregistered, @fn is called once more
 * with SYSCTL_ORIGIN_REMOVED (a poller learns the entry is gone).
 *
 * Where it runs: in the threads that change @e. A write (or
 * sysctl_entry_notify()) returns once each callback of @e has finished a
 * call that saw its change: it runs that call itself when the callback is
 * idle, and waits when another thread is running it, for that call and at
 * most one more. So a slow callback delays each write by at most about two
 * calls of it, and a writer never runs calls for other writers' changes.
 * A write made inside a callback never waits: it leaves its change to the
 * thread running the busy callback, which calls again when its call
 * returns; a callback that writes its own entry on every call never stops.
 * A callback added during a change need not see that change.
 * Context: any thread. Return: 0, -EINVAL, -ENOMEM; *@out is the handle
 * to remove it.
 */
RCUSTRING_API int sysctl_entry_on_change(struct sysctl_entry *e, sysctl_change_fn *fn, void *arg,
					 struct sysctl_callback **out);

/**
 * sysctl_callback_remove - remove a callback; waits if it is running
 * Context: any thread but the callback itself (it would wait for itself).
 */
RCUSTRING_API void sysctl_callback_remove(struct sysctl_callback *cb);

/* ---- audit ---- */

#define SYSCTL_AUDIT_VALUE_MAX 256 /* longer values are recorded cut, with "..." */
#define SYSCTL_AUDIT_PATH_MAX 256
#define SYSCTL_AUDIT_RING 1024     /* records kept per tree */

struct sysctl_audit_record {
	uint64_t seq; /* 1, 2, ... per tree */
	struct timespec when; /* CLOCK_REALTIME */
	uid_t uid;            /* (uid_t)-1 / 0 pid when the writer passed no caller */
	pid_t pid;
	char path[SYSCTL_AUDIT_PATH_MAX];
	char old_value[SYSCTL_AUDIT_VALUE_MAX];
	char new_value[SYSCTL_AUDIT_VALUE_MAX];
};

/**
 * sysctl_audit_read - copy records with seq > @after_seq, oldest first
 * Return: the number copied (at most @max). Records overwritten in the ring
 * are gone; the first seq returned shows the gap.
 */
RCUSTRING_API size_t sysctl_audit_read(struct sysctl_tree *tree, uint64_t after_seq,
				       struct sysctl_audit_record *out, size_t max);

#ifdef __cplusplus
}
#endif

#endif /* RCUSTRING_SYSCTL_H */
