/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The FUSE front end's request counts (sysctl_fuse_get_stats()).
 *
 * Every request the kernel sends is read from the mount's /dev/fuse
 * descriptor, so libfuse is given read and writev functions
 * (fuse_session_custom_io) that count what they read by opcode: the count
 * covers requests libfuse answers by itself (FLUSH, FORGET, OPENDIR, ...)
 * as well as those reaching the callbacks (fuse_paths.c, fuse_file.c).
 * libfuse passes its own userdata (the struct fuse) to them, not ours, so
 * mounts are found by descriptor in a short list. Each request of every
 * mount walks that list, so the walk takes no lock: the list is RCU
 * (liburcu-bp, the library's flavor, which registers libfuse's worker
 * threads on their first request), changed only at mount and unmount under
 * a mutex, and a mount leaves it a grace period before it is freed. The
 * counts are relaxed atomic adds on the mount's own counters: exact, and
 * read without stopping the workers.
 */
#include <errno.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <urcu-bp.h>
#include <urcu/rculist.h>

#include "fuse_fs.h"

/* Mount and unmount only; the requests' walk is a read-side section. */
static pthread_mutex_t counted_lock = PTHREAD_MUTEX_INITIALIZER;
static CDS_LIST_HEAD(counted);

static void count_request(int fd, const void *buf, ssize_t len)
{
	const struct fuse_in_header *in = buf;
	struct sysctl_fuse *fs;

	if (len < (ssize_t)sizeof(*in))
		return;
	rcu_read_lock();
	cds_list_for_each_entry_rcu(fs, &counted, counted_node) {
		if (fs->dev_fd != fd)
			continue;
		__atomic_add_fetch(&fs->requests, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&fs->by_op[in->opcode < OP_SLOTS ? in->opcode : 0], 1,
				   __ATOMIC_RELAXED);
		break;
	}
	rcu_read_unlock();
}

ssize_t rcs_fuse_counting_read(int fd, void *buf, size_t len, void *userdata)
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

ssize_t rcs_fuse_counting_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	(void)userdata;
	return writev(fd, iov, count);
}

void rcs_fuse_counted_add(struct sysctl_fuse *fs)
{
	pthread_mutex_lock(&counted_lock);
	cds_list_add_rcu(&fs->counted_node, &counted);
	pthread_mutex_unlock(&counted_lock);
}

void rcs_fuse_counted_remove(struct sysctl_fuse *fs)
{
	pthread_mutex_lock(&counted_lock);
	cds_list_del_rcu(&fs->counted_node);
	pthread_mutex_unlock(&counted_lock);
	/* Another mount's worker may be walking past it: fs is freed next. */
	synchronize_rcu();
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
