/*
 * check_bsp.c - BSPlib semantics and the pems collectives, as a table of
 * SPMD programs x a table of runtime configurations.
 *
 * Every SPMD program (struct bsp_case) runs on every configuration it is
 * cheap enough for (struct spmd_cfg: v = 1, 7, 64, 256, 1000; k = 1, 2;
 * io_uring, libaio, sync; budgets that keep every context resident and
 * budgets that force every context to disk between supersteps).  Each VP
 * checks what it can locally (CHECK) and reduces what it observed to one
 * 64-bit value; the last superstep of every program gathers those values
 * and VP 0 folds them into one checksum.  The test compares that checksum
 * with the one a sequential reference (bsp_case.ref) computes from first
 * principles, so the results are the same for every k, io backend and
 * budget by construction.  Spilling configurations also assert that
 * contexts were written and read back (pems_get_stats).
 *
 * The programs that check_mpi_bsp.c runs too (registration, most puts
 * and gets) are in bsp_programs.h, with the next VP as partner here
 * (struct bp_harness one_process below).
 *
 * Check test names: one TCase per behaviour, one loop iteration per
 * configuration (failure messages name the configuration).  A few
 * behaviours that abort or end the process run in a forked child
 * (spmd_test.h: run_child).
 *
 * PEMS_TEST_REDUCED=1 (set by make tsan) leaves out the configurations
 * of 256 and 1000 VPs.
 */
#include "spmd_test.h"

#include <float.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>

#include "bsp.h"
#include "pems.h"
#include "bsp_programs.h"

/* ---- configurations ---- */

enum { T_SMALL = 1, T_SPILL256 = 2, T_BIG = 4, T_BIGSPILL = 8, T_ALL = 15,
	T_MOST = T_SMALL | T_SPILL256 | T_BIG };	/* v = 1000 spilling costs 2-8 s a run */

static const struct spmd_cfg cfgs[] = {
	{ "v1-k1-uring", 1, 1, 1 * MiB, 64 * MiB, PEMS_IO_KIND_URING, false },
	{ "v7-k1-sync", 7, 1, 1 * MiB, 64 * MiB, PEMS_IO_KIND_SYNC, false },
	{ "v7-k2-aio", 7, 2, 1 * MiB, 64 * MiB, PEMS_IO_KIND_AIO, false },
	/* mem 0: the least budget the runtime accepts, fixed + messages +
	 * k*mu, so no finished VP can stay resident */
	{ "v7-k2-uring-spill", 7, 2, 1 * MiB, 0, PEMS_IO_KIND_URING, true },
	{ "v7-k1-sync-spill", 7, 1, 1 * MiB, 0, PEMS_IO_KIND_SYNC, true },
	{ "v64-k2-uring", 64, 2, 1 * MiB, 128 * MiB, PEMS_IO_KIND_URING, false },
	{ "v64-k1-aio", 64, 1, 1 * MiB, 128 * MiB, PEMS_IO_KIND_AIO, false },
	{ "v64-k2-sync-spill", 64, 2, 1 * MiB, 0, PEMS_IO_KIND_SYNC, true },
	{ "v64-k1-aio-spill", 64, 1, 1 * MiB, 0, PEMS_IO_KIND_AIO, true },
	/* v*mu >= 8*M */
	{ "v256-k2-uring-spill", 256, 2, 1 * MiB, 0, PEMS_IO_KIND_URING, true },
	{ "v1000-k2-uring", 1000, 2, 512 * KiB, 256 * MiB, PEMS_IO_KIND_URING, false },
	{ "v1000-k1-sync", 1000, 1, 512 * KiB, 256 * MiB, PEMS_IO_KIND_SYNC, false },
	/* v*mu = 500 MiB >= 8*M */
	{ "v1000-k2-aio-spill", 1000, 2, 512 * KiB, 0, PEMS_IO_KIND_AIO, true },
};
#define NCFG (sizeof(cfgs) / sizeof(cfgs[0]))

static unsigned cfg_tier(const struct spmd_cfg *c)
{
	if (c->v >= 1000)
		return c->spill ? T_BIGSPILL : T_BIG;
	if (c->v >= 256)
		return T_SPILL256;
	return T_SMALL;
}

/* ---- one run: shared between the test and the VPs ---- */

#define AUX_PER_VP 64	/* bytes of shared scratch per VP */

struct run {
	struct bp_run base;	/* first: what the programs see (bsp_programs.h) */
	unsigned v;
	uint64_t *vals;		/* what each VP reports (finish) */
	uint64_t sum;		/* VP 0's checksum over vals */
	bool done;		/* VP 0 reached the end */
	atomic_uint bad;	/* failed CHECKs */
	char why[512];		/* the first one */
	void *aux;		/* v * AUX_PER_VP bytes for the program */
};

static struct run *run_of(struct bp_run *b)
{
	return (struct run *)((char *)b - offsetof(struct run, base));
}

