/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rcusysctl's reads, writes, loads and resets (settings.c), with the
 * choices of the command line they follow. Errors are printed on stderr as
 * procps prints them and make the exit status 1.
 */
#ifndef RCUSYSCTL_SETTINGS_H
#define RCUSYSCTL_SETTINGS_H

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>

/* The command line's choices that the calls below follow; main.c fills it first. */
struct settings_opts {
	const char *root;   /* --root DIR: files; NULL: the socket */
	const char *socket; /* --socket PATH, $RCUSYSCTL_SOCKET, or the default */
	bool names_only, values_only, ignore_unknown, quiet, binary, describe;
	bool deprecated;      /* --deprecated: list deprecated entries too */
	bool json;            /* --json: one JSON array of {name, value} on stdout */
	bool dry_run;         /* --dry-run: writes print "name: old -> new" and write nothing */
	bool generation;      /* --generation: print generations instead of values */
	bool if_generation;   /* --if-generation N: writes only while the generation is N */
	bool atomic;          /* --atomic: the writes collected, then one commit (settings_commit) */
	uint64_t expected;
	const char *prefix;   /* --prefix without --etcd ('/' form): -p and --system apply below it */
	bool have_pattern;
	bool pattern_invalid; /* -r REGEX that does not compile: matches nothing, as in procps */
	regex_t pattern;
};
extern struct settings_opts opts;

/* NAME: print the entry, or every entry below a directory. */
void settings_read(const char *arg);
/* NAME=VALUE: write it, echoing "name = value" unless opts.quiet. */
void settings_write(const char *arg);
/* -a: print every entry. */
void settings_show_all(void);
/* -p FILE ("-": stdin), applied as procps applies it. */
void settings_load_file(const char *path);
/* --system: the sysctl.d directories merged as systemd-sysctl merges them. */
void settings_load_system(void);
/* --cat-config: --system's files in its order, as systemd-sysctl --cat-config prints them. */
void settings_cat_config(void);
/* --reset: drop rcusysd's runtime value of each of @names, or of every entry (@all). */
void settings_reset(bool all, char **names, int count);
/* --atomic: the writes collected so far, as one commit (settings files': as they apply). */
void settings_commit(void);
/* The exit status so far: 0, or 1 once anything failed. */
int settings_status(void);

#endif
