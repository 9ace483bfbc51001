/*
 * ckpt_save.c - writing a checkpoint at a barrier: contexts written back,
 * scratch fsynced, the state file and the manifest committed by rename
 * (checkpoint.c invariants 2, 3 and 6).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt.h"
#include "ctx.h"
#include "msg.h"
#include "tp.h"
#include "ckpt.h"
#include "sched_parts.h"
#include "spill.h"
#include "checkpoint.h"
#include "crc32c.h"
#include "ckpt_int.h"

/* ---- writing a checkpoint ---- */

struct wr {
	FILE *f;
	uint32_t crc;
	uint64_t n;
	bool err;
};

static void put(struct wr *w, const void *p, size_t n)
{
	if (!n)
		return;
	if (fwrite(p, 1, n, w->f) != n)
		w->err = true;
	w->crc = pems_crc32c(w->crc, p, n);
	w->n += n;
}

static void put_u64(struct wr *w, uint64_t x)
{
	put(w, &x, sizeof(x));
}

/* Write back every resident context (kept resident) and wait. */
static void write_back(struct pems_rt *rt)
{
	unsigned i;

	if (!pems_ck.w.io) {
		pems_ck.w.rt = rt;
		pems_ck.w.id = rt->k;
		if (pems_io_create(&pems_ck.w.io, (enum pems_io_backend)rt->cfg.io, rt->cfg.qdepth) &&
		    pems_io_create(&pems_ck.w.io, PEMS_IO_SYNC, rt->cfg.qdepth))
			pems_fatal("checkpoint: cannot create an I/O engine");
	}
	for (i = 0; i < rt->vlocal; i++) {
		struct pems_vp *vp = &rt->vps[i];

		if (vp->where != VP_RESIDENT)
			continue;
		if (vp->state == VP_ENDED && !(vp->lid == 0 && rt->post_bsp))
			continue;
		vp->keep = true;
		pems_ctx_swap_out(&pems_ck.w, vp);
		while (pems_io_inflight(pems_ck.w.io))
			pems_worker_reap(&pems_ck.w, 1);
		if (vp->where != VP_RESIDENT)
			pems_fatal("checkpoint: write-back of VP %u did not complete", vp->pid);
	}
	pems_ck.w.writebacks = 0;
}

/* The worker @i: 0..k-1, then k the comm thread's (several ranks). */
struct pems_worker *pems_ck_log_owner(const struct pems_rt *rt, unsigned i)
{
	return i < rt->k ? &rt->workers[i] : i == rt->k ? rt->tpw : NULL;
}

static void sync_fd(int fd, const char *what)
{
	if (fd > 0 && fdatasync(fd) && errno != EINVAL && errno != EROFS)
		pems_fatal("checkpoint: fsync of %s: %s", what, strerror(errno));
}

static void sync_scratch(struct pems_rt *rt)
{
	unsigned i, l;

	for (i = 0; i < rt->ndirs; i++) {
		sync_fd(rt->ctx_fd[0][i], "a context file");
		sync_fd(rt->ctx_fd[1][i], "a context file");
	}
	for (i = 0; pems_ck_log_owner(rt, i); i++)
		for (l = 0; l < rt->nlogs; l++)
			sync_fd(pems_ck_log_owner(rt, i)->msg_fd[l], "a message log");
	for (i = 0; i < MAXF; i++)
		if (pems_ck_notes[i].used && (pems_ck_notes[i].flags & O_ACCMODE) != O_RDONLY)
			sync_fd(pems_ck_notes[i].bfd, pems_ck_notes[i].path);
}

/* Log id of chunk fd: worker * PEMS_NLOGS + log. */
static int64_t log_id(const struct pems_rt *rt, int fd)
{
	struct pems_worker *w;
	unsigned i, l;

	for (i = 0; (w = pems_ck_log_owner(rt, i)); i++)
		for (l = 0; l < rt->nlogs; l++)
			if (w->msg_fd[l] == fd)
				return (int64_t)i * PEMS_NLOGS + l;
	pems_fatal("checkpoint: a message chunk is in no log (internal error)");
}

static void save_streams(struct wr *w, struct pems_rt *rt)
{
	size_t i, n = (size_t)rt->norigins * rt->vlocal;

	for (i = 0; i < n; i++) {
		struct pems_chunk *c;
		uint64_t cnt = 0;

		for (c = rt->in[i].head; c; c = c->next)
			cnt++;
		put_u64(w, cnt);
		for (c = rt->in[i].head; c; c = c->next) {
			put_u64(w, c->len);
			if (c->buf) {	/* a partial chunk, in memory only */
				put_u64(w, PEMS_NONE);
				put(w, c->buf, c->len);
			} else {
				put_u64(w, (uint64_t)log_id(rt, c->fd));
				put_u64(w, c->off);
				put(w, &c->blk, sizeof(c->blk));	/* as stored (spill.h) */
				put_u64(w, c->step);
				put_u64(w, c->writer);
			}
		}
	}
}

