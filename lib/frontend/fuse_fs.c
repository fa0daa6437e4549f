/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The FUSE front end (libfuse3, path-based API). Each open file holds a
 * reference on its entry, so an entry unregistered while open reads as
 * -ENOENT instead of vanishing under the file.
 *
 * Each open file reads exactly one value: a read at offset 0 (the first,
 * or a reader coming back to 0) copies the whole value with one handler
 * call, and every later offset is served from that copy. Readers read
 * again until a read returns 0, so without the copy a write landing
 * between two read() calls would hand them the head of one value and the
 * tail of the next.
 */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <linux/fuse.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "rcustring/sysctl_fuse.h"

struct open_file;

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
	/* Open files counted per uid, under files_lock (see may_open()). */
	struct uid_opens *opens;
	size_t nopens;        /* uids with files open */
	unsigned int others;  /* files open by uids other than 0 */

	/* Requests read from the kernel, by opcode (see count_request()). */
	struct sysctl_fuse *counted_next; /* in the counted list, under counted_lock */
	int dev_fd;
	uint64_t requests;
	uint64_t by_op[OP_SLOTS];
};

/*
 * Open files are counted like socket connections: uids other than root
 * share SYSCTL_FUSE_MAX_OPEN - SYSCTL_FUSE_ROOT_RESERVE of them, each at
 * most SYSCTL_FUSE_MAX_OPEN_PER_UID, so no local user can pin the
 * daemon's memory or shut root out. Each open file costs its struct and a
 * snapshot the size of the value it read.
 */
struct uid_opens {
	uid_t uid;
	unsigned int n;
};

/* The largest value a file serves; a bigger one reads as -EFBIG. */
#define SNAPSHOT_MAX (16u << 20)
#define SNAPSHOT_FIRST 4096u

struct open_file {
	struct sysctl_entry *e;
	uid_t uid; /* counted against it (may_open) */
	struct open_file *prev, *next; /* in sysctl_fuse.files, under files_lock */

	/* The value this file reads (see the top of the file). */
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
	struct sysctl_callback *cb;
	pthread_mutex_t lock;       /* seen and ph; taken by the callback */
	uint64_t seen;              /* change counter at open or last poll */
	struct fuse_pollhandle *ph; /* the kernel's pending poll, if any */
};

/*
 * Request counting. Every request the kernel sends is read from the
 * mount's /dev/fuse descriptor, so libfuse is given read and writev
 * functions (fuse_session_custom_io) that count what they read by opcode:
 * the count covers requests libfuse answers by itself (FLUSH, FORGET,
 * OPENDIR, ...) as well as those reaching the callbacks below. libfuse
 * passes its own userdata (the struct fuse) to them, not ours, so mounts
 * are found by descriptor in a short list.
 */
static pthread_mutex_t counted_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sysctl_fuse *counted;

static void count_request(int fd, const void *buf, ssize_t len)
{
	const struct fuse_in_header *in = buf;
	struct sysctl_fuse *fs;

	if (len < (ssize_t)sizeof(*in))
		return;
	pthread_mutex_lock(&counted_lock);
	for (fs = counted; fs && fs->dev_fd != fd; fs = fs->counted_next)
		;
	if (fs) {
		__atomic_add_fetch(&fs->requests, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&fs->by_op[in->opcode < OP_SLOTS ? in->opcode : 0], 1,
				   __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&counted_lock);
}

static ssize_t counting_read(int fd, void *buf, size_t len, void *userdata)
{
	ssize_t n = read(fd, buf, len);

	(void)userdata;
	if (n > 0) {
		int saved = errno;

		count_request(fd, buf, n);
		errno = saved;
	}
	return n;
}

static ssize_t counting_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	(void)userdata;
	return writev(fd, iov, count);
}

static void counted_add(struct sysctl_fuse *fs)
{
	pthread_mutex_lock(&counted_lock);
	fs->counted_next = counted;
	counted = fs;
	pthread_mutex_unlock(&counted_lock);
}

