/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Control socket front end: serves a sysctl tree over a Unix domain stream
 * socket with a line protocol (rcustring-socket(7)), for machines without
 * FUSE. Permissions come from the peer's credentials (SO_PEERCRED).
 *
 * Protocol summary (one request per line, at most SYSCTL_SOCKET_LINE_MAX
 * bytes including the '\n'; every reply line ends in '\n'):
 *
 *   GET <path>            OK <value>        (R_OK; the value as its file
 *                                            reads, less the final newline)
 *   SET <path> <value>    OK                (W_OK; value = rest of line, raw)
 *   APPLY <path> <value>  as SET, the write's origin a settings file's
 *                         (SYSCTL_ORIGIN_FILE) when the peer is root:
 *                         rcusysctl -p / --system; anyone else's is a SET
 *   SETIF <path> <gen> <value>  OK, or ERR ESTALE when the entry's change
 *                         counter is not <gen> (another write came first);
 *                         nothing written then (W_OK)
 *   GENERATION <path>     OK <changes>      (R_OK; the counter SETIF compares)
 *   LIST [<prefix>]       ENTRY <mode> <rw> <path> ... then OK <count>
 *                         (every entry, whatever the peer may do with it;
 *                          <rw> says what the peer may do: "rw", "r-", ...;
 *                          <path> in procps form, as sysctl_entry_path())
 *   DUMP [<prefix>]       VALUE <path> <value> ... then OK <count>
 *                         (names and values in one reply: every entry the
 *                          peer may read, each value whole and escaped as
 *                          GET's; unreadable entries left out, as procps'
 *                          sysctl -a leaves them out; FAILED <path> <errno>
 *                          <ERRNAME> for a value that could not be read)
 *   DESCRIBE <path>       OK <description>  (R_OK)
 *   WATCH <path>          OK <changes>, then CHANGED <path> <changes> per
 *                         change until the client closes (R_OK); on a
 *                         quiet watch ALIVE <changes> now and then (a
 *                         watcher that leaves a line unread for a whole
 *                         keepalive interval is dropped)
 *   AUDIT [<after_seq>]   AUDIT <seq> <sec.nsec> <uid> <pid> <path> <old>
 *                         <new> ... then OK <count>      (uid 0 only)
 *   RESET [<path>]        OK: the server's reset hook dropped the runtime
 *                         value of <path> (W_OK), or of every entry without
 *                         a path (uid 0 only); ERR EOPNOTSUPP without a hook
 *   errors                ERR <errno> <ERRNAME> <message naming the entry>
 *
 * Values are escaped so that a reply is one line: '\\' -> "\\\\", '\n' ->
 * "\\n", '\t' -> "\\t", other control bytes -> "\\xHH"; in AUDIT fields
 * spaces too ("\\x20").
 */
#ifndef RCUSTRING_SYSCTL_SOCKET_H
#define RCUSTRING_SYSCTL_SOCKET_H

#include <stdio.h>
#include <sys/types.h>

#include "rcustring/sysctl.h"
#include "rcustring/sysctl_budget.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SYSCTL_SOCKET_LINE_MAX 4096 /* request bytes including the '\n' */

struct sysctl_socket;

