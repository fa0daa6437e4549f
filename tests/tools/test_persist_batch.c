/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Out of memory while the store takes a group-committed batch of several
 * writers into what it keeps (tools/rcusysd/persist_commit.c), after the
 * batch's append and fdatasync went through. A first writer's append is
 * held until two more writers joined the next batch; that batch's leader
 * then fails its Nth malloc. Every writer of the refused batch must find
 * its old value everywhere: live, in what the store keeps (persist_restore()
 * puts the kept value back, so a kept refused value would go live), in
 * the file as a killed daemon leaves it (the batch cut off again), and
 * after a later write and a restart (a compaction writes what is kept).
 * The store used to keep the records before the failing one and leave
 * the whole batch in the file. Then a reset and a write of one key in one
 * batch, in both orders: the last one counts, and an ENOMEM refuses both.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rcustring/sysctl.h>

#include "../failmalloc.h"
#include "log.h"
#include "persist.h"
#include "persist_int.h"
#include "store_life.h"

#define NKEYS 3 /* app.k0: the first batch's writer; app.k1, app.k2: the second batch */

/*
 * The held append: stage 1 holds the first leader until @release (the
 * test lines writers up in the next batch meanwhile), stage 2 arms the
 * next leader's malloc #@nth (0: none).
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int stage;
	long nth;
	bool holding, release;
} hold = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

/* Runs in the leader, p->lock not held: its batch is closed, the next one open. */
static ssize_t held_pwrite(void *arg, int fd, const void *buf, size_t len, off_t off)
{
	(void)arg;
	pthread_mutex_lock(&hold.lock);
	if (hold.stage == 1) {
		hold.stage = 2;
		hold.holding = true;
		pthread_cond_broadcast(&hold.cond);
		while (!hold.release)
			pthread_cond_wait(&hold.cond, &hold.lock);
	} else if (hold.stage == 2) {
		hold.stage = 0;
		if (hold.nth)
			failmalloc_arm(hold.nth); /* this thread's mallocs: the leader's own */
	}
	pthread_mutex_unlock(&hold.lock);
	return pwrite(fd, buf, len, off);
}

