/*
 * check_mpi_bsp.c - BSPlib semantics and the pems collectives across MPI
 * ranks: the same programs give the same results for any number of ranks.
 *
 * tests/run.sh runs this under `mpirun -np N` for N = 1, 2, 4 with
 * CK_FORK=no, so every rank runs the same list of tests in the same order
 * and calls pems_spmd the same number of times.
 *
 * Every SPMD program (struct mpi_case) runs on every configuration
 * (struct spmd_cfg: v = 4, 7, 13, 64, 256; v not a multiple of the ranks
 * in most, one VP per rank for v = 4 on 4 ranks; the least budget the
 * runtime accepts, so that every context goes to disk after every
 * superstep, v*mu >= 8*M for v = 256).
 * Targets are chosen so that most traffic crosses ranks (VP p talks to
 * p + v/2 + 1, bp_far).  Each VP checks what it can locally (CHECK) and
 * reduces what it observed to one 64-bit value; mt_finish (mpi_test.h)
 * combines them into a digest with pems_allreduce and hands every value
 * to every rank with pems_allgather.  The test compares the digest with
 * the one a sequential reference computes from first principles
 * (mpi_case.ref_vp or .ref), so a pass means "the same as one rank, the
 * same as the BSP semantics", whatever the number of ranks.  Spilling
 * configurations also assert that contexts were written and read back.
 * The programs that check_bsp.c runs too, with the next VP as partner,
 * are in bsp_programs.h; those here are the MPI test's own.
 * PEMS_TEST_TIMES=1 prints the seconds of every run (rank 0);
 * PEMS_TEST_REDUCED=1 (set by make tsan) leaves out v = 256.
 */
#include "mpi_test.h"

#include <errno.h>

/* ---- configurations ---- */

static const struct spmd_cfg cfgs[] = {
	/* 7 VPs: 1+2+2+2 on 4 ranks, 3+4 on 2 */
	{ "v7-k2-uring-spill", 7, 2, 1 * MiB, 0, PEMS_IO_KIND_URING, true },
	/* one VP per rank on 4 ranks; everything resident, big chunks */
	{ "v4-k1-uring", 4, 1, 1 * MiB, 96 * MiB, PEMS_IO_KIND_URING, false },
	{ "v13-k1-sync-spill", 13, 1, 1 * MiB, 0, PEMS_IO_KIND_SYNC, true },
	{ "v64-k2-aio-spill", 64, 2, 1 * MiB, 0, PEMS_IO_KIND_AIO, true },
	/* v*mu = 256 MiB >= 8*M (M is about 22 MiB) */
	{ "v256-k2-uring-spill", 256, 2, 1 * MiB, 0, PEMS_IO_KIND_URING, true },
};
#define NCFG (sizeof(cfgs) / sizeof(cfgs[0]))

/* ================= layout ================= */

/* VP p lives on rank r with v*r/n <= p < v*(r+1)/n; bsp_nprocs is v. */
static void spmd_layout(void *arg)
{
	BP_ARGS(arg);
	unsigned rk = pems_rank(), n = pems_nranks();

	CHECK(r, v == mt_run_of(r)->v, "bsp_nprocs() = %u, expected %u", v, mt_run_of(r)->v);
	CHECK(r, n == mt_w.nranks, "pems_nranks() = %u inside the SPMD section, %u outside", n,
	      mt_w.nranks);
	CHECK(r, mt_first(v, rk, n) <= p && p < mt_first(v, rk + 1, n),
	      "VP %u runs on rank %u of %u, which hosts [%u, %u)", p, rk, n, mt_first(v, rk, n),
	      mt_first(v, rk + 1, n));
	bsp_sync();
	mt_finish(r, hash_u64(hash_u64(H0, p), v));
}

static void ref_layout(unsigned v, uint64_t *out)
{
	unsigned i;

	for (i = 0; i < v; i++)
		out[i] = hash_u64(hash_u64(H0, i), v);
}

/* ================= DRMA: bsp_put ================= */

#define BIGPUT 100000	/* many message chunks in the spilling configs */

/* A put copies its source at the call; it lands at the next sync (not
 * before, not again), at its offset; a put to oneself too.  check_bsp.c
 * runs these as two programs; here they share one superstep with three
 * registrations, the copies going to the far partner and the words to
 * the next VP, so that both kinds of traffic cross ranks at once. */
static void spmd_put_semantics(void *arg)
{
	BP_ARGS(arg);
	uint64_t y[2] = { 0, 0 }, w[16], h;
	unsigned char *big = pems_calloc(1, BIGPUT);

	memset(w, 0, sizeof(w));
	bsp_push_reg(y, sizeof(y));
	bsp_push_reg(big, BIGPUT);
	bsp_push_reg(w, sizeof(w));
	bsp_sync();
	bp_put_copies_issue(t, p, y, big, BIGPUT);
	bp_put_words_issue(r, bp_next(p, v), p, w);
	bsp_sync();
	bp_put_copies_check(r, src, y, big, BIGPUT);
	h = hash(hash(hash(H0, y, sizeof(y)), big, BIGPUT), w, sizeof(w));
	bsp_sync();
	CHECK(r, hash(hash(hash(H0, y, sizeof(y)), big, BIGPUT), w, sizeof(w)) == h,
	      "an area changed in a superstep without puts");
	bsp_pop_reg(y);
	bsp_pop_reg(big);
	bsp_pop_reg(w);
	bsp_sync();
	pems_free(big);
	mt_finish(r, h);
}

static void ref_put_semantics(unsigned v, uint64_t *out)
{
	uint64_t w[16];
	unsigned i;

	for (i = 0; i < v; i++) {
		bp_put_words_ref(w, bp_prev(i, v));
		out[i] = hash(bp_put_copies_ref(H0, bp_far_src(i, v), BIGPUT), w, sizeof(w));
	}
}

/* ================= DRMA: bsp_get ================= */

/* Every VP gets one word from each of min(v, GM_N) VPs spread over the
 * machine (most of them remote), and a block from its partner: requests
 * and replies keep issue order.  (GM_N bounds the cost: each get from a
 * spilled context is one read of the context file.) */
#define GM_N 32

static uint64_t gm_word(unsigned owner, unsigned idx)
{
	return mix64((uint64_t)owner * 1000003 + idx);
}

