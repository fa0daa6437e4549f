/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Operator-declared tunables: a plain file rcusysd reads at start, so a
 * tree can be served without writing C. One tunable per line:
 *
 *   # path        type    fields (key=value; quote values with spaces)
 *   app.greeting  string  maxlen=64 default="hello world" desc="shown to users"
 *   app.workers   int     min=1 max=64 default=4 mode=0644 desc="worker threads"
 *   app.ports     int[3]  default="80 443 8080"
 *   app.cpus      bitmap  bits=64 default=0-3
 *   app.notifier  string  maxlen=256 default=/usr/bin/true exec=yes
 *
 * exec=yes marks an entry whose value root executes (a helper's path):
 * root alone writes it, whatever --owner says, and a mode that lets group
 * or others write it is refused (SYSCTL_MODE_EXEC).
 *
 * Types are rows of one table (types[] in tunable_decl.c) mapped to the
 * library's handler kinds through sysctl_handler_info_at(): string, int,
 * uint, u8, ulong, bool, bitmap, and the time kinds jiffies (seconds),
 * userhz_jiffies (1/100 s), ms_jiffies and ulong_ms_jiffies (milliseconds).
 * TYPE[N] declares a vector of N elements where the kind allows it. The
 * minmax handler is chosen when min= or max= is given. default= is written
 * through the handler after registration, as any write, so its bounds and
 * length are checked by the same code that checks a client's write.
 *
 * Paths follow the tree's rule (systemd's for sysctl.d): when the first
 * separator is '/', slashes separate and dots belong to names
 * ("net/conf/eth0.200/forwarding", "/eth0.200/forwarding"); when it is '.',
 * dots separate and '/' stands for a dot in a name
 * ("net.conf.eth0/200.forwarding"). So a path is declared and set the same way.
 */
#ifndef RCUSYSD_TUNABLES_H
#define RCUSYSD_TUNABLES_H

#include <stdbool.h>
#include <stddef.h>

#include <rcustring/sysctl.h>

struct tunables;

/*
 * Parses @text and registers every tunable in @tree. On a bad line nothing
 * from the file stays registered; @err (size @errsize) gets
 * "LINE: message". Returns 0 or a negative errno; *out is freed with
 * tunables_free().
 */
int tunables_load(struct sysctl_tree *tree, const char *text, size_t len, struct tunables **out,
		  char *err, size_t errsize);

/*
 * Reload: parses @text as tunables_load() does and compares it with @old
 * (what the same file declared before, may be NULL). Declarations that are
 * new are registered with their defaults, those gone are unregistered, and
 * an unchanged declaration keeps its live entry and value (its default is
 * not written again). A declaration that would change a live entry (type,
 * size, bounds, mode, description) is refused: @report gets the line and
 * the reason, and the live entry stays. A new declaration the tree refuses
 * is reported the same way and left out. On a parse error nothing changes
 * and a negative errno comes back with @err filled. On success *@out
 * replaces @old, which must not be used again. A declaration new to this
 * file that is live in one of @others (@nothers lists of other files, not
 * yet reloaded; NULLs skipped) is taken from there with its entry and
 * value, so a declaration moved to another file, earlier or later in the
 * order, keeps its tunable. @stop (may be NULL; with @arg, as @report) is
 * asked every few hundred lines of the parse and once after it, with the
 * line reached (0: after the parse): when it says true, nothing changes
 * and -EINTR comes back.
 */
int tunables_reload(struct sysctl_tree *tree, struct tunables *old, struct tunables *const *others,
		    size_t nothers, const char *text, size_t len, struct tunables **out,
		    void (*report)(void *arg, unsigned line, const char *msg),
		    bool (*stop)(void *arg, unsigned line), void *arg, char *err, size_t errsize);

/* Unregisters and frees everything tunables_load() registered. */
void tunables_free(struct tunables *t);

#endif
