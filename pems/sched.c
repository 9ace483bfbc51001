/*
 * sched.c - workers, supersteps and the barrier.
 *
 * The thread that starts the runtime drives supersteps; k worker threads
 * run VPs.  In each superstep every live VP runs once, up to its next
 * bsp_sync (or its end):
 *
 *   worker:  claim(cur) swap_in(cur)
 *            loop: claim(nxt) swap_in(nxt)        -- prefetch, async
 *                  wait(cur) deliver(cur) run(cur)
 *                  keep(cur) or swap_out(cur)     -- write-back, async
 *                  cur = nxt
 *            wait for its I/O; report done
 *   driver:  when all workers are done: serve gets, combine collectives,
 *            turn message streams around, superstep++, go.
 *
 * Invariants:
 *  (1) VPs are claimed from one atomic counter in increasing order, so
 *      each worker runs its VPs in increasing pid order (msg.c (1));
 *  (2) at the barrier no I/O is in flight and no VP runs: every context
 *      is either resident or wholly on disk, every message chunk either in
 *      memory or wholly written;
 *  (3) a VP's code never caches the worker or the thread it runs on
 *      across a sync: pems_self() reads a thread-local each call.
 *
 * Around it: fiber.h (stack switches told to ASan/TSan), abort.c (fatal
 * errors, signals, stack overflow), scratch.c (scratch dirs and files),
 * stats.c (statistics and their JSON).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"
#include "config.h"
#include "ctx.h"
#include "msg.h"
#include "coll.h"
#include "tp.h"
#include "ckpt.h"
#include "sched_parts.h"
#include "spill.h"
#include "steps.h"
#include "fiber.h"

struct pems_rt *pems_rt;
#ifdef PEMS_TSAN
__thread void *pems_tsan_worker;
#endif
static __thread struct pems_worker *tls_worker;

double pems_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) struct pems_worker *pems_self_worker(void)
{
	struct pems_worker *w = tls_worker;

	__asm__ volatile("" ::: "memory");
	return w;
}

__attribute__((noinline)) struct pems_vp *pems_self(void)
{
	struct pems_worker *w = pems_self_worker();

	return w ? w->cur : NULL;
}

void pems_set_thread_worker(struct pems_worker *w)
{
	tls_worker = w;
}

/* ---- workers ---- */

static struct pems_vp *claim(struct pems_rt *rt)
{
	for (;;) {
		unsigned i = atomic_fetch_add(&rt->next_vp, 1);

		if (i >= rt->vlocal)
			return NULL;
		if (rt->vps[i].state != VP_ENDED)
			return &rt->vps[i];
	}
}

/*
 * The native VP: bsp_begin's caller on the initial thread goes on as the
 * first VP of its rank (VP 0 on rank 0), so code before bsp_begin runs
 * once in it and, in the bsp_init form, main goes on after the SPMD
 * function returns (pems_rt_begin).  Its stack is the initial thread's:
 * outside its slice, always resident, not counted in mu, and the driver
 * runs on a stack of its own meanwhile.
 */
static struct {
	bool active;			/* pems_rt_begin started this run */
	ucontext_t uc;			/* the caller, saved in pems_rt_begin */
	ucontext_t drv;			/* the driver, on dstack */
	void *fake;			/* ASan: its fake stack while away */
	const void *lo;			/* ASan: the initial thread's stack */
	size_t size;
	char *dstack;			/* the driver's stack */
	size_t dsize;
	void (*entry)(void *);
	void *arg;
	unsigned maxprocs;
} native;

/* The stack @vp runs on: its slice's top, or the native one's. */
static void vp_stack(const struct pems_rt *rt, const struct pems_vp *vp, const void **lo,
		     size_t *size)
{
	if (vp->native) {
		*lo = native.lo;
		*size = native.size;
	} else {
		*lo = vp->base + rt->mu - rt->stack;
		*size = rt->stack;
	}
}

