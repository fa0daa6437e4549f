/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fleet-bench's reference watchers of one etcd key, each timestamping the
 * arrival of the values "v0" .. "vN-1" (CLOCK_MONOTONIC), side by side
 * with the mirror: `etcdctl watch` (gRPC, a child process, its lines read
 * from a pipe) and a minimal client of the JSON gateway that the mirror
 * uses (HTTP/1.1 POST /v3/watch on a plain socket, its chunks read and the
 * values decoded, nothing else), which is the floor of the gateway path.
 */
#ifndef FLEET_WATCHERS_H
#define FLEET_WATCHERS_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct ref_watch {
	const char *what; /* "etcdctl watch", "gateway reader" */
	pid_t pid;        /* etcdctl's; 0 for the gateway reader */
	int fd;           /* the gateway reader's socket; -1 for etcdctl */
	FILE *out;
	pthread_t thread;
	int64_t *arrived_ns; /* per value index; 0 until it came (atomic) */
	int n;
	int64_t warm_ns; /* the value "warm" came (atomic) */
};

int64_t fleet_now_ns(void);

/*
 * A watcher fed by its caller (ref_watch_arrived()), with no thread: the
 * mirror's own apply, timed by a change callback. 0 or -1 (no memory).
 * Context: the bench's main thread.
 */
int ref_watch_init(struct ref_watch *w, const char *what, int n);

/*
 * The value @v (@len bytes) arrived at @t: "warm", or "vI" for I below
 * the watcher's n, kept the first time. Context: any one thread a watcher.
 */
void ref_watch_arrived(struct ref_watch *w, const char *v, size_t len, int64_t t);

/*
 * Starts `etcdctl watch KEY` on the first of @endpoints for values up to
 * v@n-1. Returns 0 or -1. Context: the bench's main thread.
 */
int ref_watch_etcdctl(struct ref_watch *w, const char *endpoints, const char *key, int n);

/*
 * Starts a watch of @key on the first of @endpoints (http://HOST:PORT)
 * through the JSON gateway, on a plain socket. Returns 0 or -1.
 * Context: the bench's main thread.
 */
int ref_watch_gateway(struct ref_watch *w, const char *endpoints, const char *key, int n);

/* Stops the watcher and frees it. Context: the thread that started it. */
void ref_watch_stop(struct ref_watch *w);

/* Waits for *@slot to be set (10 s guard): its value, or 0. Context: any thread. */
int64_t ref_watch_wait(int64_t *slot);

#endif
