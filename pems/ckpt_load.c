/*
 * ckpt_load.c - resuming inside the re-executed process: the manifest and
 * the state file checked against this process, the runtime's tables
 * loaded instead of starting the VPs (checkpoint.c invariant 1).
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

/* ---- resuming inside the re-executed process ---- */

struct rd {
	FILE *f;
	const char *path;
};

static void get(struct rd *r, void *p, size_t n)
{
	if (n && fread(p, 1, n, r->f) != n)
		pems_fatal("resume: %s is truncated; the checkpoint cannot be used", r->path);
}

static uint64_t get_u64(struct rd *r)
{
	uint64_t x;

	get(r, &x, sizeof(x));
	return x;
}

static void *get_alloc(struct rd *r, size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		pems_fatal("resume: out of memory");
	get(r, p, n);
	return p;
}

static void load_vp(struct rd *r, struct pems_rt *rt, struct pems_vp *vp)
{
	struct pems_vp s;

	get(r, &s, sizeof(s));
	if (s.lid != vp->lid || s.pid != vp->pid || s.base != vp->base)
		pems_fatal("resume: %s does not match this run's VPs", r->path);
	vp->state = s.state;
	vp->uc = s.uc;
	/* the saved registers point at their own fp state */
	vp->uc.uc_mcontext.fpregs = &vp->uc.__fpregs_mem;
	vp->heap = s.heap;
	vp->heap.touched = vp->heap.brk;
	vp->globals = s.globals;	/* its copy of the globals, in its heap */
	vp->sp_off = s.sp_off;
	vp->disk_heap = s.disk_heap;
	vp->disk_sp = s.disk_sp;
	vp->ended_at_end = s.ended_at_end;
	vp->nregs = vp->capregs = s.nregs;
	vp->next_reg_id = s.next_reg_id;
	vp->regs = s.nregs ? get_alloc(r, s.nregs * sizeof(*vp->regs)) : NULL;
	{
		uint64_t nb = get_u64(r);

		if (nb > (s.disk_heap + PEMS_CTX_BLOCK - 1) / PEMS_CTX_BLOCK + 1)
			pems_fatal("resume: %s: bad block table of VP %u", r->path, vp->pid);
		free(vp->blk);
		vp->blk = nb ? get_alloc(r, nb * sizeof(*vp->blk)) : NULL;
		vp->nblk = nb ? (unsigned)nb - 1 : 0;
		vp->capblk = (unsigned)nb;
		vp->disk_step = s.disk_step;
		vp->zimage = s.zimage;
	}
	vp->q_buf = s.q_buf;
	vp->q_pos = s.q_pos;
	vp->q_len = s.q_len;
	vp->q_count = s.q_count;
	vp->tagsize = s.tagsize;
	vp->tagsize_next = s.tagsize_next;
	vp->coll = s.coll;
	vp->xchg = s.xchg;
	vp->sync_count = s.sync_count;
	vp->past_end = s.past_end;
	vp->copy = vp->ckpt_copy = s.copy;
	vp->where = VP_DISK;
	(void)rt;
}

static void load_streams(struct rd *r, struct pems_rt *rt)
{
	size_t i, n = (size_t)rt->norigins * rt->vlocal;

	for (i = 0; i < n; i++) {
		uint64_t cnt = get_u64(r), j;

		for (j = 0; j < cnt; j++) {
			struct pems_chunk *c = calloc(1, sizeof(*c));
			uint64_t id;

			if (!c)
				pems_fatal("resume: out of memory");
			c->len = get_u64(r);
			id = get_u64(r);
			if (c->len > rt->chunk_size)
				pems_fatal("resume: %s: bad message chunk", r->path);
			if (id == PEMS_NONE) {
				pems_msg_buf_restore(rt, c);
				get(r, c->buf, c->len);
				c->off = PEMS_NONE;
			} else {
				if (id / PEMS_NLOGS > rt->k || !pems_ck_log_owner(rt, (unsigned)(id / PEMS_NLOGS)) ||
				    id % PEMS_NLOGS >= rt->nlogs)
					pems_fatal("resume: %s: bad message log", r->path);
				c->fd = pems_ck_log_owner(rt, (unsigned)(id / PEMS_NLOGS))->msg_fd[id % PEMS_NLOGS];
				c->off = get_u64(r);
				get(r, &c->blk, sizeof(c->blk));
				c->step = get_u64(r);
				c->writer = (unsigned)get_u64(r);
				if (c->blk.stored > c->len)
					pems_fatal("resume: %s: bad message chunk", r->path);
			}
			if (rt->in[i].tail)
				rt->in[i].tail->next = c;
			else
				rt->in[i].head = c;
			rt->in[i].tail = c;
		}
	}
}