static size_t reply_bytes(const struct pems_rt *rt)
{
	size_t i, b = 0;

	for (i = 0; i < rt->nreplies; i++)
		if (rt->replies[i].seq + rt->replies[i].nbytes > b)
			b = rt->replies[i].seq + rt->replies[i].nbytes;
	return b;
}

static void save_state(struct wr *w, struct pems_rt *rt)
{
	unsigned i;

	put_u64(w, 0x31544b43534d4550ull);	/* "PEMSCKT1" */
	put_u64(w, rt->superstep);
	put_u64(w, rt->vlocal);
	put_u64(w, rt->ended);
	put_u64(w, rt->post_bsp);
	put_u64(w, (uint64_t)(int64_t)rt->exit_code);
	put_u64(w, rt->h_max);
	for (i = 0; i < rt->vlocal; i++) {
		struct pems_vp *vp = &rt->vps[i];

		put(w, vp, sizeof(*vp));
		put(w, vp->regs, vp->nregs * sizeof(*vp->regs));
		/* the descriptors of its blocks on disk (context.c invariant 5) */
		put_u64(w, vp->blk ? vp->nblk + 1 : 0);
		if (vp->blk)
			put(w, vp->blk, (vp->nblk + 1) * sizeof(*vp->blk));
	}
	put(w, &rt->coll, sizeof(rt->coll));
	put(w, rt->coll.result, rt->coll.rcap);
	put_u64(w, rt->nreplies);
	put(w, rt->replies, rt->nreplies * sizeof(*rt->replies));
	put_u64(w, reply_bytes(rt));
	put(w, rt->reply_data, reply_bytes(rt));
	if (rt->nreplies)
		put(w, rt->reply_first, (rt->vlocal + 1) * sizeof(size_t));
	put(w, rt->xchg_in, rt->v * sizeof(*rt->xchg_in));
	put(w, rt->send_in, rt->v * sizeof(*rt->send_in));
	save_streams(w, rt);
	put_u64(w, pems_ck_nglobals);
	for (i = 0; i < pems_ck_nglobals; i++) {
		put_u64(w, (uintptr_t)pems_ck_globals[i].addr);
		put_u64(w, pems_ck_globals[i].len);
		put(w, pems_ck_globals[i].addr, pems_ck_globals[i].len);
	}
	put_u64(w, 0x444e45u);	/* "END" */
}

void pems_ck_fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* Write @name in pems_ck.dir atomically: tmp name, fsync, rename (invariant 3). */
static FILE *open_tmp(const char *name, char *tmp, size_t len)
{
	FILE *f;
	int fd;

	snprintf(tmp, len, "%s/%s.tmp", pems_ck.dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	/* 0600 also for a stale temporary that a kill left behind */
	f = fd < 0 || fchmod(fd, 0600) ? NULL : fdopen(fd, "w");
	if (!f && fd >= 0)
		close(fd);
	if (!f)
		pems_fatal("checkpoint: cannot create %s: %s; free space or pass another --checkpoint-dir",
			   tmp, strerror(errno));
	return f;
}

static void close_commit(FILE *f, const char *tmp, const char *name, bool err)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", pems_ck.dir, name);
	if (err || fflush(f) || fsync(fileno(f))) {
		fclose(f);
		unlink(tmp);
		pems_fatal("checkpoint: writing %s failed: %s; free space or pass another --checkpoint-dir",
			   path, strerror(errno ? errno : EIO));
	}
	fclose(f);
	if (rename(tmp, path))
		pems_fatal("checkpoint: rename to %s: %s", path, strerror(errno));
}

static void put_maps(FILE *f)
{
	FILE *m = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 128], last[PATH_MAX] = "";

	if (!m)
		return;
	while (fgets(line, sizeof(line), m)) {
		char *p = strchr(line, '/'), *nl;
		struct stat st;

		if (!p || !strstr(line, " r-xp ") || !(nl = strchr(p, '\n')))
			continue;
		*nl = 0;
		if (!strcmp(p, last) || stat(p, &st))
			continue;
		snprintf(last, sizeof(last), "%s", p);
		fprintf(f, "map %llu %lld ", (unsigned long long)st.st_size,
			(long long)pems_ck_mtime_ns(&st));
		pems_mf_put_esc(f, p);
		fputc('\n', f);
	}
	fclose(m);
}

