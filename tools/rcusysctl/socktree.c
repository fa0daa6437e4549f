/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/path_form.h"
#include "socket_client.h"
#include "socktree.h"

static struct sock_client *client;
static char message[512];

/* The values of the walk running now (DUMP), for socktree_read(). */
struct walked {
	char *key;
	char *value; /* NULL when err */
	int err;
};
static bool values_in_walks;
static const struct walked *walking; /* the entry whose callback runs, or NULL */

void socktree_values_in_walks(bool on)
{
	values_in_walks = on;
}

int socktree_open(const char *path)
{
	return sock_client_connect(path, &client);
}

struct sock_client *socktree_client(void)
{
	return client;
}

void socktree_close(void)
{
	sock_client_close(client);
	client = NULL;
}

const char *socktree_message(void)
{
	return message;
}

/* "/kernel/core_pattern": a leading '/' makes the server split at '/' only. */
static int server_path(const char *key, char *out, size_t size)
{
	int n = snprintf(out, size, "/%s", key);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* Keep the server's words after "<path>: " for the caller's message. */
static void keep_message(const char *path, char *text)
{
	size_t pl = strlen(path);
	const char *m = text ? text : "";

	if (text && strncmp(text, path, pl) == 0 && strncmp(text + pl, ": ", 2) == 0)
		m = text + pl + 2;
	snprintf(message, sizeof(message), "%s", m);
	free(text);
}

static int call(const char *verb, const char *key, const char *value, char **out)
{
	char path[PATH_MAX];
	char *text = NULL;
	int err = server_path(key, path, sizeof(path));

	message[0] = '\0';
	if (err)
		return err;
	err = sock_client_call(client, verb, *key ? path : NULL, value, value ? strlen(value) : 0,
			       &text);
	if (err) {
		keep_message(path, text);
		return err;
	}
	*out = text;
	return 0;
}

ssize_t socktree_read(const char *key, char *buf, size_t size)
{
	char *v = NULL;
	size_t len;
	int err;

	if (walking && strcmp(walking->key, key) == 0) {
		message[0] = '\0';
		if (walking->err)
			return walking->err;
		err = 0;
		v = strdup(walking->value);
		if (!v)
			return -ENOMEM;
	} else {
		err = call("GET", key, NULL, &v);
	}
	if (err)
		return err;
	/* The server drops the final newline; put it back, as the file has it. */
	len = strlen(v);
	if (len + 2 > size) {
		free(v);
		return -EFBIG;
	}
	memcpy(buf, v, len);
	buf[len++] = '\n';
	buf[len] = '\0';
	free(v);
	return (ssize_t)len;
}

int socktree_write(const char *key, const char *value)
{
	char *v = NULL;
	int err;

	/* A request is one line; strings end at a newline anyway. */
	if (strchr(value, '\n'))
		return -EINVAL;
	err = call("SET", key, value, &v);
	free(v);
	return err;
}

int socktree_apply(const char *key, const char *value)
{
	char *v = NULL;
	int err;

	if (strchr(value, '\n'))
		return -EINVAL;
	err = call("APPLY", key, value, &v);
	free(v);
	return err;
}

int socktree_commit(const char *const *keys, const char *const *values, size_t n, bool apply,
		    size_t *refused)
{
	char (*paths)[PATH_MAX] = calloc(n ? n : 1, PATH_MAX);
	const char **p = calloc(n ? n : 1, sizeof(*p));
	char *text = NULL;
	int err = paths && p ? 0 : -ENOMEM;

	message[0] = '\0';
	*refused = n;
	for (size_t i = 0; i < n && !err; i++) {
		err = server_path(keys[i], paths[i], sizeof(paths[i]));
		p[i] = paths[i];
	}
	if (!err)
		err = sock_client_mset(client, apply, p, values, n, &text);
	for (size_t i = 0; err && text && i < n && *refused == n; i++) {
		size_t pl = strlen(paths[i]);

		if (strncmp(text, paths[i], pl) == 0 && strncmp(text + pl, ": ", 2) == 0)
			*refused = i;
	}
	if (err)
		keep_message(*refused < n ? paths[*refused] : "", text);
	else
		free(text);
	free(paths);
	free(p);
	return err;
}

int socktree_write_if(const char *key, const char *value, uint64_t generation)
{
	char *v = NULL, *line;
	int err;

	if (strchr(value, '\n'))
		return -EINVAL;
	/* "SETIF <path> <generation> <value>": the number goes before the value. */
	if (asprintf(&line, "%" PRIu64 " %s", generation, value) < 0)
		return -ENOMEM;
	err = call("SETIF", key, line, &v);
	free(line);
	free(v);
	return err;
}

int socktree_reset(const char *key)
{
	char *v = NULL;
	int err = call("RESET", key, NULL, &v);

	free(v);
	return err;
}

int socktree_generation(const char *key, uint64_t *out)
{
	char *v = NULL, *end;
	int err = call("GENERATION", key, NULL, &v);

	if (err)
		return err;
	errno = 0;
	*out = strtoull(v, &end, 10);
	err = errno || end == v || *end ? -EPROTO : 0;
	free(v);
	return err;
}

int socktree_stat(const char *key)
{
	char *v = NULL;
	int err = call("DESCRIBE", key, NULL, &v);

	free(v);
	/* Unreadable still exists (write-only entries). */
	return err == -EACCES ? 0 : err;
}

int socktree_describe(const char *key, char *buf, size_t size)
{
	char *v = NULL;
	int err = call("DESCRIBE", key, NULL, &v);

	if (err)
		return err;
	snprintf(buf, size, "%s", v);
	free(v);
	return 0;
}

/*
 * A listed path (procps form, sysctl_entry_path(): every '/' of the key
 * shown as '.', every '.' as '/') back to the '/' key. Always swapped: the
 * first-separator rule would misread "vlan/d.eth0/300.mtu", the listed form
 * of "vlan.d/eth0.300/mtu", as a slash path.
 */
void socktree_listed_key(char *p)
{
	rcs_path_swap_separators(p);
}

/* "VALUE <path> <value>" or "FAILED <path> <errno> <NAME>" into @w. */
static int parse_dumped(const char *text, size_t len, struct walked *w)
{
	bool value = len > 6 && strncmp(text, "VALUE ", 6) == 0;
	size_t skip = value ? 6 : 7;
	const char *p, *sp;
	long n;

	if (!value && !(len > 7 && strncmp(text, "FAILED ", 7) == 0))
		return -EPROTO;
	p = text + skip;
	sp = memchr(p, ' ', len - skip);
	if (!sp)
		return -EPROTO;
	w->key = malloc((size_t)(sp - p) + 1);
	if (!w->key)
		return -ENOMEM;
	if (sock_unescape(p, (size_t)(sp - p), w->key) < 0)
		return -EPROTO;
	socktree_listed_key(w->key);
	sp++;
	if (!value) {
		w->err = -atoi(sp);
		return w->err < 0 ? 0 : -EPROTO;
	}
	w->value = malloc(len - (size_t)(sp - text) + 1);
	if (!w->value)
		return -ENOMEM;
	n = sock_unescape(sp, len - (size_t)(sp - text), w->value);
	return n < 0 ? -EPROTO : 0;
}

/*
 * A walk over DUMP: names and values in one reply. Returns -ENOSYS when
 * the server does not know DUMP (then the caller lists and reads).
 */
static int walk_dump(const char *path, const char *key, int (*fn)(const char *key, void *arg),
		     void *arg)
{
	struct walked *ws = NULL;
	size_t n = 0, cap = 0;
	int err = sock_client_send(client, "DUMP", *key ? path : NULL, NULL, 0), ret = 0;

	/* Read the whole reply first: requests cannot interleave with it. */
	while (!err) {
		struct sock_reply r;

		err = sock_client_reply(client, &r);
		if (err || r.kind == SOCK_REPLY_OK)
			break;
		if (r.kind == SOCK_REPLY_ERR) {
			char *text = strndup(r.text, r.text_len);

			err = r.err;
			if (err == -EINVAL && text && strncmp(text, "unknown request", 15) == 0)
				err = -ENOSYS;
			keep_message(path, text);
			break;
		}
		if (n == cap) {
			struct walked *more = realloc(ws, (cap = cap ? cap * 2 : 256) * sizeof(*ws));

			if (!more) {
				err = -ENOMEM;
				break;
			}
			ws = more;
		}
		ws[n] = (struct walked){ 0 };
		err = parse_dumped(r.text, r.text_len, &ws[n]);
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		if (!err && !ret) {
			walking = &ws[i];
			ret = fn(ws[i].key, arg);
			walking = NULL;
		}
		free(ws[i].key);
		free(ws[i].value);
	}
	free(ws);
	return err ? err : ret;
}

int socktree_walk(const char *key, int (*fn)(const char *key, void *arg), void *arg)
{
	char path[PATH_MAX];
	char **keys = NULL;
	size_t n = 0;
	int err = server_path(key, path, sizeof(path)), ret = 0;

	if (err)
		return err;
	if (values_in_walks) {
		err = walk_dump(path, key, fn, arg);
		if (err != -ENOSYS)
			return err;
		message[0] = '\0';
	}
	err = sock_client_send(client, "LIST", *key ? path : NULL, NULL, 0);
	/* Read the whole listing first: requests cannot interleave with it. */
	while (!err) {
		struct sock_reply r;
		const char *sp;
		char *k, **more;
		long len;

		err = sock_client_reply(client, &r);
		if (err)
			break;
		if (r.kind == SOCK_REPLY_OK)
			break;
		if (r.kind == SOCK_REPLY_ERR) {
			char *text = strndup(r.text, r.text_len);

			err = r.err;
			keep_message(path, text);
			break;
		}
		/* "ENTRY <mode> <rw> <path>" */
		sp = r.text_len > 6 ? memchr(r.text + 6, ' ', r.text_len - 6) : NULL;
		sp = sp ? memchr(sp + 1, ' ', r.text_len - (size_t)(sp + 1 - r.text)) : NULL;
		if (!sp || strncmp(r.text, "ENTRY ", 6) != 0) {
			err = -EPROTO;
			break;
		}
		sp++;
		k = malloc(r.text_len + 1);
		more = k ? realloc(keys, (n + 1) * sizeof(*keys)) : NULL;
		if (!more) {
			free(k);
			err = -ENOMEM;
			break;
		}
		keys = more;
		len = sock_unescape(sp, r.text_len - (size_t)(sp - r.text), k);
		if (len < 0) {
			free(k);
			err = -EPROTO;
			break;
		}
		socktree_listed_key(k);
		keys[n++] = k;
	}
	for (size_t i = 0; i < n; i++) {
		if (!err && !ret)
			ret = fn(keys[i], arg);
		free(keys[i]);
	}
	free(keys);
	return err ? err : ret;
}
