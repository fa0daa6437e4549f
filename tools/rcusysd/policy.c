/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one decision of who may write what (policy.h), and the tree's write
 * check that asks it for every write.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "log.h"
#include "policy.h"

static const char *origin_name(enum sysctl_origin origin)
{
	switch (origin) {
	case SYSCTL_ORIGIN_CLIENT: return "a client";
	case SYSCTL_ORIGIN_PROGRAM: return "the program";
	case SYSCTL_ORIGIN_FILE: return "a settings file";
	case SYSCTL_ORIGIN_STATE: return "the state file";
	case SYSCTL_ORIGIN_MIRROR: return "the etcd mirror";
	default: return "an unknown origin";
	}
}

/* The mode bits, as /proc/sys checks them (sysctl_access(), which --owner goes through). */
static int mode_allows(const struct sysctl_entry *e, const struct sysctl_caller *who,
		       enum sysctl_origin origin, char *why, size_t size)
{
	if (!sysctl_access(e, who, W_OK))
		return 0;
	if (!(sysctl_entry_mode(e) & 0200))
		snprintf(why, size, "read-only entry (mode %04o): %s cannot set it",
			 (unsigned)sysctl_entry_mode(e), origin_name(origin));
	else
		snprintf(why, size, "mode %04o does not let %s (uid %u) write it",
			 (unsigned)sysctl_entry_mode(e), origin_name(origin), (unsigned)who->uid);
	return -EACCES;
}

/*
 * A settings file's write with a caller that is not root: the socket
 * decides a client's origin once (a non-root APPLY is that client's write,
 * rcustring-socket(7)) and never sends this; refused rather than held as
 * root's settings or re-decided here, where persistence would not see it.
 */
static int file_from_user(enum sysctl_origin origin, const struct sysctl_caller *who, char *why,
			  size_t size)
{
	if (origin != SYSCTL_ORIGIN_FILE || !who || who->uid == 0)
		return 0;
	snprintf(why, size, "a settings file's write from uid %u (only root's are settings)",
		 (unsigned)who->uid);
	return -EACCES;
}

/* An entry root executes: root-owned local sources, and the mirror when named and on TLS. */
static int exec_allows(const struct policy *p, enum sysctl_origin origin,
		       const struct sysctl_caller *who, char *why, size_t size)
{
	switch (origin) {
	case SYSCTL_ORIGIN_CLIENT:
		if (who && who->uid == 0)
			return 0;
		snprintf(why, size, "an entry root executes: uid %u is not root (--owner never covers it)",
			 who ? (unsigned)who->uid : 0u);
		return -EPERM;
	case SYSCTL_ORIGIN_MIRROR:
		if (p && p->etcd_allow_exec && p->etcd_tls)
			return 0;
		snprintf(why, size, "an entry root executes: the etcd mirror may set it only with "
				    "--etcd-allow-exec and https:// endpoints%s",
			 p && p->etcd_allow_exec ? " (an endpoint is not https)" : "");
		return -EPERM;
	default:
		/* The program, and files the one file check held to root or our uid. */
		return 0;
	}
}

int policy_decide(const struct policy *p, const struct sysctl_entry *e, enum sysctl_origin origin,
		  const struct sysctl_caller *who, char *why, size_t size)
{
	/* A file's owner passed the file check: root's rights (or ours, when not root). */
	static const struct sysctl_caller local_root = { .uid = 0, .gid = 0, .pid = 0 };
	int err;

	if (origin == SYSCTL_ORIGIN_PROGRAM)
		return 0; /* its defaults and its own entries */
	if (origin == SYSCTL_ORIGIN_CLIENT && !who) {
		snprintf(why, size, "a client write without credentials");
		return -EACCES;
	}
	err = file_from_user(origin, who, why, size);
	if (err)
		return err;
	err = mode_allows(e, who ? who : &local_root, origin, why, size);
	if (!err && sysctl_entry_exec(e))
		err = exec_allows(p, origin, who, why, size);
	return err;
}

/*
 * Counted always; logged under the rate limit of its source (a client by
 * uid, another origin as itself) and rule (the errno), so that the lines
 * of one user's loop never hide another user's or another rule's.
 */
