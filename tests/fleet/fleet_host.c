/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fleet-host: a small tree mirrored from etcd and served on a control
 * socket, standing for one host of a fleet in the etcd tests.
 *
 *   fleet-host --socket PATH --etcd URL[,URL] --prefix P --host NAME [--write-through]
 *              [--idle-ms N] [--backoff-ms N] [--refuse-commits N]
 *              [--pair-readers N] [--key-by-key]
 *
 * Entries: kernel.core_pattern (string, 63 bytes at most), kernel.modprobe
 * (string), kernel.cpus (a 64-bit bitmap), net.core.somaxconn (int
 * 16..65535), vm.swappiness (int 0..100), misc.motd (a string served by
 * a handler of the program's own, which no commit can take: etcd does not
 * own it, the mirror writes it alone) and the sync's status under
 * etcd.*. The first five are owned by etcd:
 * local writes are refused, or with --write-through put to etcd. Runs until SIGTERM/SIGINT, then stops
 * and prints the audit ring, one "audit PATH OLD NEW" line per write (tab
 * separated), so a test can tell that no value was applied twice.
 * --backoff-ms sets both reconnect delays, so that a test can watch the
 * status between a failure and the reconnect. --pair-readers N starts N
 * threads taking snapshots of kernel.core_pattern and net.core.somaxconn
 * (pair_readers.c), which print their counts and the commits of several
 * entries at the stop; --key-by-key has
 * the mirror apply a revision's values one by one (etcd_sync_opts).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rcustring/sysctl_socket.h>

#include "etcd_sync.h"
#include "pair_readers.h"

static struct rcustring core_pattern = RCUSTRING_INITIALIZER(64, "core");
static struct rcustring modprobe = RCUSTRING_INITIALIZER(256, "/sbin/modprobe");
static int somaxconn = 128, somaxconn_min = 16, somaxconn_max = 65535;
static int swappiness = 60, swappiness_min = 0, swappiness_max = 100;
static unsigned long cpus_bits[1], *cpus = cpus_bits;

static struct ctl_table kernel_table[] = {
	{ "core_pattern", &core_pattern, 64, 0644, proc_rcu_string, NULL, NULL,
	  "pattern for core file names" },
	{ "modprobe", &modprobe, 256, 0644, proc_rcu_string, NULL, NULL, "module loader path" },
	{ "cpus", &cpus, 64, 0644, proc_do_large_bitmap, NULL, NULL, "a set of CPUs" },
};
static struct ctl_table net_table[] = {
	{ "somaxconn", &somaxconn, sizeof(int), 0644, proc_dointvec_minmax, &somaxconn_min,
	  &somaxconn_max, "listen backlog limit" },
};
static struct ctl_table vm_table[] = {
	{ "swappiness", &swappiness, sizeof(int), 0644, proc_dointvec_minmax, &swappiness_min,
	  &swappiness_max, "swap tendency" },
};

static char motd[64] = "welcome";

static int motd_handler(const struct ctl_table *t, int write, void *buf, size_t *lenp, off_t *ppos)
{
	return proc_dostring(t, write, buf, lenp, ppos);
}

static struct ctl_table misc_table[] = {
	{ "motd", motd, sizeof(motd), 0644, motd_handler, NULL, NULL, "message of the day" },
};

/* --refuse-commits N: the first N commits of mirrored values fail as a full
 * disk's would (-EIO), so a test sees the mirror apply them again later. */
static int refuse_commits;

static int commit(struct sysctl_entry *e, const struct sysctl_change *change, void *arg)
{
	(void)e;
	(void)arg;
	if (change->origin == SYSCTL_ORIGIN_MIRROR &&
	    __atomic_fetch_sub(&refuse_commits, 1, __ATOMIC_RELAXED) > 0)
		return -EIO;
	return 0;
}

static void log_line(void *arg, const char *msg)
{
	fprintf(stderr, "%s: %s\n", (const char *)arg, msg);
}