/* the i-th VP that VP p reads from: distinct for i < gm_n(v) */
static unsigned gm_n(unsigned v)
{
	return v < GM_N ? v : GM_N;
}

static unsigned gm_src(unsigned p, unsigned v, unsigned i)
{
	return (p * 7 + i * (v / gm_n(v))) % v;
}

static void spmd_get_many(void *arg)
{
	BP_ARGS(arg);
	uint64_t *tbl = pems_malloc((size_t)v * 8), *got = pems_calloc(v, 8), blk[8], h;
	unsigned i, j, nb = v < 8 ? v : 8, n = gm_n(v);

	for (j = 0; j < v; j++)
		tbl[j] = gm_word(p, j);
	memset(blk, 0, sizeof(blk));
	bsp_push_reg(tbl, (bsp_size_t)v * 8);
	bsp_sync();
	for (i = 0; i < n; i++) {
		j = gm_src(p, v, i);
		bsp_get(j, tbl, (bsp_size_t)8 * ((p + j) % v), &got[i], 8);
	}
	bsp_get(t, tbl, 0, blk, (bsp_size_t)nb * 8);
	bsp_sync();
	for (i = 0; i < n; i++) {
		j = gm_src(p, v, i);
		CHECK(r, got[i] == gm_word(j, (p + j) % v), "get from VP %u gave the wrong word", j);
	}
	h = hash(hash(H0, got, (size_t)v * 8), blk, sizeof(blk));
	bsp_pop_reg(tbl);
	bsp_sync();
	pems_free(tbl);
	pems_free(got);
	mt_finish(r, h);
}

static void ref_get_many(unsigned v, uint64_t *out)
{
	uint64_t *got = malloc((size_t)v * 8), blk[8];
	unsigned i, j, k, nb = v < 8 ? v : 8;

	for (i = 0; i < v; i++) {
		memset(got, 0, (size_t)v * 8);
		for (k = 0; k < gm_n(v); k++) {
			j = gm_src(i, v, k);
			got[k] = gm_word(j, (i + j) % v);
		}
		memset(blk, 0, sizeof(blk));
		for (j = 0; j < nb; j++)
			blk[j] = gm_word(bp_far(i, v), j);
		out[i] = hash(hash(H0, got, (size_t)v * 8), blk, sizeof(blk));
	}
	free(got);
}

/* ================= BSMP ================= */

/* Step 1 sends of VP s: (destination, payload bytes), in issue order;
 * tag = s << 16 | j. */
#define SQ_N 4

static void sq_msg(unsigned s, unsigned v, unsigned j, unsigned *dst, size_t *len)
{
	switch (j) {
	case 0: *dst = bp_far(s, v); *len = 0; break;
	case 1: *dst = bp_next(s, v); *len = 37 + s % 50; break;
	case 2: *dst = s; *len = 3000 + (s * 131) % 5000; break;
	default: *dst = bp_far(s, v); *len = 70000; break;	/* many chunks */
	}
}

/* How the receiver consumes the n-th message of its queue: bsp_move of
 * at most 100 bytes (even n) or bsp_hpmove (odd n); both hashed alike. */
static uint64_t sq_consume_hash(uint64_t h, unsigned n, uint64_t tag, size_t len,
				const unsigned char *payload)
{
	h = hash_u64(hash_u64(h, tag), len);
	return hash(h, payload, n % 2 == 0 && len > 100 ? 100 : len);
}

static void spmd_send_queue(void *arg)
{
	BP_ARGS(arg);
	size_t ts = 8, status, len, acc, want_acc = 0;
	unsigned char *buf = pems_malloc(70000), mv[100];
	bsp_nprocs_t np;
	unsigned j, s, n, want_n = 0, d;
	uint64_t tag, h = H0;
	uint32_t t4;
	void *tp = NULL, *pp = NULL;

	/* step 0: tag size 0 still in effect; the new one from the next sync */
	bsp_set_tagsize(&ts);
	CHECK(r, ts == 0, "bsp_set_tagsize returned %zu, expected the default 0", ts);
	pfill(buf, p, 90, 0, 16);
	bsp_send(t, NULL, buf, 16);
	bsp_sync();
	bsp_qsize(&np, &acc);
	CHECK(r, np == 1 && acc == 16, "step 1: queue %u messages / %zu bytes, expected 1 / 16",
	      np, acc);
	bsp_get_tag(&status, &tag);
	CHECK(r, status == 16, "bsp_get_tag status %zu, expected 16", status);
	bsp_move(mv, 100);
	CHECK(r, pequal(mv, src, 90, 0, 16), "payload from VP %u is wrong", src);
	h = hash(h, mv, 16);
	/* step 1: four messages with 8-byte tags, to three VPs */
	for (j = 0; j < SQ_N; j++) {
		sq_msg(p, v, j, &d, &len);
		tag = (uint64_t)p << 16 | j;
		pfill(buf, p, 100 + j, 0, len);
		bsp_send(d, &tag, buf, len);
	}
	bsp_sync();
	/* step 2: the queue is in (source, issue) order */
	for (s = 0; s < v; s++)
		for (j = 0; j < SQ_N; j++) {
			sq_msg(s, v, j, &d, &len);
			if (d == p) {
				want_n++;
				want_acc += len;
			}
		}
	bsp_qsize(&np, &acc);
	CHECK(r, np == want_n && acc == want_acc,
	      "step 2: bsp_qsize %u messages / %zu bytes, expected %u / %zu", np, acc, want_n,
	      want_acc);
	for (n = 0;; n++) {
		uint64_t tg = 0;

		bsp_get_tag(&status, &tg);
		if (status == (bsp_size_t)-1)
			break;
		if (n % 2 == 0) {
			memset(mv, 0, sizeof(mv));
			bsp_move(mv, sizeof(mv));
			h = sq_consume_hash(h, n, tg, status, mv);
		} else {
			len = bsp_hpmove(&tp, &pp);
			CHECK(r, len == status && !memcmp(tp, &tg, 8),
			      "bsp_hpmove disagrees with bsp_get_tag");
			h = sq_consume_hash(h, n, tg, len, pp);
		}
		CHECK(r, pequal(n % 2 ? pp : (void *)mv, tg >> 16, 100 + (tg & 0xffff), 0,
				n % 2 == 0 && status > 100 ? 100 : status),
		      "payload of message %u (tag %#llx) is wrong", n, (unsigned long long)tg);
	}
	CHECK(r, n == want_n, "consumed %u messages, expected %u", n, want_n);
	bsp_qsize(&np, &acc);
	CHECK(r, np == 0 && acc == 0, "queue not empty after consuming it");
	/* step 2: a 4-byte tag from the next sync */
	ts = 4;
	bsp_set_tagsize(&ts);
	CHECK(r, ts == 8, "bsp_set_tagsize returned %zu, expected 8", ts);
	bsp_sync();
	t4 = 0xabcd0000u | p;
	tag = mix64(p);
	bsp_send(bp_next(p, v), &t4, &tag, 8);
	bsp_sync();
	/* step 4: one message from prev with a 4-byte tag */
	t4 = 0;
	tag = 0;
	bsp_get_tag(&status, &t4);
	CHECK(r, status == 8 && t4 == (0xabcd0000u | bp_prev(p, v)),
	      "4-byte tag message: status %zu tag %#x", status, t4);
	bsp_move(&tag, 8);
	CHECK(r, tag == mix64(bp_prev(p, v)), "4-byte tag message: wrong payload");
	h = hash_u64(hash_u64(h, t4), tag);
	bsp_sync();
	/* step 5: messages last one superstep */
	bsp_qsize(&np, &acc);
	CHECK(r, np == 0, "%u messages of an earlier superstep are still queued", np);
	pems_free(buf);
	mt_finish(r, h);
}

