/*
 * sort_io.c - where `pems-run sort` reads and writes: stdin spooled to
 * scratch, and the output path resolved before any work starts.
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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "sort_io.h"

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

int sort_spool_stdin(const struct pems_config *cfg, char *path, size_t len)
{
	const char *dir = scratch_dir(cfg);
	int fd, rc;
	bool werr;

	snprintf(path, len, "%s/pems-sort-stdin.%d", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		cli_error("sort: cannot spool stdin to scratch dir '%s': %s (choose another with --tmp)",
			  dir, strerror(errno));
		return CLI_EXIT_FAIL;
	}
	pems_remove_on_abort(path);
	rc = copy_fd(0, fd, &werr);
	if (!rc && fsync(fd) && errno != EINVAL)
		rc = -errno;
	close(fd);
	if (rc) {
		unlink(path);
		if (werr)
			cli_error("sort: spooling stdin to '%s': %s (choose a scratch dir with room with --tmp)",
				  path, strerror(-rc));
		else
			cli_error("sort: reading stdin: %s", strerror(-rc));
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
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
static int regular_out(struct sort_out *o, const char *path)
{
	snprintf(o->path, sizeof(o->path), "%s", path);
	if (cli_check_out_dir("sort", o->path))
		return CLI_EXIT_FAIL;
	return CLI_EXIT_OK;
}

int sort_out_prepare(struct sort_out *o, const char *arg, const struct pems_config *cfg)
{
	char real[PATH_MAX];
	struct stat st, lst;

	memset(o, 0, sizeof(*o));
	o->arg = arg;
	if (strcmp(arg, "-") && !stat(arg, &st) && S_ISDIR(st.st_mode))
		return cli_usage("sort: output '%s' is a directory; give a file name", arg);
	if (!strcmp(arg, "-") || (!stat(arg, &st) && !S_ISREG(st.st_mode))) {
		if (strcmp(arg, "-") && access(arg, W_OK)) {
			cli_error("sort: cannot write output '%s': %s", arg, strerror(errno));
			return CLI_EXIT_FAIL;
		}
		o->stream = true;
		snprintf(o->path, sizeof(o->path), "%s/pems-sort-out.%d", scratch_dir(cfg),
			 (int)getpid());
		if (cli_check_out_dir("sort", o->path))
			return CLI_EXIT_FAIL;
		return CLI_EXIT_OK;
	}
	if (!stat(arg, &st)) {	/* a regular file, perhaps through links */
		if (access(arg, W_OK)) {
			cli_error("sort: cannot write output '%s': %s", arg, strerror(errno));
			return CLI_EXIT_FAIL;
		}
		if (!realpath(arg, real)) {
			cli_error("sort: output '%s': %s", arg, strerror(errno));
			return CLI_EXIT_FAIL;
		}
		return regular_out(o, real);
	}
	if (!lstat(arg, &lst) && S_ISLNK(lst.st_mode)) {
		if (link_target(arg, real, sizeof(real))) {
			cli_error("sort: output '%s': %s", arg, strerror(errno));
			return CLI_EXIT_FAIL;
		}
		return regular_out(o, real);
	}
	return regular_out(o, arg);
}

int sort_out_finish(struct sort_out *o, int ok)
{
	int in, out, rc = 0;
	bool werr;

	if (!o->stream)
		return CLI_EXIT_OK;
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
			cli_error("sort: %s '%s': %s", werr ? "writing" : "reading",
				  werr ? o->arg : o->path, strerror(-rc));
	}
	unlink(o->path);
	return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

int sort_check_writable(const char *cmd, const char *what, const char *path)
{
	struct stat st;

	if (!stat(path, &st)) {
		if (S_ISDIR(st.st_mode)) {
			cli_error("%s: %s '%s' is a directory", cmd, what, path);
			return CLI_EXIT_FAIL;
		}
		if (access(path, W_OK)) {
			cli_error("%s: cannot write %s '%s': %s", cmd, what, path, strerror(errno));
			return CLI_EXIT_FAIL;
		}
		return CLI_EXIT_OK;
	}
	return cli_check_out_dir(cmd, path) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
