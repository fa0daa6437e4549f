/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysctl watch (MWATCH: one connection, each commit of the watched
 * entries printed together, its values as of the commit) and audit (AUDIT).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rcustring/sysctl_commit.h"
#include "jsonout.h"
#include "keys.h"
#include "socket_client.h"
#include "socktree.h"
#include "stream.h"

/* One watched key. */
struct watched {
	char key[PATH_MAX];  /* '/' form */
	char name[PATH_MAX]; /* as printed */
	char path[PATH_MAX + 1]; /* as sent, "/key" */
};

/* One entry of an event: its name and value, as every other listing prints them. */
static void print_entry(const struct watched *w, char *value, uint64_t changes, uint64_t event,
			const struct stream_opts *o)
{
	if (o->json) {
		struct json_object *j = json_obj_new();

		json_obj_str(j, "name", w->name);
		if (!o->names_only)
			json_obj_str(j, "value", value);
		json_obj_int(j, "changes", (int64_t)changes);
		json_obj_int(j, "event", (int64_t)event);
		json_obj_print_line(j);
	} else if (o->names_only) {
		printf("%s\n", w->name);
	} else if (o->values_only) {
		printf("%s\n", value);
	} else {
		/* Multi-line values: one "name = line" per line, as reads. */
		for (char *line = value, *nl;; line = nl + 1) {
			nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			printf("%s = %s\n", w->name, line);
			if (!nl)
				break;
		}
	}
}

/* The next space-separated field of *@p (NUL-terminated in place), or NULL. */
static char *field(char **p)
{
	char *f = *p, *sp;

	if (!f)
		return NULL;
	sp = strchr(f, ' ');
	if (sp)
		*sp = '\0';
	*p = sp ? sp + 1 : NULL;
	return f;
}

/*
 * "EVENT <k> <path> <changes> <value>..." (MWATCH): every entry of one
 * commit, printed together and flushed once. Returns 0 or -EPROTO.
 */
static int print_event(char *line, const struct watched *ws, int n, uint64_t event,
		       const struct stream_opts *o)
{
	char *p = line, *f = field(&p);
	unsigned long k;

	if (!f || strcmp(f, "EVENT") || !(f = field(&p)))
		return -EPROTO;
	k = strtoul(f, NULL, 10);
	for (unsigned long i = 0; i < k; i++) {
		char *path = field(&p), *changes = field(&p), *value = field(&p);
		int at = 0;

		if (!value || sock_unescape(path, strlen(path), path) < 0 ||
		    sock_unescape(value, strlen(value), value) < 0)
			return -EPROTO;
		while (at < n && strcmp(ws[at].path, path))
			at++;
		if (at == n)
			return -EPROTO;
		print_entry(&ws[at], value, strtoull(changes, NULL, 10), event, o);
	}
	fflush(stdout);
	return 0;
}

/* The server's message, naming the key it is about as the other messages do. */
static void say(const struct watched *ws, int n, const char *text, size_t len)
{
	for (int i = 0; i < n; i++) {
		size_t pl = strlen(ws[i].path);

		if (len > pl + 2 && !strncmp(text, ws[i].path, pl) && !strncmp(text + pl, ": ", 2)) {
			fprintf(stderr, "rcusysctl: watch %s: %.*s\n", ws[i].name, (int)(len - pl - 2),
				text + pl + 2);
			return;
		}
	}
	fprintf(stderr, "rcusysctl: watch: %.*s\n", (int)len, text);
}

/* "MWATCH <path>..." for every key: -1 to go on, else the exit status. */
static int start_watch(struct sock_client *c, struct watched *ws, int n)
{
	size_t cap = 8, len = 0;
	char *list = malloc(cap), *reply = NULL;
	int err = list ? 0 : -ENOMEM;

	for (int i = 0; i < n && !err; i++) {
		size_t pl = strlen(ws[i].path);
		char *more = len + pl + 2 > cap ? realloc(list, cap = (len + pl + 2) * 2) : list;

		if (!more) {
			err = -ENOMEM;
			break;
		}
		list = more;
		if (len)
			list[len++] = ' ';
		memcpy(list + len, ws[i].path, pl + 1);
		len += pl;
	}
	if (!err)
		err = sock_client_call(c, "MWATCH", NULL, list, len, &reply);
	free(list);
	if (!err) {
		free(reply);
		return -1;
	}
	if (reply && *reply)
		say(ws, n, reply, strlen(reply));
	else
		fprintf(stderr, "rcusysctl: watch: %s\n", strerror(-err));
	free(reply);
	return 1;
}