static void ref_send_queue(unsigned v, uint64_t *out)
{
	unsigned char *buf = malloc(70000);
	unsigned i, s, j, n, d;
	size_t len;

	for (i = 0; i < v; i++) {
		uint64_t h = H0;

		pfill(buf, bp_far_src(i, v), 90, 0, 16);
		h = hash(h, buf, 16);
		for (s = 0, n = 0; s < v; s++)
			for (j = 0; j < SQ_N; j++) {
				sq_msg(s, v, j, &d, &len);
				if (d != i)
					continue;
				pfill(buf, s, 100 + j, 0, len);
				h = sq_consume_hash(h, n++, (uint64_t)s << 16 | j, len, buf);
			}
		h = hash_u64(h, 0xabcd0000u | bp_prev(i, v));
		out[i] = hash_u64(h, mix64(bp_prev(i, v)));
	}
	free(buf);
}

/* ================= collectives ================= */

struct m2 {
	uint64_t a, b, c, d;	/* 2x2 matrix mod 2^64 */
};

static void m2_mul(void *inout, const void *in, size_t count)
{
	struct m2 *x = inout;
	const struct m2 *y = in;
	size_t i;

	for (i = 0; i < count; i++) {
		struct m2 z = { x[i].a * y[i].a + x[i].b * y[i].c, x[i].a * y[i].b + x[i].b * y[i].d,
				x[i].c * y[i].a + x[i].d * y[i].c, x[i].c * y[i].b + x[i].d * y[i].d };

		x[i] = z;
	}
}

static void m2_of(unsigned p, struct m2 *m)
{
	m[0] = (struct m2){ 1, p + 1, mix64(p) & 7, 1 };
	m[1] = (struct m2){ mix64(p) | 1, 3, 5, p };
}

/* Per-VP inputs of the reductions */
struct ar_in {
	int64_t i64[3];
	uint64_t u64[2];
	int32_t i32;
	double dbl;
	float flt;
};

static void ar_of(unsigned p, struct ar_in *a)
{
	a->i64[0] = (int64_t)(mix64(p) % 1000000) - 500000;
	a->i64[1] = (int64_t)(mix64(p + 99) % 77) - 30;
	a->i64[2] = p;
	a->u64[0] = mix64(p);
	a->u64[1] = p % 5 + 1;
	a->i32 = (int32_t)(mix64(p + 7) % 100000) - 40000;
	a->dbl = (double)((int64_t)(mix64(p + 3) % 2000001) - 1000000);	/* exact sums */
	a->flt = (float)((int)(mix64(p + 4) % 4001) - 2000) / 8.0f;
}

#define SENT 0x5eu	/* "not written" marker byte */

/* What spmd_allreduce obtains on a VP; rsum and rmin are written on
 * their roots only (SENT bytes elsewhere). */
struct ar_out {
	int64_t i64[9];		/* SUM, MIN, MAX of three */
	uint64_t u64[3];	/* SUM, PROD, MAX (in place) */
	int32_t i32;		/* MIN */
	double dbl;		/* SUM */
	float flt;		/* MAX */
	struct m2 mo[2];	/* the user op, in VP order */
	uint64_t rsum[5];	/* reduce SUM to VP v-1 */
	int64_t rmin;		/* reduce MIN to VP v/2 */
};

/* The value a VP reports for @o (field by field: no padding bytes). */
static uint64_t ar_digest(const struct ar_out *o)
{
	uint64_t h = H0;

	h = hash(h, o->i64, sizeof(o->i64));
	h = hash(h, o->u64, sizeof(o->u64));
	h = hash(h, &o->i32, sizeof(o->i32));
	h = hash(h, &o->dbl, sizeof(o->dbl));
	h = hash(h, &o->flt, sizeof(o->flt));
	h = hash(h, o->mo, sizeof(o->mo));
	h = hash(h, o->rsum, sizeof(o->rsum));
	return hash(h, &o->rmin, sizeof(o->rmin));
}

/* allreduce over every type and op (sums exact, so any combining order
 * gives the same bits), a non-commutative user op (VP order), reduce to
 * roots on the last rank and in the middle. */
