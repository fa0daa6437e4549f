/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Differential test against the running kernel.
 *
 * For a table of write / read / seek sequences on one open file, record what
 * the kernel's own /proc/sys entries answer (each call's return or errno,
 * the file position after it, the bytes read, and the value read back
 * afresh at the end), then replay the same sequences on our entries
 * declared alike (same handler kind, element size, bounds and starting
 * value), once through the library (sysctl_entry_read/write with the file
 * position kept here as the kernel's VFS keeps it) and once through the
 * FUSE front end. Everything must match, or show one of the documented
 * differences below, which the test names.
 *
 * It runs as root in private network, UTS and mount namespaces (what
 * `unshare -n -u -m` makes), so the kernel entries it writes (net.* of a
 * fresh network namespace, kernel.hostname of a fresh UTS namespace) and
 * the FUSE mount are gone when it exits; nothing on the host changes.
 * Exit 77 (skip) when not root or when the namespaces or /dev/fuse are not
 * available.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rcustring/sysctl_fuse.h>

/* ---- our entries, declared as the kernel declares its own (6.12 sources) ---- */

static int mss_min = 48, mss_max = 65535; /* net/ipv4/sysctl_net_ipv4.c */
static int zero = 0;
/* tcp_rmem's lower bound for each element: SYSCTL_ONE in 6.12, 4096 in later
 * kernels (6.18.44 has it); probed from the running kernel, see rmem_bound(). */
static int rmem_min = 1;
/* ip_ttl_min / ip_ttl_max: int there, read as unsigned int by proc_dou8vec_minmax */
static unsigned int ttl_min = 1, ttl_max = 255;
/* SYSCTL_ONE, FIB_MULTIPATH_HASH_FIELD_ALL_MASK */
static unsigned int uone = 1, hash_fields_max = 4095;
static unsigned long frag_low = 3145728; /* ipfrag_low_thresh's default */

static int min_snd_mss, somaxconn, rmem[3], base_reachable, retrans, retrans_ms;
static uint8_t default_ttl;
static unsigned int notsent_lowat, hash_fields;
static unsigned long frag_high;
static char hostname[65]; /* __NEW_UTS_LEN + 1 */
static struct rcustring hostname_rcu = RCUSTRING_INITIALIZER(65, "");
static unsigned long reserved_bits[65536 / (8 * sizeof(unsigned long))];
static unsigned long *reserved = reserved_bits;

struct entry {
	const char *kpath; /* under /proc/sys */
	const char *ours;  /* our path, also under the FUSE mount */
	const char *init;  /* written to both before each case */
	bool is_string, is_vector, is_uint, is_jiffies;
};

/* Our table rows: procname, data, maxlen, mode, handler, extra1, extra2. */
static struct ctl_table net_rows[] = {
	{ "tcp_min_snd_mss", &min_snd_mss, sizeof(int), 0644, proc_dointvec_minmax, &mss_min,
	  &mss_max, NULL },
	{ "somaxconn", &somaxconn, sizeof(int), 0644, proc_dointvec_minmax, &zero, NULL, NULL },
	{ "tcp_rmem", rmem, sizeof(rmem), 0644, proc_dointvec_minmax, &rmem_min, NULL, NULL },
	{ "ip_default_ttl", &default_ttl, sizeof(uint8_t), 0644, proc_dou8vec_minmax, &ttl_min,
	  &ttl_max, NULL },
	{ "tcp_notsent_lowat", &notsent_lowat, sizeof(unsigned int), 0644, proc_douintvec, NULL,
	  NULL, NULL },
	{ "fib_multipath_hash_fields", &hash_fields, sizeof(unsigned int), 0644,
	  proc_douintvec_minmax, &uone, &hash_fields_max, NULL },
	{ "ipfrag_high_thresh", &frag_high, sizeof(unsigned long), 0644, proc_doulongvec_minmax,
	  &frag_low, NULL, NULL },
	{ "ip_local_reserved_ports", &reserved, 65536, 0644, proc_do_large_bitmap, NULL, NULL,
	  NULL },
	{ "base_reachable_time", &base_reachable, sizeof(int), 0644, proc_dointvec_jiffies, NULL,
	  NULL, NULL },
	{ "retrans_time", &retrans, sizeof(int), 0644, proc_dointvec_userhz_jiffies, NULL, NULL,
	  NULL },
	{ "retrans_time_ms", &retrans_ms, sizeof(int), 0644, proc_dointvec_ms_jiffies, NULL, NULL,
	  NULL },
};
static struct ctl_table kernel_rows[] = {
	{ "hostname", hostname, sizeof(hostname), 0644, proc_dostring, NULL, NULL, NULL },
	{ "hostname_rcu", &hostname_rcu, 65, 0644, proc_rcu_string, NULL, NULL, NULL },
};

enum {
	E_MSS, E_SOMAXCONN, E_RMEM, E_TTL, E_LOWAT, E_HASH, E_FRAG, E_BITMAP, E_JIF, E_USERHZ,
	E_MS, E_HOST, E_HOST_RCU, E_COUNT
};

static const struct entry entries[E_COUNT] = {
	[E_MSS] = { "net/ipv4/tcp_min_snd_mss", "p/tcp_min_snd_mss", "536" },
	[E_SOMAXCONN] = { "net/core/somaxconn", "p/somaxconn", "4096" },
	[E_RMEM] = { "net/ipv4/tcp_rmem", "p/tcp_rmem", "4096 131072 6291456", .is_vector = true },
	[E_TTL] = { "net/ipv4/ip_default_ttl", "p/ip_default_ttl", "64", .is_uint = true },
	[E_LOWAT] = { "net/ipv4/tcp_notsent_lowat", "p/tcp_notsent_lowat", "4294967295",
		      .is_uint = true },
	[E_HASH] = { "net/ipv4/fib_multipath_hash_fields", "p/fib_multipath_hash_fields", "7",
		     .is_uint = true },
	[E_FRAG] = { "net/ipv4/ipfrag_high_thresh", "p/ipfrag_high_thresh", "4194304" },
	[E_BITMAP] = { "net/ipv4/ip_local_reserved_ports", "p/ip_local_reserved_ports", "\n" },
	[E_JIF] = { "net/ipv4/neigh/lo/base_reachable_time", "p/base_reachable_time", "30",
		    .is_jiffies = true },
	[E_USERHZ] = { "net/ipv4/neigh/lo/retrans_time", "p/retrans_time", "100",
		       .is_jiffies = true },
	[E_MS] = { "net/ipv4/neigh/lo/retrans_time_ms", "p/retrans_time_ms", "1000",
		   .is_jiffies = true },
	[E_HOST] = { "kernel/hostname", "k/hostname", "parity-host", .is_string = true },
	[E_HOST_RCU] = { "kernel/hostname", "k/hostname_rcu", "parity-host", .is_string = true },
};

/* ---- sequences ---- */

#define MAXOPS 6
#define BIG_LEN (1536 * 1024) /* over 1 MiB, under the kernel's 4 MiB kmalloc limit */
#define HUGE_LEN (4096 * 1024) /* KMALLOC_MAX_SIZE on x86-64: the kernel's VFS says ENOMEM */

struct op {
	char kind; /* 'w' write, 'r' read, 's' lseek, 'W' pwrite, 'R' pread, 'b' big write */
	const char *s;
	size_t n; /* bytes to write or read; big write: the generator */
	off_t off;
	int whence;
};

#define W(str) { 'w', str, sizeof(str) - 1, 0, 0 }
#define R(cnt) { 'r', NULL, cnt, 0, 0 }
#define S(o, wh) { 's', NULL, 0, o, wh }
#define PW(o, str) { 'W', str, sizeof(str) - 1, o, 0 }
#define PR(o, cnt) { 'R', NULL, cnt, o, 0 }
#define BIG(gen) { 'b', NULL, gen, 0, 0 }

struct seq {
	const char *what;
	struct op ops[MAXOPS];
};

/* Numbers and texts written once, then read back on the same fd and afresh. */
static const struct {
	const char *s;
	size_t n;
} inputs[] = {
#define IN(str) { str, sizeof(str) - 1 }
	IN("0"), IN("1"), IN("-1"), IN("48"), IN("64"), IN("100"), IN("255"), IN("256"),
	IN("4095"), IN("4096"), IN("65535"), IN("65536"), IN("3145727"), IN("3145728"),
	IN("2147483647"), IN("2147483648"), IN("-2147483648"), IN("-2147483649"),
	IN("4294967295"), IN("4294967296"), IN("9223372036854775807"),
	IN("18446744073709551615"), IN("18446744073709551616"),
	/* hex and octal */
	IN("0x30"), IN("0X1f"), IN("0x"), IN("0xg"), IN("060"), IN("08"), IN("0777"),
	IN("-0x10"), IN("0x7fffffff"), IN("0xffffffffffffffff"), IN("0x10000000000000000"),
	/* signs */
	IN("+1"), IN("--1"), IN("-"), IN("-0"), IN("- 1"),
	/* the 21-byte number limit (TMPBUFLEN - 1) */
	IN("00000000000000000064"), IN("000000000000000000064"), IN("0000000000000000000064"),
	IN("00000000000000000064 "), IN("-0000000000000000064"), IN("-00000000000000000064"),
	/* trailing garbage and separators */
	IN("1a"), IN("64x"), IN("1,2"), IN("1.5"), IN("64 x"), IN("64 2"), IN("1\0" "2"),
	/* whitespace kinds */
	IN("64 "), IN("64\n"), IN("64\t"), IN("64\r"), IN("64\v"), IN("64\f"), IN(" 64"),
	IN("\t64"), IN("\n64"), IN("\r64"), IN("\v\f 64"), IN("\xa0" "64"), IN("64\xa0"),
	IN("64\n\n  \t"), IN(""), IN(" "), IN("\n"), IN("\xa0"),
	/* vectors */
	IN("1 2 3"), IN("1\t2\n3"), IN("4096 87380 6291456"), IN("1 2 3 4"), IN("5 0 7"),
	IN("5 x 7"), IN("7 8"),
	/* bitmaps */
	IN("1-3,5"), IN("1,3-4,10-10"), IN("3-1"), IN("1-"), IN(",1"), IN("1,,2"), IN("1\n2"),
	IN("0-65535"), IN("65535"), IN("2-2\n"), IN("1-3-5"), IN("\n\n7"), IN("7,\n"),
	/* strings */
	IN("abc"), IN("abc\ndef"), IN("a\0b"),
	IN("0123456789012345678901234567890123456789012345678901234567890123"),
	IN("01234567890123456789012345678901234567890123456789012345678901234"),
#undef IN
};

/* Sequences on one open file, written for every entry. */
static const struct seq seqs[] = {
	{ "two writes", { W("7"), W("8"), R(100) } },
	{ "two writes with space", { W("7 "), W("9\n"), S(0, SEEK_SET), R(100) } },
	{ "write, rewind, write", { W("9"), S(0, SEEK_SET), W("10"), S(0, SEEK_SET), R(100) } },
	{ "seek then write", { S(3, SEEK_SET), W("12"), S(0, SEEK_SET), R(100) } },
	{ "pwrite at 0 then 5", { PW(0, "13"), PW(5, "14"), PR(0, 100), R(100) } },
	{ "pwrite past a string", { PW(0, "ab"), PW(2, "cd"), PW(9, "zz"), PR(0, 100) } },
	{ "short reads", { R(1), R(1), R(100) } },
	{ "read at offset", { PR(1, 100), PR(0, 2), S(2, SEEK_SET), R(100) } },
	{ "zero-length", { R(0), W(""), R(100) } },
	{ "seek kinds", { S(0, SEEK_END), S(5, SEEK_CUR), S(-1, SEEK_SET), S(-10, SEEK_CUR),
			  R(100) } },
	{ "read, write, read", { R(100), W("15"), R(100), S(0, SEEK_SET), R(100) } },
	{ "bitmap pieces", { W("1-3"), W(",7\n"), W("9"), S(0, SEEK_SET), R(100) } },
	{ "big: number then spaces", { BIG(1), S(0, SEEK_SET), R(100) } },
	{ "big: spaces then number", { BIG(2), R(100) } },
	{ "big: number, spaces, garbage", { BIG(3), R(100) } },
	{ "big: long text", { BIG(4), S(0, SEEK_SET), R(100) } },
	{ "big: bitmap list", { BIG(5), S(0, SEEK_SET), R(100) } },
	{ "big: read", { R(BIG_LEN) } },
	{ "huge: 4 MiB", { BIG(6), S(0, SEEK_SET), R(100) } },
};

/* Documented differences, by name. */
enum diff {
	D_NONE,
	D_STRING_REFUSED,  /* ours: over-long string refused, the kernel cuts it */
	D_VECTOR_NOTHING,  /* ours: a refused vector write stores nothing */
	D_FUSE_POS,        /* FUSE advances the position by the bytes a write returns */
	D_FUSE_READ_SNAP,  /* FUSE: a read past 0 continues the value read at 0 */
	D_KMALLOC_MAX,     /* the kernel's VFS refuses one write of 4 MiB or more */
	D_COUNT
};
static const char *const diff_name[D_COUNT] = {
	"none",
	"over-long strings are refused with EMSGSIZE (the kernel cuts them)",
	"a refused vector write stores nothing (the kernel keeps the elements before the bad one)",
	"FUSE: after a write the file position advances by the bytes it returns (the kernel "
	"leaves it where the handler put it: unsigned handlers and ignored string writes do not "
	"move it)",
	"FUSE: a read at a position past 0 continues the value read at 0 (the kernel's numeric "
	"handlers give end of file)",
	"the kernel refuses one write of 4 MiB or more (KMALLOC_MAX_SIZE) with ENOMEM before any "
	"handler runs; ours take it",
};

/* ---- running a sequence ---- */

struct opres {
	long ret; /* bytes, new position, or -errno */
	long long pos;
	char *data;
	size_t dlen;
};

struct result {
	struct opres op[MAXOPS];
	int nops;
	char *final;
	size_t flen;
	long final_err;
};

static char *bigbuf;

static size_t big_len(size_t gen)
{
	return gen == 6 ? HUGE_LEN : BIG_LEN;
}

static size_t gen_big(size_t gen)
{
	size_t n = big_len(gen);

	switch (gen) {
	case 1: /* "7" then spaces */
	case 6:
		memset(bigbuf, ' ', n);
		bigbuf[0] = '7';
		break;
	case 2: /* spaces, the number past the first page */
		memset(bigbuf, ' ', n);
		bigbuf[n - 1] = '7';
		break;
	case 3:
		memset(bigbuf, ' ', n);
		bigbuf[0] = '7';
		bigbuf[n / 2] = 'x';
		break;
	case 4:
		memset(bigbuf, 'a', n);
		break;
	default: /* "1,2,3,...": bits below 65536, the list runs past 4095 bytes */
		for (size_t i = 0, v = 0; i < n; v = (v + 1) % 60000) {
			int k = snprintf(bigbuf + i, n - i, "%zu,", v);

			if (k < 0 || (size_t)k >= n - i) {
				memset(bigbuf + i, '\n', n - i);
				break;
			}
			i += (size_t)k;
		}
		break;
	}
	return n;
}

/* One target: a real file, or the library with a position kept here. */
struct target {
	const char *name;
	int fd;
	struct sysctl_entry *e; /* library target */
	long long pos;
};

static long t_write(struct target *t, const char *buf, size_t n, off_t at, bool positioned)
{
	if (!t->e) {
		ssize_t r = positioned ? pwrite(t->fd, buf, n, at) : write(t->fd, buf, n);

		return r < 0 ? -errno : r;
	}
	/* The kernel's proc_sys_call_handler: count back as the return, the
	 * position updated only on success (vfs_write's local copy). */
	size_t len = n;
	off_t pos = positioned ? at : (off_t)t->pos;
	int err = sysctl_entry_write(t->e, NULL, buf, &len, &pos);

	if (err)
		return err;
	if (!positioned)
		t->pos = pos;
	return (long)len;
}

static long t_read(struct target *t, char *buf, size_t n, off_t at, bool positioned)
{
	if (!t->e) {
		ssize_t r = positioned ? pread(t->fd, buf, n, at) : read(t->fd, buf, n);

		return r < 0 ? -errno : r;
	}
	size_t len = n;
	off_t pos = positioned ? at : (off_t)t->pos;
	int err = sysctl_entry_read(t->e, buf, &len, &pos);

	if (err)
		return err;
	if (!positioned)
		t->pos = pos;
	return (long)len;
}

/* default_llseek with i_size 0, as /proc/sys files have. */
static long t_seek(struct target *t, off_t off, int whence)
{
	if (!t->e) {
		off_t r = lseek(t->fd, off, whence);

		return r < 0 ? -errno : (long)r;
	}
	long long base = whence == SEEK_CUR ? t->pos : 0;

	if (base + off < 0)
		return -EINVAL;
	t->pos = base + off;
	return (long)t->pos;
}

static long long t_pos(struct target *t)
{
	return t->e ? t->pos : (long long)lseek(t->fd, 0, SEEK_CUR);
}

static void run_ops(struct target *t, const struct op *ops, struct result *res)
{
	res->nops = 0;
	for (int i = 0; i < MAXOPS && ops[i].kind; i++) {
		const struct op *o = &ops[i];
		struct opres *r = &res->op[i];

		r->data = NULL;
		r->dlen = 0;
		switch (o->kind) {
		case 'w':
			r->ret = t_write(t, o->s, o->n, 0, false);
			break;
		case 'W':
			r->ret = t_write(t, o->s, o->n, o->off, true);
			break;
		case 'b':
			r->ret = t_write(t, bigbuf, gen_big(o->n), 0, false);
			break;
		case 'r':
		case 'R':
			r->data = malloc(o->n ? o->n : 1);
			if (!r->data) {
				perror("malloc");
				exit(1);
			}
			r->ret = t_read(t, r->data, o->n, o->off, o->kind == 'R');
			r->dlen = r->ret > 0 ? (size_t)r->ret : 0;
			break;
		case 's':
			r->ret = t_seek(t, o->off, o->whence);
			break;
		}
		r->pos = t_pos(t);
		res->nops = i + 1;
	}
}

static void free_result(struct result *r)
{
	for (int i = 0; i < r->nops; i++)
		free(r->op[i].data);
	free(r->final);
	memset(r, 0, sizeof(*r));
}

#define FINAL_MAX (1024 * 1024)

/* The value read afresh: a new open file, one read at 0. */
static void read_final(struct target *t, const char *path, struct result *res)
{
	res->final = malloc(FINAL_MAX);
	if (!res->final) {
		perror("malloc");
		exit(1);
	}
	if (t->e) {
		size_t len = FINAL_MAX;
		off_t pos = 0;

		res->final_err = sysctl_entry_read(t->e, res->final, &len, &pos);
		res->flen = res->final_err ? 0 : len;
		return;
	}
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, res->final, FINAL_MAX);

	res->final_err = n < 0 ? -errno : 0;
	res->flen = n < 0 ? 0 : (size_t)n;
	if (fd >= 0)
		close(fd);
}

