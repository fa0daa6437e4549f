/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The listening side of a Unix stream socket, as both of the project's
 * servers (the control socket, rcusysd's events socket) make it: a stale
 * file is replaced only when nobody accepts on it, the file gets its mode
 * without a chmod that could follow a swapped-in symlink, and its identity
 * is kept so that a stop removes our own file and nothing else.
 */
#ifndef RCUSTRING_COMMON_UNIX_LISTEN_H
#define RCUSTRING_COMMON_UNIX_LISTEN_H

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/*
 * Remove the socket file at @addr if nobody accepts on it. Return 0 (none
 * there, or removed), -EEXIST (not a socket: never touched), -EADDRINUSE
 * (a server answers), or -errno.
 */
static inline int rcs_unix_clear_stale(const struct sockaddr_un *addr)
{
	struct stat st;
	int fd, err;

	if (lstat(addr->sun_path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	err = connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0 ? -EADDRINUSE :
	      errno == ECONNREFUSED ? 0 : -errno;
	close(fd);
	if (!err && unlink(addr->sun_path) != 0 && errno != ENOENT)
		err = -errno;
	return err;
}

/*
 * Listen on @addr (stale file cleared first) with the file's mode @mode and
 * @backlog. Return the socket, its file's identity in *@dev and *@ino, or
 * -errno (a file it made is removed again).
 *
 * The file bind() makes takes the socket's mode less the umask: set it
 * first, so no chmod by path is needed in the common case. Where the umask
 * took bits away, put them back without following a symlink swapped in
 * meanwhile, and check that the path is still a socket. Before listen()
 * nobody can connect, so the umask's mode never serves.
 */
static inline int rcs_unix_listen(const struct sockaddr_un *addr, mode_t mode, int backlog,
				  dev_t *dev, ino_t *ino)
{
	const char *path = addr->sun_path;
	int fd, err = rcs_unix_clear_stale(addr);
	struct stat st;

	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, mode & 07777) != 0 ||
	    bind(fd, (const struct sockaddr *)addr, sizeof(*addr)) != 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (lstat(path, &st) != 0 ||
	    ((st.st_mode & 07777) != (mode & 07777) &&
	     (fchmodat(AT_FDCWD, path, mode & 07777, AT_SYMLINK_NOFOLLOW) != 0 ||
	      lstat(path, &st) != 0)))
		err = -errno;
	else if (!S_ISSOCK(st.st_mode))
		err = -EEXIST; /* not ours: left alone */
	else if (listen(fd, backlog) != 0)
		err = -errno;
	if (err) {
		if (err != -EEXIST)
			unlink(path);
		close(fd);
		return err;
	}
	*dev = st.st_dev;
	*ino = st.st_ino;
	return fd;
}

#endif
