/*
 * scratch.c - the scratch directories of a run: checked for space and
 * write access, "%r" expanded to the rank, and the scratch files opened
 * (unlinked at once unless a checkpoint may need them).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "rt.h"
#include "ckpt.h"
#include "sched_parts.h"

int pems_scratch_open(struct pems_rt *rt, unsigned dir, const char *name,
		      int *fd_out)
{
	char path[4096];
	bool direct, keep;
	int fd, flags;

	keep = pems_ckpt_scratch_path(rt, rt->tmpdir[dir], name, path, sizeof(path), &flags);
	fd = pems_io_open(path, flags, 0600, &direct);
	if (fd < 0) {
		fprintf(stderr, "pems: error: cannot create scratch file %s: %s; check --tmp / PEMS_TMP\n",
			path, strerror(-fd));
		return fd;
	}
	/* scratch vanishes with the process, even on a crash (unless a
	 * checkpoint may need it: checkpoint.c) */
	if (!keep)
		unlink(path);
	*fd_out = fd;
	return 0;
}

static char *expand_rank(const char *dir, unsigned rank)
{
	char buf[4096], *o = buf;
	const char *s;

	for (s = dir; *s && o < buf + sizeof(buf) - 16; s++) {
		if (s[0] == '%' && s[1] == 'r') {
			o += sprintf(o, "%u", rank);
			s++;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
	return strdup(buf);
}

int pems_scratch_setup(struct pems_rt *rt)
{
	const char *def = getenv("TMPDIR");
	unsigned i;

	if (!rt->cfg.ntmp) {
		rt->cfg.tmp[0] = def && *def ? def : "pems-tmp";
		rt->cfg.ntmp = 1;
		if (!(def && *def))
			mkdir("pems-tmp", 0700);
	}
	rt->ndirs = rt->cfg.ntmp;
	for (i = 0; i < rt->ndirs; i++) {
		struct statvfs sv;
		struct stat st;
		char *d = expand_rank(rt->cfg.tmp[i], rt->rank);

		rt->tmpdir[i] = d;
		int sr = stat(d, &st);

		if (sr || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "pems: error: scratch dir %s: %s; create it or pass another --tmp\n",
				d, sr ? strerror(errno) : "not a directory");
			return -PEMS_E_SCRATCH;
		}
		if (access(d, W_OK)) {
			fprintf(stderr, "pems: error: scratch dir %s: not writable; pass another --tmp\n", d);
			return -PEMS_E_SCRATCH;
		}
		if (!statvfs(d, &sv) && (uint64_t)sv.f_bavail * sv.f_frsize < PEMS_MIN_SCRATCH) {
			fprintf(stderr, "pems: error: scratch dir %s: only %llu MiB free, pems needs at least %u MiB; free space or pass another --tmp\n",
				d, (unsigned long long)((uint64_t)sv.f_bavail * sv.f_frsize >> 20),
				PEMS_MIN_SCRATCH >> 20);
			return -PEMS_E_SCRATCH;
		}
		if (pems_scratch_open(rt, i, "ctx", &rt->ctx_fd[0][i]))
			return -PEMS_E_SCRATCH;
		if (rt->ckpt && pems_scratch_open(rt, i, "ctx.1", &rt->ctx_fd[1][i]))
			return -PEMS_E_SCRATCH;
	}
	return 0;
}