/* ---- the three targets ---- */

static struct sysctl_tree *tree;
static char mnt[64] = "/tmp/rcustring-parity-XXXXXX";

static int reset_kernel(const struct entry *en)
{
	char path[256];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/sys/%s", en->kpath);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, en->init, strlen(en->init));
	close(fd);
	return n < 0 ? -errno : 0;
}

static int reset_ours(const struct entry *en)
{
	return sysctl_set(tree, en->ours, en->init, strlen(en->init), NULL);
}

/* Run @ops on @en through target @kind (0 kernel, 1 library, 2 FUSE). */
static int run_target(int kind, const struct entry *en, const struct op *ops, struct result *res)
{
	struct target t = { 0 };
	char path[256];
	int err = kind == 0 ? reset_kernel(en) : reset_ours(en);

	if (err) {
		fprintf(stderr, "cannot reset %s: %s\n", kind ? en->ours : en->kpath, strerror(-err));
		return err;
	}
	if (kind == 0)
		snprintf(path, sizeof(path), "/proc/sys/%s", en->kpath);
	else
		snprintf(path, sizeof(path), "%s/%s", mnt, en->ours);
	if (kind == 1) {
		t.e = sysctl_lookup(tree, en->ours);
		if (!t.e)
			return -errno;
	} else {
		t.fd = open(path, O_RDWR);
		if (t.fd < 0)
			return -errno;
	}
	run_ops(&t, ops, res);
	if (kind == 1)
		sysctl_entry_put(t.e);
	else
		close(t.fd);
	if (kind == 1) {
		t.e = sysctl_lookup(tree, en->ours);
		read_final(&t, path, res);
		sysctl_entry_put(t.e);
	} else {
		t.e = NULL;
		read_final(&t, path, res);
	}
	return 0;
}

