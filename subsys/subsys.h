/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The seed's five subsystems, ported as consumers of RCU strings: each keeps
 * its tunable in a static struct rcustring (like the kernel's global), lets
 * the program register it in a sysctl tree under the kernel's name, and
 * reads it with rcustring_copy() into a stack buffer before it sleeps in a
 * usermode helper, so a concurrent write can never tear the path a helper
 * is started with: every call uses one whole old value or one whole new one.
 *
 *   kmod.c      kernel.modprobe            request_module()
 *   coredump.c  kernel.core_pattern,
 *               kernel.core_uses_pid       format_corename(), coredump_record()
 *   reboot.c    kernel.poweroff_cmd        orderly_poweroff()
 *   uevent.c    kernel.hotplug             uevent_helper_call()
 *   ocfs2.c     fs.ocfs2.nm.hb_ctl_path    ocfs2_leave_group()
 *
 * Registration: subsys_<name>_register(tree) registers the subsystem's
 * entries in @tree (one tree at a time per subsystem: a second registration
 * is refused with -EBUSY); subsys_<name>_unregister() removes them, waits
 * for running handlers (sysctl_unregister_table) and puts the tunables back
 * to their defaults (old values are freed after a grace period, so call
 * rcustring_barrier() before exit). The subsystems' calls work whether or
 * not they are registered; unregistered, they use the default.
 *
 * Who may call: any thread, without registration. Register/unregister of
 * one subsystem must not race with each other (the daemon does them at
 * start and at exit). Errors are negative errno values.
 *
 * Internal to the project (not installed): the daemon and tests use it.
 */
#ifndef RCUSTRING_SUBSYS_H
#define RCUSTRING_SUBSYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rcustring/rcustring.h"
#include "rcustring/sysctl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Capacities, NUL included, as in the kernel. */
#define KMOD_PATH_LEN 256          /* kernel.modprobe */
#define MODULE_NAME_LEN 64         /* request_module() name, NUL included */
#define CORENAME_MAX_SIZE 128      /* kernel.core_pattern */
#define POWEROFF_CMD_PATH_LEN 256  /* kernel.poweroff_cmd */
#define UEVENT_HELPER_PATH_LEN 256 /* kernel.hotplug */
#define OCFS2_MAX_HB_CTL_PATH 256  /* fs.ocfs2.nm.hb_ctl_path */

/**
 * subsys_register_all - register all five subsystems in @tree
 *
 * Return: 0, or the first error (then nothing of this call stays
 * registered).
 */
int subsys_register_all(struct sysctl_tree *tree);

/** subsys_unregister_all - unregister every subsystem that is registered */
void subsys_unregister_all(void);

/* ---- kmod: kernel.modprobe ---- */

/**
 * subsys_kmod_register - register kernel.modprobe (256, 0644, proc_rcu_string,
 * default "/sbin/modprobe")
 * Return: 0, -EBUSY (already registered), or sysctl_register_table()'s error.
 */
int subsys_kmod_register(struct sysctl_tree *tree);

/** subsys_kmod_unregister - remove kernel.modprobe; reset it to the default */
void subsys_kmod_unregister(void);

/**
 * request_module - run "<kernel.modprobe> -q -- <name>" and wait for it
 * @fmt: printf format of the module name
 *
 * kernel.modprobe is copied under the read lock (empty: -ENOENT, before the
 * name is looked at, as in the kernel); then the name is formatted
 * (MODULE_NAME_LEN bytes, NUL included). The helper runs with
 * HOME=/, TERM=linux, PATH=/sbin:/usr/sbin:/bin:/usr/bin (the kernel's
 * call_modprobe() environment) and UMH_WAIT_PROC. The usermode helper
 * concurrency limit is the guard against runaway modprobe loops.
 *
 * Return: the helper's wait status (>= 0, 0 for success), -ENAMETOOLONG
 * (the name does not fit), -ENOENT (kernel.modprobe is empty: module
 * loading disabled, nothing run; as kernel/module/kmod.c), -EINVAL (NULL
 * format, or a relative modprobe path), or call_usermodehelper()'s error.
 */
int request_module(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- coredump: kernel.core_pattern, kernel.core_uses_pid ---- */

/*
 * What the pattern's specifiers expand to (man 5 core). Userspace has no
 * pid namespaces of its own to translate, so a caller that does not know
 * the "initial namespace" ids passes the same value twice.
 */
struct core_info {
	pid_t pid;                /* %p: process (thread group) id */
	pid_t global_pid;         /* %P: pid in the initial pid namespace */
	pid_t tid;                /* %i: thread id */
	pid_t global_tid;         /* %I: tid in the initial pid namespace */
	uid_t uid;                /* %u */
	gid_t gid;                /* %g */
	int signal;               /* %s: signal that killed it */
	int64_t time;             /* %t: seconds since the Epoch */
	int dumpable;             /* %d: dump mode (0, 1, 2) */
	unsigned long core_limit; /* %c: RLIMIT_CORE soft limit */
	int cpu;                  /* %C: CPU it ran on */
	const char *hostname;     /* %h; NULL reads as "" */
	const char *comm;         /* %e: short name (prctl PR_SET_NAME); NULL = "" */
	const char *exe_path;     /* %E full path, %f basename; NULL = unknown */
};

/* Arguments a pipe pattern may give its helper, the program included. */
#define CORE_PIPE_ARGV_MAX (CORENAME_MAX_SIZE / 2)
/* Size of the buffer coredump_record() formats into (the kernel grows it). */
#define CORENAME_OUT_MAX 4096

/**
 * format_corename - expand a core_pattern, the kernel's way (fs/coredump.c)
 * @out: receives the expansion; always NUL-terminated ("" on error)
 * @size: bytes at @out (>= 1)
 * @pattern: the pattern (a copy the caller owns: see coredump_record())
 * @ci: the values of the specifiers
 * @core_uses_pid: append ".<pid>" to a file name without %p
 * @argv: for a pipe pattern, receives pointers into @out, one per argument
 *        (the helper's path first), NULL-terminated; may be NULL
 * @argv_max: entries at @argv, the NULL included
 *
 * Specifiers: %% %c %C %d %e %E %f %g %h %i %I %p %P %s %t %u. An unknown
 * specifier is dropped with its '%', a trailing '%' is dropped. %e, %E, %f
 * and %h are escaped like the kernel's cn_esc_printf(): each '/' becomes '!',
 * a value that is exactly "." or ".." gets its first '.' replaced by '!',
 * and an empty value becomes "!", so no expansion can add a directory
 * level. An unknown exe path makes %E and %f "<comm> (path unknown)".
 *
 * A pattern starting with '|' is a pipe: the rest is split into arguments
 * on the spaces of the pattern before expansion, so an expanded value with
 * spaces (a comm like "my prog") stays one argument; spaces before the
 * first argument are skipped. Arguments are stored NUL-separated in @out.
 * core_uses_pid never applies to a pipe.
 *
 * Differences from the kernel, which grows its buffer without bound: a
 * result that does not fit in @size bytes is refused (-ENAMETOOLONG), never
 * cut, so a cut name cannot land in another file. "|" with no program, or
 * a program that expands to "", is refused with -EINVAL (the kernel:
 * -ENOMEM, or a failed exec). An empty file pattern gives "" (or ".<pid>").
 *
 * Any thread may call; no lock is taken, nothing is allocated.
 * Return: 0 (a file name), 1 (a pipe; *@argc arguments in @argv),
 * -EINVAL (NULL argument, size 0, empty pipe), -ENAMETOOLONG, -E2BIG (more
 * than @argv_max - 1 or CORE_PIPE_ARGV_MAX arguments).
 */
int format_corename(char *out, size_t size, const char *pattern, const struct core_info *ci,
		    bool core_uses_pid, char **argv, size_t argv_max, int *argc);

/**
 * subsys_coredump_register - register kernel.core_pattern (128, 0644,
 * proc_rcu_string, default "core") and kernel.core_uses_pid (int, 0644,
 * proc_dointvec_minmax 0..1, default 0)
 * Return: 0, -EBUSY, or sysctl_register_table()'s error.
 */
int subsys_coredump_register(struct sysctl_tree *tree);

/** subsys_coredump_unregister - remove both entries; reset them to defaults */
void subsys_coredump_unregister(void);

/**
 * coredump_record - store a crash record where kernel.core_pattern says
 * @ci: the crashed process
 * @dirfd: directory for a relative file name (AT_FDCWD: the cwd)
 * @record: the bytes to store (the daemon's crash record); @len of them
 *
 * The pattern is copied under the read lock, then expanded with
 * format_corename() into a CORENAME_OUT_MAX buffer, with the current
 * kernel.core_uses_pid. A file name: the record is written to a new file
 * (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600: an existing file or a symlink is
 * never written through, as the kernel refuses to follow links there); an
 * empty name: -ENOENT, nothing written. A
 * pipe: the helper runs with the record on its stdin and an empty
 * environment, and the call waits for it (UMH_WAIT_PROC).
 *
 * Any thread may call; it sleeps while writing or while the helper runs.
 * Return: 0 (file written), the helper's wait status (>= 0, pipe), or a
 * negative errno: format_corename()'s, open()/write()'s (-EEXIST, -ELOOP,
 * -ENOSPC, ...), call_usermodehelper_stdin()'s; -EINVAL for NULL @ci or
 * NULL @record with @len > 0. A partly written file is removed.
 */
int coredump_record(const struct core_info *ci, int dirfd, const void *record, size_t len);

/* ---- reboot: kernel.poweroff_cmd ---- */

/**
 * subsys_reboot_register - register kernel.poweroff_cmd (256, 0644,
 * proc_rcu_string, default "/sbin/poweroff")
 * Return: 0, -EBUSY, or sysctl_register_table()'s error.
 */
int subsys_reboot_register(struct sysctl_tree *tree);

/** subsys_reboot_unregister - remove kernel.poweroff_cmd; reset it */
void subsys_reboot_unregister(void);

/*
 * Emergency hook for orderly_poweroff(force): what the kernel does with
 * kernel_power_off() after "Failed to start orderly shutdown: forcing the
 * issue". The library never powers a machine off itself: the default hook
 * only logs to stderr. A daemon that really owns the machine installs its
 * own.
 */
typedef void (*subsys_emergency_fn)(void *arg, int error);

/**
 * subsys_reboot_set_emergency - install the emergency hook (NULL: the
 * default, log only). Any thread may call; a call in flight may still use
 * the previous hook.
 */
void subsys_reboot_set_emergency(subsys_emergency_fn fn, void *arg);

/**
 * orderly_poweroff - run kernel.poweroff_cmd to shut down in an orderly way
 * @force: if the command cannot be started, call the emergency hook
 *
 * The command is copied under the read lock and then split into words with
 * argv_split() (a command line, not just a path: "/sbin/shutdown -h now").
 * It runs with HOME=/ and PATH=/sbin:/bin:/usr/sbin:/usr/bin, UMH_WAIT_EXEC:
 * the call returns once it started.
 *
 * Return: 0 (started), -ENOENT (empty command: nothing run), -ENOMEM, or
 * call_usermodehelper()'s error. The hook's call does not change the
 * return value.
 */
int orderly_poweroff(bool force);

/* ---- uevent: kernel.hotplug ---- */

/**
 * subsys_uevent_register - register kernel.hotplug (256, 0644,
 * proc_rcu_string, default "": no helper)
 * Return: 0, -EBUSY, or sysctl_register_table()'s error.
 */
int subsys_uevent_register(struct sysctl_tree *tree);

/** subsys_uevent_unregister - remove kernel.hotplug; reset it */
void subsys_uevent_unregister(void);

/**
 * uevent_helper_call - run the hotplug helper for one event, if one is set
 *
 * kernel.hotplug is copied under the read lock and tested for emptiness on
 * that copy (the seed tested the live string, then read it again: a write
 * in between could start "" or a new helper), so the test and the run see
 * one value. Runs "<helper> <subsystem>" with ACTION, DEVPATH, SUBSYSTEM,
 * SEQNUM, HOME=/ and PATH=/sbin:/bin:/usr/sbin:/usr/bin, UMH_NO_WAIT.
 *
 * Return: 0 (started, or no helper set: nothing run), -EINVAL (NULL
 * argument), -E2BIG (an environment string over 256 bytes, the kernel's
 * add_uevent_var() limit is per buffer; ours is per variable), or
 * call_usermodehelper()'s error.
 */
int uevent_helper_call(const char *subsystem, const char *action, const char *devpath,
		       uint64_t seqnum);

/* ---- ocfs2: fs.ocfs2.nm.hb_ctl_path ---- */

/**
 * subsys_ocfs2_register - register fs.ocfs2.nm.hb_ctl_path (256, 0644,
 * proc_rcu_string, default "/sbin/ocfs2_hb_ctl")
 * Return: 0, -EBUSY, or sysctl_register_table()'s error.
 */
int subsys_ocfs2_register(struct sysctl_tree *tree);

/** subsys_ocfs2_unregister - remove fs.ocfs2.nm.hb_ctl_path; reset it */
void subsys_ocfs2_unregister(void);

/**
 * ocfs2_leave_group - run "<hb_ctl_path> -K -u <group>" and wait for it
 *
 * The path and the group are copied (the path under the read lock) into
 * heap copies handed to call_usermodehelper_cleanup(), whose cleanup frees
 * them, as seed patch 010 does; environment HOME=/ and
 * PATH=/sbin:/bin:/usr/sbin:/usr/bin, UMH_WAIT_PROC. A failure is also
 * logged to stderr, as the kernel's printk.
 *
 * Return: the helper's wait status (>= 0), -EINVAL (NULL group), -ENOENT
 * (empty path: nothing run), -ENOMEM, or call_usermodehelper()'s error.
 */
int ocfs2_leave_group(const char *group);

#ifdef __cplusplus
}
#endif

#endif /* RCUSTRING_SUBSYS_H */
