/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysd's command line (options.c). Internal to rcusysd.
 */
#ifndef RCUSYSD_OPTIONS_H
#define RCUSYSD_OPTIONS_H

#include <stdbool.h>
#include <sys/types.h>

#include "config.h"
#ifdef HAVE_ETCD
#include "etcd_creds.h"
#include "etcd_sync.h"
#endif

#define DEFAULT_RUN_DIR "/run/rcusysd"
#define DEFAULT_STATE "/var/lib/rcusysd/state.conf"
#define DEFAULT_STOP_GRACE 5

/* What the command line asks for. */
struct options {
	const char *run_dir, *state, *owner, *event;
	bool state_given, run_dir_given, use_fuse, allow_poweroff, check; /* check: --check-config */
	int grace;
	uid_t owner_uid;
	gid_t owner_gid;
	struct config_files files;
	char state_path[4096];
	const char *etcd_user;     /* --etcd-user USER[:GROUP] */
	bool etcd_allow_exec;      /* --etcd-allow-exec */
#ifdef HAVE_ETCD
	struct etcd_sync_opts eo;
	struct sysctl_caller etcd_caller; /* the mirror's principal with --etcd-user */
	char *etcd_arg;                   /* --etcd as argv holds it (its password starred out) */
	const char *etcd_credentials;     /* --etcd-credentials FILE */
	struct etcd_creds creds;          /* eo.endpoints and eo.userpwd point here */
#else
	const char *etcd_url;
#endif
};

/*
 * Reads @argv into @o, which holds the defaults: -1 to go on, else the
 * exit status (0 after --help or --version, 2 after a usage error, which
 * is printed or logged).
 */
int options_parse(int argc, char **argv, struct options *o);

#endif
