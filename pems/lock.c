/*
 * lock.c - a job's ownership of a path: an exclusive flock on a lock file
 * holding the owner's PID, taken without waiting, so that a second job
 * for the same output or checkpoint refuses at once and can say whose it
 * is.
 *
 * Invariants:
 *  (1) the lock is held on the file that has the name: after flock the
 *      descriptor's inode is compared with the name's, and the attempt
 *      repeats when the holder removed (pems_unlock) or replaced it in
 *      between, so two jobs never hold locks on two generations of one
 *      name;
 *  (2) no allocation (pems_ckpt_init calls this on the resume path,
 *      checkpoint.c 1) and descriptors are O_CLOEXEC.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"
#include "ckpt.h"

/* The PID the holder wrote (0 if none yet: it is between flock and write). */
static long holder_pid(int fd)
{
	char buf[32];
	ssize_t n;
	int tries;

	for (tries = 0; tries < 150; tries++) {
		struct timespec ts = { 0, 2 * 1000 * 1000 };

		n = pread(fd, buf, sizeof(buf) - 1, 0);
		if (n > 0) {
			buf[n] = 0;
			return strtol(buf, NULL, 10);
		}
		nanosleep(&ts, NULL);
	}
	return 0;
}

static bool same_file(int fd, const char *path)
{
	struct stat a, b;

	return !fstat(fd, &a) && !stat(path, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

PEMS_API int pems_lock(const char *path, long *holder)
{
	char pid[32];
	int fd, len, tries;

	*holder = 0;
	for (tries = 0; tries < 100; tries++) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			int rc = errno == EWOULDBLOCK ? -EBUSY : -errno;

			if (rc == -EBUSY)
				*holder = holder_pid(fd);
			close(fd);
			return rc;
		}
		if (same_file(fd, path))
			break;
		close(fd);	/* invariant 1: removed or replaced meanwhile */
		fd = -1;
	}
	if (fd < 0)
		return -EAGAIN;
	/* write, then cut: the file is never empty while held, so a job
	 * refused meanwhile reads a PID (after an exec, the same one) */
	len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (pwrite(fd, pid, (size_t)len, 0) != len || ftruncate(fd, len)) {
		int rc = -errno;

		close(fd);
		return rc ? rc : -EIO;
	}
	return fd;
}

long pems_lock_held(const char *path)
{
	long pid = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);	/* never create one */

	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK) {
		pid = holder_pid(fd);
		pid = pid > 0 ? pid : -1;
	}
	close(fd);
	return pid;
}

PEMS_API void pems_unlock(const char *path, int fd)
{
	if (fd < 0)
		return;
	if (path && same_file(fd, path))
		unlink(path);	/* while held: invariant 1 */
	close(fd);
}