static void counted_remove(struct sysctl_fuse *fs)
{
	struct sysctl_fuse **pp;

	pthread_mutex_lock(&counted_lock);
	for (pp = &counted; *pp && *pp != fs; pp = &(*pp)->counted_next)
		;
	if (*pp)
		*pp = fs->counted_next;
	pthread_mutex_unlock(&counted_lock);
}

int sysctl_fuse_get_stats(struct sysctl_fuse *fs, struct sysctl_fuse_stats *st)
{
	static const struct {
		size_t field;
		unsigned op;
	} map[] = {
		{ offsetof(struct sysctl_fuse_stats, lookup), FUSE_LOOKUP },
		{ offsetof(struct sysctl_fuse_stats, getattr), FUSE_GETATTR },
		{ offsetof(struct sysctl_fuse_stats, access), FUSE_ACCESS },
		{ offsetof(struct sysctl_fuse_stats, open), FUSE_OPEN },
		{ offsetof(struct sysctl_fuse_stats, read), FUSE_READ },
		{ offsetof(struct sysctl_fuse_stats, write), FUSE_WRITE },
		{ offsetof(struct sysctl_fuse_stats, flush), FUSE_FLUSH },
		{ offsetof(struct sysctl_fuse_stats, release), FUSE_RELEASE },
		{ offsetof(struct sysctl_fuse_stats, opendir), FUSE_OPENDIR },
		{ offsetof(struct sysctl_fuse_stats, readdir), FUSE_READDIR },
		{ offsetof(struct sysctl_fuse_stats, readdirplus), FUSE_READDIRPLUS },
		{ offsetof(struct sysctl_fuse_stats, releasedir), FUSE_RELEASEDIR },
		{ offsetof(struct sysctl_fuse_stats, forget), FUSE_FORGET },
		{ offsetof(struct sysctl_fuse_stats, forget), FUSE_BATCH_FORGET },
		{ offsetof(struct sysctl_fuse_stats, poll), FUSE_POLL },
	};

	if (!fs || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	st->requests = __atomic_load_n(&fs->requests, __ATOMIC_RELAXED);
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		*(uint64_t *)((char *)st + map[i].field) +=
			__atomic_load_n(&fs->by_op[map[i].op], __ATOMIC_RELAXED);
	return 0;
}

static struct sysctl_fuse *self(void)
{
	return fuse_get_context()->private_data;
}

static struct sysctl_caller caller(void)
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
static struct sysctl_entry *lookup(const char *path)
{
	return sysctl_lookup(self()->tree, path);
}

/* What stat(2) shows for @e; the kernel may cache it (attr_timeout). */
static void entry_stat(struct sysctl_entry *e, time_t when, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_atime = st->st_mtime = st->st_ctime = when;
	/* Every name is the tree owner's, as /proc/sys shows a netns owner's. */
	sysctl_tree_get_owner(self()->tree, &st->st_uid, &st->st_gid);
	if (!e || sysctl_entry_is_dir(e)) {
		st->st_mode = S_IFDIR | 0555;
		st->st_nlink = 2;
	} else {
		/* Size 0 like /proc/sys: readers go to EOF, not to st_size. */
		st->st_mode = S_IFREG | (sysctl_entry_mode(e) & 0777);
		st->st_nlink = 1;
	}
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct sysctl_entry *e = NULL;

	(void)fi;
	if (strcmp(path, "/") != 0) {
		e = lookup(path);
		if (!e)
			return -ENOENT;
	}
	entry_stat(e, self()->mounted_at, st);
	if (e)
		sysctl_entry_put(e);
	return 0;
}

/*
 * An open directory: its children as they were when the listing started
 * (offset 0), with their attributes. READDIRPLUS hands out each name with
 * a node and attributes, so a listing fills the kernel's dentry and
 * attribute caches and the stat() and open() that follow (procps' sysctl
 * -a) need no LOOKUP or GETATTR. libfuse does that only for listings that
 * give offsets, so entries are served from this copy by index: a listing
 * costs one walk of the directory, however many requests it takes.
 */
struct dir_ent {
	char *name;
	struct stat st;
};

struct open_dir {
	struct open_dir *prev, *next; /* in sysctl_fuse.dirs, under files_lock */
	pthread_mutex_t lock;
	struct dir_ent *ents;
	size_t n, cap;
	int taken;
};

static void dir_clear(struct open_dir *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->ents[i].name);
	d->n = 0;
	d->taken = 0;
}

