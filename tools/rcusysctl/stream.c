/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonout.h"
#include "keys.h"
#include "socket_client.h"
#include "socktree.h"
#include "stream.h"

#define VALUE_MAX 65536

struct watcher {
	pthread_t thread;
	char key[PATH_MAX];  /* '/' form */
	char name[PATH_MAX]; /* as printed */
	struct sock_client *c;
	const struct stream_opts *o;
	int status; /* the thread's exit status */
};

/* One line at a time, and the shared connection's GET, under this lock. */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void print_change(struct watcher *w, uint64_t changes)
{
	static char value[VALUE_MAX];
	ssize_t n;

	pthread_mutex_lock(&out_lock);
	/*
	 * The value now, which may already be a later one than the change
	 * announced: WATCH says that something changed, not to what.
	 */
	n = socktree_read(w->key, value, sizeof(value));
	if (n < 0) {
		fprintf(stderr, "rcusysctl: watch: reading key \"%s\": %s\n", w->name,
			*socktree_message() ? socktree_message() : strerror((int)-n));
		w->status = 1;
	} else {
		if (n > 0 && value[n - 1] == '\n')
			value[--n] = '\0';
		if (w->o->json) {
			struct json_object *j = json_obj_new();

			json_obj_str(j, "name", w->name);
			if (!w->o->names_only)
				json_obj_str(j, "value", value);
			json_obj_int(j, "changes", (int64_t)changes);
			json_obj_print_line(j);
		} else if (w->o->names_only) {
			printf("%s\n", w->name);
		} else if (w->o->values_only) {
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
		fflush(stdout);
	}
	pthread_mutex_unlock(&out_lock);
}

static void *watch_thread(void *arg)
{
	struct watcher *w = arg;

	for (;;) {
		struct sock_reply r;
		int err = sock_client_reply(w->c, &r);

		if (err) {
			fprintf(stderr, "rcusysctl: watch %s: %s\n", w->name,
				err == -ECONNRESET ? "the server closed the connection" : strerror(-err));
			w->status = 1;
			break;
		}
		if (r.kind == SOCK_REPLY_ERR) {
			fprintf(stderr, "rcusysctl: watch %s: %.*s\n", w->name, (int)r.text_len, r.text);
			w->status = 1;
			break;
		}
		/* "CHANGED <path> <changes>"; "ALIVE <changes>" only says the server lives. */
		if (r.kind == SOCK_REPLY_DATA && r.text_len > 8 && strncmp(r.text, "CHANGED ", 8) == 0) {
			const char *sp = r.text + r.text_len;

			while (sp > r.text && sp[-1] != ' ')
				sp--;
			print_change(w, strtoull(sp, NULL, 10));
		}
	}
	return NULL;
}

int stream_watch(char **keys, int nkeys, const struct stream_opts *o)
{
	struct watcher *ws = calloc((size_t)nkeys, sizeof(*ws));
	int status = 0, started = 0;

	if (!ws) {
		fprintf(stderr, "rcusysctl: watch: %s\n", strerror(ENOMEM));
		return 1;
	}
	/* Every watch is in place (or refused) before the first line prints. */
	for (int i = 0; i < nkeys && !status; i++) {
		struct watcher *w = &ws[i];
		char path[PATH_MAX + 1], *reply = NULL;
		int err;

		snprintf(w->key, sizeof(w->key), "%s", keys[i]);
		rcusysctl_normalize_key(w->key);
		rcusysctl_display_name(w->key, w->name, sizeof(w->name));
		w->o = o;
		snprintf(path, sizeof(path), "/%s", w->key);
		err = sock_client_connect(o->socket, &w->c);
		if (!err)
			err = sock_client_call(w->c, "WATCH", path, NULL, 0, &reply);
		if (err) {
			const char *why = reply && *reply ? reply : strerror(-err);

			/* The server's message starts with the path we sent. */
			if (strncmp(why, path, strlen(path)) == 0 && strncmp(why + strlen(path), ": ", 2) == 0)
				why += strlen(path) + 2;
			fprintf(stderr, "rcusysctl: watch %s: %s\n", w->name, why);
			status = 1;
		}
		free(reply);
	}
	for (int i = 0; i < nkeys && !status; i++, started++)
		if (pthread_create(&ws[i].thread, NULL, watch_thread, &ws[i]) != 0) {
			fprintf(stderr, "rcusysctl: watch: cannot start a thread\n");
			status = 1;
			break;
		}
	/* A thread ends when its watch ends: the server closed or dropped it. */
	for (int i = 0; i < started; i++) {
		pthread_join(ws[i].thread, NULL);
		status |= ws[i].status;
	}
	for (int i = 0; i < nkeys; i++)
		sock_client_close(ws[i].c);
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