static void print_audit(struct sysctl_tree *tree)
{
	struct sysctl_audit_record rec[64];
	uint64_t after = 0;
	size_t n;

	while ((n = sysctl_audit_read(tree, after, rec, 64)) > 0) {
		for (size_t i = 0; i < n; i++)
			printf("audit\t%s\t%s\t%s\n", rec[i].path, rec[i].old_value,
			       rec[i].new_value);
		after = rec[n - 1].seq;
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "etcd", required_argument, NULL, 'e' },
		{ "prefix", required_argument, NULL, 'p' },
		{ "host", required_argument, NULL, 'H' },
		{ "write-through", no_argument, NULL, 'w' },
		{ "idle-ms", required_argument, NULL, 'i' },
		{ "backoff-ms", required_argument, NULL, 'b' },
		{ "refuse-commits", required_argument, NULL, 'r' },
		{ "pair-readers", required_argument, NULL, 'R' },
		{ "key-by-key", no_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	struct etcd_sync_opts so = { .backoff_min_ms = 50, .backoff_max_ms = 1000 };
	struct sysctl_table_header *h[5] = { 0 };
	const char *sock = NULL;
	struct sysctl_tree *tree;
	struct sysctl_socket *srv;
	struct etcd_sync *sync;
	sigset_t set;
	int opt, sig, ret, readers = 0;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 's': sock = optarg; break;
		case 'e': so.endpoints = optarg; break;
		case 'p': so.prefix = optarg; break;
		case 'H': so.host = optarg; break;
		case 'w': so.write_through = 1; break;
		case 'i': so.idle_ms = atoi(optarg); break;
		case 'b': so.backoff_min_ms = so.backoff_max_ms = atoi(optarg); break;
		case 'r': refuse_commits = atoi(optarg); break;
		case 'R': readers = atoi(optarg); break;
		case 'k': so.key_by_key = 1; break;
		default: return 2;
		}
	}
	if (!sock || !so.endpoints || !so.prefix) {
		fprintf(stderr, "usage: %s --socket PATH --etcd URL --prefix P [--host NAME]\n",
			argv[0]);
		return 2;
	}
	so.log = log_line;
	so.log_arg = (void *)(so.host ? so.host : "fleet-host");
	/* Before any thread starts, so that only sigwait() takes them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	tree = sysctl_tree_new();
	if (!tree || sysctl_tree_set_commit(tree, commit, NULL) || pair_commits_count(tree))
		return 1;
	ret = etcd_sync_new(tree, &so, &sync);
	if (ret) {
		fprintf(stderr, "fleet-host: etcd: %s\n", strerror(-ret));
		return 1;
	}
	if (etcd_sync_own_table(sync, "kernel", kernel_table, 3, &h[0]) ||
	    etcd_sync_own_table(sync, "net.core", net_table, 1, &h[1]) ||
	    etcd_sync_own_table(sync, "vm", vm_table, 1, &h[2]) ||
	    etcd_sync_register_status(sync, "etcd", &h[3]) ||
	    sysctl_register_table(tree, "misc", misc_table, 1, &h[4]) || etcd_sync_run(sync))
		return 1;
	ret = sysctl_socket_start(tree, sock, 0600, &srv);
	if (ret) {
		fprintf(stderr, "fleet-host: %s: %s\n", sock, strerror(-ret));
		return 1;
	}
	if (readers && pair_readers_start(tree, "kernel.core_pattern", "net.core.somaxconn",
					  readers)) {
		fprintf(stderr, "fleet-host: cannot start %d pair readers\n", readers);
		return 1;
	}
	sigwait(&set, &sig);
	pair_readers_stop(so.log_arg);
	sysctl_socket_stop(srv);
	for (int i = 0; i < 5; i++)
		sysctl_unregister_table(h[i]);
	etcd_sync_stop(sync);
	print_audit(tree);
	sysctl_tree_free(tree);
	rcustring_destroy(&core_pattern);
	rcustring_destroy(&modprobe);
	rcustring_barrier();
	return 0;
}