static void vp_trampoline(void)
{
	struct pems_rt *rt = pems_rt;
	struct pems_worker *w = pems_self_worker();

	FIBER_FINISH(NULL, &w->stack_lo, &w->stack_size);
	rt->entry(rt->entry_arg);
	pems_vp_end();
}

static void run(struct pems_worker *w, struct pems_vp *vp)
{
	const void *lo;
	size_t size;
	double t0;
	bool made;

	made = vp->state == VP_NEW;
	if (made) {
		getcontext(&vp->uc);
		vp->uc.uc_stack.ss_sp = vp->base + w->rt->mu - w->rt->stack;
		vp->uc.uc_stack.ss_size = w->rt->stack;
		vp->uc.uc_link = NULL;
		makecontext(&vp->uc, vp_trampoline, 0);
	}
	vp->state = VP_RUNNING;
	vp->sent_bytes = 0;
	w->cur = vp;
	t0 = pems_now();
	vp_stack(w->rt, vp, &lo, &size);
	pems_globals_in(w->rt, vp, true);	/* its globals, one VP at a time */
	FIBER_START(&w->fake_stack, lo, size);
	tsan_enter(vp, made);
	if (swapcontext(&w->uc, &vp->uc))
		pems_fatal("swapcontext: %s", strerror(errno));
	FIBER_FINISH(w->fake_stack, NULL, NULL);
	pems_globals_out(w->rt, vp);
	if (w->file_aio)	/* their buffers would be swapped out under the DMA */
		pems_fatal("VP %u reached bsp_sync (or its end) with %u pems_file_start transfer(s) not waited for; call pems_file_wait first",
			   vp->pid, w->file_aio);
	/* ended for good, unless VP 0 runs on after bsp_end */
	if (vp->state == VP_ENDED && !(vp->lid == 0 && w->rt->post_bsp))
		tsan_drop(vp);
	w->compute_ns += (uint64_t)((pems_now() - t0) * 1e9);
	w->cur = NULL;
	if (vp->sent_bytes > w->h_max)
		w->h_max = vp->sent_bytes;
	w->h_bytes += vp->sent_bytes;
}

static size_t saved_sp(struct pems_rt *rt, struct pems_vp *vp)
{
	size_t lo = rt->mu - rt->stack, sp;

	if (vp->native)
		return rt->mu;	/* nothing of its stack is in the slice */
#if defined(__x86_64__)
	sp = (size_t)((char *)vp->uc.uc_mcontext.gregs[REG_RSP] - vp->base);
	sp = sp > 256 ? sp - 256 : 0;	/* red zone */
#else
	sp = lo;
#endif
	sp &= ~(size_t)(PEMS_PAGE - 1);
	if (vp->state == VP_ENDED && !(vp->lid == 0 && rt->post_bsp))
		return rt->mu;
	return sp < lo ? lo : sp;
}

/* After a VP's superstep: keep it resident if the cache has room, else
 * start writing it back (context.c invariant 4). */
static void finish(struct pems_worker *w, struct pems_vp *vp)
{
	struct pems_rt *rt = w->rt;
	size_t used;

	vp->sp_off = saved_sp(rt, vp);
	used = pems_ctx_size(rt, vp);
	pems_ctx_seen(rt, used);
	pems_ctx_trim(rt, vp);		/* only the extents stay resident */
	if (!pems_ctx_reserve(w, vp, used)) {
		/* no room outside the run slot: write it back from there */
		pems_ctx_swap_out(w, vp);
		while (vp->where == VP_WRITING)
			pems_worker_reap(w, 1);
		return;
	}
	if (vp->state != VP_ENDED || (vp->lid == 0 && rt->post_bsp)) {
		size_t c = atomic_fetch_add(&rt->cached, used);

		if (c + used <= rt->cache_limit) {
			vp->cached = true;
			vp->cached_bytes = used;
			return;
		}
		atomic_fetch_sub(&rt->cached, used);
	}
	pems_ctx_swap_out(w, vp);
}