/* A /proc file (its size is not known up front). */
static int read_proc(const char *path, char **out, size_t *len)
{
	FILE *f = fopen(path, "r");
	size_t cap = 1 << 16, n = 0, got;
	char *buf = malloc(cap), *nb;

	if (!f || !buf) {
		free(buf);
		if (f)
			fclose(f);
		return -errno;
	}
	while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (n + 1 == cap) {
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

/* /proc/self/cmdline as NUL-separated strings, one "arg" line each */
static void put_args(FILE *f)
{
	char *buf = NULL;
	size_t len = 0, i;

	if (read_proc("/proc/self/cmdline", &buf, &len) || !len)
		pems_fatal("checkpoint: cannot read /proc/self/cmdline");
	for (i = 0; i < len; i += strlen(buf + i) + 1) {
		fputs("arg ", f);
		pems_mf_put_esc(f, buf + i);
		fputc('\n', f);
	}
	free(buf);
}

/* Of the initial environment only what configures the run (recorded_var)
 * is written, never the rest (tokens, passwords); its count and bytes
 * are, since they place the initial stack (invariant 1). */
static void put_env(FILE *f)
{
	char *buf = NULL;
	size_t len = 0, i, count = 0;

	if (read_proc("/proc/self/environ", &buf, &len) || !len)
		pems_fatal("checkpoint: cannot read /proc/self/environ");
	for (i = 0; i < len; i += strlen(buf + i) + 1, count++) {
		const char *s = buf + i;

		if (!strcmp(s, MARK "=" MARK_RESUME))
			s = MARK "=" MARK_START;
		if (!pems_ck_recorded_var(s))
			continue;
		fputs("env ", f);
		pems_mf_put_esc(f, s);
		fputc('\n', f);
	}
	fprintf(f, "envsize %zu %zu %d\n", count, len, (int)pems_tp_launched());
	free(buf);
}

static void put_files(FILE *f)
{
	unsigned i;

	for (i = 0; i < MAXF; i++) {
		struct note *n = &pems_ck_notes[i];
		struct stat st;
		uint32_t h = 0, t = 0;

		if (!n->used)
			continue;
		if (fstat(n->bfd, &st))
			pems_fatal("checkpoint: %s: %s", n->path, strerror(errno));
		if ((n->flags & O_ACCMODE) == O_RDONLY && pems_ck_ident_crcs(n->bfd, (uint64_t)st.st_size, &h, &t))
			pems_fatal("checkpoint: reading %s failed", n->path);
		fprintf(f, "file %u %d %d %d %d %llu %lld %08x %08x ", i, n->flags, n->dfd, n->bfd,
			n->direct, (unsigned long long)st.st_size, (long long)pems_ck_mtime_ns(&st), h, t);
		pems_mf_put_esc(f, n->path);
		fputc('\n', f);
	}
}

/* The manifest text, its CRC line included; @len gets its length. */
static char *manifest_text(struct pems_rt *rt, const void *stack_mark, const char *state,
			   const struct wr *sw, size_t *lenp)
{
	char exe[PATH_MAX], cwd[PATH_MAX], *text;
	const char **paths;
	unsigned i, n;
	size_t len;
	FILE *f;

	if (!realpath("/proc/self/exe", exe) || !getcwd(cwd, sizeof(cwd)))
		pems_fatal("checkpoint: cannot name the program or its directory: %s", strerror(errno));
	f = open_memstream(&text, &len);
	if (!f)
		pems_fatal("checkpoint: out of memory");
	fprintf(f, "pems-checkpoint 1\nsuperstep %llu %llu\nrun 0\nexe ",
		(unsigned long long)rt->superstep, (unsigned long long)rt->supersteps);
	pems_mf_put_esc(f, exe);
	fputs("\ncwd ", f);
	pems_mf_put_esc(f, cwd);
	fputs("\ndir ", f);
	pems_mf_put_esc(f, pems_ck.dir);
	fputc('\n', f);
	put_args(f);
	put_env(f);
	fprintf(f, "config %u %u %u %u %u %zu %zu %zu %zu %zu %u\n", rt->v, rt->k, rt->nranks,
		(unsigned)rt->cfg.io, rt->ndirs, rt->mu, rt->cfg.mem, rt->stack, rt->cfg.msg_mem,
		rt->chunk_size, rt->wlog);
	for (i = 0; i < rt->ndirs; i++) {
		fprintf(f, "tmp %u ", i);
		pems_mf_put_esc(f, rt->tmpdir[i]);
		fputc('\n', f);
	}
	fprintf(f, "layout %llx %llx %llx %llx %llx\n", (unsigned long long)(uintptr_t)rt,
		(unsigned long long)(uintptr_t)rt->vps, (unsigned long long)(uintptr_t)rt->region,
		(unsigned long long)(uintptr_t)rt->entry_arg,
		(unsigned long long)(uintptr_t)stack_mark);
	put_files(f);
	put_maps(f);
	n = pems_cleanup_list(&paths);
	for (i = 0; i < n; i++) {
		fputs("cleanup ", f);
		pems_mf_put_esc(f, paths[i]);
		fputc('\n', f);
	}
	free(paths);
	fprintf(f, "state %s %llu %08x %u\n", state, (unsigned long long)sw->n, sw->crc, rt->rlog);
	if (fflush(f))
		pems_fatal("checkpoint: out of memory");
	fprintf(f, "crc32c %08x\n", pems_crc32c(0, text, len));
	if (fclose(f))
		pems_fatal("checkpoint: out of memory");
	*lenp = len;
	return text;
}

/* Write @name in pems_ck.dir atomically (invariant 3). */
static void write_text(const char *name, const char *text, size_t len)
{
	char tmp[PATH_MAX + 64];
	FILE *f = open_tmp(name, tmp, sizeof(tmp));

	fwrite(text, 1, len, f);
	close_commit(f, tmp, name, ferror(f));
	pems_ck_fsync_dir(pems_ck.dir);
}

/* All ranks meet (an allreduce); only the driver, at a barrier. */
void pems_ck_meet(struct pems_rt *rt)
{
	uint64_t one = 1;

	pems_tp_sum_u64(rt, &one, 1);
}

void pems_ck_remove_state(const char *name)
{
	char p[PATH_MAX + 300];

	if (!name[0])
		return;
	snprintf(p, sizeof(p), "%s/%s", pems_ck.dir, name);
	unlink(p);
}

static void checkpoint(struct pems_rt *rt, const void *stack_mark)
{
	char name[64], part[64], tmp[PATH_MAX + 64], *text;
	const char *st = getenv("PEMS_STATS");
	struct wr w = { 0 };
	double t0 = pems_now();
	unsigned i;
	size_t len;

	write_back(rt);
	sync_scratch(rt);
	if (rt->nranks > 1)
		snprintf(name, sizeof(name), "state.%llu.%u", (unsigned long long)rt->superstep,
			 rt->rank);
	else
		snprintf(name, sizeof(name), "state.%llu", (unsigned long long)rt->superstep);
	w.f = open_tmp(name, tmp, sizeof(tmp));
	save_state(&w, rt);
	close_commit(w.f, tmp, name, w.err);
	text = manifest_text(rt, stack_mark, name, &w, &len);
	if (rt->nranks == 1) {
		write_text("manifest", text, len);
	} else {
		/* invariant 6: every part durable, then rank 0 commits */
		snprintf(part, sizeof(part), "manifest.%llu.%u",
			 (unsigned long long)rt->superstep, rt->rank);
		write_text(part, text, len);
		pems_ck.committed = true;	/* from here a signal keeps the scratch */
		pems_ck_meet(rt);
		if (rt->rank == 0)
			write_text("manifest", text, len);
		pems_ck_meet(rt);
		if (strcmp(pems_ck.part, part))
			pems_ck_remove_state(pems_ck.part);
		snprintf(pems_ck.part, sizeof(pems_ck.part), "%s", part);
	}
	free(text);
	/* committed: the new copies and log are the protected ones (2) */
	for (i = 0; i < rt->vlocal; i++)
		rt->vps[i].ckpt_copy = rt->vps[i].copy;
	rt->plog = (int)rt->rlog;
	if (strcmp(pems_ck.state, name))
		pems_ck_remove_state(pems_ck.state);
	snprintf(pems_ck.state, sizeof(pems_ck.state), "%s", name);
	pems_ck.committed = true;
	pems_ck.last = pems_now();
	pems_ck.last_step = rt->superstep;
	if (st && atoi(st) >= 2)
		fprintf(stderr, "pems: checkpoint at superstep %llu: %.3fs, state %llu bytes\n",
			(unsigned long long)rt->superstep, pems_ck.last - t0, (unsigned long long)w.n);
}

void pems_ckpt_barrier(struct pems_rt *rt, const void *stack_mark)
{
	bool due;

	if (!rt->ckpt)
		return;
	if (pems_ck.every) {
		due = rt->superstep - pems_ck.last_step >= pems_ck.every;
	} else {
		uint64_t n = pems_now() - pems_ck.last >= pems_ck.secs;

		/* every rank checkpoints at the same barrier: when one's
		 * clock says so (an allreduce; invariant 6) */
		if (rt->nranks > 1)
			pems_tp_sum_u64(rt, &n, 1);
		due = n > 0;
	}
	if (due)
		checkpoint(rt, stack_mark);
}
