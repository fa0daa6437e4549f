/*
 * Operator-declared tunables: a plain file rcusysd reads at start, so a
 * tree can be served without writing C. One tunable per line:
 *
 *   # path        type    fields (key=value; quote values with spaces)
 *   app.greeting  string  maxlen=64 default="hello world" desc="shown to users"
 *   app.workers   int     min=1 max=64 default=4 mode=0644 desc="worker threads"
 *
 * Types: string (proc_rcu_string; maxlen required), int, uint, ulong
 * (minmax handlers when min= or max= is given), bool. mode defaults to 0644.
 *
 * Paths follow the tree's rule (systemd's for sysctl.d): when the first
 * separator is '/', slashes separate and dots belong to names
 * ("net/conf/eth0.200/forwarding", "/eth0.200/forwarding"); when it is '.',
 * dots separate and '/' stands for a dot in a name
 * ("net.conf.eth0/200.forwarding"). So a path is declared and set the same way.
 */
#ifndef RCUSYSD_TUNABLES_H
#define RCUSYSD_TUNABLES_H

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

/* Unregisters and frees everything tunables_load() registered. */
void tunables_free(struct tunables *t);

#endif
