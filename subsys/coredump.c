// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kernel.core_pattern, kernel.core_uses_pid, format_corename() and
 * coredump_record(): seed patch 005 (fs/exec.c), with the expansion rules
 * of today's fs/coredump.c (cn_printf, cn_esc_printf, cn_print_exe_file,
 * pipe argument splitting before expansion).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rcustring/compat.h" /* the kernel names, as the seed used them */
#include "rcustring/umh.h"
#include "subsys.h"

static struct rcustring core_pattern = RCUSTRING_INITIALIZER(CORENAME_MAX_SIZE, "core");
static int core_uses_pid;
static int zero;
static int one = 1;

static struct ctl_table coredump_table[] = {
	{
		.procname = "core_pattern",
		.data = &core_pattern,
		.maxlen = CORENAME_MAX_SIZE,
		.mode = 0644 | SYSCTL_MODE_EXEC, /* a pipe pattern runs as root */
		.proc_handler = proc_rcu_string,
		.desc = "core file name pattern, or |helper to pipe the record to",
	},
	{
		.procname = "core_uses_pid",
		.data = &core_uses_pid,
		.maxlen = sizeof(int),
		.mode = 0644,
		.proc_handler = proc_dointvec_minmax,
		.extra1 = &zero,
		.extra2 = &one,
		.desc = "append .PID to core file names without %p",
	},
};

static struct sysctl_table_header *coredump_header;

int subsys_coredump_register(struct sysctl_tree *tree)
{
	if (!tree)
		return -EINVAL;
	if (coredump_header)
		return -EBUSY;
	return sysctl_register_table(tree, "kernel", coredump_table, 2, &coredump_header);
}

void subsys_coredump_unregister(void)
{
	if (!coredump_header)
		return;
	sysctl_unregister_table(coredump_header);
	coredump_header = NULL;
	rcustring_reset(&core_pattern);
	__atomic_store_n(&core_uses_pid, 0, __ATOMIC_RELAXED);
}

/* The kernel's struct core_name, over a fixed caller buffer. */
struct cn {
	char *buf;
	size_t size;
	size_t used; /* bytes before the NUL */
	int err;     /* sticky: once too long, everything after is refused */
};

static void cn_vprintf(struct cn *cn, const char *fmt, va_list ap)
{
	int n;

	if (cn->err)
		return;
	n = vsnprintf(cn->buf + cn->used, cn->size - cn->used, fmt, ap);
	if (n < 0) {
		cn->err = -EINVAL;
	} else if ((size_t)n >= cn->size - cn->used) {
		cn->err = -ENAMETOOLONG;
	} else {
		cn->used += (size_t)n;
		return;
	}
	cn->buf[cn->used] = '\0';
}

static void __attribute__((format(printf, 2, 3))) cn_printf(struct cn *cn, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cn_vprintf(cn, fmt, ap);
	va_end(ap);
}

/* A NUL that ends one pipe argument: counts as a byte of the result. */
static void cn_putnul(struct cn *cn)
{
	if (cn->err)
		return;
	if (cn->size - cn->used < 2) {
		cn->err = -ENAMETOOLONG;
		return;
	}
	cn->buf[cn->used++] = '\0';
	cn->buf[cn->used] = '\0';
}

/*
 * A value the crashing program controls (its name, the host name, its
 * path): it must not add a directory level or climb one. Same rules as the
 * kernel's cn_esc_printf().
 */
static void __attribute__((format(printf, 2, 3))) cn_esc_printf(struct cn *cn, const char *fmt, ...)
{
	size_t cur = cn->used;
	va_list ap;

	va_start(ap, fmt);
	cn_vprintf(cn, fmt, ap);
	va_end(ap);
	if (cn->err)
		return;
	if ((cn->used - cur == 1 && cn->buf[cur] == '.') ||
	    (cn->used - cur == 2 && cn->buf[cur] == '.' && cn->buf[cur + 1] == '.'))
		cn->buf[cur] = '!';
	if (cn->used == cur)
		cn_printf(cn, "!");
	for (; cur < cn->used; cur++)
		if (cn->buf[cur] == '/')
			cn->buf[cur] = '!';
}