int stream_watch(char **keys, int nkeys, const struct stream_opts *o)
{
	struct watched *ws;
	struct sock_client *c = NULL;
	uint64_t event = 0;
	int status, err;

	if (nkeys > SYSCTL_COMMIT_MAX) {
		fprintf(stderr, "rcusysctl: watch: at most %d names in one watch\n", SYSCTL_COMMIT_MAX);
		return 1;
	}
	ws = calloc((size_t)nkeys, sizeof(*ws));
	if (!ws) {
		fprintf(stderr, "rcusysctl: watch: %s\n", strerror(ENOMEM));
		return 1;
	}
	for (int i = 0; i < nkeys; i++) {
		snprintf(ws[i].key, sizeof(ws[i].key), "%s", keys[i]);
		rcusysctl_normalize_key(ws[i].key);
		rcusysctl_display_name(ws[i].key, ws[i].name, sizeof(ws[i].name));
		snprintf(ws[i].path, sizeof(ws[i].path), "/%s", ws[i].key);
	}
	err = sock_client_connect(o->socket, &c);
	status = err ? (fprintf(stderr, "rcusysctl: watch: %s\n", strerror(-err)), 1)
		     : start_watch(c, ws, nkeys);
	/* The first EVENT holds every value now: the state changes are reported against. */
	for (bool first = true; status < 0; first = false) {
		struct sock_reply r;
		char *line;

		err = sock_client_reply(c, &r);
		if (err) {
			fprintf(stderr, "rcusysctl: watch: %s\n",
				err == -ECONNRESET ? "the server closed the connection" : strerror(-err));
			status = 1;
			break;
		}
		if (r.kind == SOCK_REPLY_ERR) {
			say(ws, nkeys, r.text, r.text_len);
			status = 1;
			break;
		}
		/* "ALIVE" only says the server lives. */
		if (r.text_len < 6 || strncmp(r.text, "EVENT ", 6) != 0)
			continue;
		line = strndup(r.text, r.text_len);
		if (!first && (!line || print_event(line, ws, nkeys, ++event, o))) {
			fprintf(stderr, "rcusysctl: watch: malformed event from the server\n");
			status = 1;
		}
		free(line);
	}
	sock_client_close(c);
	free(ws);
	return status;
}

/* "2026-12-03T15:08:12.123456789Z" from "<sec>.<nsec>". */
static void iso_time(const char *field, char *out, size_t size)
{
	char *dot;
	time_t sec = (time_t)strtoll(field, &dot, 10);
	struct tm tm;

	if (*dot != '.' || !gmtime_r(&sec, &tm)) {
		snprintf(out, size, "%s", field);
		return;
	}
	strftime(out, size, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + strlen(out), size - strlen(out), ".%sZ", dot + 1);
}

/* "AUDIT <seq> <sec.nsec> <uid> <pid> <path> <old> <new>", fields unescaped. */
static int print_audit(char *line, const struct stream_opts *o)
{
	char *f[8], when[64], name[PATH_MAX];
	int n = 0;

	for (char *p = line, *sp;; p = sp + 1) {
		sp = strchr(p, ' ');
		if (n == 8)
			return -EPROTO;
		f[n++] = p;
		if (!sp)
			break;
		*sp = '\0';
	}
	if (n != 8 || strcmp(f[0], "AUDIT") != 0)
		return -EPROTO;
	for (int i = 5; i < 8; i++)
		if (sock_unescape(f[i], strlen(f[i]), f[i]) < 0)
			return -EPROTO;
	/* The path as sysctl_entry_path() gives it (procps form). */
	socktree_listed_key(f[5]);
	rcusysctl_display_name(f[5], name, sizeof(name));
	iso_time(f[2], when, sizeof(when));
	if (o->json) {
		struct json_object *j = json_obj_new();

		json_obj_int(j, "seq", strtoll(f[1], NULL, 10));
		json_obj_str(j, "time", when);
		json_obj_int(j, "uid", strtoll(f[3], NULL, 10));
		json_obj_int(j, "pid", strtoll(f[4], NULL, 10));
		json_obj_str(j, "name", name);
		json_obj_str(j, "old", f[6]);
		json_obj_str(j, "new", f[7]);
		json_list_add(j);
	} else {
		printf("%s %s uid=%s pid=%s %s: %s -> %s\n", f[1], when,
		       strcmp(f[3], "-1") == 0 ? "-" : f[3], f[4], name, f[6], f[7]);
	}
	return 0;
}

int stream_audit(const struct stream_opts *o)
{
	struct sock_client *c = socktree_client();
	int err = sock_client_send(c, "AUDIT", NULL, NULL, 0), status = 0;

	while (!err) {
		struct sock_reply r;
		char *line;

		err = sock_client_reply(c, &r);
		if (err || r.kind == SOCK_REPLY_OK)
			break;
		if (r.kind == SOCK_REPLY_ERR) {
			/* The server's message may name the request already. */
			if (r.text_len > 7 && strncmp(r.text, "audit: ", 7) == 0)
				r.text += 7, r.text_len -= 7;
			fprintf(stderr, "rcusysctl: audit: %.*s\n", (int)r.text_len, r.text);
			status = 1;
			break;
		}
		line = strndup(r.text, r.text_len);
		err = line ? print_audit(line, o) : -ENOMEM;
		free(line);
	}
	if (err) {
		fprintf(stderr, "rcusysctl: audit: %s\n", strerror(-err));
		status = 1;
	}
	if (o->json && !status)
		json_list_print();
	return status;
}
