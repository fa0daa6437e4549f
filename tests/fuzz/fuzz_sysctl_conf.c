/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer: the sysctl.d parser never crashes and hands out sane items;
 * the merged set keeps one assignment per key, and its lookup gives every
 * explicit key its own assignment (never a glob's).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/frontend/sysctl_conf.h"

static int check_item(const struct sysctl_conf_item *it, void *arg)
{
	size_t klen = strlen(it->key);

	(void)arg;
	/* Keys are non-empty and stripped; nothing holds a newline. */
	if (klen == 0 || it->key[0] == ' ' || it->key[klen - 1] == ' ' || strchr(it->key, '\n') ||
	    strchr(it->value, '\n') || it->line == 0)
		abort();
	if (it->glob != (strpbrk(it->key, "*?[") != NULL))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int ret = sysctl_conf_parse((const char *)data, size, check_item, NULL, NULL);

	struct sysctl_conf_set *set;

	if (ret < 0)
		abort(); /* only -ENOMEM is possible, and we do not inject it here */
	set = sysctl_conf_set_new();
	if (!set || sysctl_conf_set_add(set, "fuzz.conf", (const char *)data, size, NULL, NULL) < 0)
		abort();
	for (size_t i = 0; i < sysctl_conf_set_count(set); i++) {
		const struct sysctl_conf_item *it = sysctl_conf_set_item(set, i);

		for (size_t j = i + 1; j < sysctl_conf_set_count(set); j++)
			if (!strcmp(it->key, sysctl_conf_set_item(set, j)->key))
				abort();
		if (!it->glob && sysctl_conf_set_lookup(set, it->key) != it)
			abort();
	}
	sysctl_conf_set_free(set);
	return 0;
}
