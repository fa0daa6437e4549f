/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Usermode helpers: run a helper program the way the kernel's
 * call_usermodehelper() does (kernel/umh.c), from a userspace program.
 *
 * The helper runs with exactly the argv and envp given (the caller's
 * environment is NOT inherited; envp NULL means an empty environment),
 * in a new session (setsid: not in the caller's process group or terminal,
 * like kernel helpers, which belong to no user session), with cwd "/", every
 * signal at its default disposition, an empty signal mask, stdin from
 * /dev/null (or the pipe of call_usermodehelper_stdin()), stdout and stderr
 * inherited from the caller, and no other file descriptor: every fd >= 3 is
 * closed in the child whether or not it has FD_CLOEXEC.
 *
 * Helpers are started with posix_spawn() (glibc: clone(CLONE_VM|CLONE_VFORK)),
 * which returns only after the exec succeeded or failed, so exec errors are
 * reported in every wait mode.
 *
 * Reaping: a helper that the call does not wait for (UMH_NO_WAIT,
 * UMH_WAIT_EXEC) is spawned and then waited for by a short-lived library
 * thread that calls waitpid() on exactly that pid. No SIGCHLD handler is
 * installed and waitpid(-1) is never called, so the program's other children
 * are never stolen; a double fork was not chosen because fork() of a large
 * multithreaded program copies its page tables and may only call
 * async-signal-safe functions afterwards. The caller never has to reap.
 * A program that sets SIGCHLD to SIG_IGN makes the kernel reap instead; then
 * UMH_WAIT_PROC cannot get a status and returns -ECHILD.
 *
 * Concurrency limit: at most umh_set_max_concurrent() helpers (default
 * UMH_MAX_CONCURRENT) run at once, counting every helper from its spawn to
 * its reaping in all wait modes. A call over the limit is refused with
 * -EAGAIN and a rate-limited line on stderr, like the kernel's guard against
 * runaway modprobe loops (kernel/module/kmod.c, which returns -ENOMEM). The
 * limit and the count are process-wide, as in the kernel: they bound the
 * process, not one caller.
 *
 * Errors are negative errno values:
 *   -EINVAL   NULL or relative path, NULL argv or argv[0], bad wait mode
 *   -EAGAIN   too many helpers running (see above)
 *   -ENOMEM   out of memory, or no thread could be started
 *   -ENOENT, -EACCES, -ENOEXEC, ...  the exec failed (errno of execve)
 *   -ECHILD   UMH_WAIT_PROC only: the status was lost (SIGCHLD ignored)
 */
#ifndef RCUSTRING_UMH_H
#define RCUSTRING_UMH_H

#include <stddef.h>
#include <sys/types.h>

#include "rcustring/rcustring.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Wait modes, same values as the kernel's enum umh_wait. */
enum umh_wait {
	UMH_NO_WAIT = 0,   /* return once the exec succeeded or failed */
	UMH_WAIT_EXEC = 1, /* the same here (see call_usermodehelper()) */
	UMH_WAIT_PROC = 2, /* return the helper's wait status once it exited */
};

/* Default concurrency limit; the kernel's MAX_KMOD_CONCURRENT. */
#define UMH_MAX_CONCURRENT 50

/**
 * umh_call - run a helper program
 * @path: absolute path of the program (no PATH search). An empty string
 *        runs nothing and returns 0: as in the kernel, an empty helper path
 *        means "disabled".
 * @argv: NULL-terminated argument vector, argv[0] not NULL
 * @envp: NULL-terminated environment, or NULL for an empty one
 * @wait: an enum umh_wait value
 *
 * Any thread may call; @argv and @envp are only read, and only until the
 * call returns. UMH_NO_WAIT and UMH_WAIT_EXEC behave the same: the kernel's
 * UMH_NO_WAIT returns before the exec because it may be called in atomic
 * context; here the exec result is known within microseconds, so it is
 * reported instead of lost.
 *
 * Return: UMH_WAIT_PROC: the helper's raw wait status as waitpid() gives it
 * (>= 0; decode with WIFEXITED()/WEXITSTATUS()/WTERMSIG(): 0 for exit 0,
 * code << 8 for exit(code), the signal number for a helper killed by a
 * signal, | 0x80 if it dumped core), like the kernel. UMH_NO_WAIT and
 * UMH_WAIT_EXEC: 0 once the exec succeeded. Otherwise a negative errno
 * (see the top of this header).
 */
RCUSTRING_API int umh_call(const char *path, char **argv, char **envp, int wait);