static void spmd_allreduce(void *arg)
{
	BP_ARGS(arg);
	struct ar_in a;
	struct ar_out o;
	struct m2 m[2];
	uint64_t rin[5];
	unsigned j;

	ar_of(p, &a);
	pems_allreduce(a.i64, o.i64, 3, PEMS_INT64, PEMS_SUM);
	pems_allreduce(a.i64, o.i64 + 3, 3, PEMS_INT64, PEMS_MIN);
	pems_allreduce(a.i64, o.i64 + 6, 3, PEMS_INT64, PEMS_MAX);
	pems_allreduce(a.u64, o.u64, 1, PEMS_UINT64, PEMS_SUM);
	pems_allreduce(a.u64 + 1, o.u64 + 1, 1, PEMS_UINT64, PEMS_PROD);
	o.u64[2] = a.u64[0];
	pems_allreduce(&o.u64[2], &o.u64[2], 1, PEMS_UINT64, PEMS_MAX);	/* in place */
	pems_allreduce(&a.i32, &o.i32, 1, PEMS_INT32, PEMS_MIN);
	pems_allreduce(&a.dbl, &o.dbl, 1, PEMS_DOUBLE, PEMS_SUM);
	pems_allreduce(&a.flt, &o.flt, 1, PEMS_FLOAT, PEMS_MAX);
	m2_of(p, m);
	pems_allreduce_user(m, o.mo, 2, sizeof(struct m2), m2_mul);
	for (j = 0; j < 5; j++)
		rin[j] = mix64(p * 5 + j);
	memset(o.rsum, SENT, sizeof(o.rsum));
	pems_reduce(v - 1, rin, o.rsum, 5, PEMS_UINT64, PEMS_SUM);
	memset(&o.rmin, SENT, sizeof(o.rmin));
	pems_reduce(v / 2, a.i64, &o.rmin, 1, PEMS_INT64, PEMS_MIN);
	if (p != v - 1)
		CHECK(r, all_bytes(o.rsum, SENT, sizeof(o.rsum)), "pems_reduce wrote out on a non-root VP");
	mt_finish(r, ar_digest(&o));
}

/* Every VP's inputs combined in VP order into @o (the roots' view). */
static void ar_combine(unsigned v, struct ar_out *o)
{
	struct ar_in a;
	struct m2 m[2];
	unsigned i, j;

	memset(o, 0, sizeof(*o));
	for (j = 0; j < 3; j++) {
		o->i64[3 + j] = INT64_MAX;
		o->i64[6 + j] = INT64_MIN;
	}
	o->u64[1] = 1;
	o->i32 = INT32_MAX;
	o->flt = -3e38f;
	o->rmin = INT64_MAX;
	for (i = 0; i < v; i++) {
		ar_of(i, &a);
		for (j = 0; j < 3; j++) {
			o->i64[j] += a.i64[j];
			if (a.i64[j] < o->i64[3 + j])
				o->i64[3 + j] = a.i64[j];
			if (a.i64[j] > o->i64[6 + j])
				o->i64[6 + j] = a.i64[j];
		}
		o->u64[0] += a.u64[0];
		o->u64[1] *= a.u64[1];
		if (a.u64[0] > o->u64[2])
			o->u64[2] = a.u64[0];
		if (a.i32 < o->i32)
			o->i32 = a.i32;
		o->dbl += a.dbl;
		if (a.flt > o->flt)
			o->flt = a.flt;
		m2_of(i, m);
		if (i == 0)
			memcpy(o->mo, m, sizeof(o->mo));
		else
			m2_mul(o->mo, m, 2);
		for (j = 0; j < 5; j++)
			o->rsum[j] += mix64(i * 5 + j);
		if (a.i64[0] < o->rmin)
			o->rmin = a.i64[0];
	}
}

static void ref_allreduce(unsigned v, uint64_t *out)
{
	struct ar_out all, o;
	unsigned i;

	ar_combine(v, &all);
	for (i = 0; i < v; i++) {
		o = all;
		if (i != v - 1)
			memset(o.rsum, SENT, sizeof(o.rsum));
		if (i != v / 2)
			memset(&o.rmin, SENT, sizeof(o.rmin));
		out[i] = ar_digest(&o);
	}
}

/* broadcast from the last VP and from one in the middle, gather to a
 * root, allgather of odd sizes, exscan (identity on VP 0). */
#define BC1 1000
#define BC2 24
#define GA 16
#define AG 12

static void ex_of(unsigned p, int64_t *x, uint64_t *u, double *d)
{
	x[0] = (int64_t)(mix64(p) % 1000) - 300;
	x[1] = p;
	*u = mix64(p + 11) >> 3;
	*d = (double)(mix64(p + 12) % 1000);
}

static void spmd_bcast_gather_scan(void *arg)
{
	BP_ARGS(arg);
	unsigned char *b1 = pems_malloc(BC1), b2[BC2], gin[GA], agin[AG];
	unsigned char *gout = p == v / 2 ? pems_malloc((size_t)v * GA) : NULL;
	unsigned char *agout = pems_malloc((size_t)v * AG);
	int64_t x[2], xs[2];
	uint64_t u, us, h = H0;
	double d, ds;

	if (p == v - 1)
		pfill(b1, p, 50, 0, BC1);
	else
		memset(b1, 0xee, BC1);
	if (p == v / 3)
		pfill(b2, p, 51, 0, BC2);
	else
		memset(b2, 0xee, BC2);
	pems_broadcast(v - 1, b1, BC1);
	pems_broadcast(v / 3, b2, BC2);
	CHECK(r, pequal(b1, v - 1, 50, 0, BC1), "broadcast from VP %u: wrong bytes", v - 1);
	pfill(gin, p, 52, 0, GA);
	pems_gather(v / 2, gin, gout, GA);
	pfill(agin, p, 53, 0, AG);
	pems_allgather(agin, agout, AG);
	ex_of(p, x, &u, &d);
	pems_exscan(x, xs, 2, PEMS_INT64, PEMS_SUM);
	pems_exscan(&u, &us, 1, PEMS_UINT64, PEMS_MAX);
	pems_exscan(&d, &ds, 1, PEMS_DOUBLE, PEMS_SUM);
	h = hash(h, b1, BC1);
	h = hash(h, b2, BC2);
	if (gout)
		h = hash(h, gout, (size_t)v * GA);
	h = hash(h, agout, (size_t)v * AG);
	h = hash(h, xs, sizeof(xs));
	h = hash_u64(h, us);
	h = hash(h, &ds, sizeof(ds));
	pems_free(b1);
	pems_free(gout);
	pems_free(agout);
	mt_finish(r, h);
}

