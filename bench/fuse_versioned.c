/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcustring-fuse-versioned: a measurement of one design, not the front end.
 * One file, "x", served with libfuse's low-level API, where each value the
 * file has held is its own inode: a write makes a new inode for the new
 * value before write() returns, and the name is looked up at every open
 * (entry timeout 0), so the next open finds the new inode. An inode's value
 * never changes, so the kernel may cache its pages (FOPEN_KEEP_CACHE), its
 * exact size and its attributes for as long as it likes: every page and the
 * size of one inode come from one value, and an open file keeps its inode,
 * so it reads one value however many read() calls it makes. Opens for
 * writing use direct I/O. A version is freed when the kernel forgets its
 * inode. A cat then waits for LOOKUP and OPEN only.
 *
 * A long entry timeout with fuse_lowlevel_notify_inval_entry() sent from
 * the WRITE handler hung once: the worker waited in the kernel for the
 * directory's lock, held by an open whose LOOKUP waited for a free worker.
 * With a bounded pool that can happen whenever every worker is in such a
 * WRITE, so the name is not cached instead.
 *
 * Requests are counted by opcode as lib/frontend/fuse_fs.c counts them
 * (every request read from /dev/fuse); SIGUSR1 writes "requests N" and one
 * "<opcode number> N" line per opcode seen to STATS.
 *   rcustring-fuse-versioned MOUNTPOINT STATS [INITIAL-VALUE]
 * Built as bench/rcustring-fuse-versioned; bench/fuse_versioned.sh runs it.
 */
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <fuse_lowlevel.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NAME "x"
#define FOREVER 86400.0
#define OP_SLOTS 64

struct version {
	fuse_ino_t ino;
	uint64_t nlookup;
	size_t len;
	struct version *next;
	char val[];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct version *versions; /* newest first: versions is the current value */
static fuse_ino_t next_ino = 2;
static uint64_t by_op[OP_SLOTS], requests;
static const char *stats_path;

static struct version *find(fuse_ino_t ino)
{
	struct version *v;

	for (v = versions; v && v->ino != ino; v = v->next)
		;
	return v;
}

/* Called with lock held. */
static int push(const char *val, size_t len)
{
	struct version *v = malloc(sizeof(*v) + len);

	if (!v)
		return -ENOMEM;
	v->ino = next_ino++;
	v->nlookup = 0;
	v->len = len;
	memcpy(v->val, val, len);
	v->next = versions;
	versions = v;
	return 0;
}

/* Called with lock held: frees old versions the kernel no longer knows. */
static void reap(void)
{
	struct version **pp = &versions->next;

	while (*pp) {
		struct version *v = *pp;

		if (v->nlookup == 0) {
			*pp = v->next;
			free(v);
		} else {
			pp = &v->next;
		}
	}
}

static void fill_attr(struct stat *st, fuse_ino_t ino, size_t len)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else {
		st->st_mode = S_IFREG | 0644;
		st->st_nlink = 1;
		st->st_size = (off_t)len;
	}
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	/*
	 * The name is looked up at every open (entry timeout 0), so an open
	 * after write() returned finds the new inode; the inode's attributes
	 * never change.
	 */
	struct fuse_entry_param e = { .attr_timeout = FOREVER, .entry_timeout = 0 };

	if (parent != FUSE_ROOT_ID || strcmp(name, NAME) != 0) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	pthread_mutex_lock(&lock);
	versions->nlookup++;
	e.ino = versions->ino;
	fill_attr(&e.attr, e.ino, versions->len);
	pthread_mutex_unlock(&lock);
	fuse_reply_entry(req, &e);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t n)
{
	struct version *v;

	pthread_mutex_lock(&lock);
	v = find(ino);
	if (v)
		v->nlookup -= n < v->nlookup ? n : v->nlookup;
	reap();
	pthread_mutex_unlock(&lock);
	fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct version *v;
	struct stat st;

	(void)fi;
	pthread_mutex_lock(&lock);
	v = ino == FUSE_ROOT_ID ? NULL : find(ino);
	if (ino != FUSE_ROOT_ID && !v) {
		pthread_mutex_unlock(&lock);
		fuse_reply_err(req, ENOENT);
		return;
	}
	fill_attr(&st, ino, v ? v->len : 0);
	pthread_mutex_unlock(&lock);
	fuse_reply_attr(req, &st, FOREVER);
}