/* ---- comparing ---- */

static int verbose;

static void show(const char *label, const char *s, size_t n)
{
	fprintf(stderr, "%s\"", label);
	for (size_t i = 0; i < n && i < 80; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			fputc(c, stderr);
		else
			fprintf(stderr, "\\x%02x", c);
	}
	fprintf(stderr, "\"%s", n > 80 ? "..." : "");
}

static bool same_op(const struct opres *a, const struct opres *b)
{
	return a->ret == b->ret && a->pos == b->pos && a->dlen == b->dlen &&
	       (!a->dlen || !memcmp(a->data, b->data, a->dlen));
}

static bool same_final(const struct result *a, const struct result *b)
{
	return a->final_err == b->final_err && a->flen == b->flen &&
	       !memcmp(a->final, b->final, a->flen);
}

/* Index of the first op that differs, nops when all match. */
static int first_diff(const struct result *k, const struct result *o)
{
	int i;

	for (i = 0; i < k->nops; i++)
		if (!same_op(&k->op[i], &o->op[i]))
			break;
	return i;
}

static bool is_write(const struct op *o)
{
	return o->kind == 'w' || o->kind == 'W' || o->kind == 'b';
}

static size_t op_len(const struct op *o)
{
	return o->kind == 'b' ? big_len(o->n) : o->n;
}

