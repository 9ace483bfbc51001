/*
 * context.c - VP contexts at stable addresses, and their swapping.
 *
 * Layout of the rank's context region (one mmap, MAP_NORESERVE):
 *
 *   region + lid*mu:  [ heap -> ........ | guard | <- stack ]
 *                     0                  limit   mu-stack   mu
 *
 * Invariants:
 *  (1) VP lid always owns [region + lid*mu, region + (lid+1)*mu), so its
 *      pointers (heap, stack, registered areas) survive swaps;
 *  (2) a VP on disk has exactly two extents in its context file at
 *      (lid / ndirs) * mu: the heap [0, round_up(brk)) and the live stack
 *      [sp_off, mu); nothing else of mu is ever written or read.  With
 *      checkpoints there are two copies of each file: a write-back goes
 *      to the copy the last checkpoint does not use (vp->copy);
 *  (3) pages of a VP not resident are released (MADV_DONTNEED): RSS is
 *      bounded by the contexts held, never by v*mu;
 *  (4) the context budget is two pools.  Each worker owns one run slot
 *      of mu bytes (k * mu always fits: config.c) for the VP it computes,
 *      so computing never waits for another worker.  Every other resident
 *      context -- prefetched, cached between supersteps, being written
 *      back -- holds what it really uses in rt->resident, which never
 *      exceeds rt->rest_budget = ctx_budget - k * mu; without room there
 *      a prefetch is skipped and a write-back is waited for in the run
 *      slot.  Finished VPs stay cached only within rt->cache_limit,
 *      which message chunks kept in memory share (msg.c invariant 7).
 *  (5) every extent written is checked when read back (spill.c): the heap
 *      as blocks of PEMS_CTX_BLOCK bytes at their raw offsets, the stack
 *      as one block, each with a CRC-32C kept in vp->blk.  With
 *      compression on for contexts (vp->zimage) each heap block is also
 *      written on its own, compressed when that pays, through the
 *      worker's PEMS_ZSTAGES stage buffers: a block's completion packs or
 *      unpacks it and starts the next one (stage_pump), so a context
 *      still moves asynchronously, compressed by the worker that owns it.
 *
 * States (vp->where):   DISK --swap_in--> LOADING --read done--> RESIDENT
 *                       RESIDENT --swap_out--> WRITING --write done--> DISK
 *                       (WRITING with vp->keep set ends in RESIDENT)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rt.h"
#include "config.h"
#include "ctx.h"
#include "tp.h"
#include "spill.h"
#include "ckpt.h"

static size_t page_up(size_t x) { return (x + PEMS_PAGE - 1) & ~(size_t)(PEMS_PAGE - 1); }

static size_t heap_limit(const struct pems_rt *rt)
{
	return rt->mu - rt->stack - PEMS_PAGE;
}

static uint64_t ctx_file_off(const struct pems_rt *rt, const struct pems_vp *vp)
{
	return (uint64_t)(vp->lid / rt->ndirs) * rt->mu;
}

static int ctx_fd(const struct pems_rt *rt, const struct pems_vp *vp)
{
	return rt->ctx_fd[vp->copy][vp->lid % rt->ndirs];
}

/* Raise the statistic rt->peak_resident to @now (workers race here). */
static void peak_max(struct pems_rt *rt, size_t now)
{
	size_t p = atomic_load_explicit(&rt->peak_resident, memory_order_relaxed);

	while (now > p && !atomic_compare_exchange_weak_explicit(&rt->peak_resident, &p, now,
								 memory_order_relaxed,
								 memory_order_relaxed))
		;
}

static void account(struct pems_rt *rt, ssize_t delta)
{
	size_t now = atomic_fetch_add(&rt->resident, (size_t)delta) + (size_t)delta;

	peak_max(rt, now);
}

/* Take @delta bytes of the rest pool (invariant 4); false, with nothing
 * taken, when it has no room. */
static bool rest_take(struct pems_rt *rt, size_t delta)
{
	size_t cur;

	for (;;) {
		cur = atomic_load(&rt->resident);
		if (cur + delta > rt->rest_budget)
			return false;
		if (atomic_compare_exchange_weak(&rt->resident, &cur, cur + delta))
			break;
	}
	peak_max(rt, cur + delta);
	return true;
}

