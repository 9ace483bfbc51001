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
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bsp.h"
#include "pems.h"
#include "runtime.h"	/* pems_config_derive: the budget the runtime needs */

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

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

static inline double mt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Scratch dir: $PEMS_TEST_TMP (shared by the ranks; scratch file names
 * carry the pid), else a fresh one per rank under /tmp. */
static inline const char *mt_tmp(void)
{
	static char dir[4096];
	const char *s = getenv("PEMS_TEST_TMP");

	if (s && *s)
		return s;
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/pems-mpi-test.XXXXXX");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			abort();
		}
	}
	return dir;
}

/* ---- configurations ---- */

struct mt_cfg {
	const char *name;
	unsigned v, k;		/* VPs, worker threads per rank */
	size_t mu, mem;		/* mem 0: the least budget the runtime accepts */
	enum pems_io_kind io;
	bool spill;		/* the budget forces contexts to disk */
};

/* Does the runtime accept @pc?  (pems_config_derive, message silenced) */
static inline bool mt_budget_ok(const struct pems_config *pc)
{
	struct pems_config tmp = *pc;
	struct pems_derived d;
	int saved, null, rc;

	fflush(stderr);
	saved = dup(2);
	null = open("/dev/null", O_WRONLY);
	if (null >= 0) {
		dup2(null, 2);
		close(null);
	}
	rc = pems_config_derive(&tmp, 0, &d);
	fflush(stderr);
	if (saved >= 0) {
		dup2(saved, 2);
		close(saved);
	}
	return rc == 0;
}

/* The least budget M per rank (to 4 KiB) the runtime accepts for @pc's
 * v, k and mu: k computing contexts and nothing more, so every finished
 * VP goes to disk after every superstep. */
