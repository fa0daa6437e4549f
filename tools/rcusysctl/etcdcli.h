/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysctl --etcd: read and write the values a fleet mirrors, in etcd
 * itself (rcustring-etcd(7)), and the hosts' status keys.
 */
#ifndef RCUSYSCTL_ETCDCLI_H
#define RCUSYSCTL_ETCDCLI_H

#include <stdbool.h>

struct etcdcli_opts {
	const char *endpoints, *prefix;
	const char *cacert, *cert, *key;
	bool all, write, quiet, values_only, json; /* json: one array of {name, value[, host]} */
};

/* Runs the request for the name[=value] arguments; returns the exit code. */
int etcdcli_main(const struct etcdcli_opts *opts, int argc, char **argv);

#endif