/* Make @vp hold @want bytes of the rest pool (invariant 4); false, with
 * nothing changed, when there is no room.  Never waits: waiting on
 * memory other workers hold is how budgets deadlock. */
bool pems_ctx_reserve(struct pems_worker *w, struct pems_vp *vp, size_t want)
{
	struct pems_rt *rt = w->rt;
	size_t delta;

	if (want <= vp->reserved) {
		account(rt, (ssize_t)want - (ssize_t)vp->reserved);
		vp->reserved = want;
		return true;
	}
	delta = want - vp->reserved;
	if (!rest_take(rt, delta))
		return false;
	vp->reserved = want;
	return true;
}

/* Record that a VP finished a superstep with a context of @used bytes. */
void pems_ctx_seen(struct pems_rt *rt, size_t used)
{
	size_t p = atomic_load_explicit(&rt->ctx_peak, memory_order_relaxed);

	while (used > p && !atomic_compare_exchange_weak_explicit(&rt->ctx_peak, &p, used,
								 memory_order_relaxed,
								 memory_order_relaxed))
		;
}

/* Keep @bytes of message chunks in memory into the next superstep
 * instead of writing them (msg.c invariant 7): they take room of the
 * cache (rt->cached, like finished VPs) and of the rest pool.  The cache
 * gets half of the rest pool, or all of it but what prefetching and
 * write-back of k contexts of the largest size seen so far need (2k of
 * them), whichever is more: with small contexts (a sort's, an
 * aggregate's) the messages may take nearly all.  Never waits. */
bool pems_ctx_hold(struct pems_rt *rt, size_t bytes)
{
	size_t limit = pems_hold_limit(rt->rest_budget, rt->k,
				       atomic_load_explicit(&rt->ctx_peak, memory_order_relaxed));

	if (atomic_fetch_add(&rt->cached, bytes) + bytes > limit || !rest_take(rt, bytes)) {
		atomic_fetch_sub(&rt->cached, bytes);
		return false;
	}
	return true;
}

void pems_ctx_unhold(struct pems_rt *rt, size_t bytes)
{
	account(rt, -(ssize_t)bytes);
	atomic_fetch_sub(&rt->cached, bytes);
}

/* Bytes a suspended VP really occupies: its two extents (invariant 2). */
size_t pems_ctx_size(const struct pems_rt *rt, const struct pems_vp *vp)
{
	return page_up(vp->heap.brk) + (rt->mu - vp->sp_off);
}

/* A rank of a checkpointing job started by mpirun maps its VP table and
 * context region at one fixed address (checkpoint.c invariant 5): the
 * threads Open MPI runs map memory while the driver sets up, so where
 * the kernel would place them differs from one start to the next.  High
 * in the address space, where mappings only land once a terabyte below
 * the stack is taken, and inside the application range of the
 * sanitizers.  Falls back to any address (a resume then refuses). */
#define PEMS_FIXED_BASE ((uintptr_t)0x7f0000000000ull)