static void worker_superstep(struct pems_worker *w)
{
	struct pems_rt *rt = w->rt;
	struct pems_vp *cur = claim(rt), *nxt;
	bool cur_in = false, nxt_in = false;
	int slot = 0;

	while (cur) {
		/* context.c invariant (4): prefetch only once at most one
		 * write-back of ours is still in flight, and only if it fits */
		while (w->writebacks > 1)
			pems_worker_reap(w, 1);
		nxt = claim(rt);
		if (nxt) {
			nxt_in = pems_ctx_swap_in(w, nxt, false);
			pems_msg_prefetch(w, nxt, slot ^ 1);
		}
		if (!cur_in)
			pems_ctx_swap_in(w, cur, true);
		pems_ctx_wait(w, cur);
		pems_ctx_reserve(w, cur, 0);	/* into our run slot (may grow to mu) */
		pems_gets_deliver(rt, cur);
		w->cur = cur;		/* deliveries allocate in cur's heap */
		pems_msg_deliver(w, cur, slot);
		pems_coll_deliver(rt, cur);
		w->cur = NULL;
		run(w, cur);
		finish(w, cur);
		pems_worker_reap(w, 0);
		cur = nxt;
		cur_in = nxt_in;
		slot ^= 1;
	}
	pems_msg_flush(w);
}

static void *worker_main(void *arg)
{
	struct pems_worker *w = arg;
	struct pems_rt *rt = w->rt;
	uint64_t gen = 0;

	tls_worker = w;
	pems_segv_setup();
	for (;;) {
		pthread_mutex_lock(&rt->lock);
		while (rt->go_gen == gen && !rt->quit)
			pthread_cond_wait(&rt->go, &rt->lock);
		if (rt->quit) {
			pthread_mutex_unlock(&rt->lock);
			break;
		}
		gen = rt->go_gen;
		pthread_mutex_unlock(&rt->lock);
		worker_superstep(w);
		pthread_mutex_lock(&rt->lock);
		if (++rt->workers_done == rt->k)
			pthread_cond_signal(&rt->done);
		pthread_mutex_unlock(&rt->lock);
	}
	return NULL;
}

static int engine_create(struct pems_rt *rt, struct pems_io **io)
{
	static bool warned;
	enum pems_io_backend b = (enum pems_io_backend)rt->cfg.io;
	int rc = pems_io_create(io, b, rt->cfg.qdepth);

	if (rc && b != PEMS_IO_SYNC) {
		if (!warned && !rt->cfg.quiet)
			fprintf(stderr, "pems: warning: I/O backend %s unavailable (%s); using sync\n",
				pems_io_backend_name(b), strerror(-rc));
		warned = true;
		rc = pems_io_create(io, PEMS_IO_SYNC, rt->cfg.qdepth);
	}
	return rc;
}

static int workers_setup(struct pems_rt *rt)
{
	unsigned i, l;
	int rc;

	rt->workers = calloc(rt->k, sizeof(*rt->workers));
	if (!rt->workers)
		return -ENOMEM;
	for (i = 0; i < rt->k; i++) {
		struct pems_worker *w = &rt->workers[i];
		char name[32];

		w->rt = rt;
		w->id = i;
		rc = engine_create(rt, &w->io);
		if (rc)
			return rc;
		w->out = calloc(rt->v, sizeof(*w->out));
		w->bounce_size = pems_msg_bounce_size(rt->k, rt->nranks, rt->chunk_size);
		w->bounce = pems_io_alloc(w->bounce_size);
		if (!w->out || !w->bounce || pems_msg_worker_init(w))
			return -ENOMEM;
		for (l = 0; l < rt->nlogs; l++) {
			snprintf(name, sizeof(name), "msg%u.%u", i, l);
			if (pems_scratch_open(rt, i % rt->ndirs, name, &w->msg_fd[l]))
				return -PEMS_E_SCRATCH;
		}
	}
	for (i = 0; i < rt->k; i++) {
		rc = pthread_create(&rt->workers[i].thread, NULL, worker_main, &rt->workers[i]);
		if (rc)
			return -rc;
	}
	if (rt->nranks > 1) {
		/* the comm thread lands remote chunks in its own logs */
		struct pems_worker *t = calloc(1, sizeof(*t));

		if (!t)
			return -ENOMEM;
		rt->tpw = t;
		t->rt = rt;
		t->id = rt->k;
		rc = engine_create(rt, &t->io);
		if (rc)
			return rc;
		for (l = 0; l < rt->nlogs; l++) {
			char name[32];

			snprintf(name, sizeof(name), "msgnet.%u", l);
			if (pems_scratch_open(rt, t->id % rt->ndirs, name, &t->msg_fd[l]))
				return -PEMS_E_SCRATCH;
		}
	}
	return 0;	/* the comm thread starts after a resume's restore */
}

