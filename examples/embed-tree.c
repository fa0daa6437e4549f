/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A program that embeds a sysctl tree with two tunables and serves it on a
 * control socket, the way rcusysd does for its own: a string its threads
 * read with no lock (proc_rcu_string) and a bounded integer
 * (proc_dointvec_minmax). Run it, then from another shell:
 *
 *   ./embed-tree /tmp/embed.sock &
 *   rcusysctl --socket /tmp/embed.sock -a
 *   rcusysctl --socket /tmp/embed.sock -w app.workers=8 app.greeting="good day"
 *   rcusysctl --socket /tmp/embed.sock -w app.workers=100   # refused: 1..64
 *
 * It stops on SIGTERM or SIGINT. Build against the installed library with
 * cc embed-tree.c $(pkg-config --cflags --libs rcustring).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <rcustring/rcustring.h>
#include <rcustring/sysctl.h>
#include <rcustring/sysctl_socket.h>

#define GREETING_MAX 64

static struct rcustring greeting = RCUSTRING_INITIALIZER(GREETING_MAX, "hello");
static int workers = 4;
static int workers_min = 1, workers_max = 64;

static struct ctl_table app_table[] = {
	{ .procname = "greeting", .data = &greeting, .maxlen = GREETING_MAX, .mode = 0644,
	  .proc_handler = proc_rcu_string, .desc = "what the program says" },
	{ .procname = "workers", .data = &workers, .maxlen = sizeof(int), .mode = 0644,
	  .proc_handler = proc_dointvec_minmax, .extra1 = &workers_min, .extra2 = &workers_max,
	  .desc = "worker threads, 1 to 64" },
};

/* What a change callback is for: the program learns of each new value. */
static void changed(struct sysctl_entry *e, const struct sysctl_change *change, void *arg)
{
	char value[GREETING_MAX];

	(void)arg;
	(void)change;
	rcustring_copy(&greeting, value, sizeof(value));
	printf("%s changed; greeting is now \"%s\"\n", sysctl_entry_path(e), value);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "embed-tree.sock";
	struct sysctl_table_header *header = NULL;
	struct sysctl_socket *sock = NULL;
	struct sysctl_callback *cb = NULL;
	struct sysctl_entry *e = NULL;
	struct sysctl_tree *tree;
	sigset_t stop;
	int err, sig, status = 1;

	/* The server's threads inherit this mask; this thread takes the signals. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);

	tree = sysctl_tree_new();
	if (!tree)
		return 1;
	err = sysctl_register_table(tree, "app", app_table, 2, &header);
	if (!err && (e = sysctl_lookup(tree, "app/greeting")))
		err = sysctl_entry_on_change(e, changed, NULL, &cb);
	/* 0666: anyone may connect; each request is checked against the entry's mode. */
	if (!err)
		err = sysctl_socket_start(tree, path, 0666, &sock);
	if (err) {
		fprintf(stderr, "embed-tree: %s: %s\n", path, strerror(-err));
		goto out;
	}
	printf("serving app.greeting and app.workers on %s\n", path);
	fflush(stdout);
	if (sigwait(&stop, &sig) == 0)
		status = 0;
	sysctl_socket_stop(sock);
out:
	if (cb)
		sysctl_callback_remove(cb);
	if (e)
		sysctl_entry_put(e);
	if (header)
		sysctl_unregister_table(header);
	sysctl_tree_free(tree);
	rcustring_destroy(&greeting);
	rcustring_barrier();
	return status;
}
