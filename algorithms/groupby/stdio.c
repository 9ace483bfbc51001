/*
 * stdio.c - IN and OUT given as "-": standard input is copied to a file
 * in the scratch directory first (the VPs read their slices at offsets),
 * and the output is written to a file there and copied to standard
 * output at the end.  Both files are removed afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "groupby/gb.h"

#define COPY (1u << 20)

/* the first scratch directory without a per-rank pattern, else $TMPDIR */
static const char *spool_dir(const struct pems_config *cfg)
{
	const char *t = getenv("TMPDIR");

	if (cfg && cfg->ntmp && cfg->tmp[0] && !strchr(cfg->tmp[0], '%'))
		return cfg->tmp[0];
	return t && *t ? t : "/tmp";
}

static int copy_fd(int from, int to)
{
	char *buf = malloc(COPY);
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(from, buf, COPY), w = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : 0;
			break;
		}
		while (w < n) {
			ssize_t k = write(to, buf + w, (size_t)(n - w));

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				rc = k < 0 ? -errno : -EIO;
				goto out;
			}
			w += k;
		}
	}
out:
	free(buf);
	return rc;
}

int gb_spool_path(const struct pems_config *cfg, const char *what, char *path, size_t len)
{
	int fd;

	if (snprintf(path, len, "%s/pems-groupby-%s-XXXXXX", spool_dir(cfg), what) >= (int)len)
		return -ENAMETOOLONG;
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int gb_spool_stdin(const struct pems_config *cfg, char *path, size_t len)
{
	int rc = gb_spool_path(cfg, "in", path, len), fd;

	if (rc)
		return rc;
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		unlink(path);
		return rc;
	}
	rc = copy_fd(STDIN_FILENO, fd);
	if (close(fd) && !rc)
		rc = -errno;
	if (rc)
		unlink(path);
	return rc;
}

int gb_cat_stdout(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = copy_fd(fd, STDOUT_FILENO);
	close(fd);
	return rc;
}