/* Until the open batch (the one after the held leader's) has @n writers. */
static void wait_joined(struct persist *p, unsigned int n)
{
	/* A writer joining while a leader flushes broadcasts p->cond. */
	pthread_mutex_lock(&p->lock);
	while (!p->open || p->open->nwriters < n)
		pthread_cond_wait(&p->cond, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

static const struct persist_io held_io = { .pwrite = held_pwrite };

static int life_start(struct keys_life *l, const char *path)
{
	return keys_life_start(l, path, NKEYS, &held_io) || l->applied ? -1 : 0;
}


static const struct sysctl_caller client = { 0, 0, 1 };

static int set(struct keys_life *l, int k, const char *v)
{
	char path[16];

	snprintf(path, sizeof(path), "app.k%d", k);
	return sysctl_set(l->tree, path, v, strlen(v), &client);
}

/* A writer of the second batch: a client's write of app.k<k>, or rcusysctl --reset of it. */
struct op {
	int k;
	bool forget;
};

struct writer {
	struct keys_life *l;
	struct op op;
	int rc;
	char value[32];
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	char key[16];

	snprintf(key, sizeof(key), "app.k%d", w->op.k);
	w->rc = w->op.forget ? persist_forget(w->l->p, key) : set(w->l, w->op.k, w->value);
	failmalloc_disarm();
	return NULL;
}

/* What each key holds live, and what the store keeps ("": nothing, the default comes back). */
struct model {
	char live[NKEYS][32], kept[NKEYS][32];
};

static void expect(const struct keys_life *l, const char (*want)[32], const char *where,
		   const char *ctx)
{
	char what[160];

	for (int k = 0; k < NKEYS; k++) {
		char v[32];

		if (*want[k])
			snprintf(v, sizeof(v), "%s", want[k]);
		else
			snprintf(v, sizeof(v), "default%d", k);
		snprintf(what, sizeof(what), "%s: app.k%d holds \"%s\" (got \"%s\")", where, k, v,
			 l->data[k]);
		check(!strcmp(l->data[k], v), what, ctx);
	}
}

/* A daemon killed now: its file, copied, started. */
static void expect_after_kill(const char *dir, const char *path, const struct model *m,
			      const char *ctx)
{
	char copy[300], cmd[700];
	struct keys_life l;

	snprintf(copy, sizeof(copy), "%s/killed/state.conf", dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s/killed && mkdir -m 700 %s/killed && cp %s %s", dir, dir,
		 path, copy);
	if (system(cmd) != 0 || life_start(&l, copy)) {
		check(false, "the file copied as a killed daemon leaves it starts", ctx);
		return;
	}
	expect(&l, m->kept, "after a kill", ctx);
	keys_life_end(&l);
}

/* What the store keeps, seen through its API; a kept refused value would go live here. */
static void expect_kept(struct keys_life *l, const struct model *m, const char *ctx)
{
	char key[16];

	for (int k = 1; k < NKEYS; k++) {
		snprintf(key, sizeof(key), "app.k%d", k);
		check(persist_holds(l->p, key) == !!*m->kept[k], "the store holds what was acknowledged",
		      ctx);
		check(!persist_restore(l->p, key) == !!*m->kept[k], "the kept value is restored", ctx);
	}
	expect(l, m->live, "after persist_restore()", ctx);
}

/* The first batch's writer held in its append, @ops lined up in the next batch in order. */
static void run_batches(struct keys_life *l, struct writer *w, const struct op *ops, long nth)
{
	pthread_t t[NKEYS];

	hold.stage = 1, hold.nth = nth, hold.holding = hold.release = false;
	w[0] = (struct writer){ .l = l, .value = "k0-first" };
	pthread_create(&t[0], NULL, writer_main, &w[0]);
	pthread_mutex_lock(&hold.lock);
	while (!hold.holding)
		pthread_cond_wait(&hold.cond, &hold.lock);
	pthread_mutex_unlock(&hold.lock);
	for (int i = 1; i < NKEYS; i++) {
		w[i] = (struct writer){ .l = l, .op = ops[i - 1] };
		snprintf(w[i].value, sizeof(w[i].value), "k%d-new-%ld", ops[i - 1].k, nth);
		pthread_create(&t[i], NULL, writer_main, &w[i]);
		wait_joined(l->p, (unsigned int)i);
	}
	pthread_mutex_lock(&hold.lock);
	hold.release = true;
	pthread_cond_broadcast(&hold.cond);
	pthread_mutex_unlock(&hold.lock);
	for (int i = 0; i < NKEYS; i++)
		pthread_join(t[i], NULL);
}

/* @ops as the second batch, whose leader fails malloc #@nth (0: none); 1 if it was refused. */
static int one_batch(const char *dir, const struct op *ops, long nth, const char *name)
{
	struct model m = { { "k0-first", "k1-old", "k2-old" }, { "k0-first", "k1-old", "k2-old" } };
	char path[256], cmd[300], ctx[96];
	struct writer w[NKEYS];
	struct keys_life l;
	bool refused;

	if (nth)
		snprintf(ctx, sizeof(ctx), "%s, malloc #%ld of its leader fails", name, nth);
	else
		snprintf(ctx, sizeof(ctx), "%s, no malloc fails", name);
	snprintf(path, sizeof(path), "%s/s/state.conf", dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s/s", dir);
	if (system(cmd) != 0 || life_start(&l, path))
		return check(false, "the store starts", ctx), 0;
	for (int k = 1; k < NKEYS; k++)
		check(!set(&l, k, m.live[k]), "a first value is acknowledged", ctx);
	run_batches(&l, w, ops, nth);
	check(!w[0].rc && hold.stage == 0, "the first batch is acknowledged, the second appended", ctx);
	check(!w[1].rc == !w[2].rc, "the writers of one batch share its outcome", ctx);
	refused = w[1].rc && w[2].rc;
	for (int i = 1; i < NKEYS && !refused; i++) {
		if (!w[i].op.forget)
			snprintf(m.live[w[i].op.k], sizeof(m.live[0]), "%s", w[i].value);
		snprintf(m.kept[w[i].op.k], sizeof(m.kept[0]), "%s", w[i].op.forget ? "" : w[i].value);
	}
	expect(&l, m.live, "live", ctx);
	expect_after_kill(dir, path, &m, ctx);
	expect_kept(&l, &m, ctx);
	/* The next commit compacts first where the store used to leave a refused batch. */
	check(!set(&l, 0, "k0-after"), "a later write is acknowledged", ctx);
	snprintf(m.kept[0], sizeof(m.kept[0]), "k0-after");
	keys_life_end(&l);
	if (life_start(&l, path))
		return check(false, "the store starts again", ctx), refused;
	expect(&l, m.kept, "after a restart", ctx);
	keys_life_end(&l);
	printf("%s: the batch %s\n", ctx, refused ? "refused" : "acknowledged");
	return refused;
}

int main(void)
{
	static const struct op two_keys[] = { { 1, false }, { 2, false } },
			       drop_then_set[] = { { 1, true }, { 1, false } },
			       set_then_drop[] = { { 1, false }, { 1, true } };
	char dir[] = "/tmp/persist-batch-XXXXXX", cmd[64];
	int refused = 0;
	long nth;

	log_set_level(LOG_EMERG); /* each refusal is logged */
	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	/* Until the batch goes through: the failure then lands past what it allocates. */
	for (nth = 1; nth <= 8; nth++) {
		if (!one_batch(dir, two_keys, nth, "two writers"))
			break;
		refused++;
	}
	printf("out of memory in a batch of two writers: %d mallocs failed in turn, each refused it\n",
	       refused);
	check(refused >= 2, "the failures reach the second record of the batch", "coverage");
	/* One key's items in one batch: the last one counts, all or nothing. */
	check(one_batch(dir, drop_then_set, 1, "a reset, then a write of the key"),
	      "the write's value cannot be copied: the batch is refused", "drop, set");
	check(!one_batch(dir, drop_then_set, 0, "a reset, then a write of the key"),
	      "the batch is acknowledged", "drop, set");
	check(!one_batch(dir, set_then_drop, 0, "a write, then a reset of the key"),
	      "the batch is acknowledged", "set, drop");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	printf("persist-batch: %d checks, %d failed\n", nchecks, nfailed);
	return nfailed != 0;
}
