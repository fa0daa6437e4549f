/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * socket-fixture: a small tree served on a control socket for rcusysctl's
 * tests: socket-fixture SOCKET_PATH. Serves until SIGTERM/SIGINT, then
 * stops the server and exits 0. FIXTURE_KEEPALIVE_MS sets the keepalive
 * interval of quiet watches.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rcustring/sysctl_socket.h>

static struct rcustring core_pattern = RCUSTRING_INITIALIZER(128, "core");
static struct rcustring modprobe = RCUSTRING_INITIALIZER(256, "/sbin/modprobe");
static int fwd_eth0, fwd_lo = 1, secret = 7, wo = 1, mtu = 1500;

static struct ctl_table kernel_table[] = {
	{ "core_pattern", &core_pattern, 128, 0644, proc_rcu_string, NULL, NULL,
	  "pattern for core file names" },
	{ "modprobe", &modprobe, 256, 0644, proc_rcu_string, NULL, NULL, "module loader path" },
};
static struct ctl_table eth0_table[] = {
	{ "forwarding", &fwd_eth0, sizeof(int), 0644, proc_dointvec, NULL, NULL, "forward on eth0.200" },
};
static struct ctl_table lo_table[] = {
	{ "forwarding", &fwd_lo, sizeof(int), 0644, proc_dointvec, NULL, NULL, "forward on lo" },
};
/* A '.' in the first component: its procps form cannot be read back. */
static struct ctl_table vlan_table[] = {
	{ "mtu", &mtu, sizeof(int), 0644, proc_dointvec, NULL, NULL, "mtu of eth0.300" },
};
static struct ctl_table priv_table[] = {
	{ "secret", &secret, sizeof(int), 0600, proc_dointvec, NULL, NULL, "root only" },
	{ "write_only", &wo, sizeof(int), 0200, proc_dointvec, NULL, NULL, "nobody reads this" },
};

int main(int argc, char **argv)
{
	struct sysctl_table_header *h[5] = { 0 };
	struct sysctl_tree *tree;
	struct sysctl_socket *srv;
	sigset_t set;
	int sig, ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s SOCKET_PATH\n", argv[0]);
		return 2;
	}
	/* Before any thread starts, so that only sigwait() takes them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	tree = sysctl_tree_new();
	if (!tree || sysctl_register_table(tree, "kernel", kernel_table, 2, &h[0]) ||
	    sysctl_register_table(tree, "net/ipv4/conf/eth0.200", eth0_table, 1, &h[1]) ||
	    sysctl_register_table(tree, "net/ipv4/conf/lo", lo_table, 1, &h[2]) ||
	    sysctl_register_table(tree, "priv", priv_table, 2, &h[3]) ||
	    sysctl_register_table(tree, "/vlan.d/eth0.300", vlan_table, 1, &h[4]))
		return 1;
	/* FIXTURE_KEEPALIVE_MS: quiet watches get ALIVE lines that often. */
	struct sysctl_socket_options opts = { 0 };

	if (getenv("FIXTURE_KEEPALIVE_MS"))
		opts.watch_keepalive_ms = atoi(getenv("FIXTURE_KEEPALIVE_MS"));
	ret = sysctl_socket_start_opts(tree, argv[1], 0666, &opts, &srv);
	if (ret) {
		fprintf(stderr, "socket-fixture: %s: %s\n", argv[1], strerror(-ret));
		return 1;
	}
	sigwait(&set, &sig);
	sysctl_socket_stop(srv);
	for (int i = 0; i < 5; i++)
		sysctl_unregister_table(h[i]);
	sysctl_tree_free(tree);
	rcustring_destroy(&core_pattern);
	rcustring_destroy(&modprobe);
	rcustring_barrier();
	return 0;
}
