/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The FUSE front end's mount, open files and open directories, shared by
 * its files: fuse_fs.c mounts, runs and unmounts; fuse_paths.c answers
 * the requests on names (attributes, directories, access, the operations
 * /proc/sys refuses); fuse_file.c those on open files (read, write, poll);
 * fuse_count.c counts the requests read from the kernel. Internal to the
 * library.
 */
#ifndef RCUSTRING_LIB_FRONTEND_FUSE_FS_H
#define RCUSTRING_LIB_FRONTEND_FUSE_FS_H

#define FUSE_USE_VERSION 31
#include <fuse.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <urcu/list.h>

#include "rcustring/sysctl_budget.h"
#include "rcustring/sysctl_fuse.h"

struct open_file;
struct open_dir;

/* Opcodes below this are counted one by one (FUSE_TMPFILE is 51). */
#define OP_SLOTS 64

struct sysctl_fuse {
	struct sysctl_tree *tree;
	struct fuse *fuse;
	char *mountpoint;
	time_t mounted_at;
	/* Files and directories open now, so that an unmount can close those never released. */
	pthread_mutex_t files_lock;
	struct open_file *files;
	struct open_dir *dirs;
	/*
	 * Every open file, open directory and poller counts against this
	 * budget (sysctl_budget.h): the program's, or own_budget when it gave
	 * none. Set before the loop runs, read-only afterwards.
	 */
	struct sysctl_budget *budget;
	struct sysctl_budget *own_budget;

	/* Requests read from the kernel, by opcode (fuse_count.c). */
	struct cds_list_head counted_node; /* in the counted list (RCU) */
	int dev_fd;
	uint64_t requests;
	uint64_t by_op[OP_SLOTS];
};

/* The largest value a file serves; a bigger one reads as -EFBIG. */
#define SNAPSHOT_MAX (16u << 20)
#define SNAPSHOT_FIRST 4096u

/*
 * An open file costs its budget one unit, more when the value it read is
 * bigger than a unit (sysctl_budget_units()), and one more once it is
 * polled (its change callback); an open directory one unit, more for a
 * big listing.
 */
struct open_file {
	struct sysctl_entry *e;
	uid_t uid;      /* counted against it */
	unsigned units; /* what it costs now, less the poller's */
	struct open_file *prev, *next; /* in sysctl_fuse.files, under files_lock */

	/* The value this file reads (see fuse_file.c). */
	pthread_mutex_t snap_lock;
	char *snap;
	size_t snap_len;
	int have_snap;

	/*
	 * Poll state. cb_lock serializes registering and removing the change
	 * callback: two polls of one file may run at once, and each must not
	 * register its own. The callback (wake_poller) takes only @lock, so
	 * removing it with cb_lock held cannot wait on a callback waiting for
	 * cb_lock.
	 */
	pthread_mutex_t cb_lock;
	struct sysctl_callback *cb; /* set: a SYSCTL_HANDLE_POLL counted */
	pthread_mutex_t lock;       /* seen and ph; taken by the callback */
	uint64_t seen;              /* change counter at open or last poll */
	struct fuse_pollhandle *ph; /* the kernel's pending poll, if any */
};

/*
 * An open directory: its children as they were when the directory was
 * opened (or listed again from offset 0), with what their attributes need.
 * READDIRPLUS hands out each name with a node and attributes, so a listing
 * fills the kernel's dentry and attribute caches and the stat() and open()
 * that follow (procps' sysctl -a) need no LOOKUP or GETATTR. libfuse does
 * that only for listings that give offsets, so entries are served from
 * this copy by index: a listing costs one walk of the directory, however
 * many requests it takes. The copy is compact (a mode and a name per
 * child, the names packed in one buffer: about 8 bytes and the name's
 * length each) and charged to the opener's budget by its size.
 */
struct dir_ent {
	uint32_t name; /* offset in open_dir.names */
	mode_t mode;   /* S_IFDIR | 0555, or S_IFREG | the entry's mode */
};

struct open_dir {
	struct open_dir *prev, *next; /* in sysctl_fuse.dirs, under files_lock */
	uid_t uid;      /* counted against it */
	unsigned units; /* what it costs now */
	pthread_mutex_t lock;
	struct dir_ent *ents;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	int taken;  /* ents holds a listing */
	int served; /* a request read it since it was taken */
};

/* The mount a request is for. */
static inline struct sysctl_fuse *rcs_fuse_self(void)
{
	return fuse_get_context()->private_data;
}

/* Who sent the request. */
static inline struct sysctl_caller rcs_fuse_caller(void)
{
	struct fuse_context *c = fuse_get_context();
	struct sysctl_caller who = { c->uid, c->gid, c->pid };

	return who;
}

/*
 * FUSE paths start with '/', which the tree takes as the first separator:
 * slashes separate and a '.' stays inside a name ("/eth0.200/mtu"). Without
 * the leading '/', "eth0.200/mtu" would be parsed in dotted form.
 */
static inline struct sysctl_entry *rcs_fuse_lookup(const char *path)
{
	return sysctl_lookup(rcs_fuse_self()->tree, path);
}

/* fuse_paths.c */
/* What stat(2) shows for @e (NULL: a directory); the kernel may cache it (attr_timeout). */
void rcs_fuse_entry_stat(struct sysctl_entry *e, time_t when, struct stat *st);
/* Free an open directory no request uses any more, and give back what it cost. */
void rcs_fuse_dir_free(struct sysctl_fuse *fs, struct open_dir *d);
/* Fill in the operations on names. */
void rcs_fuse_path_ops(struct fuse_operations *ops);

/* fuse_file.c */
/* Free an open file no request uses any more (released, or unmounted), and give back what it cost. */
void rcs_fuse_file_close(struct sysctl_fuse *fs, struct open_file *of);
/* Fill in the operations on open files. */
void rcs_fuse_file_ops(struct fuse_operations *ops);

/*
 * fuse_count.c: libfuse's I/O on /dev/fuse, counting each request read on
 * a counted mount. rcs_fuse_counted_remove() waits for a grace period: not
 * from a read-side section, and only once the mount's loop has returned.
 */
ssize_t rcs_fuse_counting_read(int fd, void *buf, size_t len, void *userdata);
ssize_t rcs_fuse_counting_writev(int fd, struct iovec *iov, int count, void *userdata);
void rcs_fuse_counted_add(struct sysctl_fuse *fs);
void rcs_fuse_counted_remove(struct sysctl_fuse *fs);

#endif