static inline size_t mt_min_budget(const struct pems_config *pc)
{
	struct pems_config c = *pc;
	size_t lo, hi;

	for (hi = 8 * MiB; hi < ((size_t)64 << 30); hi += MiB) {
		c.mem = hi;
		if (mt_budget_ok(&c))
			break;
	}
	lo = hi - MiB;
	while (hi - lo > 4 * KiB) {
		size_t mid = (lo + (hi - lo) / 2) & ~(4 * KiB - 1);

		if (mid <= lo)
			break;
		c.mem = mid;
		if (mt_budget_ok(&c))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/* Every knob explicit, so the caller's PEMS_* environment cannot change
 * the test.  mem 0 means the least budget the runtime accepts: k run
 * slots of mu and nothing left to cache finished VPs, so every context
 * goes to disk after every superstep.  Returns pems_configure's result;
 * *mem_out gets M. */
static inline int mt_configure(const struct mt_cfg *c, size_t *mem_out)
{
	struct pems_config pc;

	pems_config_init(&pc);
	pc.procs = c->v;
	pc.threads = c->k;
	pc.mu = c->mu;
	pc.mem = c->mem;
	pc.io = c->io;
	pc.stack = 256 * KiB;
	pc.msg_mem = 0;
	pc.qdepth = 32;
	pc.tmp[0] = mt_tmp();
	pc.ntmp = 1;
	pc.stats = false;
	pc.stats_json = NULL;
	pc.quiet = true;
	if (!pc.mem)
		pc.mem = mt_min_budget(&pc);
	if (mem_out)
		*mem_out = pc.mem;
	return pems_configure(&pc);
}

/* ---- data: patterns, hashes ---- */

#define MT_H0 0xcbf29ce484222325ull

static inline uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static inline uint64_t mix3(uint64_t a, uint64_t b, uint64_t c)
{
	return mix64(mix64(mix64(a) ^ b) ^ c);
}

/* FNV-1a, byte by byte: the digest of a byte sequence. */
static inline uint64_t hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= c[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static inline uint64_t hash_u64(uint64_t h, uint64_t x)
{
	return hash(h, &x, sizeof(x));
}

/* Bytes [off, off+n) of the pattern named (a, b) into @dst. */
static inline void pfill(void *dst, uint64_t a, uint64_t b, size_t off, size_t n)
{
	unsigned char *d = dst;
	uint64_t s = mix64(mix64(a) ^ (b * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull));
	size_t i = 0;

	while (i < n) {
		size_t j = off + i;
		uint64_t w = mix64(s + (j >> 3));

		do {
			d[i++] = (unsigned char)(w >> (8 * (j & 7)));
			j++;
		} while (i < n && (j & 7));
	}
}

static inline bool pequal(const void *p, uint64_t a, uint64_t b, size_t off, size_t n)
{
	unsigned char tmp[512];
	const unsigned char *c = p;
	size_t done = 0;

	while (done < n) {
		size_t m = n - done < sizeof(tmp) ? n - done : sizeof(tmp);

		pfill(tmp, a, b, off + done, m);
		if (memcmp(c + done, tmp, m))
			return false;
		done += m;
	}
	return true;
}

/* hash of the pattern (a, b) [0, n) without materialising it */
static inline uint64_t phash(uint64_t h, uint64_t a, uint64_t b, size_t n)
{
	unsigned char tmp[512];
	size_t done = 0;

	while (done < n) {
		size_t m = n - done < sizeof(tmp) ? n - done : sizeof(tmp);

		pfill(tmp, a, b, done, m);
		h = hash(h, tmp, m);
		done += m;
	}
	return h;
}

static inline bool all_bytes(const void *p, int c, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != (unsigned char)c)
			return false;
	return true;
}

/* ---- one run: what the VPs of this rank report ---- */

/* Bytes every VP keeps, with a known pattern, in its context for the
 * whole program; mt_finish checks them (they went to disk and back with
 * the context in every superstep of a spilling configuration). */
#define MT_BALLAST (64 * KiB)

struct mt_run {
	void (*prog)(void *);	/* the program (mt_entry runs it) */
	unsigned char **ballast;	/* per VP */
	unsigned v;		/* VPs */
	unsigned first;		/* first VP of this rank */
	uint64_t *got;		/* every VP's value (mt_finish), on every rank */
	uint64_t digest;	/* sum of mt_fold(pid, value), over all VPs */
	uint64_t nbad;		/* failed CHECKs, over all VPs */
	bool done;		/* the first VP of this rank reached the end */
	uint32_t *bad;		/* per VP: failed CHECKs (written by that VP only) */
	atomic_uint nwhy;
	char why[512];		/* the first failure on this rank */
};

static inline void mt_fail(struct mt_run *r, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline void mt_fail(struct mt_run *r, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	r->bad[bsp_pid()]++;
	if (atomic_fetch_add(&r->nwhy, 1))
		return;
	n = snprintf(r->why, sizeof(r->why), "rank %u, VP %u, line %d: ", pems_rank(),
		     bsp_pid(), line);
	va_start(ap, fmt);
	vsnprintf(r->why + n, sizeof(r->why) - (size_t)n, fmt, ap);
	va_end(ap);
}

/* A local check on a VP; failures are counted and reduced by mt_finish. */
#define CHECK(r, cond, ...)						\
	do {								\
		if (!(cond))						\
			mt_fail((r), __LINE__, __VA_ARGS__);		\
	} while (0)

static inline uint64_t mt_fold(unsigned pid, uint64_t x)
{
	return mix64(x ^ mix64((uint64_t)pid + 1));
}

/* Last supersteps of every program: the digest (sum of folds, via
 * pems_allreduce) and every VP's value (via pems_allgather) reach every
 * rank. */
static inline void mt_finish(struct mt_run *r, uint64_t x)
{
	unsigned p = bsp_pid(), v = bsp_nprocs();
	uint64_t in[2], out[2] = { 0, 0 };
	uint64_t *all = pems_malloc((size_t)v * 8);

	CHECK(r, pequal(r->ballast[p], p, 4242, 0, MT_BALLAST),
	      "context bytes kept since the first superstep changed");
	in[0] = mt_fold(p, x);
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