static void fixed_map(struct pems_rt *rt, size_t bytes)
{
	size_t tbl = ((size_t)rt->vlocal * sizeof(*rt->vps) + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
	char *p = mmap((void *)PEMS_FIXED_BASE, tbl + bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return;
	if (p != (char *)PEMS_FIXED_BASE) {	/* a kernel without NOREPLACE */
		munmap(p, tbl + bytes);
		return;
	}
	rt->vps = (struct pems_vp *)p;	/* zero pages, as calloc */
	rt->vps_mapped = true;
	rt->region = p + tbl;
}

int pems_ctx_setup(struct pems_rt *rt)
{
	size_t bytes = (size_t)rt->vlocal * rt->mu;
	unsigned i;

	if (rt->ckpt && pems_tp_launched())
		fixed_map(rt, bytes);
	if (!rt->region)
		rt->region = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (rt->region == MAP_FAILED) {
		rt->region = NULL;
		fprintf(stderr, "pems: error: cannot reserve %zu MiB of address space for %u contexts of %zu MiB: %s; lower --procs or mu\n",
			bytes >> 20, rt->vlocal, rt->mu >> 20, strerror(errno));
		return -ENOMEM;
	}
	if (!rt->vps)
		rt->vps = calloc(rt->vlocal, sizeof(*rt->vps));
	if (!rt->vps)
		return -ENOMEM;
	for (i = 0; i < rt->vlocal; i++) {
		struct pems_vp *vp = &rt->vps[i];

		vp->lid = i;
		vp->pid = rt->first + i;
		vp->base = rt->region + (size_t)i * rt->mu;
		vp->where = VP_RESIDENT;	/* all zero pages: nothing to read */
		vp->disk_sp = rt->mu;
		pems_heap_init(&vp->heap, vp->base, heap_limit(rt));
		vp->ops = calloc(2, sizeof(*vp->ops));
		if (!vp->ops)
			return -ENOMEM;
		/* a stack overflow must fault, not scribble over the heap */
		if (mprotect(vp->base + heap_limit(rt), PEMS_PAGE, PROT_NONE)) {
			fprintf(stderr, "pems: error: cannot set up %u contexts: %s (vm.max_map_count allows about %d VPs per rank); lower --procs or run more ranks\n",
				rt->vlocal, strerror(errno), 30000);
			return -errno;
		}
	}
	return 0;
}

/* The last heap block read for a get, kept for the next get of the same
 * barrier.  Keyed by runtime, superstep, VP and block; pems_ctx_teardown
 * clears it, because a later runtime of the same process (tests under
 * MPI run many) may get the same addresses and restart at superstep 0,
 * and a stale hit returned an earlier run's bytes. */
static struct {
	const struct pems_rt *rt;
	uint64_t step;
	const struct pems_vp *vp;
	unsigned blk;
	char *bounce, *data;	/* kept for the process */
} gc;

void pems_ctx_teardown(struct pems_rt *rt)
{
	unsigned i;

	if (rt->vps) {
		for (i = 0; i < rt->vlocal; i++) {
			free(rt->vps[i].ops);
			free(rt->vps[i].regs);
		}
		for (i = 0; i < rt->vlocal; i++)
			free(rt->vps[i].blk);
		if (!rt->vps_mapped)
			free(rt->vps);	/* else it stays mapped with the region */
		rt->vps = NULL;
	}
	gc.rt = NULL;	/* see gc */
	gc.vp = NULL;
	/* the region stays mapped: VP 0 may still be running after bsp_end,
	 * and pointers into contexts may be held by the caller; it is
	 * released with the process */
	if (rt->region)
		madvise(rt->region, (size_t)rt->vlocal * rt->mu, MADV_DONTNEED);
}

/* Release [p, p+n): the range loses its huge-page hint first, so that
 * small data allocated there later is not faulted in 2 MiB at a time
 * (which would let RSS outgrow the budget, invariant 3). */
static void drop(char *p, size_t n)
{
	if (!n)
		return;
	madvise(p, n, MADV_NOHUGEPAGE);
	madvise(p, n, MADV_DONTNEED);
}

/* Give back the pages of a resident VP that hold nothing live: the heap
 * above brk and the stack below the suspended stack pointer. */
void pems_ctx_trim(struct pems_rt *rt, struct pems_vp *vp)
{
	size_t top = page_up(vp->heap.brk), lim = heap_limit(rt);
	size_t stack_lo = rt->mu - rt->stack;

	if (vp->heap.touched > top)
		drop(vp->base + top, page_up(vp->heap.touched) - top);
	vp->heap.touched = vp->heap.brk;
	(void)lim;
	if (vp->sp_off > stack_lo)
		madvise(vp->base + stack_lo, vp->sp_off - stack_lo, MADV_DONTNEED);
}

static void release(struct pems_rt *rt, struct pems_vp *vp)
{
	size_t lim = page_up(vp->heap.touched);

	drop(vp->base, lim);
	madvise(vp->base + rt->mu - rt->stack, rt->stack, MADV_DONTNEED);
	vp->heap.touched = vp->heap.brk;
	account(rt, -(ssize_t)vp->reserved);
	vp->reserved = 0;
	vp->where = VP_DISK;
}

static void io_failed(struct pems_rt *rt, struct pems_vp *vp, struct pems_ioop *op)
{
	char path[512];
	bool w = op->req.op == PEMS_IO_WRITE;

	(void)rt;
	pems_fatal("%s the context of VP %u (%zu bytes at offset %llu of %s): %s%s",
		   w ? "writing" : "reading", vp->pid, op->req.len,
		   (unsigned long long)op->req.off, pems_fd_path(op->req.fd, path, sizeof(path)),
		   op->req.res < 0 ? strerror((int)-op->req.res) :
		   w ? "short write" : "short read (scratch file truncated?)",
		   op->req.res == -ENOSPC ? "; free space or add --tmp dirs" : "");
}

/* Invariant (5) broken: never run on from bad data. */
static _Noreturn void ctx_corrupt(struct pems_rt *rt, struct pems_vp *vp, size_t from,
				  size_t len, int rc)
{
	char path[512];

	pems_ckpt_corrupt(vp->disk_step);
	pems_fatal("VP %u's context is corrupt: %s in its %s bytes [%zu, %zu), at offset %llu of %s (written in superstep %llu); the scratch disk or memory is failing, or something else wrote into the file",
		   vp->pid, pems_spill_strerror(rc), from >= vp->disk_sp ? "stack" : "heap",
		   from, from + len, (unsigned long long)(ctx_file_off(rt, vp) + from),
		   pems_fd_path(ctx_fd(rt, vp), path, sizeof(path)),
		   (unsigned long long)vp->disk_step);
}

static size_t nblocks(size_t heap)
{
	return (heap + PEMS_CTX_BLOCK - 1) / PEMS_CTX_BLOCK;
}

static size_t blk_len(const struct pems_vp *vp, unsigned i)
{
	size_t left = vp->disk_heap - (size_t)i * PEMS_CTX_BLOCK;

	return left < PEMS_CTX_BLOCK ? left : PEMS_CTX_BLOCK;
}

/* Room for the descriptors of @heap bytes of heap blocks and the stack. */
static void blk_table(struct pems_vp *vp, size_t heap)
{
	unsigned n = (unsigned)nblocks(heap);

	if (n + 1 > vp->capblk) {
		struct pems_blk *b = realloc(vp->blk, (n + 1) * sizeof(*b));

		if (!b)
			pems_fatal("out of memory for the block table of VP %u", vp->pid);
		vp->blk = b;
		vp->capblk = n + 1;
	}
	vp->nblk = n;
}

/* Checksum the extents of a raw write-back (invariant 5). */
static void sum_extents(struct pems_rt *rt, struct pems_vp *vp)
{
	unsigned i;

	for (i = 0; i < vp->nblk; i++)
		pems_spill_sum(PEMS_SPILL_CTX, vp->base + (size_t)i * PEMS_CTX_BLOCK, blk_len(vp, i), &vp->blk[i]);
	pems_spill_sum(PEMS_SPILL_CTX, vp->base + vp->disk_sp, rt->mu - vp->disk_sp, &vp->blk[vp->nblk]);
}

/* Check a raw extent just read: the heap block by block, or the stack. */
static void check_extent(struct pems_worker *w, struct pems_vp *vp, bool stack)
{
	struct pems_rt *rt = w->rt;
	unsigned i;
	int rc;

	if (stack) {
		char *p = vp->base + vp->disk_sp;

		rc = pems_spill_unpack(w, p, &vp->blk[vp->nblk], p, rt->mu - vp->disk_sp);
		if (rc)
			ctx_corrupt(rt, vp, vp->disk_sp, rt->mu - vp->disk_sp, rc);
		return;
	}
	for (i = 0; i < vp->nblk; i++) {
		char *p = vp->base + (size_t)i * PEMS_CTX_BLOCK;

		rc = pems_spill_unpack(w, p, &vp->blk[i], p, blk_len(vp, i));
		if (rc)
			ctx_corrupt(rt, vp, (size_t)i * PEMS_CTX_BLOCK, blk_len(vp, i), rc);
	}
}

/* All transfers of @vp are done: it is on disk or resident. */
static void io_all_done(struct pems_worker *w, struct pems_vp *vp)
{
	struct pems_rt *rt = w->rt;

	if (vp->where == VP_LOADING) {
		vp->where = VP_RESIDENT;
	} else if (vp->keep) {
		vp->keep = false;
		vp->where = VP_RESIDENT;
	} else {
		w->writebacks--;
		release(rt, vp);
	}
}

static void swap_done(struct pems_worker *w, struct pems_ioop *op)
{
	struct pems_vp *vp = op->obj;
	struct pems_rt *rt = w->rt;

	if (op->req.res != (ssize_t)op->req.len)
		io_failed(rt, vp, op);
	if (op->req.op == PEMS_IO_WRITE) {
		w->ctx_written += op->req.len;
	} else {
		w->ctx_read += op->req.len;
		if (!vp->zimage || op == &vp->ops[1])
			check_extent(w, vp, op == &vp->ops[1]);
	}
	if (--vp->pending_io)
		return;
	io_all_done(w, vp);
}

/* ---- block by block, through the worker's stages (invariant 5) ---- */

static struct pems_zstage *stage_free(struct pems_wspill *z)
{
	unsigned i;

	for (i = 0; i < PEMS_ZSTAGES; i++)
		if (!z->stage[i].vp)
			return &z->stage[i];
	return NULL;
}

static void stage_done(struct pems_worker *w, struct pems_ioop *op);

/* Start block @s->blk of @s->vp: pack and write it, or read it. */
static void stage_start(struct pems_worker *w, struct pems_zstage *s)
{
	struct pems_vp *vp = s->vp;
	struct pems_rt *rt = w->rt;
	size_t from = (size_t)s->blk * PEMS_CTX_BLOCK, len = blk_len(vp, s->blk);
	struct pems_blk *b = &vp->blk[s->blk];
	const char *data;
	int rc;

	memset(&s->op, 0, sizeof(s->op));
	if (vp->where == VP_WRITING) {
		data = pems_spill_pack(w, PEMS_SPILL_CTX, vp->base + from, len, s->buf, len, b);
		s->op.req.op = PEMS_IO_WRITE;
		s->op.req.buf = (char *)data;
	} else {
		s->op.req.op = PEMS_IO_READ;
		s->op.req.buf = b->z ? s->buf : vp->base + from;
	}
	s->op.req.fd = ctx_fd(rt, vp);
	s->op.req.len = page_up(b->stored);
	s->op.req.off = ctx_file_off(rt, vp) + from;
	s->op.req.user = &s->op;
	s->op.done = stage_done;
	s->op.obj = s;
	rc = pems_io_submit(w->io, &s->op.req);
	if (rc) {
		s->op.req.res = rc;
		s->op.obj = vp;
		io_failed(rt, vp, &s->op);
	}
}

/* Give free stages to the VPs waiting for them, in order. */
static void stage_pump(struct pems_worker *w)
{
	struct pems_wspill *z = pems_wspill(w);
	struct pems_zstage *s;

	while (z->nwait && (s = stage_free(z))) {
		struct pems_vp *vp = z->wait[0];

		if (!s->buf && !(s->buf = pems_io_alloc(PEMS_CTX_BLOCK + PEMS_PAGE)))
			pems_fatal("out of memory for compression buffers");
		s->vp = vp;
		s->blk = vp->znext++;
		if (vp->znext == vp->nblk)
			memmove(z->wait, z->wait + 1, --z->nwait * sizeof(*z->wait));
		stage_start(w, s);
	}
}

static void stage_done(struct pems_worker *w, struct pems_ioop *op)
{
	struct pems_zstage *s = op->obj;
	struct pems_vp *vp = s->vp;
	struct pems_rt *rt = w->rt;
	size_t from = (size_t)s->blk * PEMS_CTX_BLOCK;
	int rc;

	if (op->req.res != (ssize_t)op->req.len) {
		op->obj = vp;
		io_failed(rt, vp, op);
	}
	if (op->req.op == PEMS_IO_WRITE) {
		w->ctx_written += op->req.len;
	} else {
		w->ctx_read += op->req.len;
		rc = pems_spill_unpack(w, op->req.buf, &vp->blk[s->blk], vp->base + from,
				       blk_len(vp, s->blk));
		if (rc)
			ctx_corrupt(rt, vp, from, blk_len(vp, s->blk), rc);
	}
	s->vp = NULL;
	if (!--vp->pending_io)
		io_all_done(w, vp);
	stage_pump(w);
}

/* Queue @vp's heap blocks for the stages. */
static void stage_queue(struct pems_worker *w, struct pems_vp *vp)
{
	struct pems_wspill *z = pems_wspill(w);

	vp->znext = 0;
	vp->pending_io += (int)vp->nblk;
	if (!vp->nblk)
		return;
	if (z->nwait == z->capwait) {
		unsigned cap = z->capwait ? 2 * z->capwait : 16;
		struct pems_vp **n = realloc(z->wait, cap * sizeof(*n));

		if (!n)
			pems_fatal("out of memory for compression queues");
		z->wait = n;
		z->capwait = cap;
	}
	z->wait[z->nwait++] = vp;
	stage_pump(w);
}

static int submit(struct pems_worker *w, struct pems_vp *vp, int i,
		  enum pems_io_op dir, size_t from, size_t len)
{
	struct pems_ioop *op = &vp->ops[i];
	int rc;

	memset(op, 0, sizeof(*op));
	op->req.fd = ctx_fd(w->rt, vp);
	op->req.op = dir;
	op->req.buf = vp->base + from;
	op->req.len = len;
	op->req.off = ctx_file_off(w->rt, vp) + from;
	op->req.user = op;
	op->done = swap_done;
	op->obj = vp;
	vp->pending_io++;
	rc = pems_io_submit(w->io, &op->req);
	if (rc) {
		op->req.res = rc;
		io_failed(w->rt, vp, op);
	}
	return 0;
}

/* Start writing a suspended VP back (invariant 2).  A VP that holds
 * nothing live (ended) is just released. */
int pems_ctx_swap_out(struct pems_worker *w, struct pems_vp *vp)
{
	struct pems_rt *rt = w->rt;
	size_t heap = page_up(vp->heap.brk);
	size_t sp = vp->sp_off;

	vp->disk_heap = heap;
	vp->disk_sp = sp;
	vp->where = VP_WRITING;
	/* checkpoint.c (2): never overwrite the copy a checkpoint needs */
	vp->copy = rt->ckpt ? !vp->ckpt_copy : 0;
	if (vp->state == VP_ENDED && !(vp->lid == 0 && rt->post_bsp)) {
		release(rt, vp);
		return 0;
	}
	w->writebacks++;
	vp->disk_step = rt->superstep;
	blk_table(vp, heap);
	vp->zimage = pems_spill_active(PEMS_SPILL_CTX);
	if (!vp->zimage)
		sum_extents(rt, vp);
	else
		pems_spill_sum(PEMS_SPILL_CTX, vp->base + sp, rt->mu - sp, &vp->blk[vp->nblk]);
	vp->pending_io++;	/* until every request below is started */
	if (!vp->zimage)
		submit(w, vp, 0, PEMS_IO_WRITE, 0, heap);
	if (sp < rt->mu)
		submit(w, vp, 1, PEMS_IO_WRITE, sp, rt->mu - sp);
	if (vp->zimage)
		stage_queue(w, vp);
	if (!--vp->pending_io)
		io_all_done(w, vp);
	return 0;
}

/* Start bringing @vp in: with @run into the worker's run slot, else (a
 * prefetch) into the rest pool, which may have no room: then returns
 * false, doing nothing, and the caller brings it in later with @run. */
bool pems_ctx_swap_in(struct pems_worker *w, struct pems_vp *vp, bool run)
{
	struct pems_rt *rt = w->rt;

	if (vp->cached) {
		atomic_fetch_sub(&rt->cached, vp->cached_bytes);
		vp->cached = false;
	}
	if (vp->where == VP_WRITING) {
		vp->keep = true;
		return true;
	}
	if (vp->where != VP_DISK)
		return true;
	if (!run && !pems_ctx_reserve(w, vp, vp->disk_heap + (rt->mu - vp->disk_sp)))
		return false;
	vp->where = VP_LOADING;
	vp->pending_io++;	/* until every request below is started */
	if (!vp->zimage) {
		/* release() took the huge-page hint away; the read fills the
		 * whole heap extent, so hinting its 2 MiB-aligned interior
		 * costs no memory beyond what is reserved, and makes each
		 * 1 MiB of the read one DMA segment instead of 256 (io.c: a
		 * request over 4 KiB pages can fill a virtio ring on its own
		 * and be split). */
		pems_heap_hint(vp->base, vp->disk_heap);
		submit(w, vp, 0, PEMS_IO_READ, 0, vp->disk_heap);
	}
	if (vp->disk_sp < rt->mu)
		submit(w, vp, 1, PEMS_IO_READ, vp->disk_sp, rt->mu - vp->disk_sp);
	if (vp->zimage)
		stage_queue(w, vp);
	if (!--vp->pending_io)
		io_all_done(w, vp);
	return true;
}

void pems_worker_reap(struct pems_worker *w, unsigned min)
{
	struct pems_io_req *done[64];
	int n, i;
	double t0 = min ? pems_now() : 0;

	n = pems_io_reap(w->io, done, min, 64);
	if (n < 0)
		pems_fatal("waiting for I/O: %s", strerror(-n));
	for (i = 0; i < n; i++) {
		struct pems_ioop *op = done[i]->user;

		op->done(w, op);
	}
	if (min)
		w->io_wait_ns += (uint64_t)((pems_now() - t0) * 1e9);
}

/* Wait until @vp is resident (its reads or a kept write-back are done). */
void pems_ctx_wait(struct pems_worker *w, struct pems_vp *vp)
{
	while (vp->where == VP_LOADING || vp->where == VP_WRITING)
		pems_worker_reap(w, 1);
}

/* Read, check and unpack what @vp's block @i (or its stack, @i = nblk)
 * holds into @out, through the aligned @bounce. */
static bool read_block(struct pems_rt *rt, struct pems_vp *vp, unsigned i, char *bounce,
		       char *out)
{
	bool stack = i == vp->nblk;
	size_t from = stack ? vp->disk_sp : (size_t)i * PEMS_CTX_BLOCK;
	size_t len = stack ? rt->mu - vp->disk_sp : blk_len(vp, i);
	size_t span = page_up(vp->blk[i].stored);
	int rc;

	if (pems_io_pread(ctx_fd(rt, vp), bounce, span, ctx_file_off(rt, vp) + from) !=
	    (ssize_t)span)
		return false;
	rt->gets_read += span;
	rc = pems_spill_unpack(&rt->workers[0], bounce, &vp->blk[i], out, len);
	if (rc)
		ctx_corrupt(rt, vp, from, len, rc);
	return true;
}

/* Copy @n bytes at @addr of @vp's context into @dst, from memory when
 * resident, else from its context file (invariant 2: bytes outside the
 * two extents are zero).  Used by the barrier to serve bsp_get, which
 * runs while no worker does: it borrows worker 0's decompressor.  Each
 * block read is checked whole (invariant 5); the last heap block read
 * is kept for the next get of this barrier. */
bool pems_ctx_read_bytes(struct pems_rt *rt, struct pems_vp *vp, const char *addr,
			 void *dst, size_t n)
{
	size_t off = (size_t)(addr - vp->base), done = 0;

	if (vp->where == VP_RESIDENT) {
		memcpy(dst, addr, n);
		return true;
	}
	if (gc.rt != rt || gc.step != rt->superstep) {
		gc.rt = rt;
		gc.step = rt->superstep;
		gc.vp = NULL;
	}
	if (!gc.bounce) {
		gc.bounce = pems_io_alloc(PEMS_CTX_BLOCK + PEMS_PAGE);
		gc.data = pems_io_alloc(PEMS_CTX_BLOCK);
		if (!gc.bounce || !gc.data)
			return false;
	}
	while (done < n) {
		size_t o = off + done, take;

		if (o >= vp->disk_heap && o < vp->disk_sp) {
			/* a hole between heap and stack: never written */
			take = (vp->disk_sp < off + n ? vp->disk_sp : off + n) - o;
			memset((char *)dst + done, 0, take);
		} else if (o < vp->disk_heap) {
			unsigned i = (unsigned)(o / PEMS_CTX_BLOCK);
			size_t from = (size_t)i * PEMS_CTX_BLOCK;

			if ((gc.vp != vp || gc.blk != i) && !read_block(rt, vp, i, gc.bounce, gc.data))
				return false;
			gc.vp = vp;
			gc.blk = i;
			take = from + blk_len(vp, i) - o;
			if (take > n - done)
				take = n - done;
			memcpy((char *)dst + done, gc.data + (o - from), take);
		} else {
			size_t len = rt->mu - vp->disk_sp;
			char *b = pems_io_alloc(page_up(len)), *d = malloc(len);
			bool ok = b && d && read_block(rt, vp, vp->nblk, b, d);

			take = n - done;
			if (ok)
				memcpy((char *)dst + done, d + (o - vp->disk_sp), take);
			pems_io_free(b, page_up(len));
			free(d);
			if (!ok)
				return false;
		}
		done += take;
	}
	return true;
}