static void refused(struct policy *p, const struct sysctl_entry *e, const struct sysctl_change *ch,
		    int err, const char *why)
{
	bool user = ch->who && ch->who->uid != 0;
	unsigned origin = (unsigned)ch->origin < POLICY_ORIGINS ? (unsigned)ch->origin
								 : POLICY_ORIGINS - 1;
	char key[LOG_LIMIT_KEY];

	__atomic_add_fetch(&p->refused[origin], 1, __ATOMIC_RELAXED);
	if (ch->origin == SYSCTL_ORIGIN_FILE && !user)
		return; /* root's settings: the reload names the line */
	if ((ch->origin == SYSCTL_ORIGIN_CLIENT || ch->origin == SYSCTL_ORIGIN_FILE) && ch->who)
		snprintf(key, sizeof(key), "refused writes (%s) of uid %u", err == -EPERM ?
			 "EPERM" : "EACCES", (unsigned)ch->who->uid);
	else
		snprintf(key, sizeof(key), "refused writes (%s) of %s", err == -EPERM ? "EPERM" :
			 "EACCES", origin_name(ch->origin));
	rlog_limited(&p->log_limit, key, LOG_WARNING, "refused %s's write of %s: %s",
		     origin_name(ch->origin), sysctl_entry_path(e), why);
}

/* The tree's write check (sysctl_check_fn). */
static int check(struct sysctl_entry *e, const struct sysctl_change *ch, void *arg)
{
	struct policy *p = arg;
	char why[256];
	int err = policy_decide(p, e, ch->origin, ch->who, why, sizeof(why));

	if (err)
		refused(p, e, ch, err, why);
	else if (!err && ch->origin == SYSCTL_ORIGIN_MIRROR && sysctl_entry_exec(e))
		rlog(LOG_NOTICE, "etcd sets %s, an entry root executes (--etcd-allow-exec; "
				 "etcd revision %lld)",
		     sysctl_entry_path(e), p->etcd_revision ? (long long)p->etcd_revision(p->etcd_arg) : -1LL);
	return err;
}

int policy_install(struct policy *p, struct sysctl_tree *tree)
{
	if (!p)
		return -EINVAL;
	log_limit_init(&p->log_limit);
	return sysctl_tree_set_check(tree, check, p);
}

uint64_t policy_refused(struct policy *p, int origin)
{
	uint64_t n = 0;

	if ((unsigned)origin < POLICY_ORIGINS)
		return __atomic_load_n(&p->refused[origin], __ATOMIC_RELAXED);
	for (int i = 0; i < POLICY_ORIGINS; i++)
		n += __atomic_load_n(&p->refused[i], __ATOMIC_RELAXED);
	return n;
}

const char *policy_origin_label(int origin)
{
	static const char *const labels[POLICY_ORIGINS] = { "client", "program", "file", "state",
							     "mirror" };

	return (unsigned)origin < POLICY_ORIGINS ? labels[origin] : "other";
}

void policy_log_mirror(struct policy *p, const char *message)
{
	char key[LOG_LIMIT_KEY];

	if (!p) {
		rlog(LOG_NOTICE, "etcd: %s", message);
		return;
	}
	snprintf(key, sizeof(key), "etcd messages \"%.*s ...\"", (int)strcspn(message, " "),
		 message);
	rlog_limited(&p->log_limit, key, LOG_NOTICE, "etcd: %s", message);
}

void policy_log_flush(struct policy *p, bool all)
{
	log_limit_flush(&p->log_limit, log_now_ns(), all);
}

bool policy_endpoints_tls(const char *endpoints)
{
	const char *at = endpoints;
	bool tls = at && *at;

	while (at && *at) {
		size_t len = strcspn(at, ",");

		if (len < 8 || strncasecmp(at, "https://", 8)) {
			const char *host = memchr(at, '@', len); /* no user:password in the log */
			size_t skip = host ? (size_t)(host + 1 - at) : 0;

			tls = false;
			rlog(LOG_WARNING, "--etcd endpoint %s%.*s is not https: anyone on its path can set "
					  "this host's values (entries root executes stay refused)",
			     host ? "(credentials left out) " : "", (int)(len - skip), at + skip);
		}
		at += len;
		at += *at == ',';
	}
	return tls;
}