static int run_target(int kind, const struct entry *en, const struct op *ops, struct result *res);

/*
 * After a FUSE difference at call @i, the calls that follow may see another
 * position, so only the value is checked: it must be the kernel's, or what
 * the library (which matches the kernel call by call) stores for calls
 * 0..@i, the ones before the positions moved apart.
 */
static bool fuse_value_ok(const struct entry *en, const struct op *ops, int i,
			  const struct result *k, const struct result *o)
{
	struct op prefix[MAXOPS] = { 0 };
	struct result lib = { 0 };
	bool ok;

	if (same_final(k, o))
		return true;
	memcpy(prefix, ops, (size_t)(i + 1) * sizeof(*ops));
	ok = run_target(1, en, prefix, &lib) == 0 && same_final(&lib, o);
	free_result(&lib);
	return ok;
}

/*
 * Which documented difference explains ours (@o) against the kernel (@k),
 * or D_NONE when none does. Each one names the exact signature of the first
 * call that differs; the calls after it are not compared (the position or
 * the value has moved apart by then), and the value read afresh must be
 * the kernel's, the value before our refused write, or (FUSE) what the
 * calls up to the difference store.
 */
static enum diff explain(int kind, const struct entry *en, const struct op *ops,
			 const struct result *k, const struct result *o, const struct result *init)
{
	int i = first_diff(k, o);
	const struct opres *ko = &k->op[i < k->nops ? i : 0], *oo = &o->op[i < k->nops ? i : 0];
	long long before = i > 0 ? k->op[i - 1].pos : 0;

	/* The kernel stored part of a refused vector write; we stored nothing. */
	if (en->is_vector && same_final(o, init)) {
		for (int j = 0; j < i && j < k->nops; j++)
			if (is_write(&ops[j]) && k->op[j].ret == -EINVAL)
				return D_VECTOR_NOTHING;
	}
	if (i == k->nops)
		return D_NONE;
	/* Its VFS allocates the whole write first; ours hand it to the handler. */
	if (is_write(&ops[i]) && op_len(&ops[i]) >= HUGE_LEN && ko->ret == -ENOMEM &&
	    oo->ret != -ENOMEM)
		return D_KMALLOC_MAX;
	/* A write of the kernel's that cut a string is refused here, value unchanged. */
	if (en->is_string && is_write(&ops[i]) && ko->ret >= 0 && oo->ret == -EMSGSIZE &&
	    same_final(o, init) && i == 0)
		return D_STRING_REFUSED;
	if (kind != 2)
		return D_NONE;
	if ((ops[i].kind == 'w' || ops[i].kind == 'b') && ko->ret == oo->ret && ko->ret >= 0 &&
	    ko->pos != oo->pos && oo->pos == before + ko->ret && fuse_value_ok(en, ops, i, k, o))
		return D_FUSE_POS;
	if ((ops[i].kind == 'r' || ops[i].kind == 'R') && ko->ret == 0 && oo->ret > 0 &&
	    (ops[i].kind == 'R' ? ops[i].off : before) > 0 && fuse_value_ok(en, ops, i, k, o))
		return D_FUSE_READ_SNAP;
	return D_NONE;
}