static void load_state(struct rd *r, struct pems_rt *rt)
{
	struct pems_coll_state c;
	unsigned i;
	uint64_t n;
	size_t b;

	if (get_u64(r) != 0x31544b43534d4550ull || get_u64(r) != rt->superstep ||
	    get_u64(r) != rt->vlocal)
		pems_fatal("resume: %s does not belong to the manifest", r->path);
	rt->ended = (unsigned)get_u64(r);
	rt->post_bsp = get_u64(r);
	rt->exit_code = (int)(int64_t)get_u64(r);
	rt->h_max = get_u64(r);
	for (i = 0; i < rt->vlocal; i++)
		load_vp(r, rt, &rt->vps[i]);
	get(r, &c, sizeof(c));
	rt->coll.kind = c.kind;
	rt->coll.count = c.count;
	rt->coll.elem = c.elem;
	rt->coll.bytes = c.bytes;
	rt->coll.type = c.type;
	rt->coll.op = c.op;
	rt->coll.uop = c.uop;
	rt->coll.root = c.root;
	rt->coll.user = c.user;
	rt->coll.name = c.name;
	rt->coll.rcap = c.rcap;
	rt->coll.result = c.rcap ? get_alloc(r, c.rcap) : NULL;
	rt->nreplies = get_u64(r);
	rt->replies = get_alloc(r, rt->nreplies * sizeof(*rt->replies));
	b = get_u64(r);
	rt->reply_data = get_alloc(r, b);
	if (rt->nreplies)
		rt->reply_first = get_alloc(r, (rt->vlocal + 1) * sizeof(size_t));
	get(r, rt->xchg_in, rt->v * sizeof(*rt->xchg_in));
	get(r, rt->send_in, rt->v * sizeof(*rt->send_in));
	load_streams(r, rt);
	n = get_u64(r);
	if (n != pems_ck_nglobals)
		pems_fatal("resume: the program registered %u checkpointed globals, the checkpoint has %llu",
			   pems_ck_nglobals, (unsigned long long)n);
	for (i = 0; i < pems_ck_nglobals; i++)
		if (get_u64(r) != (uintptr_t)pems_ck_globals[i].addr || get_u64(r) != pems_ck_globals[i].len)
			pems_fatal("resume: checkpointed global %u differs in address or size", i);
		else
			get(r, pems_ck_globals[i].addr, pems_ck_globals[i].len);
	if (get_u64(r) != 0x444e45u)
		pems_fatal("resume: %s: bad end marker", r->path);
}

static int check_config(const struct pems_rt *rt, const struct pems_manifest *m)
{
	char now[200], was[200];
	unsigned i;

	snprintf(now, sizeof(now), "v=%u k=%u p=%u io=%u mu=%zu mem=%zu stack=%zu msg_mem=%zu chunk=%zu dirs=%u",
		 rt->v, rt->k, rt->nranks, (unsigned)rt->cfg.io, rt->mu, rt->cfg.mem, rt->stack,
		 rt->cfg.msg_mem, rt->chunk_size, rt->ndirs);
	snprintf(was, sizeof(was), "v=%u k=%u p=%u io=%u mu=%llu mem=%llu stack=%llu msg_mem=%llu chunk=%llu dirs=%u",
		 m->v, m->k, m->p, m->io, (unsigned long long)m->mu, (unsigned long long)m->mem,
		 (unsigned long long)m->stack, (unsigned long long)m->msg_mem,
		 (unsigned long long)m->chunk, m->ndirs);
	if (strcmp(now, was)) {
		fprintf(stderr, "pems: error: resume: the configuration differs from the checkpointed run (%s, was %s); refusing to resume\n",
			now, was);
		return -PEMS_E_CONFIG;
	}
	for (i = 0; i < rt->ndirs; i++)
		if (strcmp(rt->tmpdir[i], m->tmp[i])) {
			fprintf(stderr, "pems: error: resume: scratch dir %u is %s, was %s; refusing to resume\n",
				i, rt->tmpdir[i], m->tmp[i]);
			return -PEMS_E_CONFIG;
		}
	return 0;
}

