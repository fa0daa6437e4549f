// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kernel.modprobe and request_module(): seed patch 007 (kernel/kmod.c),
 * with the checks of today's kernel/module/kmod.c (empty path: -ENOENT).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "rcustring/compat.h" /* the kernel names, as the seed used them */
#include "rcustring/umh.h"
#include "subsys.h"

static struct rcustring modprobe_path = RCUSTRING_INITIALIZER(KMOD_PATH_LEN, "/sbin/modprobe");

static struct ctl_table kmod_table[] = {
	{
		.procname = "modprobe",
		.data = &modprobe_path,
		.maxlen = KMOD_PATH_LEN,
		.mode = 0644 | SYSCTL_MODE_EXEC, /* root runs it */
		.proc_handler = proc_rcu_string,
		.desc = "program run by request_module() to load a module",
	},
};

static struct sysctl_table_header *kmod_header;

int subsys_kmod_register(struct sysctl_tree *tree)
{
	if (!tree)
		return -EINVAL;
	if (kmod_header)
		return -EBUSY;
	return sysctl_register_table(tree, "kernel", kmod_table, 1, &kmod_header);
}

void subsys_kmod_unregister(void)
{
	if (!kmod_header)
		return;
	sysctl_unregister_table(kmod_header);
	kmod_header = NULL;
	rcustring_reset(&modprobe_path);
}

int request_module(const char *fmt, ...)
{
	/* The kernel's call_modprobe() environment (the seed's too). */
	static char *envp[] = { "HOME=/", "TERM=linux", "PATH=/sbin:/usr/sbin:/bin:/usr/bin", NULL };
	char module_name[MODULE_NAME_LEN];
	char path[KMOD_PATH_LEN];
	char *argv[] = { path, "-q", "--", module_name, NULL };
	va_list args;
	ssize_t n;
	int ret;

	if (!fmt)
		return -EINVAL;
	/*
	 * A stack copy taken under the read lock: the emptiness test and the
	 * run see one value, and the helper is started (and waited for) with
	 * one whole path, whatever writers do meanwhile. The buffer has the
	 * variable's capacity, so the copy always fits. The kernel tests for
	 * "disabled" first too, before looking at the name.
	 */
	n = rcustring_copy(&modprobe_path, path, sizeof(path));
	if (n < 0)
		return (int)n;
	if (n == 0)
		return -ENOENT; /* module loading disabled */

	va_start(args, fmt);
	ret = vsnprintf(module_name, sizeof(module_name), fmt, args);
	va_end(args);
	if (ret < 0)
		return -EINVAL;
	if ((size_t)ret >= sizeof(module_name))
		return -ENAMETOOLONG;
	return call_usermodehelper(path, argv, envp, UMH_WAIT_PROC);
}

/*
 * Registration of all five lives here, with the first of them, so that the
 * library stays one file per subsystem.
 */
int subsys_register_all(struct sysctl_tree *tree)
{
	static int (*const reg[])(struct sysctl_tree *) = {
		subsys_kmod_register, subsys_coredump_register, subsys_reboot_register,
		subsys_uevent_register, subsys_ocfs2_register,
	};
	static void (*const unreg[])(void) = {
		subsys_kmod_unregister, subsys_coredump_unregister, subsys_reboot_unregister,
		subsys_uevent_unregister, subsys_ocfs2_unregister,
	};
	size_t i;
	int err;

	for (i = 0; i < sizeof(reg) / sizeof(reg[0]); i++) {
		err = reg[i](tree);
		if (err) {
			while (i-- > 0)
				unreg[i]();
			return err;
		}
	}
	return 0;
}

void subsys_unregister_all(void)
{
	subsys_kmod_unregister();
	subsys_coredump_unregister();
	subsys_reboot_unregister();
	subsys_uevent_unregister();
	subsys_ocfs2_unregister();
}
