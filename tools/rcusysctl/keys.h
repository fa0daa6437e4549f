/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysctl's names (keys.c): a key is '/'-separated with no leading '/';
 * it prints in procps' dotted form.
 */
#ifndef RCUSYSCTL_KEYS_H
#define RCUSYSCTL_KEYS_H

#include <stddef.h>

/* The name printed for @key: sysctl_conf_dotted(), cut to @size. */
void rcusysctl_display_name(const char *key, char *out, size_t size);
/* A name as given (dotted or slash form) to a '/' key, in place. */
void rcusysctl_normalize_key(char *key);

#endif