static int check_layout(const struct pems_rt *rt, const struct pems_manifest *m,
			const void *stack_mark)
{
	static const char *const what[PEMS_MF_LAYOUT] = {
		"runtime", "VP table", "context region", "entry argument", "driver stack"
	};
	uint64_t now[PEMS_MF_LAYOUT] = { (uintptr_t)rt, (uintptr_t)rt->vps, (uintptr_t)rt->region,
					 (uintptr_t)rt->entry_arg, (uintptr_t)stack_mark };
	unsigned i;

	for (i = 0; i < PEMS_MF_LAYOUT; i++)
		if (now[i] != m->layout[i]) {
			fprintf(stderr, "pems: error: resume: the %s is at 0x%llx, was 0x%llx: the process layout differs from the checkpointed run's (resume through 'pems-run resume', with the same program, libraries and environment)\n",
				what[i], (unsigned long long)now[i],
				(unsigned long long)m->layout[i]);
			return -PEMS_E_CONFIG;
		}
	return 0;
}

static int verify_state(const char *path, const struct pems_manifest *m)
{
	FILE *f = fopen(path, "r");
	char *buf = malloc(1 << 20);
	uint32_t crc = 0;
	uint64_t n = 0;
	size_t got;

	if (!f || !buf) {
		free(buf);
		if (f)
			fclose(f);
		fprintf(stderr, "pems: error: resume: cannot read %s: %s\n", path, strerror(errno));
		return -EIO;
	}
	while ((got = fread(buf, 1, 1 << 20, f)) > 0) {
		crc = pems_crc32c(crc, buf, got);
		n += got;
	}
	fclose(f);
	free(buf);
	if (n != m->state_size || crc != m->state_crc) {
		fprintf(stderr, "pems: error: resume: %s is corrupt (%llu bytes, CRC %08x; the manifest says %llu bytes, CRC %08x); the checkpoint cannot be used\n",
			path, (unsigned long long)n, crc, (unsigned long long)m->state_size,
			m->state_crc);
		return -EBADMSG;
	}
	return 0;
}

int pems_ckpt_restore(struct pems_rt *rt, const void *stack_mark)
{
	struct pems_manifest m;
	char path[PATH_MAX + 80];
	struct rd r;
	unsigned i;
	int rc;

	if (!rt->ckpt || !pems_ck.resume)
		return 0;
	memset(&m, 0, sizeof(m));
	rc = pems_ck_load_manifest(pems_ck.dir, rt->rank, rt->nranks, &m);
	if (rc)
		goto out;
	if (m.run != 0 || !m.superstep) {
		fprintf(stderr, "pems: error: resume: %s/manifest: unsupported checkpoint\n", pems_ck.dir);
		rc = -PEMS_E_CONFIG;
		goto out;
	}
	rc = check_config(rt, &m);
	if (!rc)
		rc = check_layout(rt, &m, stack_mark);
	if (!rc)
		rc = pems_ck_check_inputs(&m);
	if (!rc)
		rc = pems_ck_check_maps(&m);
	snprintf(path, sizeof(path), "%s/%s", pems_ck.dir, m.state);
	if (!rc)
		rc = verify_state(path, &m);
	for (i = 0; !rc && i < m.nfiles; i++)
		rc = pems_ck_reopen_file(&m.files[i]);
	if (rc)
		goto out;
	r.path = path;
	r.f = fopen(path, "r");
	if (!r.f) {
		rc = -errno;
		goto out;
	}
	rt->superstep = m.superstep;
	rt->supersteps = m.supersteps;
	rt->wlog = m.wlog;
	rt->rlog = m.rlog;
	rt->plog = (int)m.rlog;
	load_state(&r, rt);
	fclose(r.f);
	for (i = 0; i < m.ncleanup; i++)
		pems_remove_on_abort_once(m.cleanup[i]);
	snprintf(pems_ck.state, sizeof(pems_ck.state), "%s", m.state);
	if (rt->nranks > 1)
		snprintf(pems_ck.part, sizeof(pems_ck.part), "manifest.%llu.%u",
			 (unsigned long long)m.superstep, rt->rank);
	pems_ck.committed = true;
	pems_ck.last_step = rt->superstep;
	if (!rt->cfg.quiet && rt->rank == 0)
		fprintf(stderr, "pems: resuming at superstep %llu from %s\n",
			(unsigned long long)rt->superstep, pems_ck.dir);
out:
	pems_manifest_free(&m);
	if (rt->nranks > 1) {
		/* every rank resumes, or none (invariant 6) */
		uint64_t bad = rc != 0;

		pems_tp_sum_u64(rt, &bad, 1);
		if (bad && !rc) {
			if (!rt->cfg.quiet)
				fprintf(stderr, "pems: error: resume: rank %u stops: another rank refused to resume (its message says why)\n",
					rt->rank);
			rc = -PEMS_E_CONFIG;
		}
	}
	return rc;
}
