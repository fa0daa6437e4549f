/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fleet-bench's reference watchers (fleet_watchers.h): `etcdctl watch` and
 * a minimal reader of the JSON gateway's watch stream. Both only
 * timestamp each value's arrival in a thread that blocks on its input, so
 * that their times are the transport's, without a decoder or an apply.
 */
#include <netdb.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "etcd_http.h"
#include "fleet_watchers.h"

int64_t fleet_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Called after the timestamp, in every watcher alike; strtol, not sscanf:
 * the mirror's apply runs it in the thread that then goes back to the stream. */
void ref_watch_arrived(struct ref_watch *w, const char *v, size_t len, int64_t t)
{
	char buf[32], *end;
	long i;

	if (len >= sizeof(buf))
		return;
	memcpy(buf, v, len);
	buf[len] = '\0';
	if (!strcmp(buf, "warm")) {
		__atomic_store_n(&w->warm_ns, t, __ATOMIC_RELEASE);
		return;
	}
	if (buf[0] != 'v')
		return;
	i = strtol(buf + 1, &end, 10);
	if (end != buf + 1 && i >= 0 && i < w->n &&
	    !__atomic_load_n(&w->arrived_ns[i], __ATOMIC_ACQUIRE))
		__atomic_store_n(&w->arrived_ns[i], t, __ATOMIC_RELEASE);
}

/* etcdctl prints PUT, the key, the value: one value a line. */
static void *ctl_reader(void *arg)
{
	struct ref_watch *w = arg;
	char line[256];

	while (fgets(line, sizeof(line), w->out)) {
		int64_t t = fleet_now_ns();

		ref_watch_arrived(w, line, strcspn(line, "\n"), t);
	}
	return NULL;
}

/*
 * The gateway's stream: one JSON message a line (in HTTP chunks, which
 * the gateway flushes per message: a chunk's size line reads as a line of
 * its own). Each "value":"BASE64" of a line is decoded and timestamped.
 */
static void *gateway_reader(void *arg)
{
	static const char tag[] = "\"value\":\"";
	struct ref_watch *w = arg;
	char *line = NULL, *p, *end, *v;
	size_t cap = 0, len;

	while (getline(&line, &cap, w->out) > 0) {
		int64_t t = fleet_now_ns();

		for (p = line; (p = strstr(p, tag)) && (end = strchr(p + sizeof(tag) - 1, '"'));
		     p = end) {
			p += sizeof(tag) - 1;
			if (etcd_b64_decode_n(p, (size_t)(end - p), &v, &len) == 0) {
				ref_watch_arrived(w, v, len, t);
				free(v);
			}
		}
	}
	free(line);
	return NULL;
}

int ref_watch_init(struct ref_watch *w, const char *what, int n)
{
	memset(w, 0, sizeof(*w));
	w->what = what;
	w->fd = -1;
	w->n = n;
	w->arrived_ns = calloc((size_t)n, sizeof(*w->arrived_ns));
	return w->arrived_ns ? 0 : -1;
}

int ref_watch_etcdctl(struct ref_watch *w, const char *endpoints, const char *key, int n)
{
	char ep[256];
	int fd[2];

	snprintf(ep, sizeof(ep), "%.*s", (int)strcspn(endpoints, ","), endpoints);
	if (ref_watch_init(w, "etcdctl watch", n) || pipe(fd))
		return -1;
	w->pid = fork();
	if (w->pid < 0)
		return -1;
	if (w->pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		setenv("ETCDCTL_API", "3", 1);
		execlp("etcdctl", "etcdctl", "--endpoints", ep, "watch", key, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	w->out = fdopen(fd[0], "r");
	return w->out ? -pthread_create(&w->thread, NULL, ctl_reader, w) : -1;
}

/* A connected socket to the first of @endpoints ("http://HOST:PORT,..."); -1 on failure. */
static int connect_first(const char *endpoints, char *host, size_t size)
{
	const char *p = strstr(endpoints, "://") ? strstr(endpoints, "://") + 3 : endpoints;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	char *port;
	int fd = -1;

	snprintf(host, size, "%.*s", (int)strcspn(p, ",/"), p);
	port = strrchr(host, ':');
	if (!port)
		return -1;
	*port++ = '\0';
	if (getaddrinfo(host, port, &hints, &ai) == 0 &&
	    (fd = socket(ai->ai_family, SOCK_STREAM, 0)) >= 0 &&
	    connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		close(fd);
		fd = -1;
	}
	if (ai)
		freeaddrinfo(ai);
	port[-1] = ':';
	return fd;
}

int ref_watch_gateway(struct ref_watch *w, const char *endpoints, const char *key, int n)
{
	char host[256], body[512], req[1024], *k64 = NULL;
	int len;

	if (ref_watch_init(w, "gateway reader", n) ||
	    etcd_b64_encode(key, strlen(key), &k64) || (w->fd = connect_first(endpoints, host,
										sizeof(host))) < 0) {
		free(k64);
		return -1;
	}
	snprintf(body, sizeof(body), "{\"create_request\":{\"key\":\"%s\"}}", k64);
	free(k64);
	len = snprintf(req, sizeof(req), "POST /v3/watch HTTP/1.1\r\nHost: %s\r\n"
		       "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s", host,
		       strlen(body), body);
	if (len <= 0 || (size_t)len >= sizeof(req) || write(w->fd, req, (size_t)len) != len ||
	    !(w->out = fdopen(w->fd, "r")))
		return -1;
	return -pthread_create(&w->thread, NULL, gateway_reader, w);
}

void ref_watch_stop(struct ref_watch *w)
{
	if (w->pid > 0) {
		kill(w->pid, SIGTERM);
		waitpid(w->pid, NULL, 0);
	} else if (w->fd >= 0) {
		shutdown(w->fd, SHUT_RDWR); /* the reader's getline() returns */
	}
	if (w->out) {
		pthread_join(w->thread, NULL);
		fclose(w->out);
	}
	free(w->arrived_ns);
	w->arrived_ns = NULL;
}

int64_t ref_watch_wait(int64_t *slot)
{
	for (int i = 0; i < 100000; i++) {
		int64_t t = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

		if (t)
			return t;
		usleep(100);
	}
	return 0;
}