/* O_TRUNC (echo >): a write replaces the whole value anyway. */
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	(void)attr;
	(void)to_set;
	op_getattr(req, ino, fi);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	if ((fi->flags & O_ACCMODE) == O_RDONLY)
		fi->keep_cache = 1; /* this inode's value never changes */
	else
		fi->direct_io = 1;
	fi->noflush = 1;
	fuse_reply_open(req, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct version *v;
	char *copy = NULL;
	size_t n = 0;

	(void)fi;
	pthread_mutex_lock(&lock);
	v = find(ino);
	if (v && (size_t)off < v->len) {
		n = v->len - (size_t)off < size ? v->len - (size_t)off : size;
		copy = malloc(n ? n : 1);
		if (copy)
			memcpy(copy, v->val + off, n);
	}
	pthread_mutex_unlock(&lock);
	if (!v)
		fuse_reply_err(req, ENOENT);
	else if (n && !copy)
		fuse_reply_err(req, ENOMEM);
	else
		fuse_reply_buf(req, copy, n);
	free(copy);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	int err;

	(void)ino;
	(void)fi;
	if (off != 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	pthread_mutex_lock(&lock);
	err = push(buf, size);
	if (!err)
		reap();
	pthread_mutex_unlock(&lock);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	fuse_reply_write(req, size);
}

static ssize_t counting_read(int fd, void *buf, size_t len, void *userdata)
{
	ssize_t n = read(fd, buf, len);
	const struct fuse_in_header *in = buf;

	(void)userdata;
	if (n >= (ssize_t)sizeof(*in)) {
		__atomic_add_fetch(&requests, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&by_op[in->opcode < OP_SLOTS ? in->opcode : 0], 1,
				   __ATOMIC_RELAXED);
	}
	return n;
}

static ssize_t counting_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	(void)userdata;
	return writev(fd, iov, count);
}

static void *stats_thread(void *arg)
{
	sigset_t *set = arg;
	int sig;

	while (sigwait(set, &sig) == 0) {
		FILE *f = fopen(stats_path, "w");

		if (!f)
			continue;
		fprintf(f, "requests %llu\n", (unsigned long long)requests);
		for (int i = 0; i < OP_SLOTS; i++)
			if (by_op[i])
				fprintf(f, "%d %llu\n", i, (unsigned long long)by_op[i]);
		fclose(f);
	}
	return NULL;
}

static const struct fuse_lowlevel_ops ops = {
	.lookup = op_lookup,
	.forget = op_forget,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.open = op_open,
	.read = op_read,
	.write = op_write,
};

int main(int argc, char **argv)
{
	static const struct fuse_custom_io io = { .read = counting_read, .writev = counting_writev };
	char *fargv[] = { argv[0], "-o", "fsname=versioned,allow_other", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse_loop_config *cfg;
	struct fuse_session *session;
	static sigset_t usr1;
	const char *init = argc > 3 ? argv[3] : "0\n";
	pthread_t tid;
	int ret;

	if (argc < 3) {
		fprintf(stderr, "usage: %s MOUNTPOINT STATS [INITIAL-VALUE]\n", argv[0]);
		return 2;
	}
	stats_path = argv[2];
	push(init, strlen(init));
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	pthread_create(&tid, NULL, stats_thread, &usr1);
	session = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	if (!session || fuse_set_signal_handlers(session) != 0 ||
	    fuse_session_mount(session, argv[1]) != 0)
		return 1;
	fuse_session_custom_io(session, &io, fuse_session_fd(session));
	cfg = fuse_loop_cfg_create();
	/* Idle workers stay, as fuse_loop_mt() keeps them: no thread per request. */
	fuse_loop_cfg_set_clone_fd(cfg, 0);
	fuse_loop_cfg_set_idle_threads(cfg, 10);
	fuse_loop_cfg_set_max_threads(cfg, 10);
	ret = fuse_session_loop_mt(session, cfg);
	fuse_loop_cfg_destroy(cfg);
	fuse_session_unmount(session);
	fuse_remove_signal_handlers(session);
	fuse_session_destroy(session);
	return ret ? 1 : 0;
}
