/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * etcd-probe: one call of the etcd gateway client, for the fleet test.
 *
 *   etcd-probe URL put-if KEY VALUE MOD_REVISION   prints "put" or "conflict"
 *   etcd-probe URL range PREFIX                    prints "KEY=VALUE" lines
 *
 * Exit 0, or 1 with the error on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_http.h"

int main(int argc, char **argv)
{
	struct etcd_conn c;
	int err, done = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: %s URL put-if KEY VALUE MOD_REVISION | URL range PREFIX\n",
			argv[0]);
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
