/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Commits through the control socket: writers send pairs (x, x) to an RCU
 * string and an int as one MSET each (x spelled as a run of one letter, its
 * length and letter both from x, so two values differ in length and in
 * every byte), while readers read the pair with MGET and follow it with
 * MWATCH (a view of both values updated by each EVENT). Any reader that
 * sees a string and a number from different commits fails, printing them.
 * Every 16th commit carries a number its handler refuses: the reply must
 * name that item, and its string ("ZZZ") must never be seen. --key-by-key
 * writes each pair with two SETs instead, the way a client did before
 * MSET: readers then see mixed pairs, which shows the test can fail.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rcustring/rcustring.h"
#include "rcustring/sysctl_socket.h"
#include "socket_client.h"

#define WRITERS 2
#define MGET_READERS 2
#define STR_MAX 64

static char sock_path[96];
static struct rcustring name;
static int number;
static unsigned long next_x = 1;
static bool stop, key_by_key;
static unsigned long commits, refused, mgets, events, mixed, leaked;

static struct ctl_table table[] = {
	{ .procname = "name", .data = &name, .maxlen = STR_MAX, .mode = 0644,
	  .proc_handler = proc_rcu_string },
	{ .procname = "number", .data = &number, .maxlen = sizeof(int), .mode = 0644,
	  .proc_handler = proc_dointvec },
};

/* x as the string: 1..40 copies of one letter of 26 (the run is never empty). */
static size_t spell(unsigned long x, char *buf)
{
	size_t len = 1 + x % 40;

	memset(buf, 'a' + (int)(x % 26), len);
	buf[len] = '\0';
	return len;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "%s: %s\n", what, strerror(-err));
	exit(1);
}

static struct sock_client *connect_to_server(void)
{
	struct timeval tv = { 1, 0 }; /* readers look at the stop flag each second */
	struct sock_client *c;
	int err = sock_client_connect(sock_path, &c);

	if (err)
		die("connect", err);
	setsockopt(sock_client_fd(c), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return c;
}

/* Whether @s (a name) and @x (a number) come from one commit; the refused name never shows. */
static void check_pair(const char *via, const char *s, unsigned long x)
{
	char want[STR_MAX];

	spell(x, want);
	if (s[0] == 'Z' && __atomic_add_fetch(&leaked, 1, __ATOMIC_RELAXED) == 1)
		fprintf(stderr, "%s: a refused commit's name was read: %s\n", via, s);
	if (strcmp(s, want) && __atomic_add_fetch(&mixed, 1, __ATOMIC_RELAXED) <= 3)
		fprintf(stderr, "%s: mixed pair: name \"%s\" number %lu\n", via, s, x);
}

/* An MSET whose number is refused: it must name item 2, and write nothing. */
static void refused_commit(struct sock_client *c)
{
	const char *paths[2] = { "pair.name", "pair.number" }, *values[2] = { "ZZZ", "not-a-number" };
	char *msg = NULL;
	int err = sock_client_mset(c, false, paths, values, 2, &msg);

	if (err != -EINVAL || !msg || !strstr(msg, "pair.number: ") || !strstr(msg, "item 2 of 2")) {
		fprintf(stderr, "refused commit: %s, \"%s\" (want EINVAL naming item 2)\n",
			strerror(-err), msg ? msg : "");
		exit(1);
	}
	free(msg);
	__atomic_add_fetch(&refused, 1, __ATOMIC_RELAXED);
}

static void *writer(void *arg)
{
	struct sock_client *c = connect_to_server();
	char s[STR_MAX], n[24];

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		unsigned long x = __atomic_fetch_add(&next_x, 1, __ATOMIC_RELAXED) % 1000000;
		const char *paths[2] = { "pair.name", "pair.number" }, *values[2] = { s, n };
		int err;

		spell(x, s);
		snprintf(n, sizeof(n), "%lu", x);
		if (!key_by_key && x % 16 == 0)
			refused_commit(c);
		if (key_by_key)
			err = sock_client_call(c, "SET", paths[0], s, strlen(s), NULL) ?:
			      sock_client_call(c, "SET", paths[1], n, strlen(n), NULL);
		else
			err = sock_client_mset(c, false, paths, values, 2, NULL);
		if (err)
			die("commit", err);
		__atomic_add_fetch(&commits, 1, __ATOMIC_RELAXED);
	}
	sock_client_close(c);
	return NULL;
}

/* The value of a "VALUE <path> <value>" line, unescaped into @out. */
static int value_of(const struct sock_reply *r, char *out, size_t size)
{
	const char *sp = r->text_len > 6 ? memchr(r->text + 6, ' ', r->text_len - 6) : NULL;
	size_t len = sp ? r->text_len - (size_t)(sp + 1 - r->text) : 0;

	if (r->kind != SOCK_REPLY_DATA || !sp || len >= size)
		return -EPROTO;
	return sock_unescape(sp + 1, len, out) < 0 ? -EPROTO : 0;
}

