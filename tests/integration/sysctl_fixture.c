/*
 * sysctl-fixture: a small tree served over FUSE for the integration tests
 * and the benchmark: sysctl-fixture MOUNTPOINT [EXTRA_ENTRIES]. Runs until
 * SIGTERM/SIGINT, then unmounts and exits 0.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rcustring/sysctl_fuse.h>

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

int main(int argc, char **argv)
{
	struct sysctl_table_header *h[6] = { 0 };
	struct sysctl_tree *tree;
	struct sysctl_fuse *fs;
	struct ctl_table *extra = NULL;
	int *extra_data = NULL, ret;
	long n = argc > 2 ? atol(argv[2]) : 0;

	if (argc < 2 || n < 0 || n > 100000) {
		fprintf(stderr, "usage: %s MOUNTPOINT [EXTRA_ENTRIES]\n", argv[0]);
		return 2;
	}
	tree = sysctl_tree_new();
	if (!tree)
		return 1;
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
	ret = sysctl_fuse_mount(tree, argv[1], &fs);
	if (ret) {
		fprintf(stderr, "sysctl-fixture: mount %s: %s\n", argv[1], strerror(-ret));
		return 1;
	}
	ret = sysctl_fuse_loop(fs);
	sysctl_fuse_unmount(fs);
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
