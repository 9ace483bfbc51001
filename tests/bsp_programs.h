/*
 * bsp_programs.h - the SPMD programs that both BSP test harnesses run,
 * with their sequential references: check_bsp.c runs them in one process
 * with the next VP as partner, check_mpi_bsp.c (mpi_test.h) across MPI
 * ranks with the VP half the machine away, so that most traffic crosses
 * ranks.
 *
 * A harness passes every program (pems_spmd's argument) a pointer to its
 * run struct, whose first member is a struct bp_run naming the harness:
 * its partner functions, how a VP reports a failed local check (CHECK)
 * and how it reports the value it reduced what it observed to
 * (bp_finish).  The harness compares those values, as a checksum, with
 * the ones the program's reference computes from first principles for
 * the same partner functions (struct bp_harness), so one program and one
 * reference serve both harnesses.
 *
 * What each harness checks beyond that (VP 0's fold in one process; the
 * ballast and the allreduce/allgather digest across ranks) stays in the
 * harness: it differs because the harnesses do.
 *
 * Header-only: everything is static inline (unused helpers do not warn).
 */
#ifndef BSP_PROGRAMS_H
#define BSP_PROGRAMS_H

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bsp.h"
#include "pems.h"
#include "pattern.h"

/* ---- the harness interface ---- */

struct bp_run;

struct bp_harness {
	/* VP p's partner of v (it puts to and gets from it) and the inverse:
	 * the VP whose partner p is */
	unsigned (*to)(unsigned p, unsigned v);
	unsigned (*from)(unsigned p, unsigned v);
	/* a failed CHECK on the calling VP, at @line of the program */
	void (*vfail)(struct bp_run *r, int line, const char *fmt, va_list ap)
		__attribute__((format(printf, 3, 0)));
	/* the last superstep(s) of every program: the calling VP reports @x */
	void (*finish)(struct bp_run *r, uint64_t x);
};

/* The first member of a harness's run struct. */
struct bp_run {
	const struct bp_harness *hr;
};

/* Sequential reference of a program: VP @pid's value among @v VPs under
 * harness @hr (its partner functions; a program without partner ignores
 * them). */
#define BP_REF(name)							\
	uint64_t name(const struct bp_harness *hr __attribute__((unused)), unsigned pid,	\
		      unsigned v)

