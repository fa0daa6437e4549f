/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysctl --etcd URL --prefix P: the fleet's values as etcd holds them.
 *   -w name=value...  put PREFIX/name for each, all in one transaction: one
 *                   revision, which every mirroring host applies as one
 *                   commit (or reports its refusals under the status prefix)
 *   name ...        print what etcd holds for name
 *   -a              every value under the prefix, then each host's status
 *                   keys ("status HOST name = {...}")
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rcustring/sysctl_commit.h"

#include "../../lib/common/url_userinfo.h"

#include "dirtree.h"
#include "etcd_http.h"
#include "etcdcli.h"
#include "jsonout.h"
#include "sysctl_conf.h"

/*
 * etcd's user:password: from $RCUSYSCTL_ETCD_CREDENTIALS, which only this
 * user and root can read (/proc/PID/environ), not from the URL, which
 * every local user can read in ps while rcusysctl runs: a URL's still
 * works, with a warning. 0, or 1 (printed).
 */
static int credentials(struct etcd_conn *c, const char *endpoints)
{
	const char *env = getenv("RCUSYSCTL_ETCD_CREDENTIALS");
	int has = 0; /* 1: a URL holds user:password@ (common/url_userinfo.h); < 0: malformed */

	for (const char *p = endpoints; p && *p && has >= 0; p += strcspn(p, ","), p += *p == ',') {
		size_t host, end;
		int one = rcs_url_userinfo(p, strcspn(p, ","), &host, &end);

		has = one < 0 ? one : has | one;
	}
	if (has < 0) {
		fprintf(stderr, "rcusysctl: --etcd: an endpoint's %s (better: "
				"$RCUSYSCTL_ETCD_CREDENTIALS)\n", RCS_URL_USERINFO_RULE);
		return 1;
	}
	if (has)
		fprintf(stderr, "rcusysctl: --etcd: an endpoint holds user:password@, which every "
				"local user can read in ps; use $RCUSYSCTL_ETCD_CREDENTIALS\n");
	if (env && (!strchr(env, ':') || *env == ':' || strpbrk(env, "\r\n"))) {
		fprintf(stderr, "rcusysctl: $RCUSYSCTL_ETCD_CREDENTIALS: expected user:password\n");
		return 1;
	}
	if (env && etcd_conn_set_userpwd(c, env)) {
		fprintf(stderr, "rcusysctl: --etcd: %s\n", strerror(ENOMEM));
		return 1;
	}
	return 0;
}

static char *join(const char *prefix, const char *name)
{
	char key[4096], *out;
	size_t plen = strlen(prefix);

	snprintf(key, sizeof(key), "%s", name);
	sysctl_conf_normalize_key(key); /* "kernel.core_pattern" -> "kernel/core_pattern" */
	if (asprintf(&out, "%s%s%s", prefix, plen && prefix[plen - 1] == '/' ? "" : "/", key) < 0)
		return NULL;
	return out;
}

/* A value, or a status key of @host (NULL: a value); --json gathers {name, value[, host]}. */
static void print(const struct etcdcli_opts *o, const char *host, int hostlen, const char *key,
		  const char *value)
{
	char name[4096], h[256];
	struct json_object *j;

	sysctl_conf_dotted(key, name, sizeof(name));
	snprintf(h, sizeof(h), "%.*s", hostlen, host ? host : "");
	if (o->json) {
		j = json_obj_new();
		json_obj_str(j, "name", o->values_only ? NULL : name);
		json_obj_str(j, "value", value);
		json_obj_str(j, "host", host ? h : NULL);
		json_list_add(j);
	} else if (o->values_only) {
		printf("%s\n", value);
	} else {
		printf("%s%s%s%s = %s\n", host ? "status " : "", h, host ? " " : "", name, value);
	}
}

static int fail(struct etcd_conn *c, const char *what, const char *name, int err)
{
	fprintf(stderr, "rcusysctl: %s \"%s\": %s%s%s\n", what, name, strerror(-err),
		c->err[0] ? ": " : "", c->err);
	return 1;
}

