/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sysctl-fixture: a small tree served over FUSE for the integration tests
 * and the benchmark: sysctl-fixture MOUNTPOINT [EXTRA_ENTRIES [SOCKET]].
 * Runs until SIGTERM/SIGINT, then unmounts and exits 0. With SOCKET, the
 * same tree is served on a control socket there too (mode 0666).
 *
 * With SYSCTL_FIXTURE_STATS=FILE in the environment, each SIGUSR1 writes
 * the mount's request counts (sysctl_fuse_get_stats) to FILE, whole: they
 * go to FILE.tmp first, which is then renamed. With SYSCTL_FIXTURE_OWNER=
 * UID:GID, the tree's owner is set to those (sysctl_tree_set_owner).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rcustring/sysctl_fuse.h>
#include <rcustring/sysctl_socket.h>

static struct rcustring core_pattern = RCUSTRING_INITIALIZER(128, "core");
static struct rcustring modprobe = RCUSTRING_INITIALIZER(256, "/sbin/modprobe");
static char ostype[16] = "rcustring";
static int swappiness = 60, swappiness_min = 0, swappiness_max = 200;
static int secret = 7;
static int ratios[3] = { 1, 2, 3 };
static bool forwarding;
/* Names holding a '.' in the first component (looked up in '/' form). */
static int vlan_mtu = 1500;
static struct rcustring app_x = RCUSTRING_INITIALIZER(64, "x");

static struct ctl_table kernel_table[] = {
	{ "core_pattern", &core_pattern, 128, 0644, proc_rcu_string, NULL, NULL,
	  "pattern for core file names" },
	{ "modprobe", &modprobe, 256, 0644, proc_rcu_string, NULL, NULL, "module loader path" },
	{ "ostype", ostype, sizeof(ostype), 0444, proc_dostring, NULL, NULL, "read-only string" },
	{ "secret", &secret, sizeof(int), 0600, proc_dointvec, NULL, NULL, "root-only int" },
};
static struct ctl_table vm_table[] = {
	{ "swappiness", &swappiness, sizeof(int), 0644, proc_dointvec_minmax, &swappiness_min,
	  &swappiness_max, "0..200" },
	{ "ratios", ratios, sizeof(ratios), 0644, proc_dointvec, NULL, NULL, "three ints" },
};
static struct ctl_table conf_table[] = {
	{ "forwarding", &forwarding, sizeof(bool), 0644, proc_dobool, NULL, NULL, "a bool" },
};
static struct ctl_table vlan_table[] = {
	{ "mtu", &vlan_mtu, sizeof(int), 0644, proc_dointvec, NULL, NULL, "an int under eth0.200" },
};
static struct ctl_table app_table[] = {
	{ "x", &app_x, 64, 0644, proc_rcu_string, NULL, NULL, "a string under app.d/sub" },
};

static struct sysctl_fuse *fs;
static pthread_mutex_t fs_lock = PTHREAD_MUTEX_INITIALIZER; /* fs, for stats_main */

static void write_stats(const char *file)
{
	struct sysctl_fuse_stats st;
	char tmp[4096];
	FILE *f;
	int ret;

	pthread_mutex_lock(&fs_lock);
	ret = fs ? sysctl_fuse_get_stats(fs, &st) : -ENOENT;
	pthread_mutex_unlock(&fs_lock);
	if (ret != 0 || snprintf(tmp, sizeof(tmp), "%s.tmp", file) >= (int)sizeof(tmp))
		return;
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f,
		"requests %" PRIu64 "\nlookup %" PRIu64 "\ngetattr %" PRIu64 "\naccess %" PRIu64
		"\nopen %" PRIu64 "\nread %" PRIu64 "\nwrite %" PRIu64 "\nflush %" PRIu64
		"\nrelease %" PRIu64 "\nopendir %" PRIu64 "\nreaddir %" PRIu64
		"\nreaddirplus %" PRIu64 "\nreleasedir %" PRIu64 "\nforget %" PRIu64
		"\npoll %" PRIu64 "\n",
		st.requests, st.lookup, st.getattr, st.access, st.open, st.read, st.write, st.flush,
		st.release, st.opendir, st.readdir, st.readdirplus, st.releasedir, st.forget,
		st.poll);
	if (fclose(f) == 0)
		rename(tmp, file);
}