static inline void bp_fail(struct bp_run *r, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline void bp_fail(struct bp_run *r, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	r->hr->vfail(r, line, fmt, ap);
	va_end(ap);
}

/* A local check on a VP; the harness counts the failures and keeps the
 * first message. */
#define CHECK(r, cond, ...)						\
	do {								\
		if (!(cond))						\
			bp_fail((r), __LINE__, __VA_ARGS__);		\
	} while (0)

static inline void bp_finish(struct bp_run *r, uint64_t x)
{
	r->hr->finish(r, x);
}

/* The start of every program: the run, v, p, p's partner t and the VP
 * src whose partner p is. */
#define BP_ARGS(arg)							\
	struct bp_run *r = (arg);					\
	unsigned v = bsp_nprocs(), p = bsp_pid();			\
	unsigned t = r->hr->to(p, v), src = r->hr->from(p, v);		\
	(void)r; (void)t; (void)src

/* The reference values of VPs [0, v) under @hr into @want; returns
 * their checksum (fold_all). */
static inline uint64_t bp_expect(BP_REF((*ref)), const struct bp_harness *hr, unsigned v,
				 uint64_t *want)
{
	unsigned i;

	for (i = 0; i < v; i++)
		want[i] = ref(hr, i, v);
	return fold_all(want, v);
}

/* The first VP whose value differs from the reference (v if none). */
static inline unsigned bp_first_diff(const uint64_t *got, const uint64_t *want, unsigned v)
{
	unsigned i;

	for (i = 0; i < v && got[i] == want[i]; i++)
		;
	return i;
}

/* ---- partner functions ---- */

static inline unsigned bp_next(unsigned p, unsigned v)
{
	return (p + 1) % v;
}

static inline unsigned bp_prev(unsigned p, unsigned v)
{
	return (p + v - 1) % v;
}

/* Half the machine away: on another rank for most p when there are
 * several ranks, far from p in the schedule of one. */
static inline unsigned bp_far(unsigned p, unsigned v)
{
	return (p + v / 2 + 1) % v;
}

/* the inverse of bp_far */
static inline unsigned bp_far_src(unsigned p, unsigned v)
{
	return (p + v - (v / 2 + 1) % v) % v;
}

/* ================= registration ================= */

#define RO_A 24
#define RO_S 40
#define RO_B 32
#define RO_C 56

/* what VP @from puts into the four areas of its partner */
static inline void ro_expect(unsigned char *a, unsigned char *s, unsigned char *b,
			     unsigned char *c, unsigned from)
{
	uint64_t x = 1000 + from;

	memcpy(a + 8, &x, 8);
	x++;
	memcpy(s + 16, &x, 8);
	x++;
	memcpy(b, &x, 8);
	x++;
	memcpy(c + 48, &x, 8);
}

static inline uint64_t ro_hash(const void *a, const void *s, const void *b, const void *c)
{
	uint64_t h = hash(H0, a, RO_A);

	h = hash(h, s, RO_S);
	h = hash(h, b, RO_B);
	return hash(h, c, RO_C);
}

/* Areas at different addresses on every VP (context heap, stack, libc
 * heap), on one rank or several, are matched by registration order. */
static inline void bp_reg_order(void *arg)
{
	BP_ARGS(arg);
	unsigned char s[RO_S];
	unsigned char *a = pems_calloc(1, RO_A), *b = calloc(1, RO_B), *c = pems_calloc(1, RO_C);
	uint64_t x, h;

	memset(s, 0, sizeof(s));
	bsp_push_reg(a, RO_A);
	bsp_push_reg(s, RO_S);
	bsp_push_reg(b, RO_B);
	bsp_push_reg(c, RO_C);
	bsp_sync();
	x = 1000 + p;
	bsp_put(t, &x, a, 8, 8);
	x++;
	bsp_put(t, &x, s, 16, 8);
	x++;
	bsp_put(t, &x, b, 0, 8);
	x++;
	bsp_put(t, &x, c, 48, 8);
	bsp_sync();
	h = ro_hash(a, s, b, c);
	bsp_pop_reg(s);
	bsp_pop_reg(a);
	bsp_pop_reg(c);
	bsp_pop_reg(b);
	bsp_sync();
	pems_free(a);
	free(b);
	pems_free(c);
	bp_finish(r, h);
}

static inline BP_REF(bp_ref_reg_order)
{
	unsigned char a[RO_A] = { 0 }, s[RO_S] = { 0 }, b[RO_B] = { 0 }, c[RO_C] = { 0 };

	ro_expect(a, s, b, c, hr->from(pid, v));
	return ro_hash(a, s, b, c);
}

/* Registrations of one address form a stack; push and pop take effect
 * at the next sync; pop then push again in one superstep. */
static inline void bp_push_pop(void *arg)
{
	BP_ARGS(arg);
	unsigned char *a = pems_calloc(1, 32), buf[32];
	uint64_t h = H0;

	bsp_push_reg(a, 8);
	bsp_push_reg(a, 32);
	bsp_sync();
	/* the latest registration of a (32 bytes) is in effect */
	pfill(buf, p, 1, 0, 32);
	bsp_put(t, buf, a, 0, 16);
	bsp_pop_reg(a);			/* the 32-byte one, from the next sync */
	bsp_put(t, buf + 16, a, 16, 16);	/* so this is still legal */
	bsp_sync();
	h = hash(h, a, 32);
	/* only the 8-byte registration is left */
	pfill(buf, p, 2, 0, 8);
	bsp_put(t, buf, a, 0, 8);
	bsp_sync();
	h = hash(h, a, 32);
	/* pop it and push again with another size in one superstep */
	bsp_pop_reg(a);
	bsp_push_reg(a, 24);
	pfill(buf, p, 3, 0, 8);
	bsp_put(t, buf, a, 0, 8);	/* the popped 8-byte one is still in effect */
	bsp_sync();
	h = hash(h, a, 32);
	pfill(buf, p, 4, 0, 16);
	bsp_put(t, buf, a, 8, 16);	/* needs the new 24-byte registration */
	bsp_sync();
	h = hash(h, a, 32);
	bsp_pop_reg(a);
	bsp_sync();
	pems_free(a);
	bp_finish(r, h);
}

static inline BP_REF(bp_ref_push_pop)
{
	unsigned s = hr->from(pid, v);
	unsigned char a[32] = { 0 };
	uint64_t h = H0;

	pfill(a, s, 1, 0, 32);
	h = hash(h, a, 32);
	pfill(a, s, 2, 0, 8);
	h = hash(h, a, 32);
	pfill(a, s, 3, 0, 8);
	h = hash(h, a, 32);
	pfill(a + 8, s, 4, 0, 16);
	return hash(h, a, 32);
}

/* ================= DRMA: bsp_put ================= */

/*
 * Building blocks of the put programs.  The harnesses combine them
 * differently on purpose: check_bsp.c runs the copy and the timing of
 * puts as two programs, check_mpi_bsp.c as one superstep with three
 * registrations (and a larger put, for many chunks across ranks).
 */

/* Two words into @y and @n bytes into @big of VP @to; the sources are
 * overwritten right after the calls, so only a copy taken at the call
 * delivers 1000+p, 2000+p and the pattern (p, 7). */
static inline void bp_put_copies_issue(unsigned to, unsigned p, uint64_t *y, void *big,
				       size_t n)
{
	uint64_t x = 1000 + p;
	unsigned char *s;

	bsp_put(to, &x, y, 0, 8);
	x = 2000 + p;
	bsp_put(to, &x, y, 8, 8);
	x = 3;
	s = pems_malloc(n);
	pfill(s, p, 7, 0, n);
	bsp_put(to, s, big, 0, n);
	pfill(s, p, 8, 0, n);	/* too late: the put has copied it */
	pems_free(s);
}

/* After the sync: what VP @from's bp_put_copies_issue delivered. */
static inline void bp_put_copies_check(struct bp_run *r, unsigned from, const uint64_t *y,
				       const void *big, size_t n)
{
	CHECK(r, y[0] == 1000 + from && y[1] == 2000 + from,
	      "y = {%llu, %llu}, expected {%u, %u} from VP %u: the source was not copied at the call",
	      (unsigned long long)y[0], (unsigned long long)y[1], 1000 + from, 2000 + from, from);
	CHECK(r, pequal(big, from, 7, 0, n),
	      "a %zu-byte put from VP %u did not deliver the source as it was at the call", n, from);
}

/* The reference of hash(hash(@h, y), big) after bp_put_copies_issue from @from. */
static inline uint64_t bp_put_copies_ref(uint64_t h, unsigned from, size_t n)
{
	uint64_t y[2] = { 1000 + from, 2000 + from };

	return phash(hash(h, y, sizeof(y)), from, 7, n);
}

/* Into the 16 words @w: 100+p at word p % 15 of VP @to, 7 at word 15 of
 * VP p itself; then checks that neither landed before the sync. */
static inline void bp_put_words_issue(struct bp_run *r, unsigned to, unsigned p, uint64_t *w)
{
	uint64_t x = 100 + p;
	bool clean = true;
	unsigned i;

	bsp_put(to, &x, w, 8 * (p % 15), 8);
	x = 7;
	bsp_put(p, &x, w, 8 * 15, 8);
	x = 0;
	for (i = 0; i < 16; i++)
		clean &= w[i] == 0;
	CHECK(r, clean, "a put was applied before bsp_sync");
}

/* The 16 words on a VP after bp_put_words_issue from @from. */
static inline void bp_put_words_ref(uint64_t *w, unsigned from)
{
	memset(w, 0, 16 * sizeof(*w));
	w[from % 15] = 100 + from;
	w[15] = 7;
}

/* Every VP puts into VP 0 and VP v-1 (on the first and the last rank)
 * and into one more, at offset 8*pid. */
static inline unsigned pto_second(unsigned p, unsigned v)
{
	return (p * 31 + 7) % v;
}

static inline void bp_puts_to_one(void *arg)
{
	BP_ARGS(arg);
	uint64_t *all = pems_calloc(v, 8), x, h;

	bsp_push_reg(all, (bsp_size_t)v * 8);
	bsp_sync();
	x = mix64(p);
	bsp_put(0, &x, all, (bsp_size_t)p * 8, 8);
	x = mix64(p) + 1;
	bsp_put(v - 1, &x, all, (bsp_size_t)p * 8, 8);
	x = mix64(p) + 2;
	bsp_put(pto_second(p, v), &x, all, (bsp_size_t)p * 8, 8);
	bsp_sync();
	h = hash(H0, all, (size_t)v * 8);
	bsp_pop_reg(all);
	bsp_sync();
	pems_free(all);
	bp_finish(r, h);
}

static inline BP_REF(bp_ref_puts_to_one)
{
	uint64_t *all = calloc(v, 8), h;
	unsigned s;

	for (s = 0; s < v; s++) {	/* issue order: the last one wins */
		if (pid == 0)
			all[s] = mix64(s);
		if (pid == v - 1)
			all[s] = mix64(s) + 1;
		if (pto_second(s, v) == pid)
			all[s] = mix64(s) + 2;
	}
	h = hash(H0, all, (size_t)v * 8);
	free(all);
	return h;
}

/* Overlapping puts from many VPs (on several ranks): applied in (source
 * pid, issue order), so the last writer in that order wins. */
#define OV 64

static inline unsigned ov_target(const struct bp_harness *hr, unsigned p, unsigned v,
				 unsigned j)
{
	return j == 0 ? 0 : j == 1 ? hr->to(p, v) : (p * 7 + 3) % v;
}

static inline void bp_put_overlap(void *arg)
{
	BP_ARGS(arg);
	unsigned char a[OV], buf[24];
	unsigned j;
	uint64_t h;

	memset(a, 0, sizeof(a));
	bsp_push_reg(a, OV);
	bsp_sync();
	for (j = 0; j < 3; j++) {
		unsigned tt = ov_target(r->hr, p, v, j);

		pfill(buf, p, 10 + j, 0, 24);
		bsp_put(tt, buf, a, (p * 5 + tt) % 41, 24);
		pfill(buf, p, 20 + j, 0, 16);
		bsp_put(tt, buf, a, (p * 3 + j) % 49, 16);
	}
	bsp_sync();
	h = hash(H0, a, OV);
	bsp_pop_reg(a);
	bsp_sync();
	bp_finish(r, h);
}

static inline BP_REF(bp_ref_put_overlap)
{
	unsigned char a[OV] = { 0 };
	unsigned s, j;

	for (s = 0; s < v; s++)
		for (j = 0; j < 3; j++) {
			if (ov_target(hr, s, v, j) != pid)
				continue;
			pfill(a + (s * 5 + pid) % 41, s, 10 + j, 0, 24);
			pfill(a + (s * 3 + j) % 49, s, 20 + j, 0, 16);
		}
	return hash(H0, a, OV);
}

/* ================= DRMA: bsp_get ================= */

/* A get (from a VP on another rank, across ranks) reads the value at the
 * end of the superstep (after the target's local writes, before that
 * superstep's puts); it writes its destination only at the sync. */
static inline void bp_get_value(void *arg)
{
	BP_ARGS(arg);
	uint64_t *x = pems_malloc(8), y = 1, z = 1, val, h;

	*x = 100 + p;
	bsp_push_reg(x, 8);
	bsp_sync();
	bsp_get(t, x, 0, &y, 8);
	val = 500 + p;
	bsp_put(t, &val, x, 0, 8);
	*x = 200 + p;		/* after the get was issued: the get sees this */
	bsp_get(p, x, 0, &z, 8);
	CHECK(r, y == 1 && z == 1, "a get wrote its destination before bsp_sync");
	bsp_sync();
	CHECK(r, y == 200 + t, "bsp_get from VP %u gave %llu, expected %u (its value at the end of the superstep, before the puts)",
	      t, (unsigned long long)y, 200 + t);
	CHECK(r, z == 200 + p, "bsp_get from itself gave %llu, expected %u",
	      (unsigned long long)z, 200 + p);
	CHECK(r, *x == 500 + src, "the put from VP %u gave %llu, expected %u", src,
	      (unsigned long long)*x, 500 + src);
	h = hash_u64(hash_u64(hash_u64(H0, y), z), *x);
	bsp_pop_reg(x);
	bsp_sync();
	pems_free(x);
	bp_finish(r, h);
}

static inline BP_REF(bp_ref_get_value)
{
	return hash_u64(hash_u64(hash_u64(H0, 200 + hr->to(pid, v)), 200 + pid),
			500 + hr->from(pid, v));
}

/* Gets from the context heap, the stack and libc memory of a VP whose
 * context is on disk (in the spilling configurations).  The target is
 * bp_far under both harnesses, not their partner: far from p in the
 * schedule of one process, on another rank across ranks. */
#define GH 60000	/* larger than the message chunks of every configuration */
#define GS 3000
#define GL 5000

static inline void bp_get_disk(void *arg)
{
	BP_ARGS(arg);
	unsigned tt = bp_far(p, v);
	unsigned char s[GS], d3[2000];
	unsigned char *hp = pems_malloc(GH), *lp = malloc(GL), *d1, *d2, *d4;
	uint64_t h;

	pfill(hp, p, 3, 0, GH);
	pfill(s, p, 4, 0, GS);
	pfill(lp, p, 5, 0, GL);
	bsp_push_reg(hp, GH);
	bsp_push_reg(s, GS);
	bsp_push_reg(lp, GL);
	bsp_sync();
	bsp_sync();	/* with a small budget every context is on disk by now */
	d1 = pems_malloc(9000);
	d2 = pems_malloc(GH);
	d4 = pems_malloc(3000);
	memset(d3, 0, sizeof(d3));
	bsp_get(tt, hp, 4000, d1, 9000);
	bsp_get(tt, hp, 0, d2, GH);
	bsp_get(tt, s, 100, d3, 2000);
	bsp_get(tt, lp, 1234, d4, 3000);
	bsp_sync();
	CHECK(r, pequal(d1, tt, 3, 4000, 9000), "heap bytes [4000, 13000) of VP %u are wrong", tt);
	CHECK(r, pequal(d2, tt, 3, 0, GH), "heap bytes [0, %d) of VP %u are wrong", GH, tt);
	CHECK(r, pequal(d3, tt, 4, 100, 2000), "stack bytes of VP %u are wrong", tt);
	CHECK(r, pequal(d4, tt, 5, 1234, 3000), "libc-heap bytes of VP %u are wrong", tt);
	h = hash(hash(hash(hash(H0, d1, 9000), d2, GH), d3, 2000), d4, 3000);
	bsp_pop_reg(hp);
	bsp_pop_reg(s);
	bsp_pop_reg(lp);
	bsp_sync();
	pems_free(d1);
	pems_free(d2);
	pems_free(d4);
	pems_free(hp);
	free(lp);
	bp_finish(r, h);
}

static inline BP_REF(bp_ref_get_disk)
{
	unsigned tt = bp_far(pid, v);
	unsigned char b[9000];
	uint64_t h;

	pfill(b, tt, 3, 4000, 9000);
	h = hash(H0, b, 9000);
	h = phash(h, tt, 3, GH);
	pfill(b, tt, 4, 100, 2000);
	h = hash(h, b, 2000);
	pfill(b, tt, 5, 1234, 3000);
	return hash(h, b, 3000);
}

#endif