static void report(const char *tname, const char *ename, const char *what,
		   const struct op *ops, const struct result *k, const struct result *o)
{
	int i = first_diff(k, o);

	fprintf(stderr, "MISMATCH %s %s [%s]:", tname, ename, what);
	for (int j = 0; j < k->nops; j++) {
		fprintf(stderr, " %c", ops[j].kind);
		if (ops[j].s)
			show("", ops[j].s, ops[j].n);
		else
			fprintf(stderr, "%zu/%lld", ops[j].n, (long long)ops[j].off);
	}
	fprintf(stderr, "\n");
	if (i < k->nops) {
		fprintf(stderr, "  call %d: kernel ret %ld pos %lld ", i, k->op[i].ret, k->op[i].pos);
		show("data ", k->op[i].data ? k->op[i].data : "", k->op[i].dlen);
		fprintf(stderr, "\n  call %d: %-6s ret %ld pos %lld ", i, tname, o->op[i].ret,
			o->op[i].pos);
		show("data ", o->op[i].data ? o->op[i].data : "", o->op[i].dlen);
		fprintf(stderr, "\n");
	}
	fprintf(stderr, "  final: kernel err %ld ", k->final_err);
	show("", k->final, k->flen);
	fprintf(stderr, "  %s err %ld ", tname, o->final_err);
	show("", o->final, o->flen);
	fprintf(stderr, "\n");
}