/* SIGUSR1 is blocked in every thread; this one takes it. */
static void *stats_main(void *arg)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	while (sigwait(&set, &sig) == 0)
		write_stats(arg);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sysctl_table_header *h[6] = { 0 };
	struct sysctl_tree *tree;
	struct sysctl_socket *sock = NULL;
	struct ctl_table *extra = NULL;
	int *extra_data = NULL, ret;
	long n = argc > 2 ? atol(argv[2]) : 0;
	const char *stats = getenv("SYSCTL_FIXTURE_STATS");
	const char *owner = getenv("SYSCTL_FIXTURE_OWNER");
	pthread_t stats_thread;
	sigset_t usr1;

	if (argc < 2 || argc > 4 || n < 0 || n > 100000) {
		fprintf(stderr, "usage: %s MOUNTPOINT [EXTRA_ENTRIES [SOCKET]]\n", argv[0]);
		return 2;
	}
	/* Before any thread, so that every thread inherits the mask. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (stats && pthread_sigmask(SIG_BLOCK, &usr1, NULL) != 0)
		return 1;
	tree = sysctl_tree_new();
	if (!tree)
		return 1;
	if (owner) {
		unsigned long uid, gid;
		char end;

		if (sscanf(owner, "%lu:%lu%c", &uid, &gid, &end) != 2 ||
		    sysctl_tree_set_owner(tree, (uid_t)uid, (gid_t)gid) != 0) {
			fprintf(stderr, "sysctl-fixture: bad SYSCTL_FIXTURE_OWNER \"%s\"\n", owner);
			return 2;
		}
	}
	if (sysctl_register_table(tree, "kernel", kernel_table, 4, &h[0]) ||
	    sysctl_register_table(tree, "vm", vm_table, 2, &h[1]) ||
	    sysctl_register_table(tree, "net/ipv4/conf/eth0.200", conf_table, 1, &h[2]) ||
	    sysctl_register_table(tree, "/eth0.200", vlan_table, 1, &h[4]) ||
	    sysctl_register_table(tree, "/app.d/sub", app_table, 1, &h[5]))
		return 1;
	if (n) { /* many int entries, for listing benchmarks */
		extra = calloc((size_t)n, sizeof(*extra));
		extra_data = calloc((size_t)n, sizeof(int));
		if (!extra || !extra_data)
			return 1;
		for (long i = 0; i < n; i++) {
			char *name = malloc(24);

			snprintf(name, 24, "entry%05ld", i);
			extra[i] = (struct ctl_table){ name, &extra_data[i], sizeof(int), 0644,
						       proc_dointvec, NULL, NULL, "bench entry" };
		}
		if (sysctl_register_table(tree, "bench", extra, (size_t)n, &h[3]))
			return 1;
	}
	if (argc > 3) {
		ret = sysctl_socket_start(tree, argv[3], 0666, &sock);
		if (ret) {
			fprintf(stderr, "sysctl-fixture: socket %s: %s\n", argv[3], strerror(-ret));
			return 1;
		}
	}
	ret = sysctl_fuse_mount(tree, argv[1], &fs);
	if (ret) {
		fprintf(stderr, "sysctl-fixture: mount %s: %s\n", argv[1], strerror(-ret));
		return 1;
	}
	if (stats && pthread_create(&stats_thread, NULL, stats_main, (void *)stats) == 0)
		pthread_detach(stats_thread);
	ret = sysctl_fuse_loop(fs);
	sysctl_socket_stop(sock);
	pthread_mutex_lock(&fs_lock);
	sysctl_fuse_unmount(fs);
	fs = NULL;
	pthread_mutex_unlock(&fs_lock);
	for (int i = 0; i < 6; i++)
		if (h[i])
			sysctl_unregister_table(h[i]);
	sysctl_tree_free(tree);
	for (long i = 0; i < n; i++)
		free((char *)extra[i].procname);
	free(extra);
	free(extra_data);
	rcustring_destroy(&core_pattern);
	rcustring_destroy(&modprobe);
	rcustring_destroy(&app_x);
	rcustring_barrier();
	return ret ? 1 : 0;
}
