/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The FUSE front end (libfuse3, path-based API): mount, run, stop and
 * unmount. The requests on names are fuse_paths.c's, those on open files
 * fuse_file.c's, the request counts fuse_count.c's.
 */
#include "fuse_fs.h"

#include <errno.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/*
	 * Always READDIRPLUS, not the adaptive mode (which sends it for the
	 * first batch of a directory only). Requests are read without splice,
	 * so that rcs_fuse_counting_read() sees each one.
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

/* The operations: fs_init here, the rest from fuse_paths.c and fuse_file.c. */
static void fill_ops(struct fuse_operations *ops)
{
	memset(ops, 0, sizeof(*ops));
	ops->init = fs_init;
	rcs_fuse_path_ops(ops);
	rcs_fuse_file_ops(ops);
}

static void fs_free(struct sysctl_fuse *fs)
{
	sysctl_budget_free(fs->own_budget);
	free(fs->mountpoint);
	pthread_mutex_destroy(&fs->files_lock);
	free(fs);
}

/* A mount's state before libfuse's: its own budget until the program gives its shared one. */
static int fs_new(struct sysctl_tree *tree, const char *mountpoint, struct sysctl_fuse **out)
{
	struct sysctl_fuse *fs = calloc(1, sizeof(*fs));
	int err;

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
	err = fs->mountpoint ? sysctl_budget_new(NULL, &fs->own_budget) : -ENOMEM;
	if (err) {
		fs_free(fs);
		return err;
	}
	fs->budget = fs->own_budget;
	*out = fs;
	return 0;
}

int sysctl_fuse_mount(struct sysctl_tree *tree, const char *mountpoint, struct sysctl_fuse **out)
{
	char *argv[] = { "rcustring", "-o",
			 getuid() == 0 ? "fsname=rcustring,subtype=sysctl,allow_other"
				       : "fsname=rcustring,subtype=sysctl",
			 NULL };
	static const struct fuse_custom_io counting_io = {
		.read = rcs_fuse_counting_read,
		.writev = rcs_fuse_counting_writev,
	};
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	struct fuse_operations ops;
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
	err = fs_new(tree, mountpoint, &fs);
	if (err)
		return err;
	/* fuse_new fails for memory (errno ENOMEM) or for options it refuses. */
	fill_ops(&ops);
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
	/* The same descriptor, read through rcs_fuse_counting_read() from now on. */
	err = fuse_session_custom_io(se, &counting_io, fs->dev_fd);
	if (err) {
		fuse_unmount(fs->fuse);
		fuse_destroy(fs->fuse);
		goto out_free;
	}
	/* Counted from the loop's first read; nothing is read before it runs. */
	rcs_fuse_counted_add(fs);
	*out = fs;
	return 0;

out_free:
	fs_free(fs);
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

		rcs_fuse_file_close(fs, of);
		of = next;
	}
	while (d) {
		struct open_dir *next = d->next;

		rcs_fuse_dir_free(fs, d);
		d = next;
	}
	rcs_fuse_counted_remove(fs);
	fuse_unmount(fs->fuse);
	fuse_destroy(fs->fuse);
	fs_free(fs);
}

int sysctl_fuse_set_budget(struct sysctl_fuse *fs, struct sysctl_budget *budget)
{
	int err = 0;

	if (!fs)
		return -EINVAL;
	pthread_mutex_lock(&fs->files_lock);
	/* What open handles cost was taken from the budget they must go back to. */
	if (fs->files || fs->dirs)
		err = -EBUSY;
	else
		fs->budget = budget ? budget : fs->own_budget;
	pthread_mutex_unlock(&fs->files_lock);
	return err;
}
