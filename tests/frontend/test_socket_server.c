/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Control socket server: round trips, errors with their messages, clients
 * that misbehave, connection limit, concurrent readers against a writer,
 * peer-credential permissions, start/stop rules, DUMP (names and values in
 * one reply: escaping, permissions, whole values under a writer).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "rcustring/sysctl_socket.h"
#include "socket_client.h"

static struct rcustring core_pattern = RCUSTRING_INITIALIZER(128, "core");
static int swappiness = 60, sw_min = 0, sw_max = 200;
static int secret = 7;
static bool forwarding;

static struct ctl_table kernel_table[] = {
	{ "core_pattern", &core_pattern, 128, 0644, proc_rcu_string, NULL, NULL,
	  "pattern for core file names" },
	{ "secret", &secret, sizeof(int), 0600, proc_dointvec, NULL, NULL, "root-only int" },
};
static struct ctl_table vm_table[] = {
	{ "swappiness", &swappiness, sizeof(int), 0644, proc_dointvec_minmax, &sw_min, &sw_max,
	  "how eagerly to swap\tin 0..200" },
};
static struct ctl_table conf_table[] = {
	{ "forwarding", &forwarding, sizeof(bool), 0644, proc_dobool, NULL, NULL, "a bool" },
};

struct fixture {
	struct sysctl_tree *tree;
	struct sysctl_table_header *h[3];
	struct sysctl_socket *srv;
	char dir[64], path[96];
};

static struct fixture *fx_new(const struct sysctl_socket_options *opts)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/rcs-sock-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	chmod(f->dir, 0755); /* the non-root child must reach the socket */
	snprintf(f->path, sizeof(f->path), "%s/control.sock", f->dir);
	f->tree = sysctl_tree_new();
	assert_non_null(f->tree);
	assert_int_equal(sysctl_register_table(f->tree, "kernel", kernel_table, 2, &f->h[0]), 0);
	assert_int_equal(sysctl_register_table(f->tree, "vm", vm_table, 1, &f->h[1]), 0);
	assert_int_equal(sysctl_register_table(f->tree, "net/ipv4/conf/eth0.200", conf_table, 1,
					       &f->h[2]), 0);
	assert_int_equal(sysctl_set(f->tree, "kernel.core_pattern", "core", 4, NULL), 0);
	assert_int_equal(sysctl_set(f->tree, "vm.swappiness", "60", 2, NULL), 0);
	assert_int_equal(sysctl_socket_start_opts(f->tree, f->path, 0666, opts, &f->srv), 0);
	return f;
}

static void fx_free(struct fixture *f)
{
	struct stat st;

	sysctl_socket_stop(f->srv);
	/* stop unlinks its socket file */
	assert_int_not_equal(stat(f->path, &st), 0);
	for (int i = 0; i < 3; i++)
		sysctl_unregister_table(f->h[i]);
	sysctl_tree_free(f->tree);
	rmdir(f->dir);
	free(f);
}

static struct sock_client *conn(struct fixture *f)
{
	struct sock_client *c;
	struct timeval tv = { 5, 0 }; /* a server bug fails the test, not hangs it */

