/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysctl's names: the '/' keys it reads and writes, and the dotted form
 * it prints (sysctl_conf's rules, one for every subcommand).
 */
#include <string.h>

#include "keys.h"
#include "sysctl_conf.h"

/* The name printed for @key ('/'-separated): sysctl_conf_dotted(), cut to @size. */
void rcusysctl_display_name(const char *key, char *out, size_t size)
{
	sysctl_conf_dotted(key, out, size);
}

/* A name as given (dotted or slash form, see display_name) to a '/' key. */
void rcusysctl_normalize_key(char *key)
{
	size_t lead;

	sysctl_conf_normalize_key(key);
	lead = strspn(key, "/");
	memmove(key, key + lead, strlen(key + lead) + 1);
}