/* "/rcustring/web/" -> "/rcustring-status/web/", as the hosts write it. */
static char *status_prefix(const char *prefix)
{
	size_t n = strlen(prefix);
	const char *end, *start;
	char *out;

	while (n && prefix[n - 1] == '/')
		n--;
	end = prefix + n;
	start = end;
	while (start > prefix && start[-1] != '/')
		start--;
	if (asprintf(&out, "/rcustring-status/%.*s/", (int)(end - start), start) < 0)
		return NULL;
	return out;
}

static int list_all(const struct etcdcli_opts *o, struct etcd_conn *c, const char *prefix)
{
	struct etcd_kv *kvs;
	int64_t rev = 0;
	size_t n, plen = strlen(prefix);
	char *sp = status_prefix(o->prefix);
	int err = etcd_range_prefix(c, prefix, &rev, &kvs, &n);

	if (err || !sp) {
		free(sp);
		return fail(c, "listing", prefix, err ? err : -ENOMEM);
	}
	for (size_t i = 0; i < n; i++)
		print(o, NULL, 0, kvs[i].key + plen, kvs[i].value);
	etcd_kvs_free(kvs, n);
	rev = 0;
	err = etcd_range_prefix(c, sp, &rev, &kvs, &n);
	if (err) {
		fail(c, "listing", sp, err);
		free(sp);
		return 1;
	}
	for (size_t i = 0; i < n && !o->values_only; i++) {
		const char *host = kvs[i].key + strlen(sp), *slash = strchr(host, '/');

		if (slash)
			print(o, host, (int)(slash - host), slash + 1, kvs[i].value);
	}
	etcd_kvs_free(kvs, n);
	free(sp);
	return 0;
}

static int read_one(const struct etcdcli_opts *o, struct etcd_conn *c, const char *prefix,
		    const char *name)
{
	char *key = join(prefix, name);
	struct etcd_kv *kvs;
	int64_t rev = 0;
	size_t n;
	int err, found = 0;

	if (!key)
		return 1;
	err = etcd_range_prefix(c, key, &rev, &kvs, &n);
	if (err) {
		free(key);
		return fail(c, "reading key", name, err);
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(kvs[i].key, key)) { /* a prefix read also finds "name2" */
			print(o, NULL, 0, key + strlen(prefix), kvs[i].value);
			found = 1;
		}
	etcd_kvs_free(kvs, n);
	free(key);
	if (!found) {
		fprintf(stderr, "rcusysctl: \"%s\" is not in etcd under %s\n", name, prefix);
		return 1;
	}
	return 0;
}

/*
 * The bytes of keys and values one transaction carries at most: etcd takes
 * requests of 1.5 MiB by default (--max-request-bytes), and the gateway's
 * base64 makes 4 bytes of 3.
 */
#define TXN_BYTES_MAX (1024 * 1024)

/* The writes of one run, checked before any is sent. */
struct txn {
	const char *names[SYSCTL_COMMIT_MAX];
	char *keys[SYSCTL_COMMIT_MAX];
	const char *values[SYSCTL_COMMIT_MAX];
	char name_buf[SYSCTL_COMMIT_MAX][4096]; /* a longer one is refused: see ETCD_KEY_MAX */
	size_t n, bytes;
};

static int refuse(const char *name, const char *why)
{
	fprintf(stderr, "rcusysctl: \"%s\": %s; nothing was written\n", name, why);
	return 1;
}