static void ref_bcast_gather_scan(unsigned v, uint64_t *out)
{
	unsigned char *b1 = malloc(BC1), b2[BC2], *g = malloc((size_t)v * GA);
	unsigned char *ag = malloc((size_t)v * AG);
	int64_t xs[2] = { 0, 0 }, x[2];
	uint64_t us = 0, u, h;
	double ds = 0, d;
	unsigned i;

	pfill(b1, v - 1, 50, 0, BC1);
	pfill(b2, v / 3, 51, 0, BC2);
	for (i = 0; i < v; i++) {
		pfill(g + (size_t)i * GA, i, 52, 0, GA);
		pfill(ag + (size_t)i * AG, i, 53, 0, AG);
	}
	for (i = 0; i < v; i++) {
		h = H0;
		h = hash(h, b1, BC1);
		h = hash(h, b2, BC2);
		if (i == v / 2)
			h = hash(h, g, (size_t)v * GA);
		h = hash(h, ag, (size_t)v * AG);
		h = hash(h, xs, sizeof(xs));
		h = hash_u64(h, us);
		out[i] = hash(h, &ds, sizeof(ds));
		ex_of(i, x, &u, &d);	/* the prefix for VP i+1 */
		xs[0] += x[0];
		xs[1] += x[1];
		if (u > us)
			us = u;
		ds += d;
	}
	free(b1);
	free(g);
	free(ag);
}

/* alltoallv: block (i -> j) has a2_count(i, j, round) bytes; send blocks
 * are laid out backwards with gaps, receive blocks forwards with gaps
 * that must stay untouched. */
#define A2_GAP_S 3
#define A2_GAP_R 5

static size_t a2_count(unsigned i, unsigned j, unsigned v, unsigned round)
{
	uint64_t x = mix3(i, j, round);
	size_t n = x % 5 == 0 ? 0 : 1 + (x >> 8) % 300;

	if (j == bp_far(i, v))
		n += 5000 + 3000 * round;	/* several chunks, across ranks */
	return n;
}

/* rdispls (and recvcounts, if @rc) of receiver @j; returns the bytes of
 * its receive buffer */
static size_t a2_rdispls(unsigned j, unsigned v, unsigned round, size_t *rd, size_t *rc)
{
	size_t off = 0, n;
	unsigned i;

	for (i = 0; i < v; i++) {
		n = a2_count(i, j, v, round);
		rd[i] = off;
		if (rc)
			rc[i] = n;
		off += n + A2_GAP_R;
	}
	return off;
}

static void a2_expect(unsigned j, unsigned v, unsigned round, unsigned char *buf,
		      const size_t *rd)
{
	unsigned i;

	for (i = 0; i < v; i++) {
		size_t n = a2_count(i, j, v, round);

		pfill(buf + rd[i], i, 1000 + j + 7919 * round, 0, n);
		memset(buf + rd[i] + n, 0x5a, A2_GAP_R);
	}
}

static void a2_send(unsigned p, unsigned v, unsigned round, unsigned char *rbuf,
		    const size_t *rc, const size_t *rd, size_t *sc, size_t *sd)
{
	size_t off = 0, tot = 0;
	unsigned j;
	unsigned char *sb;

	for (j = 0; j < v; j++) {
		sc[j] = a2_count(p, j, v, round);
		tot += sc[j] + A2_GAP_S;
	}
	sb = pems_malloc(tot + 1);
	for (j = v; j-- > 0;) {		/* backwards */
		sd[j] = off;
		pfill(sb + off, p, 1000 + j + 7919 * round, 0, sc[j]);
		off += sc[j] + A2_GAP_S;
	}
	pems_alltoallv(sb, sc, sd, rbuf, rc, rd);
	memset(sb, 0, tot);	/* copied at the call: free to reuse */
	pems_free(sb);
}

static void spmd_alltoallv(void *arg)
{
	BP_ARGS(arg);
	size_t *sc = pems_malloc((size_t)v * 8), *sd = pems_malloc((size_t)v * 8);
	size_t *rd = pems_malloc((size_t)v * 8), *rc = pems_malloc((size_t)v * 8), rb, exp_rb;
	unsigned char *rbuf, *exp;
	uint64_t x = p, xs, y = 0, h = H0;
	unsigned round;

	bsp_push_reg(&y, 8);
	bsp_sync();
	for (round = 0; round < 2; round++) {
		rb = a2_rdispls(p, v, round, rd, rc);
		rbuf = pems_malloc(rb);
		memset(rbuf, 0x5a, rb);
		a2_send(p, v, round, rbuf, rc, rd, sc, sd);
		if (round == 0) {
			/* a combining collective in the same superstep: it syncs */
			pems_allreduce(&x, &xs, 1, PEMS_UINT64, PEMS_SUM);
			CHECK(r, xs == (uint64_t)v * (v - 1) / 2, "allreduce next to alltoallv: %llu",
			      (unsigned long long)xs);
		} else {
			/* a put in the same superstep */
			x = mix64(p);
			bsp_put(t, &x, &y, 0, 8);
			bsp_sync();
			CHECK(r, y == mix64(src), "put next to alltoallv: wrong value");
		}
		exp = pems_malloc(rb);
		exp_rb = a2_rdispls(p, v, round, rd, NULL);
		a2_expect(p, v, round, exp, rd);
		CHECK(r, exp_rb == rb && !memcmp(exp, rbuf, rb),
		      "round %u: alltoallv receive buffer differs from the expected blocks", round);
		h = hash(h, rbuf, rb);
		pems_free(exp);
		pems_free(rbuf);
	}
	h = hash_u64(h, y);
	bsp_pop_reg(&y);
	bsp_sync();
	pems_free(sc);
	pems_free(sd);
	pems_free(rd);
	pems_free(rc);
	mt_finish(r, h);
}

static void ref_alltoallv(unsigned v, uint64_t *out)
{
	size_t *rd = malloc((size_t)v * 8), rb;
	unsigned i, round;

	for (i = 0; i < v; i++) {
		uint64_t h = H0;

		for (round = 0; round < 2; round++) {
			unsigned char *b;

			rb = a2_rdispls(i, v, round, rd, NULL);
			b = malloc(rb);
			a2_expect(i, v, round, b, rd);
			h = hash(h, b, rb);
			free(b);
		}
		out[i] = hash_u64(h, mix64(bp_far_src(i, v)));
	}
	free(rd);
}

