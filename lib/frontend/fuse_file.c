/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The FUSE front end's open files: open (counted against the handle
 * budget, sysctl_budget.h, as directories, pollers and socket connections
 * are), read, write, truncate and poll. Each open file holds a
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
#include "fuse_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

void rcs_fuse_file_close(struct sysctl_fuse *fs, struct open_file *of)
{
	/* Remove the callback first: it may be running and take of->lock. */
	pthread_mutex_lock(&of->cb_lock);
	if (of->cb) {
		sysctl_callback_remove(of->cb);
		sysctl_budget_put(fs->budget, of->uid, SYSCTL_HANDLE_POLL, 1);
	}
	of->cb = NULL;
	pthread_mutex_unlock(&of->cb_lock);
	if (of->ph)
		fuse_pollhandle_destroy(of->ph);
	sysctl_budget_put(fs->budget, of->uid, SYSCTL_HANDLE_FILE, of->units);
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

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	struct sysctl_fuse *fs = rcs_fuse_self();
	struct sysctl_caller who = rcs_fuse_caller();
	struct open_file *of;
	struct sysctl_entry *e = rcs_fuse_lookup(path);
	int err;

	if (!e)
		return -ENOENT;
	err = sysctl_entry_is_dir(e) ? -EISDIR : sysctl_access(e, &who, access_mask(fi->flags));
	/* Past the caller's share: EMFILE, or ENFILE when the users' common share is taken. */
	if (!err)
		err = sysctl_budget_take(fs->budget, who.uid, SYSCTL_HANDLE_FILE, 1);
	of = err ? NULL : calloc(1, sizeof(*of));
	if (!err && !of) {
		sysctl_budget_put(fs->budget, who.uid, SYSCTL_HANDLE_FILE, 1);
		err = -ENOMEM;
	}
	if (err) {
		sysctl_entry_put(e);
		return err;
	}
	of->e = e;
	of->uid = who.uid;
	of->units = 1;
	of->seen = sysctl_entry_changes(e);
	err = file_init_locks(of);
	if (err) {
		sysctl_budget_put(fs->budget, who.uid, SYSCTL_HANDLE_FILE, 1);
		sysctl_entry_put(e);
		free(of);
		return err;
	}
	file_link(fs, of);
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
	file_unlink(rcs_fuse_self(), of);
	rcs_fuse_file_close(rcs_fuse_self(), of);
	return 0;
}

/*
 * Copy the whole value with one handler call at offset 0, so that it is
 * one value even if a write comes during the copy. A read that fills the
 * buffer may have been cut: sysctl_entry_read_whole() reads again into a
 * bigger one.
 */
static int take_snapshot(struct sysctl_budget *b, struct open_file *of)
{
	char *snap;
	size_t len;
	unsigned units;
	int err = sysctl_entry_read_whole(of->e, SNAPSHOT_FIRST, SNAPSHOT_MAX, &snap, &len);

	if (err)
		return err;
	/* The copy is charged by its size: a big value costs its reader more of its share. */
	units = sysctl_budget_units(b, len);
	err = sysctl_budget_resize(b, of->uid, of->units, units);
	if (err) {
		free(snap);
		return err;
	}
	of->units = units;
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
		err = take_snapshot(rcs_fuse_self()->budget, of);
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
	struct sysctl_caller who = rcs_fuse_caller();
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
	struct sysctl_caller who = rcs_fuse_caller();
	struct sysctl_entry *e;
	int err;

	(void)size;
	if (fi)
		return 0; /* already checked for writing at open */
	e = rcs_fuse_lookup(path);
	if (!e)
		return -ENOENT;
	err = sysctl_entry_is_dir(e) ? -EISDIR : sysctl_access(e, &who, W_OK);
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
	if (!of->cb) {
		/* A poller holds a callback on the entry: it counts as one more handle. */
		struct sysctl_budget *b = rcs_fuse_self()->budget;

		err = sysctl_budget_take(b, of->uid, SYSCTL_HANDLE_POLL, 1);
		if (!err) {
			err = sysctl_entry_on_change(of->e, wake_poller, of, &of->cb);
			if (err)
				sysctl_budget_put(b, of->uid, SYSCTL_HANDLE_POLL, 1);
		}
	}
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

void rcs_fuse_file_ops(struct fuse_operations *ops)
{
	ops->open = fs_open;
	ops->release = fs_release;
	ops->read = fs_read;
	ops->write = fs_write;
	ops->truncate = fs_truncate;
	ops->poll = fs_poll;
}
