/*
 * input.c - opening a job's input without blocking: a FIFO with no
 * writer would hang open(2), and a stream cannot be read at offsets
 * more than once, which every bundled algorithm does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pems_algorithms.h"

const char *pems_input_kind(unsigned mode)
{
	if (S_ISREG(mode) || S_ISBLK(mode))
		return NULL;
	if (S_ISFIFO(mode))
		return "a FIFO (a pipe)";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISDIR(mode))
		return "a directory";
	return "not a regular file";
}

int pems_input_open(const char *who, const char *path, struct stat *st)
{
	const char *kind;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), rc;

	if (fd < 0 || fstat(fd, st)) {
		rc = -errno;
		fprintf(stderr, "pems: error: %s: cannot read %s: %s\n", who, path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	kind = pems_input_kind(st->st_mode);
	if (kind) {
		fprintf(stderr, "pems: error: %s: %s is %s; %s reads a regular file, at offsets and more than once: save the data to a file first\n",
			who, path, kind, who);
		close(fd);
		return -ESPIPE;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}
