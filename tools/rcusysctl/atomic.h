/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysctl --atomic: the writes of -w, -p and --system are collected, then
 * sent to rcusysd as one commit (atomic.c), so that readers never see some
 * of them without the others and a refusal changes nothing.
 */
#ifndef RCUSYSCTL_ATOMIC_H
#define RCUSYSCTL_ATOMIC_H

#include <stdbool.h>

/*
 * Adds "@key = @value" to the commit (@name as printed); a key given again
 * replaces its value, as the later of two writes would. Returns 0, or
 * -E2BIG past SYSCTL_COMMIT_MAX keys, -ENOMEM (both printed).
 */
int atomic_add(const char *key, const char *name, const char *value);

/*
 * Sends what was added as one commit (MAPPLY when @apply: settings files'
 * values), then calls @echo for each key written. A refusal is printed
 * (the key, the errno's name, the server's reason, and that nothing
 * changed). Returns 0 (also when nothing was added) or -errno.
 */
int atomic_commit(bool apply, void (*echo)(const char *name, const char *value));

#endif