static int dir_add(struct open_dir *d, const char *name, const struct stat *st)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 32;
		struct dir_ent *p = realloc(d->ents, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		d->ents = p;
		d->cap = cap;
	}
	d->ents[d->n].name = strdup(name);
	if (!d->ents[d->n].name)
		return -ENOMEM;
	d->ents[d->n].st = *st;
	d->n++;
	return 0;
}

struct fill {
	struct open_dir *d;
	time_t when;
};

static int add_child(struct sysctl_entry *child, void *arg)
{
	struct fill *f = arg;
	struct stat st;

	entry_stat(child, f->when, &st);
	return dir_add(f->d, sysctl_entry_name(child), &st);
}

/* Copy the children of @path; "." and ".." first: procps skips two entries blindly. */
static int dir_take(struct open_dir *d, const char *path)
{
	struct fill f = { d, self()->mounted_at };
	struct stat st;
	int err;

	dir_clear(d);
	entry_stat(NULL, f.when, &st);
	/* Not 0: readdir(3) skips entries with inode number 0, and so would lose them. */
	st.st_ino = 1;
	err = dir_add(d, ".", &st);
	if (!err)
		err = dir_add(d, "..", &st);
	if (!err)
		err = sysctl_list_dir(self()->tree, path, add_child, &f);
	if (err) {
		dir_clear(d);
		return err;
	}
	d->taken = 1;
	return 0;
}

