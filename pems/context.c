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
 *      slot.  Finished VPs stay cached only within rt->cache_limit.
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

#include "runtime.h"

static size_t page_up(size_t x) { return (x + PEMS_PAGE - 1) & ~(size_t)(PEMS_PAGE - 1); }
static size_t page_down(size_t x) { return x & ~(size_t)(PEMS_PAGE - 1); }

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

/* Make @vp hold @want bytes of the rest pool (invariant 4); false, with
 * nothing changed, when there is no room.  Never waits: waiting on
 * memory other workers hold is how budgets deadlock. */
bool pems_ctx_reserve(struct pems_worker *w, struct pems_vp *vp, size_t want)
{
	struct pems_rt *rt = w->rt;
	size_t delta, cur;

	if (want <= vp->reserved) {
		account(rt, (ssize_t)want - (ssize_t)vp->reserved);
		vp->reserved = want;
		return true;
	}
	delta = want - vp->reserved;
	for (;;) {
		cur = atomic_load(&rt->resident);
		if (cur + delta > rt->rest_budget)
			return false;
		if (atomic_compare_exchange_weak(&rt->resident, &cur, cur + delta))
			break;
	}
	peak_max(rt, cur + delta);
	vp->reserved = want;
	return true;
}

/* Bytes a suspended VP really occupies: its two extents (invariant 2). */
size_t pems_ctx_size(const struct pems_rt *rt, const struct pems_vp *vp)
{
	return page_up(vp->heap.brk) + (rt->mu - vp->sp_off);
}

int pems_ctx_setup(struct pems_rt *rt)
{
	size_t bytes = (size_t)rt->vlocal * rt->mu;
	unsigned i;

	rt->region = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (rt->region == MAP_FAILED) {
		rt->region = NULL;
		fprintf(stderr, "pems: error: cannot reserve %zu MiB of address space for %u contexts of %zu MiB: %s; lower --procs or mu\n",
			bytes >> 20, rt->vlocal, rt->mu >> 20, strerror(errno));
		return -ENOMEM;
	}
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

void pems_ctx_teardown(struct pems_rt *rt)
{
	unsigned i;

	if (rt->vps) {
		for (i = 0; i < rt->vlocal; i++) {
			free(rt->vps[i].ops);
			free(rt->vps[i].regs);
		}
		free(rt->vps);
		rt->vps = NULL;
	}
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
	pems_fatal("%s context of VP %u (%zu bytes at offset %llu) in %s: %s%s",
		   op->req.op == PEMS_IO_WRITE ? "writing" : "reading", vp->pid,
		   op->req.len, (unsigned long long)op->req.off,
		   rt->tmpdir[vp->lid % rt->ndirs],
		   op->req.res < 0 ? strerror((int)-op->req.res) : "short transfer",
		   op->req.res == -ENOSPC ? "; free space or add --tmp dirs" : "");
}

static void swap_done(struct pems_worker *w, struct pems_ioop *op)
{
	struct pems_vp *vp = op->obj;
	struct pems_rt *rt = w->rt;

	if (op->req.res != (ssize_t)op->req.len)
		io_failed(rt, vp, op);
	if (op->req.op == PEMS_IO_WRITE)
		w->ctx_written += op->req.len;
	else
		w->ctx_read += op->req.len;
	if (--vp->pending_io)
		return;
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
	submit(w, vp, 0, PEMS_IO_WRITE, 0, heap);
	if (sp < rt->mu)
		submit(w, vp, 1, PEMS_IO_WRITE, sp, rt->mu - sp);
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
	submit(w, vp, 0, PEMS_IO_READ, 0, vp->disk_heap);
	if (vp->disk_sp < rt->mu)
		submit(w, vp, 1, PEMS_IO_READ, vp->disk_sp, rt->mu - vp->disk_sp);
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
		w->io_wait += pems_now() - t0;
}

/* Wait until @vp is resident (its reads or a kept write-back are done). */
void pems_ctx_wait(struct pems_worker *w, struct pems_vp *vp)
{
	while (vp->where == VP_LOADING || vp->where == VP_WRITING)
		pems_worker_reap(w, 1);
}

/* Copy @n bytes at @addr of @vp's context into @dst, from memory when
 * resident, else from its context file (invariant 2: bytes outside the
 * two extents are zero).  Used by the barrier to serve bsp_get. */
bool pems_ctx_read_bytes(struct pems_rt *rt, struct pems_vp *vp, const char *addr,
			 void *dst, size_t n)
{
	size_t off = (size_t)(addr - vp->base), done = 0;
	char *bounce;

	if (vp->where == VP_RESIDENT) {
		memcpy(dst, addr, n);
		return true;
	}
	bounce = pems_io_alloc(PEMS_IO_REQ_SIZE);
	if (!bounce)
		return false;
	while (done < n) {
		size_t o = off + done, blk = page_down(o);
		size_t take = PEMS_IO_REQ_SIZE - (o - blk);

		if (take > n - done)
			take = n - done;
		if (o >= vp->disk_heap && o < vp->disk_sp) {
			/* a hole between heap and stack: never written */
			size_t hole_end = vp->disk_sp < o + take ? vp->disk_sp : o + take;

			memset((char *)dst + done, 0, hole_end - o);
			done += hole_end - o;
			continue;
		}
		/* only the pages that hold the bytes (a get of 8 bytes reads
		 * one page, not a request's worth) */
		{
			size_t span = page_up(o - blk + take);

			if (pems_io_pread(ctx_fd(rt, vp), bounce, span,
					  ctx_file_off(rt, vp) + blk) < (ssize_t)(o - blk + take)) {
				free(bounce);
				return false;
			}
			rt->gets_read += span;
		}
		memcpy((char *)dst + done, bounce + (o - blk), take);
		done += take;
	}
	free(bounce);
	return true;
}