/* exchange: receivers do not know their counts; some VPs send nothing,
 * some receive nothing; a second round where nobody sends anything. */
static size_t xc_count(unsigned i, unsigned j, unsigned v)
{
	uint64_t x = mix3(i, j, 77);

	if (i % 5 == 3 || j % 7 == 2)
		return 0;
	return x % 3 == 0 ? 0 : (x >> 8) % 2000 + (j == bp_far(i, v) ? 9000 : 0);
}

static void spmd_exchange(void *arg)
{
	BP_ARGS(arg);
	size_t *sc = pems_malloc((size_t)v * 8), *rc = pems_malloc((size_t)v * 8);
	size_t tot = 0, off = 0, rbytes = 7, want = 0, at = 0;
	unsigned char *sb;
	void *rbuf = NULL;
	uint64_t h = H0;
	unsigned i;

	for (i = 0; i < v; i++)
		tot += sc[i] = xc_count(p, i, v);
	sb = pems_malloc(tot + 1);
	for (i = 0; i < v; i++) {
		pfill(sb + off, p, 3000 + i, 0, sc[i]);
		off += sc[i];
	}
	memset(rc, 0xee, (size_t)v * 8);
	pems_exchange(sb, sc, &rbuf, &rbytes, rc);
	pems_free(sb);
	bsp_sync();
	for (i = 0; i < v; i++) {
		size_t n = xc_count(i, p, v);

		want += n;
		CHECK(r, rc[i] == n, "recvcounts[%u] = %zu, expected %zu", i, rc[i], n);
		CHECK(r, rbytes < at + n || pequal((char *)rbuf + at, i, 3000 + p, 0, n),
		      "bytes from VP %u are wrong or out of order", i);
		at += n;
	}
	CHECK(r, rbytes == want, "exchange received %zu bytes, expected %zu", rbytes, want);
	h = hash(hash_u64(h, rbytes), rbuf, rbytes);
	h = hash(h, rc, (size_t)v * 8);
	pems_free(rbuf);
	/* nobody sends */
	memset(sc, 0, (size_t)v * 8);
	rbuf = NULL;
	rbytes = 99;
	pems_exchange(NULL, sc, &rbuf, &rbytes, NULL);
	bsp_sync();
	CHECK(r, rbytes == 0 && rbuf, "empty exchange: %zu bytes, buffer %p", rbytes, rbuf);
	pems_free(rbuf);
	pems_free(sc);
	pems_free(rc);
	mt_finish(r, h);
}

static void ref_exchange(unsigned v, uint64_t *out)
{
	size_t *rc = malloc((size_t)v * 8);
	unsigned i, j;

	for (j = 0; j < v; j++) {
		uint64_t h = H0;
		size_t tot = 0;

		for (i = 0; i < v; i++)
			tot += rc[i] = xc_count(i, j, v);
		h = hash_u64(h, tot);
		for (i = 0; i < v; i++)
			h = phash(h, i, 3000 + j, rc[i]);
		out[j] = hash(h, rc, (size_t)v * 8);
	}
	free(rc);
}

/* ================= mixed traffic ================= */

/* Three supersteps of sends (random destinations, up to 12000 bytes)
 * and exchanges (four random destinations each), then their receipt. */
#define ST_STEPS 3
#define ST_SENDS 3
#define ST_XDST 4

static void st_send(unsigned s, unsigned v, unsigned step, unsigned m, unsigned *d, size_t *len)
{
	uint64_t x = mix3(s, step, m);

	*d = (unsigned)(x % v);
	*len = (x >> 20) % 12000;
}

static void st_counts(unsigned s, unsigned v, unsigned step, size_t *c)
{
	unsigned m;

	memset(c, 0, (size_t)v * 8);
	for (m = 0; m < ST_XDST; m++) {
		uint64_t x = mix3(s, step, 100 + m);

		c[x % v] += (x >> 20) % 6000;
	}
}

static void spmd_stress(void *arg)
{
	BP_ARGS(arg);
	size_t ts = 8, *c = pems_malloc((size_t)v * 8), len, xb = 0, tot, off;
	unsigned char *buf = pems_malloc(12000), *sb;
	unsigned step, m, d, j;
	uint64_t h = H0, tag;
	void *xr = NULL;

	bsp_set_tagsize(&ts);
	bsp_sync();
	for (step = 0; step <= ST_STEPS; step++) {
		/* receive what the previous step sent */
		if (step) {
			bsp_size_t status;
			void *tp, *pp;

			for (;;) {
				bsp_get_tag(&status, &tag);
				if (status == (bsp_size_t)-1)
					break;
				len = bsp_hpmove(&tp, &pp);
				h = hash(hash_u64(h, tag), pp, len);
			}
			h = hash(hash_u64(h, xb), xr, xb);
			pems_free(xr);
			xr = NULL;
		}
		if (step == ST_STEPS)
			break;
		for (m = 0; m < ST_SENDS; m++) {
			st_send(p, v, step, m, &d, &len);
			tag = mix3(p, step, m);
			pfill(buf, p, 5000 + step * 10 + m, 0, len);
			bsp_send(d, &tag, buf, len);
		}
		st_counts(p, v, step, c);
		for (j = 0, tot = 0; j < v; j++)
			tot += c[j];
		sb = pems_malloc(tot + 1);
		for (j = 0, off = 0; j < v; j++) {
			pfill(sb + off, p, 7000 + step * 1000 + j, 0, c[j]);
			off += c[j];
		}
		pems_exchange(sb, c, &xr, &xb, NULL);
		pems_free(sb);
		bsp_sync();
	}
	pems_free(c);
	pems_free(buf);
	mt_finish(r, h);
}