/**
 * umh_call_cleanup - call_usermodehelper() with a cleanup callback
 * @cleanup: called as cleanup(@data) exactly once on every path (success,
 *           exec failure, invalid arguments, -EAGAIN, -ENOMEM), in the
 *           calling thread, after the helper no longer needs @argv/@envp
 *           (after its exec succeeded or failed) and before this function
 *           returns. May be NULL.
 *
 * This is the seed patch's variant: it lets a caller hand over its private
 * copies of a path and argv read from an RCU string, with one place freeing
 * them. The other arguments and the return value are call_usermodehelper()'s.
 */
RCUSTRING_API int umh_call_cleanup(const char *path, char **argv, char **envp, int wait,
					      void (*cleanup)(void *data), void *data);

/**
 * umh_call_stdin - run a helper and feed it @len bytes on stdin
 * @data: the bytes; only read until the call returns
 *
 * The helper's stdin is the read end of a pipe. The caller's thread writes
 * all of @data, then closes the pipe, so the helper sees end of file. The
 * call returns after that (UMH_NO_WAIT, UMH_WAIT_EXEC) or after the helper
 * exited (UMH_WAIT_PROC). A helper that exits or closes stdin before reading
 * everything is not an error (the rest is dropped, SIGPIPE is not raised in
 * the caller); a helper that neither reads nor exits blocks the caller once
 * the pipe buffer is full. The other arguments and the return value are
 * call_usermodehelper()'s, plus -EMFILE/-ENFILE if no pipe can be made.
 */
RCUSTRING_API int umh_call_stdin(const char *path, char **argv, char **envp,
					    const void *data, size_t len, int wait);

/**
 * umh_spawn - start a program as a helper and leave it to the caller
 * @path: absolute path of the program (no PATH search)
 * @argv: NULL-terminated argument vector, argv[0] not NULL
 * @envp: NULL-terminated environment, or NULL for an empty one
 *
 * Starts @path exactly as call_usermodehelper() starts a helper (new
 * session, cwd "/", default signal dispositions, empty signal mask, stdin
 * from /dev/null, no fd above 2) for a caller that supervises the program
 * itself: the caller must reap it with waitpid() on the returned pid. It does
 * not count against the concurrency limit and does not call the log hook.
 * Any thread may call; @argv and @envp are only read until the call returns.
 *
 * Return: the program's pid (> 0) once the exec succeeded, or a negative
 * errno: -EINVAL (NULL or relative @path, NULL @argv or argv[0]), -ENOMEM,
 * -EAGAIN (no process could be made), or the exec's errno.
 */
RCUSTRING_API pid_t umh_spawn(const char *path, char **argv, char **envp);

/**
 * umh_set_max_concurrent - set the process-wide concurrency limit
 * @n: new limit, >= 1. Helpers already running are not affected.
 *
 * Any thread may call. Return: the previous limit, or -EINVAL if n < 1.
 */
RCUSTRING_API int umh_set_max_concurrent(int n);

/**
 * umh_running - number of helpers spawned and not yet reaped
 *
 * Any thread may call; the value may change at once. A program that wants
 * every helper reaped before it exits polls it down to 0.
 */
RCUSTRING_API int umh_running(void);

/*
 * Log hook: called once per call_usermodehelper*() in the calling thread,
 * after the result is known and before the cleanup callback, with the path
 * and argv as passed (either may be NULL in a call refused with -EINVAL) and
 * the return value.
 */
typedef void (*umh_log_fn)(void *arg, const char *path, char *const argv[], int result);

/**
 * umh_set_log - install (or with NULL remove) the log hook
 *
 * Any thread may call; a call in flight may still use the previous hook.
 */
RCUSTRING_API void umh_set_log(umh_log_fn fn, void *arg);

/**
 * umh_argv_split - split a string into words, the kernel's way
 * @str: the string; runs of white space (' ', \t, \n, \v, \f, \r; never a
 *       byte >= 0x80, whatever the locale) separate words; no quoting, no
 *       escapes; leading and trailing white space is ignored
 * @argcp: if not NULL, receives the number of words
 *
 * Any thread may call. Return: a NULL-terminated vector of the words, in
 * one allocation, to be released with argv_free(); "" or only white space
 * gives argc 0 and argv[0] == NULL. NULL on error with errno set: EINVAL
 * (@str NULL) or ENOMEM.
 */
RCUSTRING_API char **umh_argv_split(const char *str, int *argcp);

/** umh_argv_free - free a vector from argv_split() (NULL is accepted) */
RCUSTRING_API void umh_argv_free(char **argv);

#ifdef __cplusplus
}
#endif

#endif