static void vp_fail(struct bp_run *b, int line, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static void vp_fail(struct bp_run *b, int line, const char *fmt, va_list ap)
{
	struct run *r = run_of(b);
	int n;

	if (atomic_fetch_add(&r->bad, 1))
		return;
	n = snprintf(r->why, sizeof(r->why), "VP %u, line %d: ", bsp_pid(), line);
	vsnprintf(r->why + n, sizeof(r->why) - (size_t)n, fmt, ap);
}

/* Last superstep of every program: report @x; VP 0 folds all reports
 * (every VP shares this process's memory, so no collective is needed). */
static void finish(struct bp_run *b, uint64_t x)
{
	struct run *r = run_of(b);
	unsigned p = bsp_pid(), v = bsp_nprocs();

	r->vals[p] = x;
	bsp_sync();
	if (p == 0) {
		r->sum = fold_all(r->vals, v);
		r->done = true;
	}
}

/* One process: the partner of VP p is the next VP. */
static const struct bp_harness one_process = { bp_next, bp_prev, vp_fail, finish };

/* ================= DRMA: bsp_put ================= */

#define BIGPUT 20000	/* larger than the message chunks of every config */

static void spmd_put_copies(void *arg)
{
	BP_ARGS(arg);
	uint64_t y[2] = { 0, 0 }, h;
	unsigned char *big = pems_calloc(1, BIGPUT);

	bsp_push_reg(y, sizeof(y));
	bsp_push_reg(big, BIGPUT);
	bsp_sync();
	bp_put_copies_issue(t, p, y, big, BIGPUT);
	bsp_sync();
	bp_put_copies_check(r, src, y, big, BIGPUT);
	h = hash(hash(H0, y, sizeof(y)), big, BIGPUT);
	bsp_pop_reg(y);
	bsp_pop_reg(big);
	bsp_sync();
	pems_free(big);
	finish(r, h);
}

static BP_REF(ref_put_copies)
{
	return bp_put_copies_ref(H0, hr->from(pid, v), BIGPUT);
}

/* Puts are applied at the next sync (not before, not again), at their
 * offsets; a put to oneself too. */
static void spmd_put_next_step(void *arg)
{
	BP_ARGS(arg);
	uint64_t w[16], h;

	memset(w, 0, sizeof(w));
	bsp_push_reg(w, sizeof(w));
	bsp_sync();
	bp_put_words_issue(r, t, p, w);
	bsp_sync();
	h = hash(H0, w, sizeof(w));
	bsp_sync();
	CHECK(r, hash(H0, w, sizeof(w)) == h, "the area changed in a superstep without puts");
	bsp_pop_reg(w);
	bsp_sync();
	finish(r, h);
}

static BP_REF(ref_put_next_step)
{
	uint64_t w[16];

	bp_put_words_ref(w, hr->from(pid, v));
	return hash(H0, w, sizeof(w));
}

/* bsp_hpput / bsp_hpget have the semantics of put / get. */
static void spmd_hp(void *arg)
{
	BP_ARGS(arg);
	uint64_t a[4] = { 50 + p, 0, 0, 0 }, x[2] = { p, ~(uint64_t)p }, g = 0, h;

	bsp_push_reg(a, sizeof(a));
	bsp_sync();
	bsp_hpput(t, x, a, 8, 16);
	bsp_hpget(t, a, 0, &g, 8);
	bsp_sync();
	CHECK(r, a[1] == src && a[2] == ~(uint64_t)src, "bsp_hpput delivered {%llu, %llx}",
	      (unsigned long long)a[1], (unsigned long long)a[2]);
	CHECK(r, g == 50 + t, "bsp_hpget gave %llu, expected %u", (unsigned long long)g, 50 + t);
	h = hash_u64(hash(H0, a, sizeof(a)), g);
	bsp_pop_reg(a);
	bsp_sync();
	finish(r, h);
}

static BP_REF(ref_hp)
{
	unsigned src = hr->from(pid, v);
	uint64_t a[4] = { 50 + pid, src, ~(uint64_t)src, 0 };

	return hash_u64(hash(H0, a, sizeof(a)), 50 + hr->to(pid, v));
}

/* ================= BSMP ================= */

struct tag8 {
	uint32_t src, seq;
};

/* bsp_set_tagsize returns the old size and takes effect at the next sync;
 * messages carry the tag size of the superstep they were sent in. */
static void spmd_tagsize(void *arg)
{
	BP_ARGS(arg);
	bsp_size_t ts = 8, st;
	uint32_t pay, got, tg[2];
	unsigned char tag[8];
	uint64_t h = H0;

	bsp_set_tagsize(&ts);
	CHECK(r, ts == 0, "the initial tag size is %zu, expected 0", (size_t)ts);
	tg[0] = p;
	tg[1] = 99;
	pay = 10 + p;
	bsp_send(t, tg, &pay, 4);	/* still 0-byte tags in this superstep */
	bsp_sync();

	memset(tag, 0xaa, sizeof(tag));
	bsp_get_tag(&st, tag);
	CHECK(r, st == 4, "status %zu, expected 4", (size_t)st);
	CHECK(r, all_bytes(tag, 0xaa, 8), "a message sent before bsp_set_tagsize took effect has a tag");
	got = 0;
	bsp_move(&got, 4);
	CHECK(r, got == 10 + src, "payload %u, expected %u", got, 10 + src);
	h = hash(hash_u64(h, got), tag, 8);
	ts = 4;
	bsp_set_tagsize(&ts);
	CHECK(r, ts == 8, "bsp_set_tagsize returned %zu, expected the previous size 8", (size_t)ts);
	tg[1] = 11;
	pay = 20 + p;
	bsp_send(t, tg, &pay, 4);	/* 8-byte tags */
	bsp_sync();

	memset(tag, 0xaa, sizeof(tag));
	bsp_get_tag(&st, tag);
	memcpy(tg, tag, 8);
	CHECK(r, st == 4 && tg[0] == src && tg[1] == 11, "8-byte tag {%u, %u}, expected {%u, 11}",
	      tg[0], tg[1], src);
	bsp_move(&got, 4);
	CHECK(r, got == 20 + src, "payload %u, expected %u", got, 20 + src);
	h = hash(hash_u64(h, got), tag, 8);
	tg[0] = p;
	tg[1] = 22;
	pay = 30 + p;
	bsp_send(t, tg, &pay, 4);	/* 4-byte tags: only tg[0] travels */
	bsp_sync();

	memset(tag, 0xaa, sizeof(tag));
	bsp_get_tag(&st, tag);
	memcpy(tg, tag, 4);
	CHECK(r, st == 4 && tg[0] == src && all_bytes(tag + 4, 0xaa, 4),
	      "4-byte tag %u (expected %u) or more than 4 bytes copied", tg[0], src);
	bsp_move(&got, 4);
	CHECK(r, got == 30 + src, "payload %u, expected %u", got, 30 + src);
	h = hash(hash_u64(h, got), tag, 8);
	ts = 0;
	bsp_set_tagsize(&ts);
	CHECK(r, ts == 4, "bsp_set_tagsize returned %zu, expected 4", (size_t)ts);
	bsp_sync();
	finish(r, h);
}

static BP_REF(ref_tagsize)
{
	uint32_t src = hr->from(pid, v);
	unsigned char tag[8];
	uint32_t tg[2] = { src, 11 };
	uint64_t h = H0;

	memset(tag, 0xaa, 8);
	h = hash(hash_u64(h, 10 + src), tag, 8);
	memcpy(tag, tg, 8);
	h = hash(hash_u64(h, 20 + src), tag, 8);
	memset(tag, 0xaa, 8);
	memcpy(tag, &src, 4);
	return hash(hash_u64(h, 30 + src), tag, 8);
}

/* The queue holds the messages of the last superstep in (source pid,
 * issue order); bsp_qsize counts them and their payload bytes. */
static unsigned q_target(unsigned p, unsigned v, unsigned j)
{
	return j == 0 ? (p + 1) % v : j == 1 ? (p + 2) % v : p;
}

static unsigned q_count(unsigned p, unsigned j)
{
	return 1 + (p + j) % 3;
}

static size_t q_len(unsigned p, unsigned j, unsigned s)
{
	return (p * 7 + j * 5 + s * 3) % 50;
}

static void spmd_queue(void *arg)
{
	BP_ARGS(arg);
	bsp_size_t ts = sizeof(struct tag8), st, bytes, qb;
	bsp_nprocs_t n, qn, k;
	unsigned char buf[64];
	struct tag8 tg, prev = { 0, 0 };
	uint64_t h = H0;
	unsigned j, s;

	bsp_set_tagsize(&ts);
	bsp_sync();
	for (j = 0; j < 3; j++)
		for (s = 0; s < q_count(p, j); s++) {
			size_t len = q_len(p, j, s);

			tg.src = p;
			tg.seq = j * 16 + s;
			pfill(buf, p, tg.seq, 0, len);
			bsp_send(q_target(p, v, j), &tg, buf, len);
		}
	bsp_qsize(&n, &bytes);
	CHECK(r, n == 0 && bytes == 0, "messages of this superstep are queued already (%u)", n);
	bsp_sync();

	bsp_qsize(&n, &bytes);
	h = hash_u64(hash_u64(h, n), bytes);
	for (k = 0;; k++) {
		memset(&tg, 0xff, sizeof(tg));
		bsp_get_tag(&st, &tg);
		if (st == (bsp_size_t)-1)
			break;
		CHECK(r, k == 0 || tg.src > prev.src || (tg.src == prev.src && tg.seq > prev.seq),
		      "message (%u, %u) after (%u, %u): not in (source, issue) order",
		      tg.src, tg.seq, prev.src, prev.seq);
		CHECK(r, st < 50, "status %zu", (size_t)st);
		memset(buf, 0xee, sizeof(buf));
		bsp_move(buf, sizeof(buf));
		CHECK(r, st < 50 && pequal(buf, tg.src, tg.seq, 0, st), "payload of (%u, %u) is wrong",
		      tg.src, tg.seq);
		h = hash(h, &tg, sizeof(tg));
		h = hash(hash_u64(h, st), buf, st < 64 ? st : 64);
		bsp_qsize(&qn, &qb);
		CHECK(r, qn == n - k - 1, "bsp_qsize says %u after %u of %u moves", qn, k + 1, n);
		prev = tg;
	}
	CHECK(r, k == n, "moved %u messages, bsp_qsize said %u", k, n);
	bsp_qsize(&qn, &qb);
	CHECK(r, qn == 0 && qb == 0, "bsp_qsize of an empty queue: %u packets, %zu bytes", qn, (size_t)qb);
	ts = 0;
	bsp_set_tagsize(&ts);
	bsp_sync();
	finish(r, h);
}

static BP_REF(ref_queue)
{
	uint64_t h = H0, n = 0, bytes = 0;
	unsigned char buf[64];
	unsigned s, j, q, pass;

	for (pass = 0; pass < 2; pass++) {
		if (pass == 1)
			h = hash_u64(hash_u64(h, n), bytes);
		for (s = 0; s < v; s++)
			for (j = 0; j < 3; j++) {
				if (q_target(s, v, j) != pid)
					continue;
				for (q = 0; q < q_count(s, j); q++) {
					struct tag8 tg = { s, j * 16 + q };
					size_t len = q_len(s, j, q);

					if (pass == 0) {
						n++;
						bytes += len;
						continue;
					}
					pfill(buf, s, tg.seq, 0, len);
					h = hash(h, &tg, sizeof(tg));
					h = hash(hash_u64(h, len), buf, len);
				}
			}
	}
	return h;
}

/* bsp_move copies at most reception_bytes; empty payloads have status 0;
 * bsp_hpmove points into the queue; empty queue: -1 and SIZE_MAX. */
static void spmd_move_hp(void *arg)
{
	BP_ARGS(arg);
	bsp_size_t ts = 4, st, n;
	uint32_t tag, tg;
	unsigned char big[40], buf[64];
	void *tp, *pp;
	uint64_t h = H0;

	bsp_set_tagsize(&ts);
	bsp_sync();
	pfill(big, p, 1, 0, 40);
	tag = p;
	bsp_send(t, &tag, big, 40);
	tag = p + 1000;
	bsp_send(t, &tag, NULL, 0);
	pfill(big, p, 3, 0, 10);
	tag = p + 2000;
	bsp_send(t, &tag, big, 10);
	bsp_sync();

	bsp_get_tag(&st, &tag);
	CHECK(r, st == 40 && tag == src, "first message: status %zu tag %u", (size_t)st, tag);
	memset(buf, 0x5a, sizeof(buf));
	bsp_move(buf, 16);
	CHECK(r, pequal(buf, src, 1, 0, 16) && all_bytes(buf + 16, 0x5a, 48),
	      "bsp_move(buf, 16) of a 40-byte message copied the wrong bytes");
	h = hash(h, buf, sizeof(buf));
	bsp_get_tag(&st, &tag);
	CHECK(r, st == 0 && tag == src + 1000, "an empty payload: status %zu tag %u (expected 0, %u)",
	      (size_t)st, tag, src + 1000);
	n = bsp_hpmove(&tp, &pp);
	memcpy(&tg, tp, 4);
	CHECK(r, n == 0 && tg == src + 1000, "bsp_hpmove of an empty payload: %zu, tag %u", (size_t)n, tg);
	n = bsp_hpmove(&tp, &pp);
	memcpy(&tg, tp, 4);
	CHECK(r, n == 10 && tg == src + 2000 && pequal(pp, src, 3, 0, 10),
	      "bsp_hpmove: %zu bytes, tag %u", (size_t)n, tg);
	h = hash(hash_u64(h, tg), pp, n == 10 ? 10 : 0);
	n = bsp_hpmove(&tp, &pp);
	CHECK(r, n == SIZE_MAX, "bsp_hpmove on an empty queue returned %zu, expected SIZE_MAX", (size_t)n);
	bsp_get_tag(&st, &tag);
	CHECK(r, st == (bsp_size_t)-1, "bsp_get_tag on an empty queue: status %zu", (size_t)st);
	ts = 0;
	bsp_set_tagsize(&ts);
	bsp_sync();
	finish(r, h);
}

static BP_REF(ref_move_hp)
{
	unsigned src = hr->from(pid, v);
	unsigned char buf[64];

	memset(buf, 0x5a, sizeof(buf));
	pfill(buf, src, 1, 0, 16);
	uint64_t h = hash(H0, buf, sizeof(buf));

	h = hash_u64(h, src + 2000);
	pfill(buf, src, 3, 0, 10);
	return hash(h, buf, 10);
}

/* Messages of superstep s are seen in s+1 only, and dropped at the next
 * sync whether moved or not. */
static void spmd_bsmp_window(void *arg)
{
	BP_ARGS(arg);
	uint32_t a = 1, b = 2, c = 3 + p, got = 0;
	bsp_nprocs_t n;
	bsp_size_t bytes, st;

	bsp_send(p, NULL, &a, 4);
	bsp_send(t, NULL, &b, 4);
	bsp_qsize(&n, &bytes);
	CHECK(r, n == 0 && bytes == 0, "own messages visible in the superstep they were sent (%u)", n);
	bsp_get_tag(&st, NULL);
	CHECK(r, st == (bsp_size_t)-1, "bsp_get_tag status %zu on an empty queue", (size_t)st);
	bsp_sync();
	bsp_qsize(&n, &bytes);
	CHECK(r, n == 2 && bytes == 8, "superstep 1: %u messages, %zu bytes (expected 2, 8)", n, (size_t)bytes);
	bsp_send(p, NULL, &c, 4);
	bsp_qsize(&n, &bytes);
	CHECK(r, n == 2, "a message sent in this superstep is visible (%u)", n);
	bsp_sync();	/* the two unread messages are dropped */
	bsp_qsize(&n, &bytes);
	CHECK(r, n == 1 && bytes == 4, "superstep 2: %u messages, %zu bytes (expected 1, 4)", n, (size_t)bytes);
	bsp_get_tag(&st, NULL);
	if (st == 4)
		bsp_move(&got, 4);
	CHECK(r, got == 3 + p, "superstep 2 got %u, expected %u", got, 3 + p);
	bsp_get_tag(&st, NULL);
	CHECK(r, st == (bsp_size_t)-1, "queue not empty after the last move");
	bsp_sync();
	finish(r, mix64(got));
}

static BP_REF(ref_bsmp_window)
{
	(void)v;
	return mix64(3 + pid);
}

/* Payloads larger than the message chunks, and their tags, through the
 * on-disk message store. */
static const size_t lg_len[4] = { 20000, 1, 9000, 15000 };

static unsigned lg_target(unsigned p, unsigned v, unsigned i)
{
	return i < 3 ? (p + 1) % v : (p + 3) % v;
}

static void spmd_bsmp_large(void *arg)
{
	BP_ARGS(arg);
	bsp_size_t ts = sizeof(struct tag8), st;
	unsigned char *buf = pems_malloc(20000);
	struct tag8 tg;
	uint64_t h = H0;
	unsigned i;

	bsp_set_tagsize(&ts);
	bsp_sync();
	for (i = 0; i < 4; i++) {
		pfill(buf, p, i, 0, lg_len[i]);
		tg.src = p;
		tg.seq = i;
		bsp_send(lg_target(p, v, i), &tg, buf, lg_len[i]);
	}
	bsp_sync();
	for (;;) {
		bsp_get_tag(&st, &tg);
		if (st == (bsp_size_t)-1)
			break;
		CHECK(r, tg.seq < 4 && st == lg_len[tg.seq], "message (%u, %u) has %zu bytes", tg.src, tg.seq,
		      (size_t)st);
		bsp_move(buf, 20000);
		CHECK(r, st <= 20000 && pequal(buf, tg.src, tg.seq, 0, st), "payload of (%u, %u) is wrong",
		      tg.src, tg.seq);
		h = hash(hash_u64(hash(h, &tg, sizeof(tg)), st), buf, st <= 20000 ? st : 0);
	}
	ts = 0;
	bsp_set_tagsize(&ts);
	bsp_sync();
	pems_free(buf);
	finish(r, h);
}

static BP_REF(ref_bsmp_large)
{
	unsigned char *buf = malloc(20000);
	uint64_t h = H0;
	unsigned s, i;

	for (s = 0; s < v; s++)
		for (i = 0; i < 4; i++) {
			struct tag8 tg = { s, i };

			if (lg_target(s, v, i) != pid)
				continue;
			pfill(buf, s, i, 0, lg_len[i]);
			h = hash(hash_u64(hash(h, &tg, sizeof(tg)), lg_len[i]), buf, lg_len[i]);
		}
	free(buf);
	return h;
}

/* ================= lifecycle, identity, time ================= */

static void spmd_ident(void *arg)
{
	BP_ARGS(arg);
	double *ends = run_of(r)->aux, t0, t1, t2;
	unsigned want_v = run_of(r)->v;

	CHECK(r, bsp_nprocs() == want_v, "bsp_nprocs() = %u, expected %u", bsp_nprocs(), want_v);
	CHECK(r, p < v, "bsp_pid() = %u", p);
	t0 = bsp_time();
	t1 = bsp_time();
	CHECK(r, t0 >= 0 && t1 >= t0, "bsp_time: %g then %g", t0, t1);
	ends[p * (AUX_PER_VP / sizeof(double))] = t1;
	bsp_sync();
	t2 = bsp_time();
	CHECK(r, t2 >= ends[t * (AUX_PER_VP / sizeof(double))] && t2 >= t1,
	      "bsp_time went back across bsp_sync: %g after %g", t2, t1);
	CHECK(r, bsp_pid() == p && bsp_nprocs() == v, "pid or nprocs changed across bsp_sync");
	bsp_sync();
	CHECK(r, bsp_time() >= t2, "bsp_time went back");
	finish(r, mix64(p) + v);
}

static BP_REF(ref_ident)
{
	return mix64(pid) + v;
}

/* pems_malloc memory (and the stack) keeps its address and contents
 * across supersteps, i.e. across spills; realloc, calloc, free, and the
 * context accounting. */
static void spmd_heap(void *arg)
{
	BP_ARGS(arg);
	void **ptrs = (void **)((char *)run_of(r)->aux + (size_t)p * AUX_PER_VP);
	size_t mu = pems_current_config()->mu;
	size_t used0 = pems_context_used(), avail0 = pems_context_avail();
	unsigned char sbuf[1000], *a, *b, *c, *d;
	uint64_t h;

	a = pems_malloc(100);
	b = pems_malloc(5000);
	c = pems_malloc(70000);
	CHECK(r, a && b && c, "pems_malloc returned NULL");
	CHECK(r, (((uintptr_t)a | (uintptr_t)b | (uintptr_t)c) & 15) == 0,
	      "pems_malloc returned a pointer that is not 16-byte aligned");
	CHECK(r, pems_context_used() >= used0 + 75100, "pems_context_used grew by %zu for 75100 bytes",
	      pems_context_used() - used0);
	CHECK(r, pems_context_avail() + 75100 <= avail0, "pems_context_avail shrank by %zu for 75100 bytes",
	      avail0 - pems_context_avail());
	pfill(a, p, 1, 0, 100);
	pfill(b, p, 2, 0, 5000);
	pfill(c, p, 3, 0, 70000);
	pfill(sbuf, p, 4, 0, sizeof(sbuf));
	ptrs[0] = a;
	ptrs[1] = b;
	ptrs[2] = c;
	ptrs[3] = sbuf;
	bsp_sync();
	bsp_sync();
	CHECK(r, ptrs[0] == a && ptrs[1] == b && ptrs[2] == c && ptrs[3] == sbuf,
	      "a pointer changed across bsp_sync");
	CHECK(r, pequal(a, p, 1, 0, 100) && pequal(b, p, 2, 0, 5000) && pequal(c, p, 3, 0, 70000),
	      "pems_malloc memory changed across bsp_sync");
	CHECK(r, pequal(sbuf, p, 4, 0, sizeof(sbuf)), "the stack changed across bsp_sync");
	pems_free(b);
	a = pems_realloc(a, 9000);
	CHECK(r, a && pequal(a, p, 1, 0, 100), "pems_realloc lost the contents");
	pfill(a + 100, p, 5, 0, 8900);
	d = pems_calloc(300, 1);
	CHECK(r, d && all_bytes(d, 0, 300), "pems_calloc memory is not zero");
	pfill(d, p, 6, 0, 300);
	bsp_sync();
	CHECK(r, pequal(a, p, 1, 0, 100) && pequal(a + 100, p, 5, 0, 8900),
	      "pems_realloc'd memory changed across bsp_sync");
	CHECK(r, pequal(c, p, 3, 0, 70000) && pequal(d, p, 6, 0, 300) && pequal(sbuf, p, 4, 0, sizeof(sbuf)),
	      "memory changed across bsp_sync");
	CHECK(r, pems_context_used() <= mu && pems_context_avail() < mu,
	      "used %zu, avail %zu, mu %zu", pems_context_used(), pems_context_avail(), mu);
	h = hash(hash(hash(hash(H0, a, 9000), c, 70000), d, 300), sbuf, sizeof(sbuf));
	pems_free(a);
	pems_free(c);
	pems_free(d);
	CHECK(r, pems_context_used() == used0, "after freeing everything %zu bytes are in use, %zu before",
	      pems_context_used(), used0);
	finish(r, h);
}

static BP_REF(ref_heap)
{
	unsigned char *b = malloc(70000);
	uint64_t h;

	(void)v;
	pfill(b, pid, 1, 0, 100);
	pfill(b + 100, pid, 5, 0, 8900);
	h = hash(H0, b, 9000);
	pfill(b, pid, 3, 0, 70000);
	h = hash(h, b, 70000);
	pfill(b, pid, 6, 0, 300);
	h = hash(h, b, 300);
	pfill(b, pid, 4, 0, 1000);
	h = hash(h, b, 1000);
	free(b);
	return h;
}

/* Many supersteps: a ring of puts and sends, 30 times around (message
 * logs alternate by superstep parity). */
#define RING_STEPS 30

static void spmd_ring(void *arg)
{
	BP_ARGS(arg);
	uint64_t x = mix64(p), in = 0, out;
	bsp_nprocs_t n;
	bsp_size_t st;
	uint32_t m;
	unsigned s;

	bsp_push_reg(&in, 8);
	bsp_sync();
	for (s = 0; s < RING_STEPS; s++) {
		out = mix64(x + s);
		bsp_put(t, &out, &in, 0, 8);
		m = (uint32_t)out;
		bsp_send(t, NULL, &m, 4);
		bsp_sync();
		bsp_qsize(&n, &st);
		bsp_get_tag(&st, NULL);
		m = 0;
		if (n == 1 && st == 4)
			bsp_move(&m, 4);
		CHECK(r, n == 1 && m == (uint32_t)in, "superstep %u: %u messages, payload %u vs put %u", s,
		      n, m, (uint32_t)in);
		x ^= in;
	}
	bsp_pop_reg(&in);
	bsp_sync();
	finish(r, x);
}

static BP_REF(ref_ring)
{
	static const struct bp_harness *memo_hr;
	static uint64_t *memo;
	static unsigned memo_v;

	if (memo_v != v || memo_hr != hr) {
		uint64_t *out = malloc(v * 8);
		unsigned s, i;

		free(memo);
		memo = malloc(v * 8);
		for (i = 0; i < v; i++)
			memo[i] = mix64(i);
		for (s = 0; s < RING_STEPS; s++) {
			for (i = 0; i < v; i++)
				out[i] = mix64(memo[i] + s);
			for (i = 0; i < v; i++)
				memo[i] ^= out[hr->from(i, v)];
		}
		free(out);
		memo_v = v;
		memo_hr = hr;
	}
	return memo[pid];
}

/* ================= collectives ================= */

static const enum pems_type types[] = { PEMS_INT32, PEMS_INT64, PEMS_UINT64, PEMS_FLOAT,
					PEMS_DOUBLE, PEMS_BYTE };
static const char *const type_names[] = { "INT32", "INT64", "UINT64", "FLOAT", "DOUBLE", "BYTE" };
static const enum pems_op ops[] = { PEMS_SUM, PEMS_MIN, PEMS_MAX, PEMS_PROD };
static const char *const op_names[] = { "SUM", "MIN", "MAX", "PROD" };
#define NTYPES 6
#define NOPS 4

static size_t tsize(enum pems_type t)
{
	switch (t) {
	case PEMS_INT32: case PEMS_FLOAT: return 4;
	case PEMS_BYTE: return 1;
	default: return 8;
	}
}

/* Input element @i of VP @p for (@t, @op): values whose combination is
 * defined (no signed overflow) and, for floating point sums, inexact, so
 * that the order of combination shows. */
static void gen(void *out, enum pems_type t, enum pems_op op, unsigned p, size_t i)
{
	uint64_t m = mix64((uint64_t)p * 1315423911u + i * 2654435761u + (uint64_t)t * 97 + op);
	bool two = (p + i) % 97 == 5, neg = (p + i) % 89 == 3;
	int32_t i32;
	int64_t i64;
	float f;
	double d;
	uint8_t u8;

	switch (t) {
	case PEMS_INT32:
		i32 = op == PEMS_SUM ? (int32_t)(m % 20001) - 10000 :
		      op == PEMS_PROD ? (two ? 2 : neg ? -1 : 1) : (int32_t)(uint32_t)m;
		memcpy(out, &i32, 4);
		break;
	case PEMS_INT64:
		i64 = op == PEMS_SUM ? (int64_t)(m % 2000000000001ull) - 1000000000000ll :
		      op == PEMS_PROD ? (two ? 3 : neg ? -1 : 1) : (int64_t)m;
		memcpy(out, &i64, 8);
		break;
	case PEMS_UINT64:
		m = op == PEMS_PROD ? m | 1 : m;
		memcpy(out, &m, 8);
		break;
	case PEMS_FLOAT:
		f = op == PEMS_SUM ? 1.0f / (float)(p + i + 1) :
		    op == PEMS_PROD ? (two ? 2.0f : neg ? -0.5f : 1.0f) :
		    (float)((int)(m % 200001) - 100000) / 16.0f;
		memcpy(out, &f, 4);
		break;
	case PEMS_DOUBLE:
		d = op == PEMS_SUM ? 1.0 / (double)(p + i + 1) + (double)(m % 7) :
		    op == PEMS_PROD ? (two ? 4.0 : neg ? -0.25 : 1.0) :
		    ((double)(int64_t)(m % 2000001) - 1000000.0) / 3.0;
		memcpy(out, &d, 8);
		break;
	case PEMS_BYTE:
		u8 = (uint8_t)(op == PEMS_PROD ? m | 1 : m);
		memcpy(out, &u8, 1);
		break;
	}
}

#define REF_OP(T)							\
	do {								\
		T a, b;							\
		memcpy(&a, acc, sizeof(T));				\
		memcpy(&b, in, sizeof(T));				\
		a = op == PEMS_SUM ? (T)(a + b) : op == PEMS_PROD ? (T)(a * b) : \
		    op == PEMS_MIN ? (b < a ? b : a) : (b > a ? b : a); \
		memcpy(acc, &a, sizeof(T));				\
	} while (0)

/* acc = acc (op) in, one element: the sequential reference */
static void ref_op(void *acc, const void *in, enum pems_type t, enum pems_op op)
{
	switch (t) {
	case PEMS_INT32: REF_OP(int32_t); break;
	case PEMS_INT64: REF_OP(int64_t); break;
	case PEMS_UINT64: REF_OP(uint64_t); break;
	case PEMS_FLOAT: REF_OP(float); break;
	case PEMS_DOUBLE: REF_OP(double); break;
	case PEMS_BYTE: REF_OP(uint8_t); break;
	}
}

/* out[0..n) = combination in VP order of the inputs of VPs [0, upto) */
static void ref_fold(void *out, enum pems_type t, enum pems_op op, unsigned upto, size_t n)
{
	size_t e = tsize(t), i;
	unsigned char in[8];
	unsigned q;

	for (i = 0; i < n; i++) {
		gen((char *)out + i * e, t, op, 0, i);
		for (q = 1; q < upto; q++) {
			gen(in, t, op, q, i);
			ref_op((char *)out + i * e, in, t, op);
		}
	}
}

#define AR_N 3

static void spmd_allreduce(void *arg)
{
	BP_ARGS(arg);
	unsigned char in[AR_N * 8], out[AR_N * 8], want[AR_N * 8];
	int64_t io[2] = { p, -3 * (int64_t)p }, tri = (int64_t)v * (v - 1) / 2;
	uint64_t h = H0;
	unsigned ti, oi;
	size_t i;

	for (ti = 0; ti < NTYPES; ti++)
		for (oi = 0; oi < NOPS; oi++) {
			size_t e = tsize(types[ti]);

			for (i = 0; i < AR_N; i++)
				gen(in + i * e, types[ti], ops[oi], p, i);
			memset(out, 0xcc, sizeof(out));
			pems_allreduce(in, out, AR_N, types[ti], ops[oi]);
			h = hash(h, out, AR_N * e);
			if (p == 0) {
				ref_fold(want, types[ti], ops[oi], v, AR_N);
				CHECK(r, !memcmp(out, want, AR_N * e),
				      "pems_allreduce(%s, %s) differs from the sequential reference",
				      type_names[ti], op_names[oi]);
			}
		}
	pems_allreduce(io, io, 2, PEMS_INT64, PEMS_SUM);	/* in == out */
	CHECK(r, io[0] == tri && io[1] == -3 * tri, "in-place allreduce: {%lld, %lld}",
	      (long long)io[0], (long long)io[1]);
	h = hash(h, io, sizeof(io));
	finish(r, h);
}

static BP_REF(ref_allreduce)
{
	unsigned char out[AR_N * 8];
	int64_t tri = (int64_t)v * (v - 1) / 2, io[2] = { tri, -3 * tri };
	uint64_t h = H0;
	unsigned ti, oi;

	(void)pid;
	for (ti = 0; ti < NTYPES; ti++)
		for (oi = 0; oi < NOPS; oi++) {
			ref_fold(out, types[ti], ops[oi], v, AR_N);
			h = hash(h, out, AR_N * tsize(types[ti]));
		}
	return hash(h, io, sizeof(io));
}

/* A user operation that is associative but not commutative (composition
 * of affine maps mod 2^64): the result shows the VP order. */
struct aff {
	uint64_t a, b;
};

static void aff_op(void *inout, const void *in, size_t count)
{
	struct aff *x = inout;
	const struct aff *y = in;
	size_t i;

	for (i = 0; i < count; i++) {
		uint64_t a = y[i].a * x[i].a, b = y[i].a * x[i].b + y[i].b;

		x[i].a = a;
		x[i].b = b;
	}
}

static void aff_in(struct aff *in, unsigned p, unsigned v)
{
	in[0].a = 2 * (uint64_t)p + 3;
	in[0].b = mix64(p);
	in[1].a = 4 * (uint64_t)p + 1;
	in[1].b = mix64(p + v);
}

static void spmd_allreduce_user(void *arg)
{
	BP_ARGS(arg);
	struct aff in[2], out[2];

	aff_in(in, p, v);
	memset(out, 0, sizeof(out));
	pems_allreduce_user(in, out, 2, sizeof(struct aff), aff_op);
	finish(r, hash(H0, out, sizeof(out)));
}

static BP_REF(ref_allreduce_user)
{
	struct aff acc[2], in[2];
	unsigned q;

	(void)pid;
	aff_in(acc, 0, v);
	for (q = 1; q < v; q++) {
		aff_in(in, q, v);
		aff_op(acc, in, 2);
	}
	return hash(H0, acc, sizeof(acc));
}

/* pems_reduce: only the root's output is written. */
static void spmd_reduce(void *arg)
{
	BP_ARGS(arg);
	unsigned root1 = v - 1, root2 = v / 2;
	int64_t in = (int64_t)p * 7 - 3, out = -1, want = 7 * ((int64_t)v * (v - 1) / 2) - 3 * (int64_t)v;
	double din = 1.0 / (p + 1), dmax = -1, dsum = -1, wsum = 0;
	uint64_t h = H0;
	unsigned q;

	pems_reduce(root1, &in, &out, 1, PEMS_INT64, PEMS_SUM);
	if (p == root1)
		CHECK(r, out == want, "pems_reduce SUM gave %lld, expected %lld", (long long)out, (long long)want);
	else
		CHECK(r, out == -1, "pems_reduce wrote the output of VP %u, not the root %u", p, root1);
	pems_reduce(root2, &din, p == root2 ? &dmax : NULL, 1, PEMS_DOUBLE, PEMS_MAX);
	if (p == root2)
		CHECK(r, dmax == 1.0, "pems_reduce MAX gave %g", dmax);
	pems_reduce(0, &din, &dsum, 1, PEMS_DOUBLE, PEMS_SUM);
	if (p == 0) {
		for (q = 0; q < v; q++)
			wsum += 1.0 / (q + 1);
		CHECK(r, dsum == wsum, "pems_reduce of doubles is not in VP order: %.17g vs %.17g", dsum, wsum);
	}
	h = hash_u64(h, p == root1 ? (uint64_t)out : 0);
	h = hash_u64(h, p == root2 ? (uint64_t)(dmax * 1000) : 0);
	finish(r, h);
}

static BP_REF(ref_reduce)
{
	int64_t want = 7 * ((int64_t)v * (v - 1) / 2) - 3 * (int64_t)v;
	uint64_t h = H0;

	h = hash_u64(h, pid == v - 1 ? (uint64_t)want : 0);
	return hash_u64(h, pid == v / 2 ? 1000 : 0);
}

static void spmd_broadcast(void *arg)
{
	BP_ARGS(arg);
	unsigned root = v / 3;
	unsigned char buf[100], *hb = pems_malloc(3000);
	uint8_t one = p == 0 ? 42 : 0;
	uint64_t h;

	if (p == root)
		pfill(buf, root, 1, 0, sizeof(buf));
	else
		memset(buf, 0x77, sizeof(buf));
	pems_broadcast(root, buf, sizeof(buf));
	CHECK(r, pequal(buf, root, 1, 0, sizeof(buf)), "pems_broadcast from %u: wrong bytes", root);
	pems_broadcast(0, &one, 1);
	CHECK(r, one == 42, "1-byte pems_broadcast gave %u", one);
	if (p == v - 1)
		pfill(hb, 9, 9, 0, 3000);
	else
		memset(hb, 0, 3000);
	pems_broadcast(v - 1, hb, 3000);
	CHECK(r, pequal(hb, 9, 9, 0, 3000), "3000-byte pems_broadcast: wrong bytes");
	h = hash(hash_u64(hash(H0, buf, sizeof(buf)), one), hb, 3000);
	pems_free(hb);
	finish(r, h);
}

static BP_REF(ref_broadcast)
{
	unsigned char buf[100], hb[3000];

	(void)pid;
	pfill(buf, v / 3, 1, 0, sizeof(buf));
	pfill(hb, 9, 9, 0, sizeof(hb));
	return hash(hash_u64(hash(H0, buf, sizeof(buf)), 42), hb, sizeof(hb));
}

#define GN 12

static void spmd_gather(void *arg)
{
	BP_ARGS(arg);
	unsigned root = (v - 1) / 2, i;
	unsigned char in[GN], *out = pems_malloc((size_t)v * GN), *all = pems_malloc((size_t)v * GN);
	bool ok = true;
	uint64_t h = H0;

	pfill(in, p, 2, 0, GN);
	memset(out, 0x33, (size_t)v * GN);
	memset(all, 0x44, (size_t)v * GN);
	pems_gather(root, in, out, GN);
	if (p == root) {
		for (i = 0; i < v; i++)
			ok &= pequal(out + (size_t)i * GN, i, 2, 0, GN);
		CHECK(r, ok, "pems_gather to %u: wrong bytes", root);
		h = hash(h, out, (size_t)v * GN);
	} else {
		CHECK(r, all_bytes(out, 0x33, (size_t)v * GN), "pems_gather wrote on VP %u, not the root", p);
	}
	pems_allgather(in, all, GN);
	for (i = 0; i < v; i++)
		ok &= pequal(all + (size_t)i * GN, i, 2, 0, GN);
	CHECK(r, ok, "pems_allgather: wrong bytes");
	h = hash(h, all, (size_t)v * GN);
	pems_free(out);
	pems_free(all);
	finish(r, h);
}

static BP_REF(ref_gather)
{
	static unsigned char *img;
	static unsigned img_v;
	uint64_t h = H0;
	unsigned i;

	if (img_v != v) {
		free(img);
		img = malloc((size_t)v * GN);
		for (i = 0; i < v; i++)
			pfill(img + (size_t)i * GN, i, 2, 0, GN);
		img_v = v;
	}
	if (pid == (v - 1) / 2)
		h = hash(h, img, (size_t)v * GN);
	return hash(h, img, (size_t)v * GN);
}

/* pems_exscan: VP p gets the combination of VPs 0..p-1; VP 0 the
 * identity (for floating MIN/MAX: the largest finite value or infinity). */
#define EX_N 2

static bool is_identity(const void *x, enum pems_type t, enum pems_op op)
{
	unsigned char want[8];
	float f;
	double d;

	memcpy(&f, x, 4);
	memcpy(&d, x, 8);
	if (t == PEMS_FLOAT && op == PEMS_MIN)
		return f >= FLT_MAX;
	if (t == PEMS_FLOAT && op == PEMS_MAX)
		return f <= -FLT_MAX;
	if (t == PEMS_DOUBLE && op == PEMS_MIN)
		return d >= DBL_MAX;
	if (t == PEMS_DOUBLE && op == PEMS_MAX)
		return d <= -DBL_MAX;
	memset(want, 0, sizeof(want));
	switch (op) {
	case PEMS_SUM:
		break;
	case PEMS_PROD:
		if (t == PEMS_FLOAT) {
			f = 1.0f;
			memcpy(want, &f, 4);
		} else if (t == PEMS_DOUBLE) {
			d = 1.0;
			memcpy(want, &d, 8);
		} else {
			want[0] = 1;	/* little-endian integer 1 */
		}
		break;
	case PEMS_MIN:	/* the largest value of the type */
		memset(want, 0xff, tsize(t));
		if (t == PEMS_INT32)
			want[3] = 0x7f;
		if (t == PEMS_INT64)
			want[7] = 0x7f;
		break;
	case PEMS_MAX:	/* the smallest */
		if (t == PEMS_INT32)
			want[3] = 0x80;
		if (t == PEMS_INT64)
			want[7] = 0x80;
		break;
	}
	return !memcmp(x, want, tsize(t));
}

static void spmd_exscan(void *arg)
{
	BP_ARGS(arg);
	unsigned char in[EX_N * 8], out[EX_N * 8];
	uint64_t h = H0;
	unsigned ti, oi;
	size_t i;

	for (ti = 0; ti < NTYPES; ti++)
		for (oi = 0; oi < NOPS; oi++) {
			size_t e = tsize(types[ti]);

			for (i = 0; i < EX_N; i++)
				gen(in + i * e, types[ti], ops[oi], p, i);
			memset(out, 0xcc, sizeof(out));
			pems_exscan(in, out, EX_N, types[ti], ops[oi]);
			if (p == 0) {
				for (i = 0; i < EX_N; i++)
					CHECK(r, is_identity(out + i * e, types[ti], ops[oi]),
					      "pems_exscan(%s, %s) on VP 0 is not the identity",
					      type_names[ti], op_names[oi]);
			} else {
				h = hash(h, out, EX_N * e);
			}
		}
	finish(r, h);
}

static BP_REF(ref_exscan)
{
	static uint64_t *memo;
	static unsigned memo_v;

	if (memo_v != v) {
		unsigned char acc[EX_N * 8], in[8];
		unsigned ti, oi, q;
		size_t i;

		free(memo);
		memo = malloc((size_t)v * 8);
		for (q = 0; q < v; q++)
			memo[q] = H0;
		for (ti = 0; ti < NTYPES; ti++)
			for (oi = 0; oi < NOPS; oi++) {
				size_t e = tsize(types[ti]);

				for (i = 0; i < EX_N; i++)
					gen(acc + i * e, types[ti], ops[oi], 0, i);
				for (q = 1; q < v; q++) {
					memo[q] = hash(memo[q], acc, EX_N * e);
					for (i = 0; i < EX_N; i++) {
						gen(in, types[ti], ops[oi], q, i);
						ref_op(acc + i * e, in, types[ti], ops[oi]);
					}
				}
			}
		memo_v = v;
	}
	return memo[pid];
}

/* pems_alltoallv with displacements on both sides (blocks in reverse
 * order, with gaps): data copied at the call, delivered at the sync. */
static size_t a2a_n(unsigned i, unsigned j)
{
	return (i * 3 + j * 5) % 7;
}

/* the receive image of VP @p: gaps 0xee, block from i at rd[i] */
static size_t a2a_layout(unsigned p, unsigned v, size_t *rc, size_t *rd)
{
	size_t roff = 1;
	unsigned i;

	for (i = v; i-- > 0;) {
		rd[i] = roff;
		rc[i] = a2a_n(i, p);
		roff += rc[i] + 2;
	}
	return roff + 1;
}

static void spmd_alltoallv(void *arg)
{
	BP_ARGS(arg);
	size_t *sc = pems_malloc(v * sizeof(size_t)), *sd = pems_malloc(v * sizeof(size_t));
	size_t *rc = pems_malloc(v * sizeof(size_t)), *rd = pems_malloc(v * sizeof(size_t));
	size_t off = 0, rlen;
	unsigned char *sendbuf, *recvbuf;
	unsigned i, j;
	bool ok = true;
	uint64_t h;

	for (j = v; j-- > 0;) {
		sd[j] = off;
		sc[j] = a2a_n(p, j);
		off += sc[j] + 3;
	}
	sendbuf = pems_malloc(off + 1);
	memset(sendbuf, 0x11, off + 1);
	for (j = 0; j < v; j++)
		pfill(sendbuf + sd[j], p, j, 0, sc[j]);
	rlen = a2a_layout(p, v, rc, rd);
	recvbuf = pems_malloc(rlen);
	memset(recvbuf, 0xee, rlen);
	pems_alltoallv(sendbuf, sc, sd, recvbuf, rc, rd);
	memset(sendbuf, 0x22, off + 1);	/* copied at the call: may be reused */
	pems_free(sendbuf);
	CHECK(r, all_bytes(recvbuf, 0xee, rlen), "pems_alltoallv delivered before bsp_sync");
	bsp_sync();
	for (i = 0; i < v; i++)
		ok &= pequal(recvbuf + rd[i], i, p, 0, rc[i]);
	CHECK(r, ok, "pems_alltoallv: wrong bytes");
	h = hash(H0, recvbuf, rlen);
	pems_free(recvbuf);
	pems_free(sc);
	pems_free(sd);
	pems_free(rc);
	pems_free(rd);
	finish(r, h);
}

static BP_REF(ref_alltoallv)
{
	size_t *rc = malloc(v * sizeof(size_t)), *rd = malloc(v * sizeof(size_t)), rlen;
	unsigned char *img;
	unsigned i;
	uint64_t h;

	rlen = a2a_layout(pid, v, rc, rd);
	img = malloc(rlen);
	memset(img, 0xee, rlen);
	for (i = 0; i < v; i++)
		pfill(img + rd[i], i, pid, 0, rc[i]);
	h = hash(H0, img, rlen);
	free(img);
	free(rc);
	free(rd);
	return h;
}

/* pems_exchange: receivers learn their counts; the data arrives at the
 * next sync, here ended by a collective, concatenated in source order. */
static size_t xc_n(unsigned i, unsigned j)
{
	return (i + 2 * j) % 5;
}

static void spmd_exchange(void *arg)
{
	BP_ARGS(arg);
	size_t *sc = pems_malloc(v * sizeof(size_t)), *rcn = pems_malloc(v * sizeof(size_t));
	size_t off = 0, pos, rbytes = 12345, want = 0, total = 0, sent, wtotal = 0;
	unsigned char *sendbuf, *rb = NULL, three[3];
	unsigned i, j;
	bool ok = true;
	uint64_t h;

	for (j = 0; j < v; j++) {
		sc[j] = xc_n(p, j);
		off += sc[j];
	}
	sendbuf = pems_malloc(off + 1);
	for (j = 0, pos = 0; j < v; j++) {
		pfill(sendbuf + pos, p, j, 0, sc[j]);
		pos += sc[j];
	}
	memset(rcn, 0xff, v * sizeof(size_t));
	pems_exchange(sendbuf, sc, (void **)&rb, &rbytes, rcn);
	pems_free(sendbuf);
	sent = off;
	pems_allreduce(&sent, &total, 1, PEMS_UINT64, PEMS_SUM);	/* ends the superstep */
	for (i = 0; i < v; i++) {
		want += xc_n(i, p);
		for (j = 0; j < v; j++)
			wtotal += xc_n(i, j);
	}
	CHECK(r, total == wtotal, "allreduce in the exchange superstep: %zu, expected %zu", total, wtotal);
	CHECK(r, rb != NULL && rbytes == want, "pems_exchange: %zu bytes received, expected %zu", rbytes, want);
	for (i = 0, pos = 0; rb && rbytes == want && i < v; i++) {
		ok &= rcn[i] == xc_n(i, p) && pequal(rb + pos, i, p, 0, xc_n(i, p));
		pos += xc_n(i, p);
	}
	CHECK(r, ok, "pems_exchange: wrong counts or bytes");
	h = hash(hash(H0, rb, rbytes == want ? want : 0), rcn, v * sizeof(size_t));
	pems_free(rb);
	/* again without recvcounts, only to itself */
	for (j = 0; j < v; j++)
		sc[j] = j == p ? 3 : 0;
	pfill(three, p, 1000, 0, 3);
	rb = NULL;
	pems_exchange(three, sc, (void **)&rb, &rbytes, NULL);
	bsp_sync();
	CHECK(r, rb && rbytes == 3 && pequal(rb, p, 1000, 0, 3), "pems_exchange to itself: %zu bytes", rbytes);
	pems_free(rb);
	pems_free(sc);
	pems_free(rcn);
	finish(r, h);
}

static BP_REF(ref_exchange)
{
	size_t *rcn = malloc(v * sizeof(size_t)), n = 0, pos = 0;
	unsigned char *img;
	unsigned i;
	uint64_t h;

	for (i = 0; i < v; i++) {
		rcn[i] = xc_n(i, pid);
		n += rcn[i];
	}
	img = malloc(n + 1);
	for (i = 0; i < v; i++) {
		pfill(img + pos, i, pid, 0, rcn[i]);
		pos += rcn[i];
	}
	h = hash(hash(H0, img, n), rcn, v * sizeof(size_t));
	free(img);
	free(rcn);
	return h;
}

/* ================= the table ================= */

struct bsp_case {
	const char *suite;	/* area */
	const char *name;	/* behaviour */
	void (*fn)(void *);
	BP_REF((*ref));		/* sequential reference */
	unsigned tiers;		/* configurations it runs on (cost) */
};

static const struct bsp_case cases[] = {
	{ "registration", "areas_match_by_registration_order", bp_reg_order, bp_ref_reg_order, T_MOST },
	{ "registration", "push_pop_stack_and_repush_take_effect_at_sync", bp_push_pop, bp_ref_push_pop, T_MOST },
	{ "drma_put", "put_copies_source_at_call_time", spmd_put_copies, ref_put_copies, T_MOST },
	{ "drma_put", "put_lands_at_next_sync_at_offset", spmd_put_next_step, ref_put_next_step, T_MOST },
	{ "drma_put", "puts_from_all_vps_to_one_area", bp_puts_to_one, bp_ref_puts_to_one, T_MOST },
	{ "drma_put", "overlapping_puts_last_writer_in_pid_then_issue_order", bp_put_overlap, bp_ref_put_overlap, T_ALL },
	{ "drma_get", "get_sees_end_of_superstep_value_before_puts", bp_get_value, bp_ref_get_value, T_MOST },
	{ "drma_get", "get_reads_heap_stack_and_libc_memory_of_spilled_vp", bp_get_disk, bp_ref_get_disk, T_ALL },
	{ "drma_get", "hpput_hpget_same_semantics", spmd_hp, ref_hp, T_MOST },
	{ "bsmp", "set_tagsize_returns_old_and_takes_effect_at_sync", spmd_tagsize, ref_tagsize, T_MOST },
	{ "bsmp", "queue_in_source_then_issue_order_with_qsize", spmd_queue, ref_queue, T_ALL },
	{ "bsmp", "move_truncates_hpmove_points_empty_queue_status", spmd_move_hp, ref_move_hp, T_MOST },
	{ "bsmp", "messages_visible_only_in_next_superstep", spmd_bsmp_window, ref_bsmp_window, T_MOST },
	{ "bsmp", "large_payloads_through_message_store", spmd_bsmp_large, ref_bsmp_large, T_MOST },
	{ "lifecycle", "nprocs_pid_stable_time_monotonic", spmd_ident, ref_ident, T_MOST },
	{ "lifecycle", "thirty_supersteps_of_puts_and_sends", spmd_ring, ref_ring, T_SMALL | T_BIG },
	{ "context_memory", "pems_malloc_memory_survives_spills_at_its_address", spmd_heap, ref_heap, T_ALL },
	{ "collectives", "allreduce_every_type_and_op_in_vp_order", spmd_allreduce, ref_allreduce, T_SMALL | T_BIG },
	{ "collectives", "allreduce_user_op_in_vp_order", spmd_allreduce_user, ref_allreduce_user, T_ALL },
	{ "collectives", "reduce_writes_only_the_root", spmd_reduce, ref_reduce, T_MOST },
	{ "collectives", "broadcast_from_any_root", spmd_broadcast, ref_broadcast, T_MOST },
	{ "collectives", "gather_to_root_and_allgather", spmd_gather, ref_gather, T_MOST },
	{ "collectives", "exscan_every_type_and_op_identity_on_vp0", spmd_exscan, ref_exscan, T_SMALL | T_BIG },
	{ "collectives", "alltoallv_with_displacements", spmd_alltoallv, ref_alltoallv, T_MOST },
	{ "collectives", "exchange_concatenates_by_source", spmd_exchange, ref_exchange, T_ALL },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

START_TEST(spmd_case)
{
	const struct bsp_case *bc = &cases[_i / NCFG];
	const struct spmd_cfg *c = &cfgs[_i % NCFG];
	struct run *r = calloc(1, sizeof(*r));
	uint64_t *want, expect;
	struct pems_stats st;
	unsigned i;
	int rc;

	ck_assert_ptr_nonnull(r);
	r->base.hr = &one_process;
	r->v = c->v;
	r->vals = malloc(c->v * sizeof(uint64_t));
	r->aux = calloc(c->v, AUX_PER_VP);
	want = malloc(c->v * sizeof(uint64_t));
	ck_assert(r->vals && r->aux && want);
	for (i = 0; i < c->v; i++)
		r->vals[i] = 0xbadbadbadull;
	ck_assert_int_eq(spmd_configure(c), 0);
	ck_assert_msg(bsp_nprocs() == c->v, "[%s] bsp_nprocs() before the SPMD section is %u",
		      c->name, bsp_nprocs());
	rc = pems_spmd(NULL, bc->fn, r);
	ck_assert_msg(rc == 0, "%s [%s]: pems_spmd returned %d (%s)", bc->name, c->name, rc,
		      pems_strerror(rc));
	ck_assert_msg(atomic_load(&r->bad) == 0, "%s [%s]: %u failed checks; first: %s", bc->name,
		      c->name, atomic_load(&r->bad), r->why);
	ck_assert_msg(r->done, "%s [%s]: VP 0 did not reach the end", bc->name, c->name);
	expect = bp_expect(bc->ref, &one_process, c->v, want);
	if (r->sum != expect) {
		i = bp_first_diff(r->vals, want, c->v);
		ck_abort_msg("%s [%s]: checksum %016llx, reference %016llx; first difference on VP %u: %016llx vs %016llx",
			     bc->name, c->name, (unsigned long long)r->sum, (unsigned long long)expect, i,
			     (unsigned long long)(i < c->v ? r->vals[i] : 0),
			     (unsigned long long)(i < c->v ? want[i] : 0));
	}
	if (c->spill) {
		pems_get_stats(&st);
		ck_assert_msg(st.ctx_written > 0 && st.ctx_read > 0,
			      "%s [%s]: the budget (%zu KiB) should force spilling, but contexts written %llu, read %llu",
			      bc->name, c->name, pems_current_config()->mem >> 10,
			      (unsigned long long)st.ctx_written, (unsigned long long)st.ctx_read);
	}
	free(want);
	free(r->vals);
	free(r->aux);
	free(r);
}
END_TEST

/* ================= behaviours that abort or end the process ================= */

static const struct spmd_cfg small_cfg = { "v2-k1", 2, 1, 1 * MiB, 64 * MiB, PEMS_IO_KIND_SYNC, false };

struct scenario {
	void (*fn)(void *);
	const struct spmd_cfg *cfg;
};

/* child: configure, run one SPMD function, report pems_spmd's result */
static void child_spmd(void *arg)
{
	const struct scenario *s = arg;
	int rc;

	if (spmd_configure(s->cfg))
		exit(125);
	rc = pems_spmd(NULL, s->fn, NULL);
	printf("rc=%d\n", rc);
	exit(rc ? 2 : 0);
}

static void expect_abort(void (*fn)(void *), const char *pattern)
{
	struct scenario s = { fn, &small_cfg };
	struct child_result cr;

	run_child(child_spmd, &s, 60, &cr);
	ck_assert_msg(!cr.timed_out, "the child hung; stderr: %s", cr.err);
	ck_assert_msg(!cr.signaled, "the child was killed by signal %d; stderr: %s", cr.sig, cr.err);
	ck_assert_msg(cr.exited && cr.status == 1, "exit status %d, expected 1; stderr: %s", cr.status, cr.err);
	ck_assert_msg(msg_match(pattern, cr.err), "stderr\n  %s\ndoes not match\n  %s", cr.err, pattern);
}

static void spmd_put_same_superstep(void *arg)
{
	uint64_t *a = pems_calloc(1, 8), x = 1;

	(void)arg;
	bsp_push_reg(a, 8);
	if (bsp_pid() == 0)
		bsp_put(1, &x, a, 0, 8);	/* registration not in effect yet */
	bsp_sync();
}

START_TEST(put_in_superstep_of_registration_aborts)
{
	expect_abort(spmd_put_same_superstep,
		     "bsp_put: address {ptr} is not registered on VP 0 (register it with bsp_push_reg and bsp_sync first)\n");
}
END_TEST

static void spmd_get_same_superstep(void *arg)
{
	uint64_t *a = pems_calloc(1, 8), x = 1;

	(void)arg;
	bsp_push_reg(a, 8);
	if (bsp_pid() == 0)
		bsp_get(1, a, 0, &x, 8);
	bsp_sync();
}

START_TEST(get_in_superstep_of_registration_aborts)
{
	expect_abort(spmd_get_same_superstep,
		     "bsp_get: address {ptr} is not registered on VP 0 (register it with bsp_push_reg and bsp_sync first)\n");
}
END_TEST

static void spmd_put_after_pop(void *arg)
{
	uint64_t *a = pems_calloc(1, 8), x = 1;

	(void)arg;
	bsp_push_reg(a, 8);
	bsp_sync();
	bsp_pop_reg(a);
	bsp_put((bsp_pid() + 1) % 2, &x, a, 0, 8);	/* still registered here */
	bsp_sync();
	if (bsp_pid() == 0)
		bsp_put(1, &x, a, 0, 8);	/* the pop is in effect now */
	bsp_sync();
}

START_TEST(put_after_pop_and_sync_aborts)
{
	expect_abort(spmd_put_after_pop,
		     "bsp_put: address {ptr} is not registered on VP 0 (register it with bsp_push_reg and bsp_sync first)\n");
}
END_TEST

/*
 * BSPlib lets the size of a registration differ between processes (a
 * common idiom: only the root registers the receive area, the others
 * register NULL, 0); a put must fit the destination's area.  (Found by
 * this test: bsp.c checked the caller's size; fixed in 436fb50.)
 */
static void spmd_sizes_differ(void *arg)
{
	unsigned p = bsp_pid(), v = bsp_nprocs(), i;
	uint64_t *all = p == 0 ? pems_calloc(v, 8) : NULL, x = 100 + p, sum = 0;

	(void)arg;
	bsp_push_reg(all, p == 0 ? v * 8 : 0);
	bsp_sync();
	bsp_put(0, &x, all, p * 8, 8);
	bsp_sync();
	if (p == 0) {
		for (i = 0; i < v; i++)
			sum += all[i];
		printf("sum=%llu\n", (unsigned long long)sum);
	}
	bsp_pop_reg(all);
	bsp_sync();
}

START_TEST(put_bounds_follow_the_destination_registration)
{
	static const struct spmd_cfg c4 = { "v4-k2", 4, 2, 1 * MiB, 64 * MiB, PEMS_IO_KIND_URING, false };
	struct scenario s = { spmd_sizes_differ, &c4 };
	struct child_result cr;
	bool ok;

	run_child(child_spmd, &s, 60, &cr);
	ok = cr.exited && cr.status == 0 && strstr(cr.out, "sum=406\n");
	ck_assert_msg(ok, "exit %d, stdout %s, stderr %s", cr.status, cr.out, cr.err);
}
END_TEST

/* bsp_begin / bsp_end: the bsp_init form, as BSPlib programs use it */
static void begin_end_spmd(void)
{
	unsigned p;

	bsp_begin(bsp_nprocs());
	p = bsp_pid();
	printf("vp %u of %u\n", p, bsp_nprocs());
	bsp_sync();
	bsp_end();
	printf("after bsp_end\n");
}

static void child_begin_end(void *arg)
{
	static const struct spmd_cfg c5 = { "v5-k2", 5, 2, 1 * MiB, 64 * MiB, PEMS_IO_KIND_AIO, false };

	(void)arg;
	if (spmd_configure(&c5))
		exit(125);
	if (bsp_nprocs() != 5) {
		printf("bsp_nprocs before bsp_begin: %u\n", bsp_nprocs());
		exit(3);
	}
	bsp_init(begin_end_spmd, 0, NULL);
	begin_end_spmd();
	printf("main continues\n");
	exit(7);
}

static unsigned count_lines(const char *text, const char *line)
{
	unsigned n = 0;
	size_t l = strlen(line);
	const char *s;

	for (s = text; (s = strstr(s, line)); s += l)
		if (s == text || s[-1] == '\n')
			n++;
	return n;
}

START_TEST(bsp_end_leaves_only_vp0_running)
{
	struct child_result cr;
	unsigned i;
	char line[64];

	run_child(child_begin_end, NULL, 60, &cr);
	ck_assert_msg(!cr.timed_out && !cr.signaled, "child hung or crashed; stderr: %s", cr.err);
	ck_assert_msg(cr.err[0] == '\0', "stderr: %s", cr.err);
	for (i = 0; i < 5; i++) {
		snprintf(line, sizeof(line), "vp %u of 5\n", i);
		ck_assert_msg(count_lines(cr.out, line) == 1, "\"%s\" not printed once:\n%s", line, cr.out);
	}
	ck_assert_msg(count_lines(cr.out, "after bsp_end\n") == 1,
		      "code after bsp_end ran %u times, expected once (VP 0):\n%s",
		      count_lines(cr.out, "after bsp_end\n"), cr.out);
}
END_TEST

/*
 * In the bsp_init form (bsp_init(spmd); spmd(); ... in main) BSPlib
 * programs continue in main after the SPMD function returns, on process
 * 0, and main's exit status is the process's.  (Was a known bug: bsp.c's
 * bsp_begin exited the process when the run was over; now the caller of
 * bsp_begin goes on as VP 0, sched.c pems_rt_begin.)
 */
START_TEST(main_continues_after_the_spmd_function)
{
	struct child_result cr;

	run_child(child_begin_end, NULL, 60, &cr);
	ck_assert_msg(cr.exited && cr.status == 7 && count_lines(cr.out, "main continues\n") == 1,
		      "exit status %d (expected 7), stdout:\n%s", cr.status, cr.out);
}
END_TEST

/* PEMS_PROCS overrides bsp_begin's argument; without it maxprocs counts. */
static void procs_spmd(void)
{
	bsp_begin(6);
	if (bsp_pid() == 0)
		printf("nprocs=%u\n", bsp_nprocs());
	bsp_end();
}

static void child_procs(void *arg)
{
	char env[64];

	snprintf(env, sizeof(env), "%s", (const char *)arg);
	if (*env)
		setenv("PEMS_PROCS", env, 1);
	else
		unsetenv("PEMS_PROCS");
	setenv("PEMS_TMP", spmd_tmp(), 1);
	setenv("PEMS_MU", "1M", 1);
	setenv("PEMS_MEM", "64M", 1);
	setenv("PEMS_THREADS", "2", 1);
	unsetenv("PEMS_STACK");
	bsp_init(procs_spmd, 0, NULL);
	procs_spmd();
}

START_TEST(pems_procs_overrides_maxprocs)
{
	struct child_result cr;

	run_child(child_procs, "3", 60, &cr);
	ck_assert_msg(cr.exited && cr.status == 0, "exit %d; stderr %s", cr.status, cr.err);
	ck_assert_str_eq(cr.out, "nprocs=3\n");
	run_child(child_procs, "", 60, &cr);
	ck_assert_msg(cr.exited && cr.status == 0, "exit %d; stderr %s", cr.status, cr.err);
	ck_assert_str_eq(cr.out, "nprocs=6\n");
}
END_TEST

/*
 * The least budget the runtime accepts, with one worker, completes.
 * (Found by this test: the prefetched VP held the budget the running VP
 * needed to grow to mu, and pems_ctx_reserve waited forever; fixed in
 * d834836, run slots + rest pool.)
 */
static void spmd_small_heap(void *arg)
{
	char *x = pems_malloc(20000);

	(void)arg;
	memset(x, 1, 20000);
	bsp_sync();
	bsp_sync();
	bsp_sync();
	pems_free(x);
}

START_TEST(least_budget_with_one_thread_does_not_deadlock)
{
	static const struct spmd_cfg c1 = { "v2-k1-least", 2, 1, 1 * MiB, 0, PEMS_IO_KIND_SYNC, true };
	struct scenario s = { spmd_small_heap, &c1 };
	struct child_result cr;
	bool ok;

	run_child(child_spmd, &s, 10, &cr);
	ok = !cr.timed_out && cr.exited && cr.status == 0;
	ck_assert_msg(ok, "%s; stderr: %s", cr.timed_out ? "hung (killed after 10 s)" : "failed", cr.err);
}
END_TEST

START_TEST(context_memory_outside_spmd_is_malloc)
{
	char *p = pems_malloc(100), *q;

	ck_assert_ptr_nonnull(p);
	memset(p, 1, 100);
	q = pems_realloc(p, 200000);
	ck_assert_ptr_nonnull(q);
	ck_assert(all_bytes(q, 1, 100));
	pems_free(q);
	pems_free(NULL);
	ck_assert_uint_eq(pems_context_used(), 0);
	ck_assert_uint_eq(pems_context_avail(), 0);
}
END_TEST

/* ================= file I/O: asynchronous transfers ================= */

#define FA_LEN (3 * MiB + 4321)	/* each VP's region: three 1 MiB requests and change */
#define FA_OFF 777		/* regions start unaligned: buffered heads and tails */

static char fa_path[4200];

/* Start the first @n pieces of VP @owner's region as transfers, piece i
 * being bytes [cut[i], cut[i+1]) at @b + cut[i]; abort if one is refused. */
static void fa_start(int h, bool write, unsigned char *b, const size_t *cut, size_t n,
		     unsigned owner, struct pems_file_aio *aio)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pems_file_start(h, write, b + cut[i], cut[i + 1] - cut[i],
				    FA_OFF + (uint64_t)owner * FA_LEN + cut[i], &aio[i]))
			bsp_abort("bad: pems_file_start (%s %zu)", write ? "write" : "read", i);
}