	assert_int_equal(sock_client_connect(f->path, &c), 0);
	setsockopt(sock_client_fd(c), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return c;
}

/* Send @req raw (with its '\n') and return the next reply line, malloc'ed. */
static char *ask(struct sock_client *c, const char *req)
{
	struct sock_reply r;
	char *line;

	assert_int_equal(send(sock_client_fd(c), req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
	assert_int_equal(sock_client_reply(c, &r), 0);
	/* r.text of a DATA line is the whole line; rebuild OK/ERR lines whole. */
	if (r.kind == SOCK_REPLY_DATA) {
		line = strndup(r.text, r.text_len);
	} else if (r.kind == SOCK_REPLY_OK) {
		line = malloc(r.text_len + 4);
		sprintf(line, "OK%s%.*s", r.text_len || r.text[-1] == ' ' ? " " : "", (int)r.text_len,
			r.text);
	} else {
		line = malloc(r.text_len + 32);
		sprintf(line, "ERR %d %.*s", -r.err, (int)r.text_len, r.text);
	}
	return line;
}

static void expect(struct sock_client *c, const char *req, const char *want)
{
	char *got = ask(c, req);

	if (strcmp(got, want) != 0)
		fail_msg("%s-> got \"%s\" want \"%s\"", req, got, want);
	free(got);
}

/* The reply to @req starts with @prefix. */
static void line_starts(struct sock_client *c, const char *req, const char *prefix)
{
	char *got = ask(c, req);

	if (strncmp(got, prefix, strlen(prefix)) != 0)
		fail_msg("%s-> got \"%s\" want \"%s...\"", req, got, prefix);
	free(got);
}

static void test_roundtrips(void **state)
{
	struct fixture *f = fx_new(NULL);
	struct sock_client *c = conn(f);
	char *v = NULL;

	(void)state;
	expect(c, "GET kernel.core_pattern\n", "OK core");
	expect(c, "GET kernel/core_pattern\n", "OK core");
	expect(c, "SET kernel.core_pattern |/bin/crash %p %e\n", "OK");
	expect(c, "GET kernel.core_pattern\n", "OK |/bin/crash %p %e");
	assert_int_equal(sock_client_call(c, "GET", "kernel.core_pattern", NULL, 0, &v), 0);
	assert_string_equal(v, "|/bin/crash %p %e");
	free(v);
	expect(c, "SET kernel.core_pattern \n", "OK");
	expect(c, "GET kernel.core_pattern\n", "OK ");
	expect(c, "SET vm.swappiness 10\n", "OK");
	expect(c, "GET vm.swappiness\n", "OK 10");
	assert_int_equal(swappiness, 10);
	expect(c, "DESCRIBE vm.swappiness\n", "OK how eagerly to swap\\tin 0..200");
	expect(c, "DESCRIBE kernel.core_pattern\n", "OK pattern for core file names");
	/* LIST: every entry, sorted, with mode and what this peer may do. */
	expect(c, "LIST\n", geteuid() == 0 ? "ENTRY 0644 rw kernel.core_pattern" :
					     "ENTRY 0644 r- kernel.core_pattern");
	expect(c, "", geteuid() == 0 ? "ENTRY 0600 rw kernel.secret" : "ENTRY 0600 -- kernel.secret");
	expect(c, "", geteuid() == 0 ? "ENTRY 0644 rw net.ipv4.conf.eth0/200.forwarding" :
				       "ENTRY 0644 r- net.ipv4.conf.eth0/200.forwarding");
	expect(c, "", geteuid() == 0 ? "ENTRY 0644 rw vm.swappiness" : "ENTRY 0644 r- vm.swappiness");
	expect(c, "", "OK 4");
	expect(c, "LIST vm\n", geteuid() == 0 ? "ENTRY 0644 rw vm.swappiness" :
						"ENTRY 0644 r- vm.swappiness");
	expect(c, "", "OK 1");
	/* A listed path reads back. */
	expect(c, "GET net/ipv4/conf/eth0.200/forwarding\n", "OK 0");
	expect(c, "GET net.ipv4.conf.eth0/200.forwarding\n", "OK 0");
	expect(c, "LIST net.ipv4.conf.eth0/200\n", geteuid() == 0 ?
	       "ENTRY 0644 rw net.ipv4.conf.eth0/200.forwarding" :
	       "ENTRY 0644 r- net.ipv4.conf.eth0/200.forwarding");
	expect(c, "", "OK 1");
	expect(c, "LIST net/ipv4/conf/eth0.200/forwarding\n",
	       geteuid() == 0 ? "ENTRY 0644 rw net.ipv4.conf.eth0/200.forwarding" :
				"ENTRY 0644 r- net.ipv4.conf.eth0/200.forwarding");
	expect(c, "", "OK 1");
	sock_client_close(c);
	fx_free(f);
}

/* ---- DUMP: names and values in one reply ---- */

static void test_dump(void **state)
{
	/* A tab, a backslash, a space and a control byte. */
	static const char odd[] = "a\tb\\c d\x01"
				  "e";
	struct fixture *f = fx_new(NULL);
	struct sock_client *c = conn(f);
	char *get;

	(void)state;
	/* Values are escaped as GET escapes them; spaces stay. */
	assert_int_equal(sysctl_set(f->tree, "kernel.core_pattern", odd, strlen(odd), NULL), 0);
	get = ask(c, "GET kernel.core_pattern\n");
	assert_string_equal(get, "OK a\\tb\\\\c d\\x01e");
	expect(c, "DUMP\n", "VALUE kernel.core_pattern a\\tb\\\\c d\\x01e");
	if (geteuid() == 0)
		expect(c, "", "VALUE kernel.secret 7");
	expect(c, "", "VALUE net.ipv4.conf.eth0/200.forwarding 0");
	expect(c, "", "VALUE vm.swappiness 60");
	expect(c, "", geteuid() == 0 ? "OK 4" : "OK 3");
	/* Under a prefix, and the empty value keeps its space. */
	assert_int_equal(sysctl_set(f->tree, "kernel.core_pattern", "\n", 1, NULL), 0);
	expect(c, "DUMP kernel.core_pattern\n", "VALUE kernel.core_pattern ");
	expect(c, "", "OK 1");
	expect(c, "DUMP net/ipv4/conf/eth0.200\n", "VALUE net.ipv4.conf.eth0/200.forwarding 0");
	expect(c, "", "OK 1");
	expect(c, "DUMP kernel.nope\n", "ERR 2 kernel.nope: No such file or directory");
	expect(c, "DUMP vm swappiness\n", "ERR 22 unexpected text after path");
	/* The connection goes on. */
	expect(c, "GET vm.swappiness\n", "OK 60");
	free(get);
	sock_client_close(c);
	fx_free(f);
}

/* Many long values: the reply goes out in pieces, each value whole. */
/* Valgrind runs one thread at a time: the long races run shorter there. */
static bool under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p && strstr(p, "vgpreload");
}

#define DUMP_ENTRIES 40
#define DUMP_LEN 4000
static struct rcustring dump_value = RCUSTRING_INITIALIZER(DUMP_LEN + 1, "");
static struct ctl_table dump_table[DUMP_ENTRIES];
static char dump_names[DUMP_ENTRIES][8];
static char dump_a[DUMP_LEN + 1], dump_b[DUMP_LEN + 1];

struct dumper {
	struct fixture *f;
	int dumps, bad, seen_a, seen_b;
	int *finished; /* atomic */
};

static void *dumper_main(void *arg)
{
	struct dumper *d = arg;
	struct sock_client *c;

	if (sock_client_connect(d->f->path, &c)) {
		d->bad = -1;
		return NULL;
	}
	for (int i = 0; i < d->dumps; i++) {
		struct sock_reply r;
		int lines = 0;

		if (sock_client_send(c, "DUMP", "big", NULL, 0)) {
			d->bad++;
			break;
		}
		while (sock_client_reply(c, &r) == 0 && r.kind == SOCK_REPLY_DATA) {
			const char *v = memchr(r.text + 6, ' ', r.text_len - 6);
			size_t len = v ? r.text_len - (size_t)(v + 1 - r.text) : 0;

			lines++;
			if (len == DUMP_LEN && memcmp(v + 1, dump_a, DUMP_LEN) == 0) {
				d->seen_a++;
			} else if (len == DUMP_LEN && memcmp(v + 1, dump_b, DUMP_LEN) == 0) {
				d->seen_b++;
			} else {
				fprintf(stderr, "DUMP line not whole: %.40s... (%zu bytes)\n", r.text,
					r.text_len);
				d->bad++;
			}
		}
		if (r.kind != SOCK_REPLY_OK || lines != DUMP_ENTRIES)
			d->bad++;
	}
	sock_client_close(c);
	__atomic_add_fetch(d->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_dump_whole_under_writer(void **state)
{
	struct fixture *f = fx_new(NULL);
	struct sysctl_table_header *h;
	struct dumper d[2] = { 0 };
	pthread_t t[2];
	int finished = 0, writes = 0;

	(void)state;
	memset(dump_a, 'a', DUMP_LEN);
	memset(dump_b, 'b', DUMP_LEN);
	for (int i = 0; i < DUMP_ENTRIES; i++) {
		snprintf(dump_names[i], sizeof(dump_names[i]), "v%02d", i);
		dump_table[i] = (struct ctl_table){ dump_names[i], &dump_value, DUMP_LEN + 1, 0644,
						    proc_rcu_string, NULL, NULL, "a long string" };
	}
	assert_int_equal(sysctl_register_table(f->tree, "big", dump_table, DUMP_ENTRIES, &h), 0);
	assert_int_equal(sysctl_set(f->tree, "big.v00", dump_a, DUMP_LEN, NULL), 0);
	for (int i = 0; i < 2; i++) {
		d[i] = (struct dumper){ f, 50, 0, 0, 0, &finished };
		assert_int_equal(pthread_create(&t[i], NULL, dumper_main, &d[i]), 0);
	}
	/* All rows share one value: each write changes all of them at once. */
	while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < 2) {
		const char *v = writes++ % 2 ? dump_a : dump_b;

		assert_int_equal(sysctl_set(f->tree, "big.v00", v, DUMP_LEN, NULL), 0);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(d[i].bad, 0);
		assert_int_equal(d[i].seen_a + d[i].seen_b, 50 * DUMP_ENTRIES);
	}
	print_message("%d DUMPs of %d x %d-byte values against %d writes, all whole (%d a, %d b)\n",
		      100, DUMP_ENTRIES, DUMP_LEN, writes, d[0].seen_a + d[1].seen_a,
		      d[0].seen_b + d[1].seen_b);
	assert_true(writes > 1);
	sysctl_unregister_table(h);
	fx_free(f);
}

static void test_audit(void **state)
{
	struct fixture *f = fx_new(NULL);
	struct sock_client *c = conn(f);
	char *line, want[128];

	(void)state;
	if (geteuid() != 0) {
		expect(c, "AUDIT\n", "ERR 13 EACCES audit: only root may read the audit ring");
		print_message("not root: AUDIT contents not checked\n");
		goto out;
	}
	expect(c, "SET kernel.core_pattern a b\\c\n", "OK");
	line = ask(c, "AUDIT 2\n"); /* seq 1 and 2: the fixture's own sets */
	snprintf(want, sizeof(want), " 0 %d kernel.core_pattern core a\\x20b\\\\c", (int)getpid());
	assert_memory_equal(line, "AUDIT 3 ", 8);
	if (!strstr(line, want))
		fail_msg("audit line \"%s\" lacks \"%s\"", line, want);
	free(line);
	expect(c, "", "OK 1");
	expect(c, "AUDIT 3\n", "OK 0");
out:
	sock_client_close(c);
	fx_free(f);
}

static uint64_t generation_of(struct sock_client *c, const char *path)
{
	char req[128], *line;
	uint64_t g;

	snprintf(req, sizeof(req), "GENERATION %s\n", path);
	line = ask(c, req);
	if (sscanf(line, "OK %" SCNu64, &g) != 1)
		fail_msg("%s-> \"%s\"", req, line);
	free(line);
	return g;
}

/* SETIF writes only at the generation named; a write in between refuses it. */
static void test_setif(void **state)
{
	struct fixture *f = fx_new(NULL);
	struct sock_client *c = conn(f);
	char req[128], want[192];
	uint64_t g;

	(void)state;
	g = generation_of(c, "vm.swappiness");
	snprintf(req, sizeof(req), "SETIF vm.swappiness %" PRIu64 " 10\n", g);
	expect(c, req, "OK");
	assert_true(generation_of(c, "vm.swappiness") == g + 1);
	/* The same generation again: another write came first. */
	snprintf(req, sizeof(req), "SETIF vm.swappiness %" PRIu64 " 11\n", g);
	snprintf(want, sizeof(want),
		 "ERR %d vm.swappiness: changed since generation %" PRIu64 " (now %" PRIu64
		 "): not written", ESTALE, g, g + 1);
	expect(c, req, want);
	expect(c, "GET vm.swappiness\n", "OK 10");
	/* The value is checked as SET checks it. */
	snprintf(req, sizeof(req), "SETIF vm.swappiness %" PRIu64 " 999\n", g + 1);
	line_starts(c, req, "ERR 22 vm.swappiness: ");
	expect(c, "SETIF vm.nope 0 1\n", "ERR 2 vm.nope: No such file or directory");
	expect(c, "GENERATION vm.nope\n", "ERR 2 vm.nope: No such file or directory");
	sock_client_close(c);
	fx_free(f);
}

#define CAS_THREADS 4
#define CAS_TRIES 100

struct cas_arg {
	struct fixture *f;
	unsigned ok;
};

/* Increments kernel.core_pattern (a decimal string) by read + SETIF. */
static void *cas_main(void *arg)
{
	struct cas_arg *a = arg;
	struct sock_client *c;

	if (sock_client_connect(a->f->path, &c) != 0)
		return NULL;
	for (int i = 0; i < CAS_TRIES; i++) {
		char *g = NULL, *v = NULL, value[64];
		int err = sock_client_call(c, "GENERATION", "kernel.core_pattern", NULL, 0, &g);

		/* The generation first: a value read later is as new or newer. */
		if (!err)
			err = sock_client_call(c, "GET", "kernel.core_pattern", NULL, 0, &v);
		if (!err) {
			int n = snprintf(value, sizeof(value), "%s %ld", g, atol(v) + 1);

			err = sock_client_call(c, "SETIF", "kernel.core_pattern", value, (size_t)n, NULL);
			if (err == 0)
				a->ok++;
		}
		free(g);
		free(v);
	}
	sock_client_close(c);
	return NULL;
}

/* Compare-and-set from several clients: no increment is lost. */
static void test_setif_concurrent(void **state)
{
	struct fixture *f = fx_new(NULL);
	struct sock_client *c = conn(f);
	struct cas_arg args[CAS_THREADS];
	pthread_t t[CAS_THREADS];
	unsigned total = 0;
	char want[32];

	(void)state;
	expect(c, "SET kernel.core_pattern 0\n", "OK");
	for (int i = 0; i < CAS_THREADS; i++) {
		args[i] = (struct cas_arg){ f, 0 };
		assert_int_equal(pthread_create(&t[i], NULL, cas_main, &args[i]), 0);
	}
	for (int i = 0; i < CAS_THREADS; i++) {
		pthread_join(t[i], NULL);
		total += args[i].ok;
	}
	assert_true(total > 0);
	snprintf(want, sizeof(want), "OK %u", total);
	expect(c, "GET kernel.core_pattern\n", want);
	sock_client_close(c);
	fx_free(f);
}

struct direct_arg {
	struct fixture *f;
	int stop; /* atomic */
	unsigned ok;
};

/*
 * The program's own compare-and-set increments of kernel.core_pattern,
 * through sysctl_entry_write_if, until told to stop.
 */
static void *direct_cas_main(void *arg)
{
	struct direct_arg *a = arg;
	struct sysctl_entry *e = sysctl_lookup(a->f->tree, "kernel.core_pattern");

	if (!e)
		return NULL;
	while (!__atomic_load_n(&a->stop, __ATOMIC_SEQ_CST)) {
		char v[64], value[64];
		uint64_t g = sysctl_entry_changes(e);
		size_t len;
		off_t off = 0;

		/* The generation first: a value read later is as new or newer. */
		if (sysctl_get(a->f->tree, "kernel.core_pattern", v, sizeof(v)) < 0)
			break;
		len = (size_t)snprintf(value, sizeof(value), "%ld", atol(v) + 1);
		if (sysctl_entry_write_if(e, NULL, value, &len, &off, g) == 0)
			a->ok++;
		/*
		 * Let the socket's threads run. Valgrind runs one thread at a
		 * time and a socket round trip there takes far longer than a
		 * direct write: without a pause every SETIF finds the
		 * generation moved and none lands.
		 */
		if (under_valgrind())
			nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
		else
			sched_yield();
	}
	sysctl_entry_put(e);
	return NULL;
}

/*
 * SETIF against the program's own writes: the generation is compared under
 * the entry's writer lock, so a direct write cannot land between SETIF's
 * check and its write (which would lose that write's increment).
 */
static void test_setif_vs_direct(void **state)
{
	struct fixture *f = fx_new(NULL);
	struct sock_client *c = conn(f);
	struct cas_arg args[CAS_THREADS];
	struct direct_arg d = { f, 0, 0 };
	pthread_t t[CAS_THREADS], dt;
	unsigned sock_ok = 0;
	char want[32];

	(void)state;
	expect(c, "SET kernel.core_pattern 0\n", "OK");
	assert_int_equal(pthread_create(&dt, NULL, direct_cas_main, &d), 0);
	for (int round = 0; round < (under_valgrind() ? 1 : 5); round++) {
		for (int i = 0; i < CAS_THREADS; i++) {
			args[i] = (struct cas_arg){ f, 0 };
			assert_int_equal(pthread_create(&t[i], NULL, cas_main, &args[i]), 0);
		}
		for (int i = 0; i < CAS_THREADS; i++) {
			pthread_join(t[i], NULL);
			sock_ok += args[i].ok;
		}
	}
	__atomic_store_n(&d.stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(dt, NULL);
	/* Both paths really wrote while the other ran. */
	assert_true(sock_ok > 0);
	assert_true(d.ok > 0);
	snprintf(want, sizeof(want), "OK %u", sock_ok + d.ok);
	expect(c, "GET kernel.core_pattern\n", want);
	sock_client_close(c);
	fx_free(f);
}

static void test_errors(void **state)
{
	struct fixture *f = fx_new(NULL);
	struct sock_client *c = conn(f);
	char big[300], req[400];
	char *msg = NULL;

	(void)state;
	expect(c, "GET kernel.nope\n", "ERR 2 kernel.nope: No such file or directory");
	expect(c, "SET kernel.nope 1\n", "ERR 2 kernel.nope: No such file or directory");
	expect(c, "GET kernel\n", "ERR 21 kernel: Is a directory");
	expect(c, "GET kernel..x\n", "ERR 22 kernel..x: malformed path");
	expect(c, "SET kernel..x 1\n", "ERR 22 kernel..x: malformed path");
	memset(big, 'x', 128);
	big[128] = '\0';
	snprintf(req, sizeof(req), "SET kernel.core_pattern %s\n", big);
	expect(c, req, "ERR 90 kernel.core_pattern: value longer than 127 bytes");
	expect(c, "GET kernel.core_pattern\n", "OK core");
	big[127] = '\0'; /* 127 bytes fit */
	snprintf(req, sizeof(req), "SET kernel.core_pattern %s\n", big);
	expect(c, req, "OK");
	expect(c, "SET vm.swappiness 300\n", "ERR 22 vm.swappiness: invalid value (integers 0..200)");
	expect(c, "SET vm.swappiness abc\n", "ERR 22 vm.swappiness: invalid value (integers 0..200)");
	expect(c, "GET vm.swappiness\n", "OK 60");
	assert_int_equal(swappiness, 60);
	/* The full ERR line carries the errno name. */
	assert_int_equal(sock_client_call(c, "GET", "kernel.nope", NULL, 0, &msg), -ENOENT);
	assert_string_equal(msg, "kernel.nope: No such file or directory");
	free(msg);
	assert_int_equal(send(sock_client_fd(c), "GET x.y\n", 8, 0), 8);
	{
		char raw[128] = { 0 };
		ssize_t n = recv(sock_client_fd(c), raw, sizeof(raw) - 1, 0);

		assert_true(n > 0);
		assert_string_equal(raw, "ERR 2 ENOENT x.y: No such file or directory\n");
	}
	/* Malformed requests: EINVAL, and the connection goes on. */
	expect(c, "FROB x\n", "ERR 22 unknown request (GET SET SETIF APPLY GENERATION LIST DUMP DESCRIBE WATCH AUDIT "
		       "RESET STATUS METRICS MSET MAPPLY MGET MWATCH)");
	expect(c, "GET\n", "ERR 22 missing path");
	expect(c, "SET vm.swappiness\n", "ERR 22 missing value (SET <path> <value>)");
	expect(c, "\n", "ERR 22 empty request");
	expect(c, "GET vm.swappiness\n", "OK 60");
	sock_client_close(c);
	fx_free(f);
}

static void test_watch(void **state)
{
	struct fixture *f = fx_new(NULL);
	struct sock_client *w = conn(f), *c = conn(f);
	char *line;

	(void)state;
	line = ask(w, "WATCH vm.swappiness\n");
	assert_memory_equal(line, "OK ", 3);
	free(line);
	expect(c, "SET vm.swappiness 11\n", "OK");
	line = ask(w, "");
	assert_memory_equal(line, "CHANGED vm.swappiness ", 22);
	free(line);
	expect(c, "SET vm.swappiness 12\n", "OK");
	line = ask(w, "");
	assert_memory_equal(line, "CHANGED vm.swappiness ", 22);
	free(line);
	expect(c, "WATCH kernel.nope\n", "ERR 2 kernel.nope: No such file or directory");
	sock_client_close(w);
	sock_client_close(c);
	fx_free(f);
}

/* Raw bytes in, then check the server still answers a fresh client. */
static void still_answers(struct fixture *f)
{
	struct sock_client *c = conn(f);

	expect(c, "GET vm.swappiness\n", "OK 60");
	sock_client_close(c);
}

static ssize_t read_all(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;

	while (len + 1 < size && (n = recv(fd, buf + len, size - 1 - len, 0)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	return (ssize_t)len;
}

static void test_malformed_clients(void **state)
{
	struct sysctl_socket_options o = { .read_timeout_ms = 300 };
	struct fixture *f = fx_new(&o);
	struct sock_client *c;
	char *line, buf[8192];
	int fd;

	(void)state;
	/* Garbage and NUL bytes: one EINVAL per line, the connection lives. */
	c = conn(f);
	fd = sock_client_fd(c);
	assert_int_equal(send(fd, "\xff\xfe\x01garbage\n", 11, 0), 11);
	line = ask(c, "");
	assert_memory_equal(line, "ERR 22 ", 7);
	free(line);
	assert_int_equal(send(fd, "GET vm\0swappiness\n", 18, 0), 18);
	line = ask(c, "");
	assert_string_equal(line, "ERR 22 control or NUL byte in path");
	free(line);
	assert_int_equal(send(fd, "\0\0\0\n", 4, 0), 4);
	line = ask(c, "");
	assert_memory_equal(line, "ERR 22 ", 7);
	free(line);
	expect(c, "GET vm.swappiness\n", "OK 60");
	/* An over-long line: E2BIG, then the server closes. */
	memset(buf, 'A', sizeof(buf));
	assert_int_equal(send(fd, buf, sizeof(buf), MSG_NOSIGNAL), (ssize_t)sizeof(buf));
	read_all(fd, buf, sizeof(buf));
	assert_string_equal(buf, "ERR 7 E2BIG request line longer than 4095 bytes\n");
	sock_client_close(c);
	still_answers(f);

	/* Half a line, then silence: dropped after the read timeout. */
	c = conn(f);
	fd = sock_client_fd(c);
	assert_int_equal(send(fd, "GET vm.swa", 10, 0), 10);
	read_all(fd, buf, sizeof(buf));
	assert_string_equal(buf, "ERR 110 ETIMEDOUT request line not finished in time\n");
	sock_client_close(c);
	still_answers(f);

	/* Abrupt disconnects: mid-WATCH, mid-request, with unread replies. */
	for (int i = 0; i < 8; i++) {
		c = conn(f);
		fd = sock_client_fd(c);
		if (i % 3 == 0) {
			line = ask(c, "WATCH vm.swappiness\n");
			free(line);
		} else if (i % 3 == 1) {
			assert_int_equal(send(fd, "LIST\nLIST\nLIST\nGET vm.sw", 24, 0), 24);
		} else {
			assert_int_equal(send(fd, "SET kernel.core_pattern x\n", 26, 0), 26);
		}
		sock_client_close(c);
	}
	assert_int_equal(sysctl_set(f->tree, "vm.swappiness", "60", 2, NULL), 0);
	still_answers(f);

	/*
	 * A client that sends requests and never reads the replies: once the
	 * socket buffers fill, the server's send waits the (read) timeout and
	 * drops the connection.
	 */
	c = conn(f);
	fd = sock_client_fd(c);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	{
		static const char req[] = "LIST\nLIST\nLIST\nLIST\n";
		double waited = 0;
		long sent = 0;

		for (;;) {
			ssize_t n = send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL);

			if (n > 0) {
				sent += n;
				continue;
			}
			if (n < 0 && errno == EAGAIN && waited < 3) {
				usleep(50000); /* both buffers full: the server blocks on us */
				waited += 0.05;
				continue;
			}
			break;
		}
		print_message("non-reading client: %ld request bytes sent, dropped after %.2f s\n",
			      sent, waited);
		/* Dropped well before we gave up (3 s), and EPIPE/ECONNRESET told us. */
		assert_true(waited < 3);
	}
	sock_client_close(c);
	still_answers(f);
	fx_free(f);
}

static void test_idle_timeout(void **state)
{
	struct sysctl_socket_options o = { .idle_timeout_ms = 200 };
	struct fixture *f = fx_new(&o);
	struct sock_client *c = conn(f);
	char buf[128];

	(void)state;
	expect(c, "GET vm.swappiness\n", "OK 60");
	read_all(sock_client_fd(c), buf, sizeof(buf));
	assert_string_equal(buf, "ERR 110 ETIMEDOUT idle too long\n");
	sock_client_close(c);
	still_answers(f);
	fx_free(f);
}

/* Out of descriptors: the server backs off instead of spinning, then recovers. */
static void test_out_of_fds(void **state)
{
	struct fixture *f = fx_new(NULL);
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct rlimit old, low;
	struct timespec t0, t1;
	char buf[64];
	double cpu;
	int fd, probe;

	(void)state;
	/* Valgrind keeps descriptors of its own under the limit and needs some per thread. */
	if (under_valgrind()) {
		print_message("skipped under valgrind: it virtualizes RLIMIT_NOFILE\n");
		fx_free(f);
		skip();
	}
	memcpy(addr.sun_path, f->path, strlen(f->path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	/* The lowest free descriptor number becomes the limit: no new fd at all. */
	probe = dup(0);
	assert_true(probe >= 0);
	close(probe);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)probe;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	usleep(300000);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	cpu = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	print_message("server CPU while out of descriptors: %.3f s in 0.3 s\n", cpu);
	assert_true(cpu < 0.1);
	/* The waiting connection is served once descriptors are back. */
	assert_int_equal(send(fd, "GET vm.swappiness\n", 18, MSG_NOSIGNAL), 18);
	assert_int_equal(recv(fd, buf, sizeof(buf), 0), 6);
	assert_memory_equal(buf, "OK 60\n", 6);
	close(fd);
	fx_free(f);
}

static void test_client_limit(void **state)
{
	struct sysctl_socket_options o = { .max_clients = 2 };
	struct fixture *f = fx_new(&o);
	struct sock_client *a = conn(f), *b = conn(f), *c;
	char buf[128];

	(void)state;
	expect(a, "GET vm.swappiness\n", "OK 60");
	expect(b, "GET vm.swappiness\n", "OK 60");
	c = conn(f);
	read_all(sock_client_fd(c), buf, sizeof(buf));
	assert_string_equal(buf, "ERR 11 EAGAIN too many clients\n");
	sock_client_close(c);
	sock_client_close(a);
	/* A slot frees when a client leaves (the server notices its EOF). */
	for (int tries = 0;; tries++) {
		struct sock_reply r;

		int err;

		c = conn(f);
		/* A refused client may see EPIPE on send: the server already closed. */
		err = sock_client_send(c, "GET", "vm.swappiness", NULL, 0);
		if (!err)
			err = sock_client_reply(c, &r);
		if (!err && r.kind == SOCK_REPLY_OK)
			break;
		assert_true(err == -EPIPE || err == -ECONNRESET || r.err == -EAGAIN);
		sock_client_close(c);
		assert_true(tries < 100);
		usleep(10000);
	}
	sock_client_close(c);
	sock_client_close(b);
	fx_free(f);
}

#define READERS 16
#define GETS 500
static const char val_a[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char val_b[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

struct reader {
	struct fixture *f;
	int bad, seen_a, seen_b;
	int *finished; /* atomic */
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct sock_client *c;

	if (sock_client_connect(r->f->path, &c)) {
		r->bad = -1;
		return NULL;
	}
	for (int i = 0; i < GETS; i++) {
		char *v = NULL;

		int err = sock_client_call(c, "GET", "kernel.core_pattern", NULL, 0, &v);

		if (err) {
			fprintf(stderr, "GET failed: %d %s\n", err, v ? v : "");
			r->bad++;
		} else if (strcmp(v, val_a) && strcmp(v, val_b)) {
			fprintf(stderr, "GET torn: \"%s\"\n", v);
			r->bad++;
		}
		if (!err && strcmp(v, val_a) == 0)
			r->seen_a++;
		else if (!err && strcmp(v, val_b) == 0)
			r->seen_b++;
		free(v);
	}
	sock_client_close(c);
	__atomic_add_fetch(r->finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_concurrent_readers(void **state)
{
	struct fixture *f = fx_new(NULL);
	struct reader r[READERS] = { 0 };
	pthread_t t[READERS];
	struct sock_client *w = conn(f);
	int finished = 0, writes = 0, a = 0, b = 0;

	(void)state;
	expect(w, "SET kernel.core_pattern aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", "OK");
	for (int i = 0; i < READERS; i++) {
		r[i].f = f;
		r[i].finished = &finished;
		assert_int_equal(pthread_create(&t[i], NULL, reader_main, &r[i]), 0);
	}
	/* Write alternating values over the socket until every reader is done. */
	while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < READERS) {
		const char *v = writes++ % 2 ? val_a : val_b;

		assert_int_equal(sock_client_call(w, "SET", "kernel.core_pattern", v, strlen(v), NULL), 0);
	}
	for (int i = 0; i < READERS; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(r[i].bad, 0);
		assert_int_equal(r[i].seen_a + r[i].seen_b, GETS);
		a += r[i].seen_a;
		b += r[i].seen_b;
	}
	print_message("%d GETs (%d a, %d b) against %d SETs, all whole\n", READERS * GETS, a, b,
		      writes);
	assert_true(writes > 1);
	sock_client_close(w);
	fx_free(f);
}

/*
 * Runs as user and group 65534 in its own thread: the raw setres*id
 * syscalls change only the calling thread's credentials (glibc's wrappers
 * would change every thread), and SO_PEERCRED takes the connecting
 * thread's. No fork in a threaded process, nothing for the rest to undo.
 */
static void *nobody_main(void *arg)
{
	struct fixture *f = arg;
	struct sock_client *c;
	char *m = NULL;
	long fails = 0;

	if (syscall(SYS_setgroups, 0, NULL) || syscall(SYS_setresgid, 65534, 65534, 65534) ||
	    syscall(SYS_setresuid, 65534, 65534, 65534) || sock_client_connect(f->path, &c))
		return (void *)100L;
	fails += sock_client_call(c, "SET", "kernel.core_pattern", "x", 1, &m) != -EACCES;
	fails += !m || strcmp(m, "kernel.core_pattern: permission denied") != 0;
	free(m);
	fails += sock_client_call(c, "GET", "kernel.core_pattern", NULL, 0, NULL) != 0;
	fails += sock_client_call(c, "GET", "kernel.secret", NULL, 0, NULL) != -EACCES;
	fails += sock_client_call(c, "DESCRIBE", "kernel.secret", NULL, 0, NULL) != -EACCES;
	fails += sock_client_call(c, "AUDIT", NULL, NULL, 0, NULL) != -EACCES;
	/* DUMP leaves out what this peer may not read (kernel.secret, 0600). */
	fails += sock_client_send(c, "DUMP", NULL, NULL, 0) != 0;
	for (;;) {
		struct sock_reply r;

		if (sock_client_reply(c, &r) != 0) {
			fails++;
			break;
		}
		if (r.kind == SOCK_REPLY_OK) {
			fails += r.text_len != 1 || r.text[0] != '3';
			break;
		}
		fails += r.kind != SOCK_REPLY_DATA || r.text_len < 6 ||
			 memcmp(r.text, "VALUE ", 6) != 0 || memmem(r.text, r.text_len, "secret", 6);
	}
	fails += sock_client_call(c, "WATCH", "kernel.secret", NULL, 0, NULL) != -EACCES;
	sock_client_close(c);
	return (void *)fails;
}

static void test_non_root(void **state)
{
	struct fixture *f;
	pthread_t t;
	void *fails;
	char v[64];

	(void)state;
	if (geteuid() != 0) {
		print_message("skipped: not root, cannot become another user\n");
		skip();
	}
	f = fx_new(NULL);
	assert_int_equal(pthread_create(&t, NULL, nobody_main, f), 0);
	assert_int_equal(pthread_join(t, &fails), 0);
	assert_int_equal((long)fails, 0);
	/* The refused write changed nothing. */
	assert_int_equal(sysctl_get(f->tree, "kernel.core_pattern", v, sizeof(v)), 5);
	assert_string_equal(v, "core\n");
	fx_free(f);
}

/*
 * bind() that lets a test swap a symlink in for the socket file right after
 * it is made: the window a local user races for in a directory they can
 * write.
 */
int __real_bind(int fd, const struct sockaddr *addr, socklen_t len);
static const char *swap_victim;

int __wrap_bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	int ret = __real_bind(fd, addr, len);
	const struct sockaddr_un *un = (const struct sockaddr_un *)addr;

	if (ret == 0 && swap_victim && addr->sa_family == AF_UNIX) {
		assert_int_equal(unlink(un->sun_path), 0);
		assert_int_equal(symlink(swap_victim, un->sun_path), 0);
	}
	return ret;
}

/* The mode is set without following a symlink swapped in after bind(). */
static void test_start_symlink_swap(void **state)
{
	struct fixture *f = fx_new(NULL);
	struct sysctl_socket *s2 = NULL;
	char victim[128], other[128];
	mode_t old_umask;
	struct stat st;
	int fd;

	(void)state;
	snprintf(victim, sizeof(victim), "%s/victim", f->dir);
	snprintf(other, sizeof(other), "%s/swapped.sock", f->dir);
	fd = open(victim, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	/* Whatever the umask, the mode asked for is the mode the file gets... */
	old_umask = umask(077);
	assert_int_equal(sysctl_socket_start(f->tree, other, 0666, &s2), 0);
	assert_int_equal(lstat(other, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0666);
	sysctl_socket_stop(s2);
	/* ...and never reaches the file a symlink swapped in points to. */
	swap_victim = victim;
	assert_true(sysctl_socket_start(f->tree, other, 0666, &s2) < 0);
	swap_victim = NULL;
	umask(old_umask);
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	unlink(other);
	unlink(victim);
	fx_free(f);
}

static void test_start_rules(void **state)
{
	struct fixture *f = fx_new(NULL);
	struct sysctl_socket *s2;
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char other[128];
	struct stat st;
	int fd;

	(void)state;
	assert_int_equal(stat(f->path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0666);
	/* A live server is not replaced. */
	assert_int_equal(sysctl_socket_start(f->tree, f->path, 0600, &s2), -EADDRINUSE);
	still_answers(f);
	/* A stale socket file is. */
	snprintf(other, sizeof(other), "%s/stale.sock", f->dir);
	assert_true(strlen(other) < sizeof(addr.sun_path));
	memcpy(addr.sun_path, other, strlen(other) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	close(fd);
	assert_int_equal(sysctl_socket_start(f->tree, other, 0600, &s2), 0);
	assert_int_equal(stat(other, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	sysctl_socket_stop(s2);
	assert_int_not_equal(stat(other, &st), 0);
	/* Any other file is left alone. */
	fd = open(other, O_CREAT | O_WRONLY, 0600);
	close(fd);
	assert_int_equal(sysctl_socket_start(f->tree, other, 0600, &s2), -EEXIST);
	unlink(other);
	memset(other, 'x', sizeof(other) - 1);
	other[sizeof(other) - 1] = '\0';
	assert_int_equal(sysctl_socket_start(f->tree, other, 0600, &s2), -ENAMETOOLONG);
	sysctl_socket_stop(NULL);
	fx_free(f);
}

/* Stop with clients connected, one watching and one not reading. */
static void test_stop_with_clients(void **state)
{
	struct fixture *f = fx_new(NULL);
	struct sock_client *w = conn(f), *idle = conn(f), *half = conn(f);
	char *line;

	(void)state;
	line = ask(w, "WATCH vm.swappiness\n");
	free(line);
	assert_int_equal(send(sock_client_fd(half), "GET vm", 6, 0), 6);
	fx_free(f); /* joins every thread; must not hang */
	sock_client_close(w);
	sock_client_close(idle);
	sock_client_close(half);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrips),	   cmocka_unit_test(test_audit),
		cmocka_unit_test(test_dump),		   cmocka_unit_test(test_dump_whole_under_writer),
		cmocka_unit_test(test_errors),		   cmocka_unit_test(test_watch),
		cmocka_unit_test(test_malformed_clients),  cmocka_unit_test(test_client_limit),
		cmocka_unit_test(test_idle_timeout),	   cmocka_unit_test(test_out_of_fds),
		cmocka_unit_test(test_concurrent_readers), cmocka_unit_test(test_non_root),
		cmocka_unit_test(test_start_rules),	   cmocka_unit_test(test_start_symlink_swap),
		cmocka_unit_test(test_stop_with_clients),
		cmocka_unit_test(test_setif),		   cmocka_unit_test(test_setif_concurrent),
		cmocka_unit_test(test_setif_vs_direct),
	};
	int ret = cmocka_run_group_tests(tests, NULL, NULL);

	rcustring_destroy(&core_pattern);
	rcustring_destroy(&dump_value);
	rcustring_barrier();
	return ret;
}