static int cases, matched, failures, skipped_jiffies;
static int documented[3][D_COUNT];

static int one_case(const struct entry *en, const char *what, const struct op *ops)
{
	static const char *const tnames[3] = { "kernel", "lib", "fuse" };
	struct result res[3] = { 0 }, init[3] = { 0 };
	static const struct op none[1] = { { 0 } };

	for (int kind = 0; kind < 3; kind++) {
		/* The value each target starts from, for "stored nothing" checks. */
		if (run_target(kind, en, none, &init[kind]) || run_target(kind, en, ops, &res[kind])) {
			fprintf(stderr, "FAIL: %s cannot run on %s\n", what, tnames[kind]);
			failures++;
			goto out;
		}
	}
	if (!same_final(&init[0], &init[1]) || !same_final(&init[0], &init[2])) {
		fprintf(stderr, "FAIL: %s: the starting values differ\n", en->ours);
		report("lib", en->ours, "start", none, &init[0], &init[1]);
		failures++;
		goto out;
	}
	for (int kind = 1; kind < 3; kind++) {
		cases++;
		if (first_diff(&res[0], &res[kind]) == res[0].nops && same_final(&res[0], &res[kind])) {
			matched++;
			continue;
		}
		enum diff d = explain(kind, en, ops, &res[0], &res[kind], &init[kind]);

		if (d != D_NONE) {
			documented[kind][d]++;
			if (verbose) {
				fprintf(stderr, "documented (%s): ", diff_name[d]);
				report(tnames[kind], en->ours, what, ops, &res[0], &res[kind]);
			}
			continue;
		}
		failures++;
		report(tnames[kind], en->ours, what, ops, &res[0], &res[kind]);
	}
out:
	for (int kind = 0; kind < 3; kind++) {
		free_result(&res[kind]);
		free_result(&init[kind]);
	}
	return 0;
}