static void workers_stop(struct pems_rt *rt)
{
	unsigned i;

	pems_tp_stop(rt);
	pthread_mutex_lock(&rt->lock);
	rt->quit = true;
	pthread_cond_broadcast(&rt->go);
	pthread_mutex_unlock(&rt->lock);
	for (i = 0; rt->workers && i < rt->k; i++)
		if (rt->workers[i].thread)
			pthread_join(rt->workers[i].thread, NULL);
}

/* ---- the driver ---- */

static void check_ends(struct pems_rt *rt)
{
	unsigned i, ended = 0, first_end = 0;
	uint64_t all;

	for (i = 0; i < rt->vlocal; i++)
		if (rt->vps[i].state == VP_ENDED && !ended++)
			first_end = i;
	all = ended;
	pems_tp_sum_u64(rt, &all, 1);
	if (all && all != rt->v && (!ended || ended != rt->vlocal)) {
		if (!ended)
			pems_fatal("bsp_end: VPs on another rank ended in superstep %llu while VP %u called bsp_sync; every VP must reach bsp_end in the same superstep",
				   (unsigned long long)rt->superstep, rt->vps[0].pid);
		for (i = 0; i < rt->vlocal; i++)
			if (rt->vps[i].state != VP_ENDED)
				break;
		pems_fatal("bsp_end: VP %u ended in superstep %llu while VP %u called bsp_sync; every VP must reach bsp_end in the same superstep",
			   rt->vps[first_end].pid, (unsigned long long)rt->superstep,
			   rt->vps[i].pid);
	}
	if (all && all != rt->v)
		pems_fatal("bsp_end: the VPs of rank %u ended in superstep %llu while VPs on other ranks called bsp_sync",
			   rt->rank, (unsigned long long)rt->superstep);
	rt->ended = all == rt->v ? rt->vlocal : ended;
}

static void superstep(struct pems_rt *rt)
{
	pthread_mutex_lock(&rt->lock);
	atomic_store(&rt->next_vp, 0);
	rt->workers_done = 0;
	rt->go_gen++;
	pthread_cond_broadcast(&rt->go);
	while (rt->workers_done < rt->k)
		pthread_cond_wait(&rt->done, &rt->lock);
	pthread_mutex_unlock(&rt->lock);
}