/* Wait for the @n transfers fa_start started; each moves its whole piece. */
static void fa_wait(bool write, const size_t *cut, size_t n, struct pems_file_aio *aio)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pems_file_wait(&aio[i]) != (long long)(cut[i + 1] - cut[i]))
			bsp_abort("bad: pems_file_wait (%s %zu)", write ? "write" : "read", i);
}

/* Superstep 1: each VP writes its region in three transfers, all in
 * flight at once; superstep 2: it reads its neighbour's region, two
 * transfers asynchronously and one with pems_file_read, and compares. */
static void spmd_file_async(void *arg)
{
	unsigned v = bsp_nprocs(), p = bsp_pid(), t = (p + 1) % v;
	size_t cut[4] = { 0, MiB + 13, 2 * MiB + 5000, FA_LEN };
	unsigned char *buf = pems_malloc(FA_LEN + PEMS_PAGE);
	unsigned char *b = buf + FA_OFF % PEMS_PAGE;	/* aligned like the file offset */
	struct pems_file_aio aio[3];
	uint64_t e;
	int h;

	(void)arg;
	h = pems_file_open(fa_path, O_RDWR | O_CREAT, 0600);
	if (h < 0)
		bsp_abort("bad: pems_file_open: %d", h);
	pfill(b, p, 91, 0, FA_LEN);
	fa_start(h, true, b, cut, 3, p, aio);
	fa_wait(true, cut, 3, aio);
	pems_file_close(h);
	bsp_sync();
	h = pems_file_open(fa_path, O_RDONLY, 0);
	memset(buf, 0, FA_LEN + PEMS_PAGE);
	fa_start(h, false, b, cut, 2, t, aio);
	if (pems_file_read(h, b + cut[2], FA_LEN - cut[2], FA_OFF + (uint64_t)t * FA_LEN + cut[2]) !=
	    (long long)(FA_LEN - cut[2]))
		bsp_abort("bad: pems_file_read");
	fa_wait(false, cut, 2, aio);
	if (!pequal(b, t, 91, 0, FA_LEN))
		bsp_abort("bad: VP %u read VP %u's region wrong", p, t);
	/* a read past the end comes back short, as pems_file_read's */
	e = FA_OFF + (uint64_t)(v - 1) * FA_LEN + 5000;
	if (pems_file_start(h, false, buf + e % PEMS_PAGE, FA_LEN, e, &aio[0]) ||
	    pems_file_wait(&aio[0]) != (long long)(FA_LEN - 5000) ||
	    !pequal(buf + e % PEMS_PAGE, v - 1, 91, 5000, FA_LEN - 5000))
		bsp_abort("bad: a read over the end of the file is not short");
	pems_file_close(h);
	pems_free(buf);
	bsp_sync();
}