static void dir_free(struct open_dir *d)
{
	dir_clear(d);
	free(d->ents);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

static int fs_opendir(const char *path, struct fuse_file_info *fi)
{
	struct sysctl_fuse *fs = self();
	struct open_dir *d;
	struct sysctl_entry *e = NULL;

	if (strcmp(path, "/") != 0) {
		e = lookup(path);
		if (!e)
			return -ENOENT;
		if (!sysctl_entry_is_dir(e)) {
			sysctl_entry_put(e);
			return -ENOTDIR;
		}
		sysctl_entry_put(e);
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	if (pthread_mutex_init(&d->lock, NULL) != 0) {
		free(d);
		return -ENOMEM;
	}
	pthread_mutex_lock(&fs->files_lock);
	d->next = fs->dirs;
	if (fs->dirs)
		fs->dirs->prev = d;
	fs->dirs = d;
	pthread_mutex_unlock(&fs->files_lock);
	fi->fh = (uintptr_t)d;
	return 0;
}

static int fs_releasedir(const char *path, struct fuse_file_info *fi)
{
	struct sysctl_fuse *fs = self();
	struct open_dir *d = (struct open_dir *)(uintptr_t)fi->fh;

	(void)path;
	pthread_mutex_lock(&fs->files_lock);
	if (d->prev)
		d->prev->next = d->next;
	else
		fs->dirs = d->next;
	if (d->next)
		d->next->prev = d->prev;
	pthread_mutex_unlock(&fs->files_lock);
	dir_free(d);
	return 0;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct open_dir *d = (struct open_dir *)(uintptr_t)fi->fh;
	enum fuse_fill_dir_flags plus = flags & FUSE_READDIR_PLUS ? FUSE_FILL_DIR_PLUS : 0;
	int err = 0;

	if (offset < 0)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	/* Offset 0 lists anew (rewinddir); a first request past 0 lists too. */
	if (offset == 0 || !d->taken)
		err = dir_take(d, path);
	/* Offsets are the index of the next entry, so a listing resumes in O(1). */
	for (size_t i = (size_t)offset; !err && i < d->n; i++)
		if (filler(buf, d->ents[i].name, &d->ents[i].st, (off_t)(i + 1), plus))
			break;
	pthread_mutex_unlock(&d->lock);
	return err;
}

static int file_init_locks(struct open_file *of)
{
	int err = pthread_mutex_init(&of->snap_lock, NULL);

	if (err)
		return -err;
	err = pthread_mutex_init(&of->cb_lock, NULL);
	if (err)
		goto out_snap;
	err = pthread_mutex_init(&of->lock, NULL);
	if (!err)
		return 0;
	pthread_mutex_destroy(&of->cb_lock);
out_snap:
	pthread_mutex_destroy(&of->snap_lock);
	return -err;
}

static void file_link(struct sysctl_fuse *fs, struct open_file *of)
{
	pthread_mutex_lock(&fs->files_lock);
	of->prev = NULL;
	of->next = fs->files;
	if (fs->files)
		fs->files->prev = of;
	fs->files = of;
	pthread_mutex_unlock(&fs->files_lock);
}

static void file_unlink(struct sysctl_fuse *fs, struct open_file *of)
{
	pthread_mutex_lock(&fs->files_lock);
	if (of->prev)
		of->prev->next = of->next;
	else
		fs->files = of->next;
	if (of->next)
		of->next->prev = of->prev;
	of->prev = of->next = NULL;
	pthread_mutex_unlock(&fs->files_lock);
}

/* Free an open file no request uses any more (released, or unmounted). */
static void file_close(struct open_file *of)
{
	/* Remove the callback first: it may be running and take of->lock. */
	pthread_mutex_lock(&of->cb_lock);
	if (of->cb)
		sysctl_callback_remove(of->cb);
	of->cb = NULL;
	pthread_mutex_unlock(&of->cb_lock);
	if (of->ph)
		fuse_pollhandle_destroy(of->ph);
	pthread_mutex_destroy(&of->lock);
	pthread_mutex_destroy(&of->cb_lock);
	pthread_mutex_destroy(&of->snap_lock);
	free(of->snap);
	sysctl_entry_put(of->e);
	free(of);
}

static int access_mask(int flags)
{
	switch (flags & O_ACCMODE) {
	case O_WRONLY: return W_OK;
	case O_RDWR: return R_OK | W_OK;
	default: return R_OK;
	}
}

/* Count an open by @uid, unless its share is taken: -ENFILE. */
static int may_open(struct sysctl_fuse *fs, uid_t uid)
{
	struct uid_opens *u = NULL;
	int err = 0;

	pthread_mutex_lock(&fs->files_lock);
	for (size_t i = 0; i < fs->nopens && !u; i++)
		if (fs->opens[i].uid == uid)
			u = &fs->opens[i];
	if (uid != 0 && (fs->others >= SYSCTL_FUSE_MAX_OPEN - SYSCTL_FUSE_ROOT_RESERVE ||
			 (u && u->n >= SYSCTL_FUSE_MAX_OPEN_PER_UID)))
		err = -ENFILE;
	if (!err && !u) {
		u = realloc(fs->opens, (fs->nopens + 1) * sizeof(*u));
		if (u) {
			fs->opens = u;
			u = &fs->opens[fs->nopens++];
			*u = (struct uid_opens){ uid, 0 };
		} else {
			err = -ENOMEM;
		}
	}
	if (!err) {
		u->n++;
		fs->others += uid != 0;
	}
	pthread_mutex_unlock(&fs->files_lock);
	return err;
}

static void unopen(struct sysctl_fuse *fs, uid_t uid)
{
	pthread_mutex_lock(&fs->files_lock);
	for (size_t i = 0; i < fs->nopens; i++) {
		if (fs->opens[i].uid != uid)
			continue;
		if (--fs->opens[i].n == 0)
			fs->opens[i] = fs->opens[--fs->nopens];
		fs->others -= uid != 0;
		break;
	}
	pthread_mutex_unlock(&fs->files_lock);
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	struct sysctl_caller who = caller();
	struct open_file *of;
	struct sysctl_entry *e = lookup(path);
	int err;

	if (!e)
		return -ENOENT;
	err = sysctl_entry_is_dir(e) ? -EISDIR : sysctl_access(e, &who, access_mask(fi->flags));
	if (!err)
		err = may_open(self(), who.uid);
	of = err ? NULL : calloc(1, sizeof(*of));
	if (!err && !of) {
		unopen(self(), who.uid);
		err = -ENOMEM;
	}
	if (err) {
		sysctl_entry_put(e);
		return err;
	}
	of->e = e;
	of->uid = who.uid;
	of->seen = sysctl_entry_changes(e);
	err = file_init_locks(of);
	if (err) {
		unopen(self(), who.uid);
		sysctl_entry_put(e);
		free(of);
		return err;
	}
	file_link(self(), of);
	fi->fh = (uintptr_t)of;
	/* Values are never cached by the kernel: every read comes here. */
	fi->direct_io = 1;
	/*
	 * No FLUSH on close: a write is committed inside write(), so close()
	 * has nothing to report and need not wait for a round trip.
	 */
	fi->noflush = 1;
	return 0;
}

static int fs_release(const char *path, struct fuse_file_info *fi)
{
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;

	(void)path;
	file_unlink(self(), of);
	unopen(self(), of->uid);
	file_close(of);
	return 0;
}

/*
 * Copy the whole value with one handler call at offset 0, so that it is
 * one value even if a write comes during the copy. A read that fills the
 * buffer may have been cut: sysctl_entry_read_whole() reads again into a
 * bigger one.
 */
static int take_snapshot(struct open_file *of)
{
	char *snap;
	size_t len;
	int err = sysctl_entry_read_whole(of->e, SNAPSHOT_FIRST, SNAPSHOT_MAX, &snap, &len);

	if (err)
		return err;
	free(of->snap);
	of->snap = snap;
	of->snap_len = len;
	of->have_snap = 1;
	return 0;
}

static int fs_read(const char *path, char *buf, size_t size, off_t offset, struct fuse_file_info *fi)
{
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;
	size_t len = 0;
	int err = 0;

	(void)path;
	if (offset < 0)
		return -EINVAL;
	pthread_mutex_lock(&of->snap_lock);
	/* Offset 0 takes the value anew; a first read past 0 takes it too. */
	if (offset == 0 || !of->have_snap)
		err = take_snapshot(of);
	if (!err && (uint64_t)offset < of->snap_len) {
		len = of->snap_len - (size_t)offset;
		if (len > size)
			len = size;
		memcpy(buf, of->snap + offset, len);
	}
	pthread_mutex_unlock(&of->snap_lock);
	return err ? err : (int)len;
}

static int fs_write(const char *path, const char *buf, size_t size, off_t offset,
		    struct fuse_file_info *fi)
{
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;
	struct sysctl_caller who = caller();
	size_t len = size;
	off_t pos = offset;
	int err;

	(void)path;
	err = sysctl_entry_write(of->e, &who, buf, &len, &pos);
	return err ? err : (int)len;
}

/* O_TRUNC and truncate(2): a write replaces the whole value anyway. */
static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct sysctl_caller who = caller();
	struct sysctl_entry *e;
	int err;

	(void)size;
	if (fi)
		return 0; /* already checked for writing at open */
	e = lookup(path);
	if (!e)
		return -ENOENT;
	err = sysctl_entry_is_dir(e) ? -EISDIR : sysctl_access(e, &who, W_OK);
	sysctl_entry_put(e);
	return err;
}

static int fs_access(const char *path, int mask)
{
	struct sysctl_caller who = caller();
	struct sysctl_entry *e;
	int err;

	if (strcmp(path, "/") == 0)
		return mask & W_OK ? -EACCES : 0;
	e = lookup(path);
	if (!e)
		return -ENOENT;
	err = sysctl_entry_is_dir(e) ? (mask & W_OK ? -EACCES : 0) : sysctl_access(e, &who, mask);
	sysctl_entry_put(e);
	return err;
}

/* Runs in the writer's thread after the change is published. */
static void wake_poller(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	struct open_file *of = arg;

	(void)e;
	(void)ch; /* a change or the entry's removal: either way the poller looks again */
	pthread_mutex_lock(&of->lock);
	if (of->ph) {
		fuse_notify_poll(of->ph);
		fuse_pollhandle_destroy(of->ph);
		of->ph = NULL;
	}
	pthread_mutex_unlock(&of->lock);
}

static int fs_poll(const char *path, struct fuse_file_info *fi, struct fuse_pollhandle *ph,
		   unsigned *reventsp)
{
	struct open_file *of = (struct open_file *)(uintptr_t)fi->fh;
	unsigned revents = POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM;
	uint64_t now;
	int err = 0;

	(void)path;
	/* Two polls of one file may run at once: register once only. */
	pthread_mutex_lock(&of->cb_lock);
	if (!of->cb)
		err = sysctl_entry_on_change(of->e, wake_poller, of, &of->cb);
	pthread_mutex_unlock(&of->cb_lock);
	pthread_mutex_lock(&of->lock);
	if (ph) {
		if (of->ph)
			fuse_pollhandle_destroy(of->ph);
		of->ph = ph;
	}
	/*
	 * Like /proc/sys: a change since open or the last poll is
	 * POLLERR|POLLPRI. So is the entry's removal: nothing will change it
	 * any more, and its reads fail.
	 */
	now = sysctl_entry_changes(of->e);
	if (now != of->seen || !sysctl_entry_live(of->e)) {
		of->seen = now;
		revents |= POLLERR | POLLPRI;
	}
	pthread_mutex_unlock(&of->lock);
	*reventsp = revents;
	return err;
}

/*
 * Names come only from registered tables, as in /proc/sys, whose lookup of
 * a missing name fails with ENOENT, so creating anything there (a file by
 * open(O_CREAT), a node, a directory, a link) is ENOENT; the kernel asks
 * these only after a lookup found no such name.
 */
static int fs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	(void)path;
	(void)mode;
	(void)fi;
	return -ENOENT;
}