static void *mget_reader(void *arg)
{
	struct sock_client *c = connect_to_server();
	char s[STR_MAX * 4 + 1], n[32];
	struct sock_reply r;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		int err = sock_client_send(c, "MGET", NULL, "pair.name pair.number", 21);

		if (!err && !(err = sock_client_reply(c, &r)))
			err = value_of(&r, s, sizeof(s));
		if (!err && !(err = sock_client_reply(c, &r)))
			err = value_of(&r, n, sizeof(n));
		if (!err && !(err = sock_client_reply(c, &r)))
			err = r.kind == SOCK_REPLY_OK ? 0 : -EPROTO;
		if (err)
			die("MGET", err);
		check_pair("MGET", s, strtoul(n, NULL, 10));
		__atomic_add_fetch(&mgets, 1, __ATOMIC_RELAXED);
	}
	sock_client_close(c);
	return NULL;
}

/*
 * Apply "EVENT <k> (<path> <changes> <value>)..." to the view @s, @n;
 * return 0 or -EPROTO.
 */
static int apply_event(const struct sock_reply *r, char *s, char *n)
{
	char *line = strndup(r->text, r->text_len), *p = line, *f[3 * 2 + 2];
	int k = 0, err = -EPROTO;

	for (; p && k < (int)(sizeof(f) / sizeof(f[0])); k++) {
		f[k] = strsep(&p, " ");
	}
	if (line && !p && k >= 5 && !strcmp(f[0], "EVENT") && atoi(f[1]) * 3 + 2 == k) {
		err = 0;
		for (int i = 2; i < k && !err; i += 3) {
			char *to = !strcmp(f[i], "pair.name") ? s : !strcmp(f[i], "pair.number") ? n : NULL;

			if (!to || strlen(f[i + 2]) >= STR_MAX || sock_unescape(f[i + 2], strlen(f[i + 2]), to) < 0)
				err = -EPROTO;
		}
	}
	free(line);
	return err;
}

static void *watch_reader(void *arg)
{
	struct sock_client *c = connect_to_server();
	char s[STR_MAX] = "", n[STR_MAX] = "";
	struct sock_reply r;
	int err = sock_client_send(c, "MWATCH", NULL, "pair.name pair.number", 21);

	(void)arg;
	if (!err && !(err = sock_client_reply(c, &r)) && r.kind != SOCK_REPLY_OK)
		err = -EPROTO;
	while (!err && !__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		err = sock_client_reply(c, &r);
		if (err == -EAGAIN || err == -EWOULDBLOCK) {
			err = 0;
			continue;
		}
		if (err || (r.text_len >= 5 && !strncmp(r.text, "ALIVE", 5)))
			continue;
		err = apply_event(&r, s, n);
		if (err)
			fprintf(stderr, "watch: bad line \"%.*s\"\n", (int)r.text_len, r.text);
		else
			check_pair("MWATCH", s, strtoul(n, NULL, 10));
		__atomic_add_fetch(&events, 1, __ATOMIC_RELAXED);
	}
	if (err)
		die("MWATCH", err);
	sock_client_close(c);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t w[WRITERS], r[MGET_READERS], wr;
	struct sysctl_table_header *h;
	struct sysctl_socket *srv;
	struct sysctl_tree *tree;
	char dir[] = "/tmp/rcs-stress-sock-XXXXXX";
	double seconds = 2;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--key-by-key"))
			key_by_key = true;
		else
			return fprintf(stderr, "usage: %s [--seconds N] [--key-by-key]\n", argv[0]), 2;
	}
	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	snprintf(sock_path, sizeof(sock_path), "%s/control.sock", dir);
	tree = sysctl_tree_new();
	if (!tree || rcustring_init(&name, STR_MAX, "a") ||
	    sysctl_register_table(tree, "pair", table, 2, &h) ||
	    sysctl_set(tree, "pair.number", "0", 1, NULL) ||
	    sysctl_socket_start(tree, sock_path, 0600, &srv))
		return fprintf(stderr, "setup failed\n"), 1;
	pthread_create(&wr, NULL, watch_reader, NULL);
	for (int i = 0; i < WRITERS; i++)
		pthread_create(&w[i], NULL, writer, NULL);
	for (int i = 0; i < MGET_READERS; i++)
		pthread_create(&r[i], NULL, mget_reader, NULL);
	nanosleep(&(struct timespec){ (time_t)seconds,
				      (long)((seconds - (time_t)seconds) * 1e9) }, NULL);
	__atomic_store_n(&stop, true, __ATOMIC_RELAXED);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(w[i], NULL);
	for (int i = 0; i < MGET_READERS; i++)
		pthread_join(r[i], NULL);
	pthread_join(wr, NULL);
	printf("%lu commits, %lu refused, %lu MGETs, %lu watch events, %lu mixed pairs, "
	       "%lu refused values read\n", commits, refused, mgets, events, mixed, leaked);
	sysctl_socket_stop(srv);
	sysctl_unregister_table(h);
	sysctl_tree_free(tree);
	rcustring_destroy(&name);
	rmdir(dir);
	if (!commits || !mgets || events < 2)
		return fprintf(stderr, "too little ran: the test proves nothing\n"), 1;
	return mixed || leaked ? 1 : 0;
}