START_TEST(async_transfers_land_like_sync_ones)
{
	static const enum pems_io_kind io[] = { PEMS_IO_KIND_URING, PEMS_IO_KIND_AIO,
						PEMS_IO_KIND_SYNC };
	struct spmd_cfg c = { "v5-k2", 5, 2, 16 * MiB, 128 * MiB, io[_i], false };
	struct scenario s = { spmd_file_async, &c };
	struct child_result cr;

	snprintf(fa_path, sizeof(fa_path), "%s/file_async.%d", spmd_tmp(), _i);
	unlink(fa_path);
	run_child(child_spmd, &s, 60, &cr);
	unlink(fa_path);
	ck_assert_msg(!cr.timed_out && cr.exited && cr.status == 0, "io %d: %s; stderr: %s", _i,
		      cr.timed_out ? "hung" : "failed", cr.err);
}
END_TEST

static void spmd_sync_with_transfer_in_flight(void *arg)
{
	unsigned char *buf = pems_malloc(3 * PEMS_PAGE);
	unsigned char *b = buf + PEMS_PAGE - ((uintptr_t)buf % PEMS_PAGE);
	struct pems_file_aio aio;
	int h;

	(void)arg;
	h = pems_file_open(fa_path, O_RDWR | O_CREAT, 0600);
	memset(b, 7, PEMS_PAGE);
	if (bsp_pid() == 0 && pems_file_start(h, true, b, PEMS_PAGE, 0, &aio))
		bsp_abort("bad: pems_file_start");
	bsp_sync();
}