static int fs_mknod(const char *path, mode_t mode, dev_t dev)
{
	(void)path;
	(void)mode;
	(void)dev;
	return -ENOENT;
}

static int fs_mkdir(const char *path, mode_t mode)
{
	(void)path;
	(void)mode;
	return -ENOENT;
}

static int fs_symlink(const char *target, const char *path)
{
	(void)target;
	(void)path;
	return -ENOENT;
}

static int fs_link(const char *from, const char *to)
{
	(void)from;
	(void)to;
	return -ENOENT;
}

/* Removing a name /proc/sys has is EACCES there, even for root. */
static int fs_unlink(const char *path)
{
	(void)path;
	return -EACCES;
}

static int fs_rmdir(const char *path)
{
	(void)path;
	return -EACCES;
}

/* As /proc/sys: to a missing name ENOENT (its lookup fails), over one EACCES. */
static int fs_rename(const char *from, const char *to, unsigned int flags)
{
	struct sysctl_entry *e = lookup(to);

	(void)from;
	(void)flags;
	if (!e)
		return -ENOENT;
	sysctl_entry_put(e);
	return -EACCES;
}

/* Modes and owners are the tables' and the tree's: EPERM, as /proc/sys. */
static int fs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	(void)path;
	(void)mode;
	(void)fi;
	return -EPERM;
}

