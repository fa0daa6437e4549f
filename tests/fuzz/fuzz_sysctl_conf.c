/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer: the sysctl.d parser never crashes and hands out sane items. */
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

	if (ret < 0)
		abort(); /* only -ENOMEM is possible, and we do not inject it here */
	return 0;
}
