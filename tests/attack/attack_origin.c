/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The origin of a change travels with it, not with the thread that runs
 * its callbacks. A mirrored write (etcd) and a client's write land on one
 * entry together, in an order this test forces: the mirror's change is
 * published, its thread enters the entry's callbacks and is held there
 * (a gate callback) until the client's change is published too. The
 * mirror's thread then runs the next callback for both changes.
 *
 *   - The state file must keep the client's value: the client wrote last.
 *     (When persist.c asked the running thread whether it was applying a
 *     mirrored value, that thread said yes and the key was dropped.)
 *   - A recording callback must see change 2 as the client's, though the
 *     mirror's thread runs it.
 *   - The other order (client, then mirror) must drop the key.
 *
 * Prints "held: ..." or "failed: ..." per check, as the shell attacks do.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rcustring/sysctl.h>

#include "persist.h"
#include "store_has.h"
#include "attack_check.h"

static struct sysctl_tree *tree;
static struct sysctl_entry *entry;


/* The gate: the first call in the mirror's thread waits for the client's change. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static int gate_armed, client_published;
static __thread const char *thread_name = "main";

static void gate(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	(void)ch, (void)arg;
	pthread_mutex_lock(&gate_lock);
	if (gate_armed && !strcmp(thread_name, "mirror")) {
		gate_armed = 0;
		/* Hang guard: a client that never publishes fails the check, not the run. */
		for (int i = 0; i < 3000 && sysctl_entry_changes(e) < 2; i++) {
			pthread_mutex_unlock(&gate_lock);
			usleep(10000);
			pthread_mutex_lock(&gate_lock);
		}
		client_published = sysctl_entry_changes(e) >= 2;
	}
	pthread_mutex_unlock(&gate_lock);
}

/* What the recorder saw of change 2: its origin and the thread that ran the call. */
static enum sysctl_origin seen2_origin = SYSCTL_ORIGIN_REMOVED;
static const char *seen2_thread = "none";
static uint64_t base;

static void recorder(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	(void)e, (void)arg;
	if (ch->origin != SYSCTL_ORIGIN_REMOVED && ch->seq == base + 2) {
		seen2_origin = ch->origin;
		seen2_thread = thread_name;
	}
}

struct writer {
	const char *name, *value;
	enum sysctl_origin origin;
	int err;
};

static void *write_thread(void *arg)
{
	struct writer *w = arg;
	struct sysctl_caller who = { 0, 0, getpid() };

	thread_name = w->name;
	w->err = sysctl_set_from(tree, "app.v", w->value, strlen(w->value), &who, w->origin);
	return NULL;
}

static void run(struct writer *first, struct writer *second)
{
	pthread_t a, b;

	pthread_create(&a, NULL, write_thread, first);
	/* The second write starts once the first one's change is published. */
	while (sysctl_entry_changes(entry) < base + 1)
		usleep(1000);
	pthread_create(&b, NULL, write_thread, second);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
}

/* "key = value\n" kept in the store at @path. */
static int file_has(const char *path, const char *line)
{
	char key[128];
	const char *eq = strstr(line, " = ");

	snprintf(key, sizeof(key), "%.*s", (int)(eq - line), line);
	return store_has(path, key, strndupa(eq + 3, strlen(eq + 3) - 1));
}

int main(void)
{
	static char data[64] = "initial";
	struct ctl_table table[] = {
		{ .procname = "v", .data = data, .maxlen = sizeof(data), .mode = 0644,
		  .proc_handler = proc_dostring },
	};
	char dir[] = "/tmp/attack-origin-XXXXXX", path[64], why[256], msg[256];
	struct writer mirror = { "mirror", "from-etcd", SYSCTL_ORIGIN_MIRROR, 0 };
	struct writer client = { "client", "from-client", SYSCTL_ORIGIN_CLIENT, 0 };
	struct sysctl_callback *gcb, *rcb;
	struct sysctl_table_header *h;
	struct persist *p;

	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	snprintf(path, sizeof(path), "%s/state/state.conf", dir);
	tree = sysctl_tree_new();
	if (!tree || sysctl_register_table(tree, "app", table, 1, &h))
		return fprintf(stderr, "cannot build the tree\n"), 1;
	entry = sysctl_lookup(tree, "app.v");
	/* The gate first, so the mirror's thread is held before the recorder runs. */
	sysctl_entry_on_change(entry, gate, NULL, &gcb);
	sysctl_entry_on_change(entry, recorder, NULL, &rcb);
	if (persist_open(tree, path, &p, why, sizeof(why)) || persist_apply(p) || persist_watch(p))
		return fprintf(stderr, "state file: %s\n", why), 1;

	/* Mirror first, client second: the client's value is the one to keep. */
	base = sysctl_entry_changes(entry);
	gate_armed = 1;
	run(&mirror, &client);
	snprintf(msg, sizeof(msg), "writes returned %d and %d", mirror.err, client.err);
	check("both writes succeed", !mirror.err && !client.err, "%s", msg);
	check("the order was forced (the client published while the mirror's thread was held)",
	      client_published, "the client's change never came");
	snprintf(msg, sizeof(msg), "state file lacks 'app.v = from-client'");
	check("a client's write landing with a mirrored one is kept in the state file",
	      file_has(path, "app.v = from-client\n"), "%s", msg);
	snprintf(msg, sizeof(msg), "change 2 seen with origin %d in thread '%s'", (int)seen2_origin,
		 seen2_thread);
	check("change 2 is the client's, whichever thread runs its callback",
	      seen2_origin == SYSCTL_ORIGIN_CLIENT, "%s", msg);
	printf("measured: change 2 (the client's) ran its callback in thread '%s'\n", seen2_thread);

	/* Client first, mirror second: etcd holds the key now; the file lets it go. */
	base = sysctl_entry_changes(entry);
	client.value = "client-again";
	mirror.value = "etcd-again";
	run(&client, &mirror);
	check("a mirrored write after a client's takes the key out of the state file",
	      !file_has(path, "app.v = client-again\n") && !file_has(path, "app.v = etcd-again\n"),
	      "the state file still holds app.v");

	persist_close(p);
	sysctl_callback_remove(gcb);
	sysctl_callback_remove(rcb);
	sysctl_entry_put(entry);
	sysctl_unregister_table(h);
	sysctl_tree_free(tree);
	rcustring_barrier();
	snprintf(msg, sizeof(msg), "rm -rf %s", dir);
	if (system(msg) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	printf("attack-origin: %d failed\n", nfailed);
	return nfailed != 0;
}