static int rt_init(struct pems_rt *rt, unsigned maxprocs)
{
	int rc;

	rc = pems_tp_world(&rt->rank, &rt->nranks);
	if (rc) {
		fprintf(stderr, "pems: error: MPI_Init failed; run under mpirun, or without it for one rank\n");
		return rc;
	}
	/* every rank runs what rank 0's bsp_begin asked for: the others
	 * may not know it (stdin goes to rank 0 only) */
	if (rt->nranks > 1 && maxprocs) {
		unsigned *all = calloc(rt->nranks, sizeof(*all));

		if (!all)
			return -ENOMEM;
		pems_tp_allgather(rt, &maxprocs, all, sizeof(maxprocs));
		maxprocs = all[0];
		free(all);
	}
	rc = pems_config_derive(&rt->cfg, maxprocs, &rt->d);
	if (rc)
		return rc;
	rt->v = rt->cfg.procs;
	rt->k = rt->cfg.threads > 64 ? 64 : rt->cfg.threads;
	rc = pems_tp_check_uniform(rt, rt->v, rt->k, rt->d.chunk);
	if (rc)
		return rc;
	if (rt->v < rt->nranks) {
		fprintf(stderr, "pems: error: %u VPs cannot be spread over %u ranks; raise --procs to at least %u\n",
			rt->v, rt->nranks, rt->nranks);
		return -PEMS_E_CONFIG;
	}
	/* balanced blocks: rank r hosts [v*r/p, v*(r+1)/p) */
	rt->first = (unsigned)((uint64_t)rt->v * rt->rank / rt->nranks);
	rt->vlocal = (unsigned)((uint64_t)rt->v * (rt->rank + 1) / rt->nranks) - rt->first;
	rt->mu = rt->cfg.mu;
	rt->stack = rt->cfg.stack;
	/* half the room left by the run slots caches finished VPs, the other
	 * half is for prefetching and write-back */
	rt->rest_budget = rt->d.ctx_budget - (size_t)rt->k * rt->mu;
	rt->cache_limit = rt->rest_budget / 2;
	pthread_mutex_init(&rt->lock, NULL);
	pthread_cond_init(&rt->go, NULL);
	pthread_cond_init(&rt->done, NULL);
	rc = pems_ckpt_init(rt);
	if (rc)
		return rc;
	rc = pems_scratch_setup(rt);
	if (rc)
		return rc;
	rc = pems_ctx_setup(rt);
	if (rc)
		return rc;
	rc = pems_msg_setup(rt);
	if (rc)
		return rc;
	pthread_mutex_init(&rt->coll.lock, NULL);
	return workers_setup(rt);
}

static void rt_free(struct pems_rt *rt)
{
	unsigned i, j;

	pems_msg_teardown(rt);
	if (rt->workers) {
		for (i = 0; i < rt->k; i++) {
			struct pems_worker *w = &rt->workers[i];

			pems_io_destroy(w->io);
			free(w->out);
			pems_io_free(w->bounce, w->bounce_size);
			free(w->readers);
			free(w->gets);
			for (j = 0; j < PEMS_NLOGS; j++)
				if (w->msg_fd[j] > 0)
					close(w->msg_fd[j]);
		}
		free(rt->workers);
	}
	if (rt->tpw) {
		pems_io_destroy(rt->tpw->io);
		for (j = 0; j < PEMS_NLOGS; j++)
			if (rt->tpw->msg_fd[j] > 0)
				close(rt->tpw->msg_fd[j]);
		free(rt->tpw);
	}
	pems_coll_free(rt);
	for (i = 0; rt->vps && i < rt->vlocal; i++)
		tsan_drop(&rt->vps[i]);
	pems_ctx_teardown(rt);
	for (i = 0; i < rt->ndirs; i++) {
		for (j = 0; j < 2; j++)
			if (rt->ctx_fd[j][i] > 0)
				close(rt->ctx_fd[j][i]);
		free(rt->tmpdir[i]);
	}
}

/* VP 0's engine after bsp_end serves it until the process exits and is
 * never destroyed (run_post_bsp does not come back from swapcontext):
 * held here so that it stays reachable, not only from a dead stack. */
static struct pems_io *volatile post_io;

/* VP 0 continues after bsp_end on the calling thread (BSPlib: code after
 * bsp_end runs on process 0 only). */
static void run_post_bsp(struct pems_rt *rt)
{
	struct pems_worker mw;
	struct pems_vp *vp = &rt->vps[0];
	const void *lo;
	size_t size;

	memset(&mw, 0, sizeof(mw));
	mw.rt = rt;
	if (engine_create(rt, &mw.io))
		pems_fatal("cannot create an I/O engine");
	post_io = mw.io;
	pems_ctx_swap_in(&mw, vp, true);
	pems_ctx_wait(&mw, vp);
	tls_worker = &mw;
	mw.cur = vp;
	vp->state = VP_RUNNING;
	rt->post_bsp = false;
	vp->past_end = true;	/* BSP calls now abort (bsp.c) */
	vp_stack(rt, vp, &lo, &size);
	/* the native VP goes on in main on this, its own, thread and never
	 * comes back: its return from main ends the process */
	pems_globals_in(rt, vp, false);	/* and they stay: the run is over */
	FIBER_START(&mw.fake_stack, lo, size);
	tsan_enter(vp, false);
	swapcontext(&mw.uc, &vp->uc);
	FIBER_FINISH(mw.fake_stack, NULL, NULL);
	tsan_drop(vp);
	tls_worker = NULL;
	pems_io_destroy(mw.io);
}

