/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * etcd-probe: one call of the etcd gateway client, for the fleet test.
 *
 *   etcd-probe URL put-if KEY VALUE MOD_REVISION   prints "put" or "conflict"
 *   etcd-probe URL range PREFIX                    prints "KEY=VALUE" lines
 *   etcd-probe URL own-custom                      what etcd_sync_own_table() says to
 *                                                  a row with the program's own handler
 *
 * Exit 0, or 1 with the error on stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_http.h"
#include "etcd_sync.h"

static int custom_value;

/* A handler the library does not describe: its data cannot be copied for a check. */
static int custom_handler(const struct ctl_table *t, int write, void *buf, size_t *lenp,
			  off_t *ppos)
{
	return proc_dointvec(t, write, buf, lenp, ppos);
}

static void quiet(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "etcd-probe: %s\n", msg);
}

static int own_custom(const char *url)
{
	struct ctl_table row[] = {
		{ "custom", &custom_value, sizeof(int), 0644, custom_handler, NULL, NULL, "custom" },
	};
	struct etcd_sync_opts so = { .endpoints = url, .prefix = "/probe/", .host = "p",
				     .write_through = 1, .log = quiet };
	struct sysctl_tree *tree = sysctl_tree_new();
	struct sysctl_table_header *h;
	struct etcd_sync *s;
	int err;

	if (!tree || etcd_sync_new(tree, &so, &s))
		return -ENOMEM;
	err = etcd_sync_own_table(s, "app", row, 1, &h);
	if (!err)
		sysctl_unregister_table(h);
	printf("%s\n", err ? strerror(-err) : "owned");
	etcd_sync_stop(s);
	sysctl_tree_free(tree);
	return 0;
}

int main(int argc, char **argv)
{
	struct etcd_conn c;
	int err, done = 0;

	if (argc < 3 || (argc < 4 && strcmp(argv[2], "own-custom"))) {
		fprintf(stderr, "usage: %s URL put-if KEY VALUE MOD_REVISION | URL range PREFIX | "
			"URL own-custom\n", argv[0]);
		return 2;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	err = etcd_conn_init(&c, argv[1], NULL);
	if (err)
		return 1;
	if (!strcmp(argv[2], "put-if") && argc == 6) {
		err = etcd_put_if(&c, argv[3], argv[4], strlen(argv[4]), strtoll(argv[5], NULL, 10),
				  &done, NULL);
		if (!err)
			puts(done ? "put" : "conflict");
	} else if (!strcmp(argv[2], "own-custom")) {
		err = own_custom(argv[1]);
	} else if (!strcmp(argv[2], "range")) {
		struct etcd_kv *kvs;
		int64_t rev = 0;
		size_t n;

		err = etcd_range_prefix(&c, argv[3], &rev, &kvs, &n);
		for (size_t i = 0; !err && i < n; i++)
			printf("%s=%s\n", kvs[i].key, kvs[i].value);
		if (!err)
			etcd_kvs_free(kvs, n);
	} else {
		err = -22;
	}
	if (err)
		fprintf(stderr, "etcd-probe: %s (%s)\n", strerror(-err), c.err);
	etcd_conn_free(&c);
	curl_global_cleanup();
	return err ? 1 : 0;
}