/* Add @arg (name=value) to @t, or say why not, naming it. */
static int txn_add(struct txn *t, const char *prefix, const char *arg)
{
	const char *eq = strchr(arg, '='), *value = eq ? eq + 1 : NULL;
	size_t vlen = value ? strlen(value) : 0;
	char *name, *key;
	int err;

	if (!eq || eq == arg)
		return refuse(arg, "must be of the form name=value");
	if (t->n == SYSCTL_COMMIT_MAX) {
		fprintf(stderr, "rcusysctl: \"%.*s\": one more than a transaction may hold (%d, "
				"the most a host commits as one); nothing was written\n",
			(int)(eq - arg), arg, SYSCTL_COMMIT_MAX);
		return 1;
	}
	name = t->name_buf[t->n];
	snprintf(name, sizeof(t->name_buf[0]), "%.*s", (int)(eq - arg), arg);
	key = join(prefix, name);
	if (!key)
		return refuse(name, "out of memory");
	t->keys[t->n] = key;
	t->names[t->n] = name;
	t->values[t->n] = value;
	t->n++;
	err = etcd_key_check(key, strlen(key), prefix, strlen(prefix));
	if (err)
		return refuse(name, err == -ENAMETOOLONG ? "its key is too long (1024 bytes at most)"
					: "its key is not a path under the prefix (an empty, \".\" "
					  "or \"..\" component)");
	if (memchr(value, '\n', vlen))
		return refuse(name, "a value holding a newline (no host would apply it whole)");
	for (size_t i = 0; i + 1 < t->n; i++)
		if (!strcmp(t->keys[i], key))
			return refuse(name, "named twice (which value would win?)");
	t->bytes += strlen(key) + vlen;
	if (t->bytes > TXN_BYTES_MAX)
		return refuse(name, "the transaction passes 1 MiB of keys and values here "
				    "(etcd takes 1.5 MiB requests by default, base64 encoded)");
	return 0;
}

/* Every name=value of the command line as one transaction, or none. */
static int write_all(const struct etcdcli_opts *o, struct etcd_conn *c, const char *prefix,
		     int argc, char **argv)
{
	struct txn *t = calloc(1, sizeof(*t));
	int code = t ? 0 : 1, err = 0;

	for (int i = 0; t && i < argc && !code; i++)
		if (o->write || strchr(argv[i], '='))
			code = txn_add(t, prefix, argv[i]);
	if (!code && t->n == 1)
		err = etcd_put(c, t->keys[0], t->values[0], strlen(t->values[0]), NULL);
	else if (!code && t->n)
		err = etcd_put_many(c, (const char *const *)t->keys, t->values, t->n);
	if (err && t->n == 1)
		code = fail(c, "setting key", t->names[0], err);
	else if (err)
		code = fail(c, "one transaction (nothing written) of the keys from", t->names[0],
			    err);
	for (size_t i = 0; t && i < t->n; i++) {
		if (!code && !o->quiet)
			print(o, NULL, 0, t->keys[i] + strlen(prefix), t->values[i]);
		free(t->keys[i]);
	}
	free(t);
	return code;
}

int etcdcli_main(const struct etcdcli_opts *o, int argc, char **argv)
{
	struct etcd_tls tls = { o->cacert, o->cert, o->key };
	struct etcd_conn c;
	char *prefix;
	int code = 0, err;

	if (!o->prefix || !*o->prefix) {
		fprintf(stderr, "rcusysctl: --etcd needs --prefix (the mirrored prefix, e.g. /rcustring/web/)\n");
		return 1;
	}
	if (asprintf(&prefix, "%s%s", o->prefix, o->prefix[strlen(o->prefix) - 1] == '/' ? "" : "/") < 0)
		return 1;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	err = etcd_conn_init(&c, o->endpoints, &tls);
	if (err) {
		fprintf(stderr, "rcusysctl: --etcd: %s\n", strerror(-err));
		free(prefix);
		return 1;
	}
	if (credentials(&c, o->endpoints)) {
		etcd_conn_free(&c);
		free(prefix);
		return 1;
	}
	if (o->all)
		code |= list_all(o, &c, prefix);
	/* The writes first, as one transaction: every host applies them as one commit. */
	code |= write_all(o, &c, prefix, argc, argv);
	for (int i = 0; i < argc && !o->write; i++)
		if (!strchr(argv[i], '='))
			code |= read_one(o, &c, prefix, argv[i]);
	if (o->json)
		json_list_print();
	etcd_conn_free(&c);
	curl_global_cleanup();
	free(prefix);
	return code;
}