static void ref_stress(unsigned v, uint64_t *out)
{
	unsigned char *buf = malloc(12000);
	size_t *cc = malloc((size_t)ST_STEPS * v * v * 8), *c, len, xb;
	unsigned i, s, step, m, d;

	for (step = 0; step < ST_STEPS; step++)
		for (s = 0; s < v; s++)
			st_counts(s, v, step, cc + ((size_t)step * v + s) * v);

	for (i = 0; i < v; i++) {
		uint64_t h = H0;

		for (step = 0; step < ST_STEPS; step++) {
			for (s = 0; s < v; s++)
				for (m = 0; m < ST_SENDS; m++) {
					st_send(s, v, step, m, &d, &len);
					if (d != i)
						continue;
					pfill(buf, s, 5000 + step * 10 + m, 0, len);
					h = hash(hash_u64(h, mix3(s, step, m)), buf, len);
				}
			c = cc + (size_t)step * v * v;
			for (s = 0, xb = 0; s < v; s++)
				xb += c[(size_t)s * v + i];
			h = hash_u64(h, xb);
			for (s = 0; s < v; s++)
				h = phash(h, s, 7000 + step * 1000 + i, c[(size_t)s * v + i]);
		}
		out[i] = h;
	}
	free(buf);
	free(cc);
}

/* Many short supersteps, each with a word and a multi-chunk block
 * crossing ranks: a message never leaks into another superstep.  (Fewer
 * for v >= 256, where each superstep swaps every context.) */
#define MS_BLK 6000

static unsigned ms_steps(unsigned v)
{
	return v >= 256 ? 12 : 40;
}

static void spmd_many_steps(void *arg)
{
	BP_ARGS(arg);
	uint64_t w = 0, x, h = H0;
	unsigned char *blk = pems_calloc(1, MS_BLK), *sb = pems_malloc(MS_BLK);
	unsigned s;

	bsp_push_reg(&w, 8);
	bsp_push_reg(blk, MS_BLK);
	bsp_sync();
	for (s = 0; s < ms_steps(v); s++) {
		x = mix3(p, s, 1);
		bsp_put(t, &x, &w, 0, 8);
		pfill(sb, p, 9000 + s, 0, MS_BLK);
		bsp_put(bp_next(p, v), sb, blk, 0, MS_BLK);
		bsp_sync();
		CHECK(r, w == mix3(src, s, 1), "superstep %u: word from VP %u is wrong", s, src);
		CHECK(r, pequal(blk, bp_prev(p, v), 9000 + s, 0, MS_BLK),
		      "superstep %u: block from VP %u is wrong", s, bp_prev(p, v));
		h = hash(hash_u64(h, w), blk, MS_BLK);
	}
	bsp_pop_reg(&w);
	bsp_pop_reg(blk);
	bsp_sync();
	pems_free(blk);
	pems_free(sb);
	mt_finish(r, h);
}

static void ref_many_steps(unsigned v, uint64_t *out)
{
	unsigned i, s;

	for (i = 0; i < v; i++) {
		uint64_t h = H0;

		for (s = 0; s < ms_steps(v); s++)
			h = phash(hash_u64(h, mix3(bp_far_src(i, v), s, 1)), bp_prev(i, v), 9000 + s,
				  MS_BLK);
		out[i] = h;
	}
}

/* ================= the table ================= */

/* One of the references is set: ref_vp for the programs shared with
 * check_bsp.c (bsp_programs.h, one VP at a time for any harness), ref for
 * those of this file (all VPs at once, so that they can share prefix
 * sums and counts). */
struct mpi_case {
	const char *suite, *name;
	void (*spmd)(void *);
	BP_REF((*ref_vp));
	void (*ref)(unsigned v, uint64_t *out);
};

