/*
 * outpath.c - where a run reads and writes: stdin spooled to scratch,
 * and the output path resolved and checked before any work starts (the
 * sort and the CLI's other commands share these rules).
 *
 * Messages go through the caller's @say ("<cmd>: <what>: <why>"); the
 * functions return 0 or -errno.
 *
 * Output cases (never is a device node, symlink or FIFO replaced by a
 * regular file):
 *   regular file or new name  written under a temporary name beside it
 *                             and renamed (OUT may be the input)
 *   symlink                   written through: the target is the file
 *                             replaced (a dangling link: its target is
 *                             created)
 *   '-', FIFO, char device,   the sort writes a scratch file, then it
 *   socket                    is copied to OUT in order and removed
 *   directory                 refused
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pems_algorithms.h"

#define COPY_BLOCK (1u << 20)

/* The first scratch directory (--tmp, PEMS_TMP, $TMPDIR or "."). */
static const char *scratch_dir(const struct pems_config *cfg)
{
	const char *t = getenv("TMPDIR");

	if (cfg->ntmp && !strchr(cfg->tmp[0], '%'))
		return cfg->tmp[0];
	return t && *t ? t : ".";
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Copy @from to @to until EOF; returns 0 or -errno (*werr: a write). */
static int copy_fd(int from, int to, bool *werr)
{
	uint8_t *buf = malloc(COPY_BLOCK);
	ssize_t n;
	int rc = 0;

	*werr = false;
	if (!buf)
		return -ENOMEM;
	for (;;) {
		n = read(from, buf, COPY_BLOCK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : 0;
			break;
		}
		rc = write_all(to, buf, (size_t)n);
		if (rc) {
			*werr = true;
			break;
		}
	}
	free(buf);
	return rc;
}

int pems_spool_stdin(pems_say_fn say, const struct pems_config *cfg, char *path, size_t len)
{
	const char *dir = scratch_dir(cfg);
	int fd, rc;
	bool werr;

	snprintf(path, len, "%s/pems-sort-stdin.%d", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		say("sort: cannot spool stdin to scratch dir '%s': %s (choose another with --tmp)",
		    dir, strerror(-rc));
		return rc;
	}
	pems_remove_on_abort(path);
	rc = copy_fd(0, fd, &werr);
	if (!rc && fsync(fd) && errno != EINVAL)
		rc = -errno;
	close(fd);
	if (rc) {
		unlink(path);
		if (werr)
			say("sort: spooling stdin to '%s': %s (choose a scratch dir with room with --tmp)",
			    path, strerror(-rc));
		else
			say("sort: reading stdin: %s", strerror(-rc));
		return rc;
	}
	return 0;
}

/* The target of the dangling symlink @link as a path. */
static int link_target(const char *link, char *out, size_t len)
{
	char t[PATH_MAX], d[PATH_MAX];
	ssize_t n = readlink(link, t, sizeof(t) - 1);

	if (n < 0)
		return -errno;
	t[n] = 0;
	snprintf(d, sizeof(d), "%s", link);
	if ((size_t)snprintf(out, len, "%s%s%s", t[0] == '/' ? "" : dirname(d),
			     t[0] == '/' ? "" : "/", t) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* A regular output at @path: its directory must take the temporary. */
static int regular_out(pems_say_fn say, struct pems_outpath *o, const char *path)
{
	snprintf(o->path, sizeof(o->path), "%s", path);
	return pems_out_dir_check(say, "sort", o->path);
}

int pems_out_prepare(pems_say_fn say, struct pems_outpath *o, const char *arg,
		     const struct pems_config *cfg)
{
	char real[PATH_MAX];
	struct stat st, lst;
	int rc;

	memset(o, 0, sizeof(*o));
	o->arg = arg;
	if (strcmp(arg, "-") && !stat(arg, &st) && S_ISDIR(st.st_mode)) {
		say("sort: output '%s' is a directory; give a file name", arg);
		return -EISDIR;
	}
	if (!strcmp(arg, "-") || (!stat(arg, &st) && !S_ISREG(st.st_mode))) {
		if (strcmp(arg, "-") && access(arg, W_OK)) {
			rc = -errno;
			say("sort: cannot write output '%s': %s", arg, strerror(-rc));
			return rc;
		}
		o->stream = true;
		snprintf(o->path, sizeof(o->path), "%s/pems-sort-out.%d", scratch_dir(cfg),
			 (int)getpid());
		return pems_out_dir_check(say, "sort", o->path);
	}
	if (!stat(arg, &st)) {	/* a regular file, perhaps through links */
		if (access(arg, W_OK)) {
			rc = -errno;
			say("sort: cannot write output '%s': %s", arg, strerror(-rc));
			return rc;
		}
		if (!realpath(arg, real)) {
			rc = -errno;
			say("sort: output '%s': %s", arg, strerror(-rc));
			return rc;
		}
		return regular_out(say, o, real);
	}
	if (!lstat(arg, &lst) && S_ISLNK(lst.st_mode)) {
		if (link_target(arg, real, sizeof(real))) {
			rc = -errno;
			say("sort: output '%s': %s", arg, strerror(-rc));
			return rc;
		}
		return regular_out(say, o, real);
	}
	return regular_out(say, o, arg);
}

int pems_out_finish(pems_say_fn say, struct pems_outpath *o, bool ok)
{
	int in, out, rc = 0;
	bool werr;

	if (!o->stream)
		return 0;
	if (ok) {
		in = open(o->path, O_RDONLY | O_CLOEXEC);
		out = strcmp(o->arg, "-") ? open(o->arg, O_WRONLY | O_CLOEXEC) : 1;
		if (in < 0 || out < 0) {
			rc = -errno;
			werr = out < 0;
		} else {
			rc = copy_fd(in, out, &werr);
		}
		if (in >= 0)
			close(in);
		if (out > 2)
			close(out);
		if (rc)
			say("sort: %s '%s': %s", werr ? "writing" : "reading",
			    werr ? o->arg : o->path, strerror(-rc));
	}
	unlink(o->path);
	return rc;
}

int pems_out_writable(pems_say_fn say, const char *cmd, const char *what, const char *path)
{
	struct stat st;

	if (!stat(path, &st)) {
		if (S_ISDIR(st.st_mode)) {
			say("%s: %s '%s' is a directory", cmd, what, path);
			return -EISDIR;
		}
		if (access(path, W_OK)) {
			int rc = -errno;

			say("%s: cannot write %s '%s': %s", cmd, what, path, strerror(-rc));
			return rc;
		}
		return 0;
	}
	return pems_out_dir_check(say, cmd, path);
}

int pems_out_dir_check(pems_say_fn say, const char *cmd, const char *path)
{
	char *copy = strdup(path);
	const char *dir;
	int rc = 0;

	if (!copy) {
		say("%s: %s", cmd, strerror(ENOMEM));
		return -ENOMEM;
	}
	dir = dirname(copy);
	if (access(dir, W_OK | X_OK)) {
		rc = -errno;
		if (rc == -ENOENT || rc == -ENOTDIR)
			say("%s: output directory '%s' does not exist", cmd, dir);
		else
			say("%s: output directory '%s' is not writable: %s", cmd, dir, strerror(-rc));
	}
	free(copy);
	return rc;
}
