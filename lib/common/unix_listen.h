/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The listening side of a Unix stream socket, as both of the project's
 * servers (the control socket, rcusysd's events socket) make it: a stale
 * file is replaced only when nobody accepts on it, the file gets its mode
 * without a chmod that could follow a swapped-in symlink, the file appears
 * under its name only once the socket listens, and its identity is kept so
 * that a stop removes our own file and nothing else.
 *
 * Why the file appears only when it listens: clients wait for the file
 * (inotify, a stat loop, a test's "test -S") and connect at once. A file
 * bound but not yet listening refuses them (ECONNREFUSED), and
 * rcs_unix_clear_stale() of a second server starting then would take it for
 * stale and remove it. So the socket is bound under a temporary name in the
 * same directory, made to listen there, and renamed onto its name with
 * RENAME_NOREPLACE, which never replaces a file someone put there meanwhile.
 */
#ifndef RCUSTRING_COMMON_UNIX_LISTEN_H
#define RCUSTRING_COMMON_UNIX_LISTEN_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* A temporary name's tries (one more each time a dead process left one). */
#define RCS_UNIX_TMP_TRIES 8

/*
 * Remove the socket file at @addr if nobody accepts on it. Return 0 (none
 * there, or removed), -EEXIST (not a socket: never touched), -EADDRINUSE
 * (a server answers), or -errno.
 */
static inline int rcs_unix_clear_stale(const struct sockaddr_un *addr)
{
	struct stat st, again;
	int fd, err;

	if (lstat(addr->sun_path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	err = connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0 ? -EADDRINUSE :
	      errno == ECONNREFUSED ? 0 : errno == ENOENT ? -EAGAIN : -errno;
	close(fd);
	if (err == -EAGAIN)
		return 0; /* removed meanwhile */
	/* Only the file that refused: a server may have put its own there since. */
	if (!err && lstat(addr->sun_path, &again) == 0 &&
	    (again.st_dev != st.st_dev || again.st_ino != st.st_ino))
		err = -EADDRINUSE;
	if (!err && unlink(addr->sun_path) != 0 && errno != ENOENT)
		err = -errno;
	return err;
}

/*
 * Remove the file at @path if it is still the one with identity @dev and
 * @ino (our socket), and nothing else. Return 0 (removed, or gone), -ESTALE
 * (another file is there now: left alone), or -errno.
 */
static inline int rcs_unix_unlink_own(const char *path, dev_t dev, ino_t ino)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (st.st_dev != dev || st.st_ino != ino)
		return -ESTALE;
	if (unlink(path) != 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/*
 * Give the file at @tmp the name @path unless @path exists, by a hard link
 * and an unlink: for file systems without renameat2()'s RENAME_NOREPLACE.
 * Return 0 or -errno (-EEXIST: @path exists; @tmp is then left as it was).
 */
static inline int rcs_unix_place_link(const char *tmp, const char *path)
{
	int err;

	if (link(tmp, path) != 0)
		return -errno;
	if (unlink(tmp) == 0 || errno == ENOENT)
		return 0;
	err = -errno;
	unlink(path); /* undone: one name or none, never two */
	return err;
}

/* Give @tmp the name @path unless @path exists. Return 0 or -errno. */
static inline int rcs_unix_place(const char *tmp, const char *path)
{
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	return rcs_unix_place_link(tmp, path);
}

/*
 * The temporary name number @n for @path in *@tmp: ".rcs-PID-TID-N.tmp" in
 * the same directory, so that rename() can move it and no two threads, and
 * no two processes sharing the directory, pick the same name at once.
 * Return 0, or -ENAMETOOLONG when it does not fit a socket address.
 */
static inline int rcs_unix_tmp_name(const char *path, unsigned int n, struct sockaddr_un *tmp)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	int len;

	len = snprintf(tmp->sun_path, sizeof(tmp->sun_path), "%.*s.rcs-%ld-%ld-%u.tmp", dirlen,
		       path, (long)getpid(), (long)gettid(), n);
	return len < 0 || (size_t)len >= sizeof(tmp->sun_path) ? -ENAMETOOLONG : 0;
}

/*
 * Bind a new socket under a free temporary name for @path (in *@tmp) with
 * the file's mode @mode, and check that the name is still our socket. Return
 * the socket with the file's identity in *@st, or -errno (-EEXIST: the name
 * was swapped for something else). On error the temporary name is removed.
 *
 * The file bind() makes takes the socket's mode less the umask: set it
 * first, so no chmod by path is needed in the common case. Where the umask
 * took bits away, put them back without following a symlink swapped in
 * meanwhile. Nobody can connect before listen(), so the umask's mode never
 * serves.
 */
static inline int rcs_unix_bind_tmp(const char *path, mode_t mode, struct sockaddr_un *tmp,
				    struct stat *st)
{
	unsigned int n = 0;
	int fd, err;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, mode & 07777) != 0) {
		err = -errno;
		goto fail;
	}
	for (;;) {
		err = rcs_unix_tmp_name(path, n, tmp);
		if (err)
			goto fail;
		if (bind(fd, (const struct sockaddr *)tmp, sizeof(*tmp)) == 0)
			break;
		err = -errno;
		/* A name a dead process with our pid and tid left: take the next. */
		if (err != -EADDRINUSE || ++n == RCS_UNIX_TMP_TRIES)
			goto fail;
	}
	if (lstat(tmp->sun_path, st) != 0 ||
	    ((st->st_mode & 07777) != (mode & 07777) &&
	     (fchmodat(AT_FDCWD, tmp->sun_path, mode & 07777, AT_SYMLINK_NOFOLLOW) != 0 ||
	      lstat(tmp->sun_path, st) != 0)))
		err = -errno;
	else if (!S_ISSOCK(st->st_mode))
		err = -EEXIST;
	if (!err)
		return fd;
	/* Whatever is at the name now: the name is ours, in a directory nobody else may write. */
	unlink(tmp->sun_path);
fail:
	close(fd);
	return err;
}

/*
 * Listen on @addr (stale file cleared first) with the file's mode @mode and
 * @backlog. Return the socket, its file's identity in *@dev and *@ino, or
 * -errno: -EADDRINUSE (a server answers at @addr), -EEXIST (another file is
 * there, never touched), -ENAMETOOLONG (the temporary name in @addr's
 * directory, about 30 bytes, does not fit a socket address). On error no
 * file made here is left.
 *
 * The socket listens before its file has its name (see the top of this
 * file): a client that finds the file can connect. The directory must be
 * one others cannot write (as the servers' run directories are checked to
 * be): names in it are trusted.
 */
static inline int rcs_unix_listen(const struct sockaddr_un *addr, mode_t mode, int backlog,
				  dev_t *dev, ino_t *ino)
{
	struct sockaddr_un tmp = { .sun_family = AF_UNIX };
	int fd, err, tries = 3;
	struct stat st;

	err = rcs_unix_clear_stale(addr);
	if (err)
		return err;
	fd = rcs_unix_bind_tmp(addr->sun_path, mode, &tmp, &st);
	if (fd < 0)
		return fd;
	if (listen(fd, backlog) != 0) {
		err = -errno;
		goto fail;
	}
	/*
	 * A file that appeared at @addr since the check is looked at again: a
	 * live server's or a stranger's stays, a stale socket goes.
	 */
	while ((err = rcs_unix_place(tmp.sun_path, addr->sun_path)) == -EEXIST && --tries > 0) {
		err = rcs_unix_clear_stale(addr);
		if (err)
			goto fail;
	}
	if (err)
		goto fail;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return fd;
fail:
	unlink(tmp.sun_path);
	close(fd);
	return err;
}

#endif
