// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fs.ocfs2.nm.hb_ctl_path and ocfs2_leave_group(): seed patch 010
 * (fs/ocfs2/stackglue.c), with call_usermodehelper_cleanup() (seed 006)
 * freeing the private copies on every path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rcustring/compat.h" /* the kernel names, as the seed used them */
#include "rcustring/umh.h"
#include "subsys.h"

static struct rcustring ocfs2_hb_ctl_path =
	RCUSTRING_INITIALIZER(OCFS2_MAX_HB_CTL_PATH, "/sbin/ocfs2_hb_ctl");

static struct ctl_table ocfs2_nm_table[] = {
	{
		.procname = "hb_ctl_path",
		.data = &ocfs2_hb_ctl_path,
		.maxlen = OCFS2_MAX_HB_CTL_PATH,
		.mode = 0644 | SYSCTL_MODE_EXEC, /* root runs it */
		.proc_handler = proc_rcu_string,
		.desc = "ocfs2 heartbeat control program run to leave a group",
	},
};

static struct sysctl_table_header *ocfs2_header;

int subsys_ocfs2_register(struct sysctl_tree *tree)
{
	if (!tree)
		return -EINVAL;
	if (ocfs2_header)
		return -EBUSY;
	return sysctl_register_table(tree, "fs/ocfs2/nm", ocfs2_nm_table, 1, &ocfs2_header);
}

void subsys_ocfs2_unregister(void)
{
	if (!ocfs2_header)
		return;
	sysctl_unregister_table(ocfs2_header);
	ocfs2_header = NULL;
	rcustring_reset(&ocfs2_hb_ctl_path);
}

/* What the cleanup callback frees: the caller's private copies. */
struct leave_args {
	char *argv[5];
	char *helper;
	char *group;
};

static void free_leave_args(void *data)
{
	struct leave_args *a = data;

	free(a->helper);
	free(a->group);
	free(a);
}

int ocfs2_leave_group(const char *group)
{
	/* minimal command environment, the kernel's (from cpu_run_sbin_hotplug) */
	static char *envp[] = { "HOME=/", "PATH=/sbin:/bin:/usr/sbin:/usr/bin", NULL };
	struct leave_args *a;
	int ret;

	if (!group)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->helper = rcustring_dup(&ocfs2_hb_ctl_path);
	a->group = strdup(group);
	if (!a->helper || !a->group) {
		free_leave_args(a);
		fprintf(stderr, "ocfs2_leave_group: no memory\n");
		return -ENOMEM;
	}
	if (!a->helper[0]) {
		free_leave_args(a);
		return -ENOENT; /* no helper configured: nothing to run */
	}
	a->argv[0] = a->helper;
	a->argv[1] = "-K";
	a->argv[2] = "-u";
	a->argv[3] = a->group;
	a->argv[4] = NULL;
	/* From here the cleanup callback owns @a, on every path. */
	ret = call_usermodehelper_cleanup(a->helper, a->argv, envp, UMH_WAIT_PROC,
					  free_leave_args, a);
	if (ret < 0)
		fprintf(stderr, "ocfs2: Error %d running user helper \"<hb_ctl_path> -K -u %s\"\n", ret,
			group);
	return ret;
}