/* Tunables of a server; zero fields take the defaults. */
struct sysctl_socket_options {
	int read_timeout_ms;  /* a started line must end within this, and a reply be sent (5000) */
	int idle_timeout_ms;  /* a connection with no request pending (60000; -1: never) */
	unsigned max_clients; /* concurrent connections (64); beyond: ERR EAGAIN and close */
	/*
	 * Local users must not lock each other (or root) out: uid 0 may use
	 * all max_clients slots, other uids together only max_clients -
	 * root_reserve, each uid at most max_per_uid, of which at most
	 * max_watch_per_uid in WATCH.
	 */
	unsigned root_reserve;      /* slots only uid 0 may take (max_clients / 4) */
	unsigned max_per_uid;       /* connections per non-root uid (max_clients / 4, at least 1) */
	unsigned max_watch_per_uid; /* watches per non-root uid (max_per_uid / 2, at least 1) */
	int watch_keepalive_ms;     /* quiet watch: ALIVE line, unread-line check (30000) */
	/*
	 * RESET: drops the runtime value of @path (NULL: every entry) so that
	 * the program's configuration applies again; the program decides what
	 * that means (rcusysd: its configuration files, rcusysd(8)). Called on
	 * a server thread after the permission check; returns 0 or a negative
	 * errno with @why (size @size) filled. NULL: RESET is refused.
	 */
	int (*reset)(void *arg, const char *path, char *why, size_t size);
	void *reset_arg;
	/*
	 * The program's handle budget (sysctl_budget.h), shared with its
	 * other front ends (sysctl_fuse_set_budget()): each connection takes
	 * one unit of it, a WATCH one more, on top of the server's own slots
	 * above; past the uid's share a client gets "ERR 11 EAGAIN too many
	 * clients of uid N" (a WATCH "... too many watches by uid N"). NULL:
	 * only the slots count. It must outlive the server.
	 */
	struct sysctl_budget *budget;
	/*
	 * STATUS and METRICS: the program's own lines, after the server's
	 * (rcustring-socket(7)). @what is SYSCTL_SOCKET_STATUS ("key value"
	 * lines) or SYSCTL_SOCKET_METRICS (Prometheus text exposition lines,
	 * "# HELP", "# TYPE" and samples, names not starting with
	 * "rcustring_"). Called on a server thread, by any peer's request
	 * (@who: the peer's credentials, so that a program can show a
	 * non-root peer less): it must not block for long and must not
	 * write values a peer may not read. Returns 0 or a negative errno.
	 * NULL: the server's lines only.
	 */
	int (*report)(void *arg, int what, const struct sysctl_caller *who, FILE *out);
	void *report_arg;
};

#define SYSCTL_SOCKET_STATUS 1  /* sysctl_socket_options.report: STATUS */
#define SYSCTL_SOCKET_METRICS 2 /* sysctl_socket_options.report: METRICS */

/**
 * sysctl_socket_start - serve @tree on a Unix socket at @path
 * @mode: permission bits of the socket file (e.g. 0666: access control is
 *        per entry, by peer credentials)
 * @out: receives the server handle
 *
 * A stale socket file at @path (nobody accepting) is replaced; a live one
 * gives -EADDRINUSE, any other file -EEXIST. The file appears at @path only
 * once the socket listens (bound under a temporary name in the same
 * directory, then renamed without replacing anything), so a client that
 * sees it can connect. The server runs on its own threads (one accepting,
 * one per connection) until sysctl_socket_stop(). @tree must outlive the
 * server. Any thread may call.
 * Return: 0, -ENAMETOOLONG (path longer than sun_path, or its directory
 * leaves no room for the temporary name), -EADDRINUSE, -EEXIST, -ENOMEM, or
 * the errno of socket/bind/chmod/listen/renameat2/link.
 */
RCUSTRING_API int sysctl_socket_start(struct sysctl_tree *tree, const char *path, mode_t mode,
				      struct sysctl_socket **out);

/**
 * sysctl_socket_start_opts - sysctl_socket_start() with tunables
 * @opts: NULL for the defaults
 */
RCUSTRING_API int sysctl_socket_start_opts(struct sysctl_tree *tree, const char *path, mode_t mode,
					   const struct sysctl_socket_options *opts,
					   struct sysctl_socket **out);

/**
 * sysctl_socket_stop - stop accepting, close every connection, join every
 * thread, unlink the socket file (if it is still ours) and free @s
 *
 * Not from a server thread (a change callback, say). NULL is a no-op.
 */
RCUSTRING_API void sysctl_socket_stop(struct sysctl_socket *s);

#ifdef __cplusplus
}
#endif

#endif /* RCUSTRING_SYSCTL_SOCKET_H */
