/*
 * mpi_test.h - helpers for the multi-rank tests (check_mpi_*.c), which
 * run under `mpirun -np N` with CK_FORK=no (tests/run.sh).
 *
 * Rules for a program built on this header:
 *  - call mt_world() first thing in main: it starts MPI (pems_rank()
 *    alone does not), so that budgets derived afterwards count the right
 *    number of ranks;
 *  - every rank runs the same test list, so every rank calls pems_spmd
 *    the same number of times in the same order;
 *  - results are compared as digests that every rank receives through a
 *    pems collective (mt_finish), so every rank asserts the same thing.
 *
 * Header-only: everything is static inline (unused helpers do not warn).
 */
#ifndef MPI_TEST_H
#define MPI_TEST_H

#include <check.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsp.h"
#include "pems.h"
#include "spmd_test.h"	/* configurations, budgets, the scratch dir */
#include "bsp_programs.h"	/* the programs check_bsp.c runs too; pattern.h */

/* ---- the world ---- */

struct mt_world {
	unsigned rank, nranks;
};

static struct mt_world mt_w;

/* Start MPI (when under mpirun) and learn our rank; call before any
 * budget computation. */
static inline void mt_world(void)
{
	pems_rank_barrier();	/* starts MPI when launched by mpirun */
	mt_w.rank = pems_rank();
	mt_w.nranks = pems_nranks();
}

/* First VP of rank @r of @n for @v VPs: v*r/n (pems: balanced blocks). */
static inline unsigned mt_first(unsigned v, unsigned r, unsigned n)
{
	return (unsigned)((uint64_t)v * r / n);
}

/* ---- configurations ---- */

/* pems_configure @c (spmd_fill_config: every knob explicit; mem 0 is the
 * least budget the runtime accepts, k run slots of mu and nothing left to
 * cache finished VPs, so every context goes to disk after every
 * superstep).  Returns pems_configure's result; *mem_out gets M. */
static inline int mt_configure(const struct spmd_cfg *c, size_t *mem_out)
{
	struct pems_config pc;

	spmd_fill_config(&pc, c);
	if (mem_out)
		*mem_out = pc.mem;
	return pems_configure(&pc);
}

/* ---- one run: what the VPs of this rank report ---- */

/* Bytes every VP keeps, with a known pattern, in its context for the
 * whole program; mt_finish checks them (they went to disk and back with
 * the context in every superstep of a spilling configuration). */
#define MT_BALLAST (64 * KiB)

struct mt_run {
	struct bp_run base;	/* first: what the programs see (bsp_programs.h) */
	void (*prog)(void *);	/* the program (mt_entry runs it) */
	unsigned char **ballast;	/* per VP */
	unsigned v;		/* VPs */
	unsigned first;		/* first VP of this rank */
	uint64_t *got;		/* every VP's value (mt_finish), on every rank */
	uint64_t digest;	/* sum of fold(pid, value), over all VPs */
	uint64_t nbad;		/* failed CHECKs, over all VPs */
	bool done;		/* the first VP of this rank reached the end */
	uint32_t *bad;		/* per VP: failed CHECKs (written by that VP only) */
	atomic_uint nwhy;
	char why[512];		/* the first failure on this rank */
};

static inline struct mt_run *mt_run_of(struct bp_run *b)
{
	return (struct mt_run *)((char *)b - offsetof(struct mt_run, base));
}

/* A failed CHECK: counted per VP (mt_finish reduces the counts over the
 * ranks); the first message on this rank is kept. */
static inline void mt_vfail(struct bp_run *b, int line, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static inline void mt_vfail(struct bp_run *b, int line, const char *fmt, va_list ap)
{
	struct mt_run *r = mt_run_of(b);
	int n;

	r->bad[bsp_pid()]++;
	if (atomic_fetch_add(&r->nwhy, 1))
		return;
	n = snprintf(r->why, sizeof(r->why), "rank %u, VP %u, line %d: ", pems_rank(),
		     bsp_pid(), line);
	vsnprintf(r->why + n, sizeof(r->why) - (size_t)n, fmt, ap);
}

/* Last supersteps of every program: the digest (sum of folds, via
 * pems_allreduce) and every VP's value (via pems_allgather) reach every
 * rank: the VPs of other ranks share no memory with this one. */
static inline void mt_finish(struct bp_run *b, uint64_t x)
{
	struct mt_run *r = mt_run_of(b);
	unsigned p = bsp_pid(), v = bsp_nprocs();
	uint64_t in[2], out[2] = { 0, 0 };
	uint64_t *all = pems_malloc((size_t)v * 8);

	CHECK(b, pequal(r->ballast[p], p, 4242, 0, MT_BALLAST),
	      "context bytes kept since the first superstep changed");
	in[0] = fold(p, x);
	in[1] = r->bad[p];

	pems_allreduce(in, out, 2, PEMS_UINT64, PEMS_SUM);
	pems_allgather(&x, all, 8);
	if (p == r->first) {
		memcpy(r->got, all, (size_t)v * 8);
		r->digest = out[0];
		r->nbad = out[1];
		r->done = true;
	}
	pems_free(all);
}

/* Across ranks: the partner of VP p is half the machine away, on
 * another rank for most p when there are several. */
static const struct bp_harness mt_harness = { bp_far, bp_far_src, mt_vfail, mt_finish };

/* The SPMD entry (pems_spmd(mt_entry, r)): ballast, then the program. */
static inline void mt_entry(void *arg)
{
	struct mt_run *r = arg;
	unsigned p = bsp_pid();

	r->ballast[p] = pems_malloc(MT_BALLAST);
	pfill(r->ballast[p], p, 4242, 0, MT_BALLAST);
	r->prog(r);
	pems_free(r->ballast[p]);
}

static inline void mt_run_init(struct mt_run *r, void (*prog)(void *), unsigned v)
{
	memset(r, 0, sizeof(*r));
	r->base.hr = &mt_harness;
	r->prog = prog;
	r->v = v;
	r->first = mt_first(v, mt_w.rank, mt_w.nranks);
	r->got = calloc(v, 8);
	r->bad = calloc(v, sizeof(*r->bad));
	r->ballast = calloc(v, sizeof(*r->ballast));
	ck_assert(r->got && r->bad && r->ballast);
}

static inline void mt_run_free(struct mt_run *r)
{
	free(r->got);
	free(r->bad);
	free(r->ballast);
	r->got = NULL;
	r->bad = NULL;
	r->ballast = NULL;
}

#endif