/* The kernel's HZ, seen through its own entries: 1 ms rounds up to one jiffy. */
static long kernel_hz(void)
{
	char buf[64];
	int fd = open("/proc/sys/net/ipv4/neigh/lo/retrans_time_ms", O_RDWR);
	ssize_t n;
	long ms;

	if (fd < 0)
		return -1;
	n = write(fd, "1", 1);
	n = n == 1 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	ms = atol(buf);
	return ms > 0 ? 1000 / ms : -1;
}

static bool kernel_takes(const char *kpath, const char *value)
{
	char path[256];
	int fd;
	bool ok;

	snprintf(path, sizeof(path), "/proc/sys/%s", kpath);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return false;
	ok = write(fd, value, strlen(value)) == (ssize_t)strlen(value);
	close(fd);
	return ok;
}

/*
 * The least value the kernel takes for every element of tcp_rmem (its
 * extra1), found by bisection in [1, 65536]; -1 if the kernel takes none of
 * them or takes 0 too (then its declaration is not the one tested here).
 * The entry is left at its starting value.
 */
static int rmem_bound(void)
{
	int lo = 1, hi = 65536; /* the answer is in [lo, hi] */
	char v[64];

	snprintf(v, sizeof(v), "%d %d %d", hi, hi, hi);
	if (!kernel_takes(entries[E_RMEM].kpath, v) ||
	    kernel_takes(entries[E_RMEM].kpath, "0 0 0"))
		return -1;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		snprintf(v, sizeof(v), "%d %d %d", mid, mid, mid);
		if (kernel_takes(entries[E_RMEM].kpath, v))
			hi = mid;
		else
			lo = mid + 1;
	}
	if (!kernel_takes(entries[E_RMEM].kpath, entries[E_RMEM].init))
		return -1;
	return lo;
}