START_TEST(sync_with_a_transfer_not_waited_for_aborts)
{
	snprintf(fa_path, sizeof(fa_path), "%s/file_async.x", spmd_tmp());
	expect_abort(spmd_sync_with_transfer_in_flight,
		     "pems: error: VP 0 reached bsp_sync (or its end) with 1 pems_file_start transfer(s) not waited for; call pems_file_wait first\n");
	unlink(fa_path);
}
END_TEST

/* ================= suites ================= */

_Static_assert(NCFG <= 32, "spmd_add_loops takes the configurations as a 32-bit mask");

/* The configurations (bit k: cfgs[k]) case @bc is cheap enough for;
 * PEMS_TEST_REDUCED=1: only those of fewer than 256 VPs (every case
 * still runs, on 9 of the 13 configurations). */
static uint32_t case_cfgs(const struct bsp_case *bc)
{
	uint32_t keep = 0;
	unsigned k;

	for (k = 0; k < NCFG; k++)
		if ((bc->tiers & cfg_tier(&cfgs[k])) && !(spmd_reduced() && cfgs[k].v >= 256))
			keep |= 1u << k;
	return keep;
}

static Suite *bsp_suite(const char *area)
{
	Suite *s = suite_create(area);
	unsigned ci;

	for (ci = 0; ci < NCASES; ci++)
		if (!strcmp(cases[ci].suite, area))
			spmd_add_loops(s, cases[ci].name, spmd_case, ci * NCFG, NCFG,
				       case_cfgs(&cases[ci]));
	return s;
}