static void (*pems_progress_fn)(uint64_t, void *);
static void *pems_progress_arg;

PEMS_API void pems_set_progress(void (*fn)(uint64_t, void *), void *arg)
{
	if (pems_rt) {
		pems_rt->progress = fn;
		pems_rt->progress_arg = arg;
	}
	pems_progress_fn = fn;
	pems_progress_arg = arg;
}

/* The native caller becomes VP lid 0, suspended where it left. */
static void native_adopt(struct pems_rt *rt)
{
	struct pems_vp *vp = &rt->vps[0];

	vp->uc = native.uc;
	vp->uc.uc_mcontext.fpregs = &vp->uc.__fpregs_mem;
	vp->native = true;
	vp->state = VP_READY;
	vp->fake_stack = native.fake;
}

/* The driver of a native run, on its own stack. */
static void native_driver(void)
{
	int rc;

	FIBER_FINISH(NULL, &native.lo, &native.size);
	/* main's stack stays parked while this driver runs and may exit the
	 * process from here: what main's frames hold is still in use */
	if (native.size)
		FIBER_ROOT(native.lo, native.size);
	rc = pems_rt_run(NULL, native.entry, native.arg, native.maxprocs);
	fflush(stdout);
	/* the run is over and the native VP did not go on after bsp_end
	 * (another rank's, or the runtime did not start) */
	exit(rc < 0 ? 1 : rc);
}