static int fs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	(void)path;
	(void)uid;
	(void)gid;
	(void)fi;
	return -EPERM;
}

/*
 * touch: as /proc/sys, the owner (root, or the tree's owner) may set times
 * and anyone else may set them to "now" on what they may write; a time given
 * is EPERM for them, as utimensat(2) says. Nothing is kept: an entry's times
 * stay the mount's, and its value is never touched.
 */
static int fs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	struct sysctl_caller who = caller();
	struct sysctl_entry *e = NULL;
	uid_t owner;
	gid_t group;
	int err;

	(void)fi;
	if (strcmp(path, "/") != 0) {
		e = lookup(path);
		if (!e)
			return -ENOENT;
	}
	sysctl_tree_get_owner(self()->tree, &owner, &group);
	if (who.uid == 0 || who.uid == owner)
		err = 0;
	else if (tv[0].tv_nsec != UTIME_NOW || tv[1].tv_nsec != UTIME_NOW)
		err = -EPERM;
	else if (!e || sysctl_entry_is_dir(e))
		err = -EACCES;
	else
		err = sysctl_access(e, &who, W_OK);
	if (e)
		sysctl_entry_put(e);
	return err;
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/*
	 * Always READDIRPLUS, not the adaptive mode (which sends it for the
	 * first batch of a directory only). Requests are read without splice,
	 * so that counting_read() sees each one.
	 */
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want |= FUSE_CAP_READDIRPLUS;
	conn->want &= ~(unsigned)(FUSE_CAP_READDIRPLUS_AUTO | FUSE_CAP_SPLICE_READ);
	cfg->direct_io = 1;
	/* Tables come and go: keep kernel caches short. */
	cfg->entry_timeout = 1.0;
	cfg->attr_timeout = 1.0;
	cfg->negative_timeout = 0;
	return fuse_get_context()->private_data;
}

