// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kernel.poweroff_cmd and orderly_poweroff(): seed patch 008 (kernel/sys.c),
 * with today's run_cmd()/__orderly_poweroff() shape (kernel/reboot.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "rcustring/compat.h" /* the kernel names, as the seed used them */
#include "rcustring/umh.h"
#include "subsys.h"

static struct rcustring poweroff_cmd = RCUSTRING_INITIALIZER(POWEROFF_CMD_PATH_LEN, "/sbin/poweroff");

static struct ctl_table reboot_table[] = {
	{
		.procname = "poweroff_cmd",
		.data = &poweroff_cmd,
		.maxlen = POWEROFF_CMD_PATH_LEN,
		.mode = 0644 | SYSCTL_MODE_EXEC, /* root runs it */
		.proc_handler = proc_rcu_string,
		.desc = "command line run by orderly_poweroff()",
	},
};

static struct sysctl_table_header *reboot_header;

/* The hook and its argument are swapped together under this lock. */
static pthread_mutex_t emergency_lock = PTHREAD_MUTEX_INITIALIZER;
static subsys_emergency_fn emergency_fn;
static void *emergency_arg;

int subsys_reboot_register(struct sysctl_tree *tree)
{
	if (!tree)
		return -EINVAL;
	if (reboot_header)
		return -EBUSY;
	return sysctl_register_table(tree, "kernel", reboot_table, 1, &reboot_header);
}

void subsys_reboot_unregister(void)
{
	if (!reboot_header)
		return;
	sysctl_unregister_table(reboot_header);
	reboot_header = NULL;
	rcustring_reset(&poweroff_cmd);
}

void subsys_reboot_set_emergency(subsys_emergency_fn fn, void *arg)
{
	pthread_mutex_lock(&emergency_lock);
	emergency_fn = fn;
	emergency_arg = arg;
	pthread_mutex_unlock(&emergency_lock);
}

/* The default hook: a library must never power the machine off by itself. */
static void emergency_log(int error)
{
	fprintf(stderr, "orderly_poweroff: failed to start orderly shutdown (%d): "
			"no emergency hook installed, not forcing the issue\n", error);
}

int orderly_poweroff(bool force)
{
	static char *envp[] = { "HOME=/", "PATH=/sbin:/bin:/usr/sbin:/usr/bin", NULL };
	char cmd[POWEROFF_CMD_PATH_LEN];
	subsys_emergency_fn fn;
	char **argv;
	void *arg;
	ssize_t n;
	int ret;

	/* argv_split() allocates: split a stable copy, not the live value. */
	n = rcustring_copy(&poweroff_cmd, cmd, sizeof(cmd));
	if (n < 0) {
		ret = (int)n;
		goto out;
	}
	argv = argv_split(cmd, NULL);
	if (!argv) {
		ret = -ENOMEM;
		goto out;
	}
	if (!argv[0])
		ret = -ENOENT; /* empty or blank command: nothing to run */
	else
		ret = call_usermodehelper(argv[0], argv, envp, UMH_WAIT_EXEC);
	argv_free(argv);
out:
	if (ret && force) {
		pthread_mutex_lock(&emergency_lock);
		fn = emergency_fn;
		arg = emergency_arg;
		pthread_mutex_unlock(&emergency_lock);
		if (fn)
			fn(arg, ret);
		else
			emergency_log(ret);
	}
	return ret;
}