static const struct mpi_case cases[] = {
	{ "layout", "vps_live_on_their_rank", spmd_layout, NULL, ref_layout },
	{ "registration", "areas_match_by_registration_order", bp_reg_order, bp_ref_reg_order, NULL },
	{ "registration", "push_pop_stack_takes_effect_at_sync", bp_push_pop, bp_ref_push_pop, NULL },
	{ "drma_put", "put_copies_at_call_lands_at_sync", spmd_put_semantics, NULL, ref_put_semantics },
	{ "drma_put", "puts_from_every_rank_to_one_vp", bp_puts_to_one, bp_ref_puts_to_one, NULL },
	{ "drma_put", "overlapping_puts_apply_in_source_order", bp_put_overlap, bp_ref_put_overlap, NULL },
	{ "drma_get", "get_sees_end_of_superstep_before_puts", bp_get_value, bp_ref_get_value, NULL },
	{ "drma_get", "get_from_spilled_remote_context", bp_get_disk, bp_ref_get_disk, NULL },
	{ "drma_get", "gets_from_many_vps_keep_issue_order", spmd_get_many, NULL, ref_get_many },
	{ "bsmp", "send_queue_order_tags_and_sizes", spmd_send_queue, NULL, ref_send_queue },
	{ "collectives", "allreduce_all_types_and_reduce_roots", spmd_allreduce, NULL, ref_allreduce },
	{ "collectives", "broadcast_gather_allgather_exscan", spmd_bcast_gather_scan,
	  NULL, ref_bcast_gather_scan },
	{ "collectives", "alltoallv_blocks_land_at_rdispls", spmd_alltoallv, NULL, ref_alltoallv },
	{ "collectives", "exchange_concatenates_in_source_order", spmd_exchange, NULL, ref_exchange },
	{ "mixed", "sends_and_exchanges_over_supersteps", spmd_stress, NULL, ref_stress },
	{ "mixed", "many_supersteps_of_cross_rank_puts", spmd_many_steps, NULL, ref_many_steps },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static double t_spmd;	/* seconds inside pems_spmd, this rank */
static unsigned early_rank, early_nranks;	/* pems_rank() before MPI was started */

START_TEST(spmd_case)
{
	const struct mpi_case *mc = &cases[(unsigned)_i / NCFG];
	const struct spmd_cfg *c = &cfgs[(unsigned)_i % NCFG];
	struct pems_stats st;
	struct mt_run r;
	uint64_t *want, digest;
	size_t mem = 0;
	unsigned i;
	double t0;
	int rc;

	ck_assert_int_eq(mt_configure(c, &mem), 0);
	if (c->v >= 256 && c->spill)
		ck_assert_msg((uint64_t)c->v * c->mu >= 8 * (uint64_t)mem,
			      "%s: v*mu = %zu MiB is not >= 8*M = 8*%zu MiB", c->name,
			      (size_t)c->v * c->mu >> 20, mem >> 20);
	mt_run_init(&r, mc->spmd, c->v);
	t0 = spmd_now();
	rc = pems_spmd(NULL, mt_entry, &r);
	t0 = spmd_now() - t0;
	t_spmd += t0;
	if (getenv("PEMS_TEST_TIMES") && mt_w.rank == 0)
		printf("time %-40s %-20s %6.2fs\n", mc->name, c->name, t0);
	ck_assert_msg(rc == 0, "%s on %s: pems_spmd returned %d (%s)", mc->name, c->name, rc,
		      pems_strerror(rc));
	ck_assert_msg(r.done, "%s on %s: the program did not reach its end on rank %u", mc->name,
		      c->name, mt_w.rank);
	ck_assert_msg(r.nbad == 0, "%s on %s, %u ranks: %llu failed checks; %s", mc->name,
		      c->name, mt_w.nranks, (unsigned long long)r.nbad,
		      r.why[0] ? r.why : "(the first one on another rank)");
	want = calloc(c->v, 8);
	ck_assert_ptr_nonnull(want);
	if (mc->ref_vp) {
		digest = bp_expect(mc->ref_vp, &mt_harness, c->v, want);
	} else {
		mc->ref(c->v, want);
		digest = fold_all(want, c->v);
	}
	if (digest != r.digest) {
		i = bp_first_diff(r.got, want, c->v);
		ck_abort_msg("%s on %s, %u ranks: digest %#llx, reference %#llx; first differing VP %u (on rank %u)",
			     mc->name, c->name, mt_w.nranks, (unsigned long long)r.digest,
			     (unsigned long long)digest, i,
			     i < c->v ? (unsigned)(((uint64_t)i + 1) * mt_w.nranks - 1) / c->v : 0);
	}
	if (c->spill) {
		pems_get_stats(&st);
		ck_assert_msg(st.ctx_written > 0 && st.ctx_read > 0,
			      "%s on %s: no context was spilled (written %llu, read %llu bytes)",
			      mc->name, c->name, (unsigned long long)st.ctx_written,
			      (unsigned long long)st.ctx_read);
	}
	free(want);
	mt_run_free(&r);
}
END_TEST

/* More ranks than VPs: every rank refuses the run with an error (no
 * crash, no hang), and the next run works.  (Nothing to refuse on one
 * rank.) */
static void spmd_nothing(void *arg)
{
	(void)arg;
	bsp_sync();
}

START_TEST(fewer_vps_than_ranks_is_refused_everywhere)
{
	struct spmd_cfg c = { "v<p", mt_w.nranks - 1, 1, 1 * MiB, 64 * MiB, PEMS_IO_KIND_URING,
			      false };
	int rc;

	if (mt_w.nranks == 1)
		return;
	ck_assert_int_eq(mt_configure(&c, NULL), 0);
	rc = pems_spmd(NULL, spmd_nothing, NULL);
	ck_assert_msg(rc < 0, "pems_spmd with %u VPs on %u ranks returned %d", c.v, mt_w.nranks,
		      rc);
	c.v = mt_w.nranks;
	ck_assert_int_eq(mt_configure(&c, NULL), 0);
	ck_assert_int_eq(pems_spmd(NULL, spmd_nothing, NULL), 0);
}
END_TEST

/* pems_rank/pems_nranks outside the SPMD section are the MPI rank and
 * size, also as the very first pems calls of the program (pems.h: "MPI
 * starts on first use"). */
START_TEST(rank_outside_spmd_is_the_mpi_rank)
{
	const char *s = getenv("OMPI_COMM_WORLD_RANK"), *n = getenv("OMPI_COMM_WORLD_SIZE");
	unsigned want_r = s ? (unsigned)atoi(s) : 0, want_n = n ? (unsigned)atoi(n) : 1;

	ck_assert_uint_eq(pems_rank(), want_r);
	ck_assert_uint_eq(pems_nranks(), want_n);
	ck_assert_msg(early_rank == want_r && early_nranks == want_n,
		      "pems_rank()/pems_nranks() as the first pems calls gave %u/%u, expected %u/%u (MPI not started on first use)",
		      early_rank, early_nranks, want_r, want_n);
}
END_TEST

_Static_assert(NCFG <= 32, "spmd_add_loops takes the configurations as a 32-bit mask");

/* Every case runs on every configuration; make tsan (spmd_reduced): no v = 256. */
static uint32_t mpi_cfgs(void)
{
	uint32_t keep = 0;
	unsigned k;

	for (k = 0; k < NCFG; k++)
		if (!(spmd_reduced() && cfgs[k].v >= 256))
			keep |= 1u << k;
	return keep;
}

static Suite *mpi_suite(const char *area)
{
	Suite *s = suite_create(area);
	unsigned ci;

	for (ci = 0; ci < NCASES; ci++)
		if (!strcmp(cases[ci].suite, area))
			spmd_add_loops(s, cases[ci].name, spmd_case, ci * NCFG, NCFG, mpi_cfgs());
	return s;
}

int main(void)
{
	static const char *const areas[] = { "layout", "registration", "drma_put", "drma_get",
					     "bsmp", "collectives", "mixed" };
	SRunner *sr;
	Suite *s;
	TCase *tc;
	unsigned i;
	int failed;
	double t0 = spmd_now();

	early_rank = pems_rank();	/* before anything else starts MPI */
	early_nranks = pems_nranks();
	mt_world();
	sr = srunner_create(NULL);
	for (i = 0; i < sizeof(areas) / sizeof(areas[0]); i++) {
		s = mpi_suite(areas[i]);
		if (!strcmp(areas[i], "layout")) {
			tc = tcase_create("fewer_vps_than_ranks_is_refused_everywhere");
			tcase_add_test(tc, fewer_vps_than_ranks_is_refused_everywhere);
			suite_add_tcase(s, tc);
			tc = tcase_create("rank_outside_spmd_is_the_mpi_rank");
			tcase_add_test(tc, rank_outside_spmd_is_the_mpi_rank);
			suite_add_tcase(s, tc);
		}
		srunner_add_suite(sr, s);
	}
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (mt_w.rank == 0)
		printf("check_mpi_bsp: %u ranks, %.1fs (%.1fs in pems_spmd)\n", mt_w.nranks,
		       spmd_now() - t0, t_spmd);
	return failed ? 1 : 0;
}