static void add_test(Suite *s, const char *name, const TTest *t)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, t);
	suite_add_tcase(s, tc);
}

int main(void)
{
	static const char *const areas[] = { "registration", "drma_put", "drma_get", "bsmp",
					     "lifecycle", "context_memory", "collectives",
					     "file_io" };
	SRunner *sr;
	Suite *s;
	unsigned i;
	int failed;

	sr = srunner_create(NULL);
	for (i = 0; i < sizeof(areas) / sizeof(areas[0]); i++) {
		s = bsp_suite(areas[i]);
		if (!strcmp(areas[i], "registration")) {
			add_test(s, "put_in_superstep_of_registration_aborts",
				 put_in_superstep_of_registration_aborts);
			add_test(s, "get_in_superstep_of_registration_aborts",
				 get_in_superstep_of_registration_aborts);
			add_test(s, "put_after_pop_and_sync_aborts", put_after_pop_and_sync_aborts);
			add_test(s, "put_bounds_follow_the_destination_registration",
				 put_bounds_follow_the_destination_registration);
		}
		if (!strcmp(areas[i], "lifecycle")) {
			add_test(s, "bsp_end_leaves_only_vp0_running", bsp_end_leaves_only_vp0_running);
			add_test(s, "main_continues_after_the_spmd_function",
				 main_continues_after_the_spmd_function);
			add_test(s, "pems_procs_overrides_maxprocs", pems_procs_overrides_maxprocs);
		}
		if (!strcmp(areas[i], "file_io")) {
			TCase *tc = tcase_create("async_transfers_land_like_sync_ones");

			tcase_set_timeout(tc, 120);
			tcase_add_loop_test(tc, async_transfers_land_like_sync_ones, 0, 3);
			suite_add_tcase(s, tc);
			add_test(s, "sync_with_a_transfer_not_waited_for_aborts",
				 sync_with_a_transfer_not_waited_for_aborts);
		}
		if (!strcmp(areas[i], "context_memory")) {
			add_test(s, "context_memory_outside_spmd_is_malloc",
				 context_memory_outside_spmd_is_malloc);
			add_test(s, "least_budget_with_one_thread_does_not_deadlock",
				 least_budget_with_one_thread_does_not_deadlock);
		}
		srunner_add_suite(sr, s);
	}
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