void pems_rt_begin(void (*entry)(void *), void *arg, unsigned maxprocs)
{
	struct pems_worker *w;

	native.entry = entry;
	native.arg = arg;
	native.maxprocs = maxprocs;
	native.dsize = 8u << 20;
	native.dstack = mmap(NULL, native.dsize, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (native.dstack == MAP_FAILED)
		pems_fatal("cannot map a stack for the driver: %s", strerror(errno));
	if (getcontext(&native.drv))
		pems_fatal("getcontext: %s", strerror(errno));
	native.drv.uc_stack.ss_sp = native.dstack;
	native.drv.uc_stack.ss_size = native.dsize;
	native.drv.uc_link = NULL;
	makecontext(&native.drv, native_driver, 0);
	native.active = true;
	FIBER_START(&native.fake, native.dstack, native.dsize);
	if (swapcontext(&native.uc, &native.drv))
		pems_fatal("swapcontext: %s", strerror(errno));
	/* resumed by a worker as VP lid 0 (as in pems_vp_sync) */
	w = pems_self_worker();
	FIBER_FINISH(native.fake, &w->stack_lo, &w->stack_size);
}

int pems_rt_run(const struct pems_config *cfg, void (*entry)(void *), void *arg,
		unsigned maxprocs)
{
	struct pems_rt *rt;
	int rc;

	if (pems_rt)
		return -EBUSY;
	if (cfg && pems_config_check(cfg))
		return -EINVAL;
	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return -ENOMEM;
	if (cfg) {
		rt->cfg = *cfg;
	} else {
		rc = pems_config_default(&rt->cfg);
		if (rc) {
			free(rt);
			return rc;
		}
	}
	rt->entry = entry;
	rt->entry_arg = arg;
	rt->t0 = pems_now();
	rt->progress = pems_progress_fn;
	rt->progress_arg = pems_progress_arg;
	rt->globals = pems_globals_take();
	pthread_mutex_init(&rt->globals_lock, NULL);
	rc = rt_init(rt, maxprocs);
	if (!rc && native.active)
		native_adopt(rt);
	if (!rc)
		rc = pems_ckpt_restore(rt, &rc);	/* checkpoint.c (1): &rc is the driver stack */
	if (!rc)
		rc = pems_tp_start(rt);	/* after the restore: it reads rt->superstep */
	if (rc) {
		pems_ckpt_abandon(rt);
		workers_stop(rt);
		rt_free(rt);
		free(rt);
		return rc;
	}
	pems_rt = rt;
	pems_steps_start();
	for (;;) {
		double ts = pems_now();

		superstep(rt);
		pems_tp_end_superstep(rt);	/* MPI is ours until resume */
		rt->supersteps++;
		pems_stats_step(rt, ts);
		check_ends(rt);
		if (rt->ended == rt->vlocal)
			break;
		pems_gets_serve(rt);
		pems_coll_barrier(rt);
		pems_tp_sum_u64(rt, (uint64_t *)rt->xchg_in_next, rt->v);
		pems_tp_sum_u64(rt, (uint64_t *)rt->send_in_next, rt->v);
		pems_msg_swap(rt);
		rt->superstep++;
		pems_ckpt_barrier(rt, &rc);
		/* before the comm thread runs again: a hook that reads the
		 * statistics (pems_get_stats) must not race with its counters */
		pems_steps_barrier();
		if (rt->progress)
			rt->progress(rt->superstep, rt->progress_arg);
		pems_tp_resume(rt);
	}
	workers_stop(rt);
	pems_ckpt_finish(rt);
	pems_stats_final(rt);
	if (rt->post_bsp)
		run_post_bsp(rt);
	rc = rt->exit_code;
	pems_rt = NULL;
	rt_free(rt);
	free(rt);
	return rc;
}

bool pems_rt_running(void)
{
	return pems_rt != NULL;
}

unsigned pems_rt_procs(void)
{
	return pems_rt ? pems_rt->v : 0;
}

unsigned pems_rt_rank(void)
{
	return pems_rt ? pems_rt->rank : 0;
}

uint64_t pems_rt_superstep(void)
{
	return pems_rt ? pems_rt->superstep : 0;
}

double pems_rt_time(void)
{
	return pems_rt ? pems_now() - pems_rt->t0 : 0;
}

void pems_rt_set_exit(int code)
{
	pems_rt->exit_code = code;
}

/* Called on the VP's own stack. */
void pems_vp_sync(void)
{
	struct pems_vp *vp = pems_self();
	struct pems_worker *w = pems_self_worker();

	vp->state = VP_READY;
	FIBER_START(&vp->fake_stack, w->stack_lo, w->stack_size);
	tsan_leave();
	swapcontext(&vp->uc, &w->uc);
	/* resumed: possibly on another worker thread (invariant 3) */
	w = pems_self_worker();
	FIBER_FINISH(vp->fake_stack, &w->stack_lo, &w->stack_size);
}

_Noreturn void pems_vp_end(void)
{
	struct pems_vp *vp = pems_self();
	struct pems_worker *w = pems_self_worker();

	vp->state = VP_ENDED;
	FIBER_START(NULL, w->stack_lo, w->stack_size);	/* this stack dies */
	tsan_leave();
	setcontext(&w->uc);
	abort();
}

/* bsp_end on VP 0 of a bsp_begin program: end, but keep the context so
 * that VP 0 can run on after the last superstep. */
void pems_vp_end_keep(void)
{
	struct pems_vp *vp = pems_self();
	struct pems_worker *w = pems_self_worker();

	pems_rt->post_bsp = true;
	vp->state = VP_ENDED;
	FIBER_START(&vp->fake_stack, w->stack_lo, w->stack_size);
	tsan_leave();
	swapcontext(&vp->uc, &w->uc);
	w = pems_self_worker();
	FIBER_FINISH(vp->fake_stack, &w->stack_lo, &w->stack_size);
}

PEMS_API int pems_spmd(const struct pems_config *cfg, void (*spmd)(void *arg), void *arg)
{
	return pems_rt_run(cfg, spmd, arg, 0);
}
