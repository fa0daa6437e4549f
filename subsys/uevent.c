// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kernel.hotplug and uevent_helper_call(): seed patch 009
 * (lib/kobject_uevent.c, uevent_call_helper()).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "rcustring/compat.h" /* the kernel names, as the seed used them */
#include "rcustring/umh.h"
#include "subsys.h"

/* Each environment string; the kernel's whole uevent buffer is 2048. */
#define UEVENT_VAR_MAX 256

static struct rcustring uevent_helper = RCUSTRING_INITIALIZER(UEVENT_HELPER_PATH_LEN, "");

static struct ctl_table uevent_table[] = {
	{
		.procname = "hotplug",
		.data = &uevent_helper,
		.maxlen = UEVENT_HELPER_PATH_LEN,
		.mode = 0644 | SYSCTL_MODE_EXEC, /* root runs it */
		.proc_handler = proc_rcu_string,
		.desc = "helper run for each device event (empty: none)",
	},
};

static struct sysctl_table_header *uevent_header;

int subsys_uevent_register(struct sysctl_tree *tree)
{
	if (!tree)
		return -EINVAL;
	if (uevent_header)
		return -EBUSY;
	return sysctl_register_table(tree, "kernel", uevent_table, 1, &uevent_header);
}

void subsys_uevent_unregister(void)
{
	if (!uevent_header)
		return;
	sysctl_unregister_table(uevent_header);
	uevent_header = NULL;
	rcustring_reset(&uevent_helper);
}

static int add_var(char *buf, const char *fmt, const char *key, const char *value)
{
	int n = snprintf(buf, UEVENT_VAR_MAX, fmt, key, value);

	return n < 0 || n >= UEVENT_VAR_MAX ? -E2BIG : 0;
}

int uevent_helper_call(const char *subsystem, const char *action, const char *devpath,
		       uint64_t seqnum)
{
	char helper[UEVENT_HELPER_PATH_LEN];
	char action_var[UEVENT_VAR_MAX], devpath_var[UEVENT_VAR_MAX];
	char subsystem_var[UEVENT_VAR_MAX], seqnum_var[32];
	char *argv[] = { helper, (char *)subsystem, NULL };
	char *envp[] = { action_var, devpath_var, subsystem_var, seqnum_var,
			 "HOME=/", "PATH=/sbin:/bin:/usr/sbin:/usr/bin", NULL };
	ssize_t n;

	if (!subsystem || !action || !devpath)
		return -EINVAL;
	/*
	 * Test and use the same copy: the seed tested the live string and
	 * then copied it, so a write in between could run "" or a helper set
	 * after the test.
	 */
	n = rcustring_copy(&uevent_helper, helper, sizeof(helper));
	if (n < 0)
		return (int)n;
	if (n == 0)
		return 0;
	if (add_var(action_var, "%s=%s", "ACTION", action) ||
	    add_var(devpath_var, "%s=%s", "DEVPATH", devpath) ||
	    add_var(subsystem_var, "%s=%s", "SUBSYSTEM", subsystem))
		return -E2BIG;
	snprintf(seqnum_var, sizeof(seqnum_var), "SEQNUM=%" PRIu64, seqnum);
	return call_usermodehelper(helper, argv, envp, UMH_NO_WAIT);
}
