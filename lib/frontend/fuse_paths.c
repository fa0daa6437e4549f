/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The FUSE front end's requests on names: attributes, directory listings
 * (READDIRPLUS from a copy per open directory), access checks, and the
 * operations /proc/sys refuses, with /proc/sys's errors.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuse_fs.h"

void rcs_fuse_entry_stat(struct sysctl_entry *e, time_t when, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_atime = st->st_mtime = st->st_ctime = when;
	/* Every name is the tree owner's, as /proc/sys shows a netns owner's. */
	sysctl_tree_get_owner(rcs_fuse_self()->tree, &st->st_uid, &st->st_gid);
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
		e = rcs_fuse_lookup(path);
		if (!e)
			return -ENOENT;
	}
	rcs_fuse_entry_stat(e, rcs_fuse_self()->mounted_at, st);
	if (e)
		sysctl_entry_put(e);
	return 0;
}

/* A listing being built; swapped into the open directory once it is charged. */
struct listing {
	struct dir_ent *ents;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
};

static void listing_free(struct listing *l)
{
	free(l->ents);
	free(l->names);
}

static int grow(void **p, size_t *cap, size_t need, size_t size, size_t first)
{
	size_t n = *cap ? *cap : first;
	void *q;

	while (n < need)
		n *= 2;
	if (n == *cap)
		return 0;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

static int listing_add(struct listing *l, const char *name, mode_t mode)
{
	size_t len = strlen(name) + 1;
	int err = grow((void **)&l->ents, &l->cap, l->n + 1, sizeof(*l->ents), 32);

	if (!err)
		err = grow((void **)&l->names, &l->names_cap, l->names_len + len, 1, 512);
	if (err)
		return err;
	if (l->names_len > UINT32_MAX)
		return -EFBIG;
	l->ents[l->n].name = (uint32_t)l->names_len;
	l->ents[l->n].mode = mode;
	l->n++;
	memcpy(l->names + l->names_len, name, len);
	l->names_len += len;
	return 0;
}

static int add_child(struct sysctl_entry *child, void *arg)
{
	mode_t mode = sysctl_entry_is_dir(child) ? S_IFDIR | 0555
						 : S_IFREG | (sysctl_entry_mode(child) & 0777);

	return listing_add(arg, sysctl_entry_name(child), mode);
}

/*
 * List the children of @path into @d, charged to its opener: "." and ".."
 * first (procps skips two entries blindly). A listing the budget refuses
 * is dropped at once and @d keeps the one it had.
 */
static int dir_take(struct sysctl_fuse *fs, struct open_dir *d, const char *path)
{
	struct listing l = { 0 };
	unsigned units;
	int err = listing_add(&l, ".", S_IFDIR | 0555);

	if (!err)
		err = listing_add(&l, "..", S_IFDIR | 0555);
	if (!err)
		err = sysctl_list_dir(fs->tree, path, add_child, &l);
	if (!err) {
		/* What it holds, not what it uses: realloc's doubling is charged too. */
		units = sysctl_budget_units(fs->budget, l.cap * sizeof(*l.ents) + l.names_cap);
		err = sysctl_budget_resize(fs->budget, d->uid, d->units, units);
	}
	if (err) {
		listing_free(&l);
		return err;
	}
	d->units = units;
	free(d->ents);
	free(d->names);
	d->ents = l.ents;
	d->n = l.n;
	d->cap = l.cap;
	d->names = l.names;
	d->names_len = l.names_len;
	d->names_cap = l.names_cap;
	d->taken = 1;
	d->served = 0;
	return 0;
}

void rcs_fuse_dir_free(struct sysctl_fuse *fs, struct open_dir *d)
{
	sysctl_budget_put(fs->budget, d->uid, SYSCTL_HANDLE_DIR, d->units);
	free(d->ents);
	free(d->names);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

/* The open directory of @path for @uid, counted and listed; NULL with *err. */
static struct open_dir *dir_open(struct sysctl_fuse *fs, const char *path, uid_t uid, int *err)
{
	struct open_dir *d;

	/* Counted before the walk: past the caller's share, nothing is listed. */
	*err = sysctl_budget_take(fs->budget, uid, SYSCTL_HANDLE_DIR, 1);
	if (*err)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d || pthread_mutex_init(&d->lock, NULL) != 0) {
		free(d);
		sysctl_budget_put(fs->budget, uid, SYSCTL_HANDLE_DIR, 1);
		*err = -ENOMEM;
		return NULL;
	}
	d->uid = uid;
	d->units = 1;
	*err = dir_take(fs, d, path);
	if (*err) {
		rcs_fuse_dir_free(fs, d);
		return NULL;
	}
	return d;
}

static int fs_opendir(const char *path, struct fuse_file_info *fi)
{
	struct sysctl_fuse *fs = rcs_fuse_self();
	struct open_dir *d;
	struct sysctl_entry *e = NULL;
	int err;

	if (strcmp(path, "/") != 0) {
		e = rcs_fuse_lookup(path);
		if (!e)
			return -ENOENT;
		if (!sysctl_entry_is_dir(e)) {
			sysctl_entry_put(e);
			return -ENOTDIR;
		}
		sysctl_entry_put(e);
	}
	d = dir_open(fs, path, rcs_fuse_caller().uid, &err);
	if (!d)
		return err;
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
	struct sysctl_fuse *fs = rcs_fuse_self();
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
	rcs_fuse_dir_free(fs, d);
	return 0;
}

/* What stat(2) shows for child @i of @d (rcs_fuse_entry_stat(), from the copy). */
static void dir_ent_stat(struct sysctl_fuse *fs, const struct open_dir *d, size_t i,
			 struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_atime = st->st_mtime = st->st_ctime = fs->mounted_at;
	sysctl_tree_get_owner(fs->tree, &st->st_uid, &st->st_gid);
	st->st_mode = d->ents[i].mode;
	st->st_nlink = S_ISDIR(st->st_mode) ? 2 : 1;
	/* "." and "..": not 0, or readdir(3) skips them (it skips inode number 0). */
	if (i < 2)
		st->st_ino = 1;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t offset,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct sysctl_fuse *fs = rcs_fuse_self();
	struct open_dir *d = (struct open_dir *)(uintptr_t)fi->fh;
	enum fuse_fill_dir_flags plus = flags & FUSE_READDIR_PLUS ? FUSE_FILL_DIR_PLUS : 0;
	int err = 0;

	if (offset < 0)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	/* Offset 0 lists anew (rewinddir), unless the listing opendir took is still unread. */
	if ((offset == 0 && d->served) || !d->taken)
		err = dir_take(fs, d, path);
	d->served = 1;
	/* Offsets are the index of the next entry, so a listing resumes in O(1). */
	for (size_t i = (size_t)offset; !err && i < d->n; i++) {
		struct stat st;

		dir_ent_stat(fs, d, i, &st);
		if (filler(buf, d->names + d->ents[i].name, &st, (off_t)(i + 1), plus))
			break;
	}
	pthread_mutex_unlock(&d->lock);
	return err;
}

static int fs_access(const char *path, int mask)
{
	struct sysctl_caller who = rcs_fuse_caller();
	struct sysctl_entry *e;
	int err;

	if (strcmp(path, "/") == 0)
		return mask & W_OK ? -EACCES : 0;
	e = rcs_fuse_lookup(path);
	if (!e)
		return -ENOENT;
	err = sysctl_entry_is_dir(e) ? (mask & W_OK ? -EACCES : 0) : sysctl_access(e, &who, mask);
	sysctl_entry_put(e);
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
	struct sysctl_entry *e = rcs_fuse_lookup(to);

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
	struct sysctl_caller who = rcs_fuse_caller();
	struct sysctl_entry *e = NULL;
	uid_t owner;
	gid_t group;
	int err;

	(void)fi;
	if (strcmp(path, "/") != 0) {
		e = rcs_fuse_lookup(path);
		if (!e)
			return -ENOENT;
	}
	sysctl_tree_get_owner(rcs_fuse_self()->tree, &owner, &group);
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

void rcs_fuse_path_ops(struct fuse_operations *ops)
{
	ops->getattr = fs_getattr;
	ops->opendir = fs_opendir;
	ops->readdir = fs_readdir;
	ops->releasedir = fs_releasedir;
	ops->access = fs_access;
	ops->create = fs_create;
	ops->mknod = fs_mknod;
	ops->mkdir = fs_mkdir;
	ops->symlink = fs_symlink;
	ops->link = fs_link;
	ops->unlink = fs_unlink;
	ops->rmdir = fs_rmdir;
	ops->rename = fs_rename;
	ops->chmod = fs_chmod;
	ops->chown = fs_chown;
	ops->utimens = fs_utimens;
}