static void *loop_main(void *arg)
{
	sysctl_fuse_loop(arg);
	return NULL;
}

static int skip(const char *why)
{
	printf("SKIP: %s\n", why);
	return 77;
}

int main(int argc, char **argv)
{
	struct sysctl_table_header *h1, *h2;
	struct sysctl_fuse *fs;
	pthread_t loop;
	long hz;

	verbose = argc > 1 && !strcmp(argv[1], "-v");
	if (geteuid() != 0)
		return skip("needs root (network, UTS and mount namespaces, FUSE)");
	if (access("/dev/fuse", R_OK | W_OK))
		return skip("/dev/fuse is missing");
	/* What `unshare -n -u -m` does; before any thread. */
	if (unshare(CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWNS))
		return skip("cannot create network, UTS and mount namespaces here");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		perror("mount --make-rprivate /");
		return 1;
	}
	rmem_min = rmem_bound();
	if (rmem_min < 0) {
		fprintf(stderr, "FAIL: net.ipv4.tcp_rmem of this kernel is not an int vector with a "
				"lower bound in [1, 65536]\n");
		return 1;
	}
	if (rmem_min != 1)
		printf("note: this kernel's tcp_rmem takes elements of %d or more (6.12: 1); ours "
		       "is declared alike\n", rmem_min);
	bigbuf = malloc(HUGE_LEN);
	tree = sysctl_tree_new();
	if (!bigbuf || !tree) {
		perror("setup");
		return 1;
	}
	if (sysctl_register_table(tree, "p", net_rows, sizeof(net_rows) / sizeof(net_rows[0]),
				  &h1) ||
	    sysctl_register_table(tree, "k", kernel_rows, 2, &h2)) {
		fprintf(stderr, "FAIL: cannot register our entries\n");
		return 1;
	}
	if (!mkdtemp(mnt)) {
		perror("mkdtemp");
		return 1;
	}
	int err = sysctl_fuse_mount(tree, mnt, &fs);

	if (err) {
		rmdir(mnt);
		if (err == -ENODEV || err == -EPERM)
			return skip("cannot mount FUSE here");
		fprintf(stderr, "FAIL: sysctl_fuse_mount: %s\n", strerror(-err));
		return 1;
	}
	if (pthread_create(&loop, NULL, loop_main, fs)) {
		perror("pthread_create");
		return 1;
	}
	hz = kernel_hz();
	if (hz != SYSCTL_HZ)
		printf("note: the kernel's HZ is %ld, ours %d: jiffies entries not compared\n", hz,
		       SYSCTL_HZ);

	for (int e = 0; e < E_COUNT; e++) {
		const struct entry *en = &entries[e];

		if (en->is_jiffies && hz != SYSCTL_HZ) {
			skipped_jiffies++;
			continue;
		}
		for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
			struct op ops[MAXOPS] = {
				{ 'w', inputs[i].s, inputs[i].n, 0, 0 }, R(100), S(0, SEEK_SET), R(100),
			};
			char what[160];

			snprintf(what, sizeof(what), "write #%zu, read on the fd, reread", i);
			one_case(en, what, ops);
		}
		for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++)
			one_case(en, seqs[i].what, seqs[i].ops);
	}

	sysctl_fuse_exit(fs);
	pthread_join(loop, NULL);
	sysctl_fuse_unmount(fs);
	rmdir(mnt);
	sysctl_unregister_table(h1);
	sysctl_unregister_table(h2);
	sysctl_tree_free(tree);
	rcustring_destroy(&hostname_rcu);
	free(bigbuf);

	printf("parity: %d cases (%d entries x %zu sequences, library and FUSE), %d identical to "
	       "the kernel, %d failed\n",
	       cases, E_COUNT - skipped_jiffies,
	       sizeof(inputs) / sizeof(inputs[0]) + sizeof(seqs) / sizeof(seqs[0]), matched,
	       failures);
	for (int kind = 1; kind < 3; kind++)
		for (int d = 1; d < D_COUNT; d++)
			if (documented[kind][d])
				printf("parity: %s: %d cases differ as documented: %s\n",
				       kind == 1 ? "library" : "FUSE", documented[kind][d], diff_name[d]);
	return failures ? 1 : 0;
}