static const struct fuse_operations ops = {
	.init = fs_init,
	.getattr = fs_getattr,
	.opendir = fs_opendir,
	.readdir = fs_readdir,
	.releasedir = fs_releasedir,
	.open = fs_open,
	.release = fs_release,
	.read = fs_read,
	.write = fs_write,
	.truncate = fs_truncate,
	.access = fs_access,
	.create = fs_create,
	.mknod = fs_mknod,
	.mkdir = fs_mkdir,
	.symlink = fs_symlink,
	.link = fs_link,
	.unlink = fs_unlink,
	.rmdir = fs_rmdir,
	.rename = fs_rename,
	.chmod = fs_chmod,
	.chown = fs_chown,
	.utimens = fs_utimens,
	.poll = fs_poll,
};

int sysctl_fuse_mount(struct sysctl_tree *tree, const char *mountpoint, struct sysctl_fuse **out)
{
	char *argv[] = { "rcustring", "-o",
			 getuid() == 0 ? "fsname=rcustring,subtype=sysctl,allow_other"
				       : "fsname=rcustring,subtype=sysctl",
			 NULL };
	static const struct fuse_custom_io counting_io = {
		.read = counting_read,
		.writev = counting_writev,
	};
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	struct fuse_session *se;
	struct sysctl_fuse *fs;
	struct stat st;
	int err;

	if (!tree || !mountpoint || !out)
		return -EINVAL;
	if (access("/dev/fuse", R_OK | W_OK) != 0)
		return -ENODEV;
	/* libfuse only logs why a mount failed: check what we can first. */
	if (stat(mountpoint, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	err = -pthread_mutex_init(&fs->files_lock, NULL);
	if (err) {
		free(fs);
		return err;
	}
	fs->tree = tree;
	fs->mounted_at = time(NULL);
	fs->mountpoint = strdup(mountpoint);
	if (!fs->mountpoint) {
		err = -ENOMEM;
		goto out_free;
	}
	/* fuse_new fails for memory (errno ENOMEM) or for options it refuses. */
	errno = 0;
	fs->fuse = fuse_new(&args, &ops, sizeof(ops), fs);
	if (!fs->fuse)
		err = errno == ENOMEM ? -ENOMEM : -EINVAL;
	fuse_opt_free_args(&args);
	if (err)
		goto out_free;
	/* errno holds the failed call's error (stat, open, mount); -EIO if none. */
	errno = 0;
	if (fuse_mount(fs->fuse, mountpoint) != 0) {
		err = errno ? -errno : -EIO;
		fuse_destroy(fs->fuse);
		goto out_free;
	}
	se = fuse_get_session(fs->fuse);
	fs->dev_fd = fuse_session_fd(se);
	counted_add(fs);
	/* The same descriptor, read through counting_read() from now on. */
	err = fuse_session_custom_io(se, &counting_io, fs->dev_fd);
	if (err) {
		counted_remove(fs);
		fuse_unmount(fs->fuse);
		fuse_destroy(fs->fuse);
		goto out_free;
	}
	*out = fs;
	return 0;

out_free:
	free(fs->mountpoint);
	pthread_mutex_destroy(&fs->files_lock);
	free(fs);
	return err;
}

int sysctl_fuse_loop(struct sysctl_fuse *fs)
{
	struct fuse_session *se = fuse_get_session(fs->fuse);
	int ret;

	if (fuse_set_signal_handlers(se) != 0)
		return -EIO;
	ret = fuse_loop_mt(fs->fuse, 0);
	fuse_remove_signal_handlers(se);
	/* A positive value is the signal that stopped the loop: a clean stop. */
	return ret < 0 ? ret : 0;
}

/* Sends the mount one request; may stay blocked until the unmount. */
static void *poke_mount(void *arg)
{
	struct stat st;

	stat(arg, &st);
	free(arg);
	return NULL;
}

void sysctl_fuse_exit(struct sysctl_fuse *fs)
{
	pthread_attr_t attr;
	pthread_t tid;
	char *path;

	fuse_exit(fs->fuse);
	/*
	 * Workers sleep in read(/dev/fuse) and only notice the exit when a
	 * request arrives: send one the kernel cannot answer from its cache (a
	 * name that does not exist). The worker that takes it may leave it
	 * unanswered, so it is sent from a detached thread that the unmount
	 * releases.
	 */
	if (asprintf(&path, "%s/.rcustring-exit", fs->mountpoint) < 0)
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&tid, &attr, poke_mount, path) != 0)
		free(path);
	pthread_attr_destroy(&attr);
}

void sysctl_fuse_unmount(struct sysctl_fuse *fs)
{
	struct open_file *of;
	struct open_dir *d;

	if (!fs)
		return;
	/*
	 * The loop has returned, so no request runs. Files still open will
	 * never be released by the kernel: close them here, before the session
	 * goes, so that no later write runs their callbacks and notifies a
	 * session that is gone. Directories still open are freed too (their
	 * RELEASEDIR, sent in the background, may come after the loop ended).
	 */
	pthread_mutex_lock(&fs->files_lock);
	of = fs->files;
	fs->files = NULL;
	d = fs->dirs;
	fs->dirs = NULL;
	pthread_mutex_unlock(&fs->files_lock);
	while (of) {
		struct open_file *next = of->next;

		file_close(of);
		of = next;
	}
	while (d) {
		struct open_dir *next = d->next;

		dir_free(d);
		d = next;
	}
	counted_remove(fs);
	fuse_unmount(fs->fuse);
	fuse_destroy(fs->fuse);
	pthread_mutex_destroy(&fs->files_lock);
	free(fs->opens);
	free(fs->mountpoint);
	free(fs);
}