static void cn_print_exe_file(struct cn *cn, const struct core_info *ci, bool name_only)
{
	const char *path = ci->exe_path, *slash;

	if (!path) {
		cn_esc_printf(cn, "%s (path unknown)", ci->comm ? ci->comm : "");
		return;
	}
	if (name_only) {
		slash = strrchr(path, '/');
		if (slash)
			path = slash + 1;
	}
	cn_esc_printf(cn, "%s", path);
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* The expansion of one specifier %@c (man 5 core); unknown ones are dropped with their '%'. */
static void cn_specifier(struct cn *cn, char c, const struct core_info *ci, bool *pid_seen)
{
	switch (c) {
	case '%': cn_printf(cn, "%%"); break;
	case 'p':
		*pid_seen = true;
		cn_printf(cn, "%d", (int)ci->pid);
		break;
	case 'P': cn_printf(cn, "%d", (int)ci->global_pid); break;
	case 'i': cn_printf(cn, "%d", (int)ci->tid); break;
	case 'I': cn_printf(cn, "%d", (int)ci->global_tid); break;
	case 'u': cn_printf(cn, "%u", (unsigned int)ci->uid); break;
	case 'g': cn_printf(cn, "%u", (unsigned int)ci->gid); break;
	case 'd': cn_printf(cn, "%d", ci->dumpable); break;
	case 's': cn_printf(cn, "%d", ci->signal); break;
	case 't': cn_printf(cn, "%" PRId64, ci->time); break;
	case 'h': cn_esc_printf(cn, "%s", ci->hostname ? ci->hostname : ""); break;
	case 'e': cn_esc_printf(cn, "%s", ci->comm ? ci->comm : ""); break;
	case 'f': cn_print_exe_file(cn, ci, true); break;
	case 'E': cn_print_exe_file(cn, ci, false); break;
	case 'c': cn_printf(cn, "%lu", ci->core_limit); break;
	case 'C': cn_printf(cn, "%d", ci->cpu); break;
	default: break;
	}
}

/* A pipe pattern's arguments: where each starts in the result. */
struct cn_args {
	size_t offs[CORE_PIPE_ARGV_MAX];
	size_t n, limit;
	bool was_space;
};

/*
 * A pipe pattern is split on its own spaces before expanding, so that %e
 * or %E with spaces in them stay one argument. True when *@p was such a
 * space (skipped); else a new argument starts here if one ended before.
 */
static bool cn_split(struct cn *cn, struct cn_args *a, const char **p)
{
	if (is_space(**p)) {
		/* as the kernel: an empty program name swallows the space */
		if (cn->used != 0)
			a->was_space = true;
		(*p)++;
		return true;
	}
	if (a->was_space) {
		a->was_space = false;
		if (a->n == a->limit) {
			cn->err = -E2BIG;
			return true;
		}
		cn_putnul(cn);
		a->offs[a->n++] = cn->used;
	}
	return false;
}

/* A pipe's result: argv pointing into @out, 1; -EINVAL if the program expanded to nothing. */
static int cn_pipe_result(char *out, const struct cn_args *a, char **argv, int *argc)
{
	if (!out[0])
		return -EINVAL;
	if (argv) {
		for (size_t i = 0; i < a->n; i++)
			argv[i] = out + a->offs[i];
		argv[a->n] = NULL;
	}
	if (argc)
		*argc = (int)a->n;
	return 1;
}

int format_corename(char *out, size_t size, const char *pattern, const struct core_info *ci,
		    bool core_uses_pid_, char **argv, size_t argv_max, int *argc)
{
	struct cn cn = { .buf = out, .size = size };
	struct cn_args a = { .limit = CORE_PIPE_ARGV_MAX };
	const char *p = pattern;
	bool ispipe, pid_in_pattern = false;

	if (!out || size == 0)
		return -EINVAL;
	out[0] = '\0';
	if (argc)
		*argc = 0;
	if (!pattern || !ci || (argv && argv_max == 0))
		return -EINVAL;

	ispipe = *p == '|';
	if (argv && argv_max - 1 < a.limit)
		a.limit = argv_max - 1;
	if (ispipe) {
		p++;
		while (is_space(*p))
			p++;
		if (!*p)
			return -EINVAL;
		if (a.limit == 0)
			return -E2BIG;
		a.offs[a.n++] = 0;
	}
	while (*p && !cn.err) {
		if (ispipe && cn_split(&cn, &a, &p))
			continue;
		if (*p != '%') {
			cn_printf(&cn, "%c", *p++);
			continue;
		}
		if (*++p == '\0') /* a single '%' at the end: dropped */
			break;
		cn_specifier(&cn, *p++, ci, &pid_in_pattern);
	}
	/*
	 * core_uses_pid is the old way to get unique names: ".<pid>" when the
	 * pattern has no %p, never for a pipe.
	 */
	if (!ispipe && !pid_in_pattern && core_uses_pid_)
		cn_printf(&cn, ".%d", (int)ci->pid);
	if (cn.err) {
		out[0] = '\0';
		return cn.err;
	}
	return ispipe ? cn_pipe_result(out, &a, argv, argc) : 0;
}

/* Write the whole record to a new file; remove it if that fails. */
static int write_core_file(int dirfd, const char *name, const char *record, size_t len)
{
	size_t done = 0;
	ssize_t n;
	int fd, err = 0;

	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (done < len) {
		n = write(fd, record + done, len - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		done += (size_t)n;
	}
	if (close(fd) < 0 && !err && errno != EINTR)
		err = -errno;
	if (err)
		unlinkat(dirfd, name, 0);
	return err;
}

int coredump_record(const struct core_info *ci, int dirfd, const void *record, size_t len)
{
	char pattern[CORENAME_MAX_SIZE];
	char name[CORENAME_OUT_MAX];
	char *argv[CORE_PIPE_ARGV_MAX + 1];
	char *envp[] = { NULL };
	ssize_t n;
	int ret;

	if (!ci || (!record && len > 0))
		return -EINVAL;
	/* Copy, then expand: the expansion must not hold the read lock. */
	n = rcustring_copy(&core_pattern, pattern, sizeof(pattern));
	if (n < 0)
		return (int)n;
	ret = format_corename(name, sizeof(name), pattern, ci,
			      __atomic_load_n(&core_uses_pid, __ATOMIC_RELAXED) != 0, argv,
			      sizeof(argv) / sizeof(argv[0]), NULL);
	if (ret < 0)
		return ret;
	if (ret == 0) {
		if (!name[0])
			return -ENOENT; /* empty pattern: no file to write */
		return write_core_file(dirfd, name, record ? record : "", len);
	}
	return call_usermodehelper_stdin(argv[0], argv, envp, record ? record : "", len,
					 UMH_WAIT_PROC);
}
