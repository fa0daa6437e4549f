/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The audit ring: the last SYSCTL_AUDIT_RING successful writes of a tree,
 * each with who, when, the path and the value before and after. A fixed
 * array under a mutex: writes are rare, and a bounded ring cannot grow.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/copy_cut.h"
#include "rcustring/sysctl.h"
#include "tree.h"

int rcs_audit_init(struct sysctl_tree *tree)
{
	/* calloc: the ring is ~800 KiB of pages untouched until written. */
	tree->audit = calloc(SYSCTL_AUDIT_RING, sizeof(*tree->audit));
	if (!tree->audit)
		return -ENOMEM;
	tree->audit_seq = 0;
	return 0;
}

/* The ring only: tree.c owns audit_lock, as it initializes it. */
void rcs_audit_fini(struct sysctl_tree *tree)
{
	free(tree->audit);
	tree->audit = NULL;
}

/*
 * The record's form of a value read through the handler (@len may exceed
 * the SYSCTL_AUDIT_VALUE_MAX + 1 bytes of @buf, which the read asked for to
 * know whether the value was cut): the file's trailing newline dropped,
 * cut with "..." when longer than the record holds.
 */
void rcs_audit_value_text(char *out, const char *buf, size_t len)
{
	if (len > SYSCTL_AUDIT_VALUE_MAX + 1)
		len = SYSCTL_AUDIT_VALUE_MAX + 1;
	if (len && buf[len - 1] == '\n')
		len--;
	rcs_copy_cut(out, SYSCTL_AUDIT_VALUE_MAX, buf, len);
}

void rcs_audit_record(struct sysctl_tree *tree, const struct sysctl_caller *who, const char *path,
		      const char *old_value, const char *new_value)
{
	struct sysctl_audit_record *r;

	pthread_mutex_lock(&tree->audit_lock);
	tree->audit_seq++;
	r = &tree->audit[(tree->audit_seq - 1) % SYSCTL_AUDIT_RING];
	r->seq = tree->audit_seq;
	clock_gettime(CLOCK_REALTIME, &r->when);
	r->uid = who ? who->uid : (uid_t)-1;
	r->pid = who ? who->pid : 0;
	rcs_copy_cut(r->path, sizeof(r->path), path, strlen(path));
	rcs_copy_cut(r->old_value, sizeof(r->old_value), old_value, strlen(old_value));
	rcs_copy_cut(r->new_value, sizeof(r->new_value), new_value, strlen(new_value));
	pthread_mutex_unlock(&tree->audit_lock);
}

size_t sysctl_audit_read(struct sysctl_tree *tree, uint64_t after_seq,
			 struct sysctl_audit_record *out, size_t max)
{
	uint64_t seq, oldest;
	size_t n = 0;

	if (!tree || (!out && max))
		return 0;
	pthread_mutex_lock(&tree->audit_lock);
	oldest = tree->audit_seq > SYSCTL_AUDIT_RING ? tree->audit_seq - SYSCTL_AUDIT_RING + 1 : 1;
	seq = after_seq + 1 > oldest ? after_seq + 1 : oldest;
	for (; seq <= tree->audit_seq && n < max; seq++)
		out[n++] = tree->audit[(seq - 1) % SYSCTL_AUDIT_RING];
	pthread_mutex_unlock(&tree->audit_lock);
	return n;
}
