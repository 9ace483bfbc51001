/*
 * groupby.c - the BSP GROUP BY core: built-in aggregates, the sampled
 * plan (owner key ranges, heavy keys), pre-aggregation, repartitioning
 * and the owners' merge.  Written only against bsp.h / pems.h.
 *
 * Supersteps of one pems_groupby_plan + pems_groupby:
 *   plan 0  every VP's sample keys are gathered at VP 0
 *   plan 1  VP 0 sorts them, picks heavy keys (a key holding >= 1/16 of
 *           one VP's share of the sample) and v-1 splitters by sampled
 *           weight, where a heavy key weighs 1 (it is pre-aggregated: it
 *           sends few partials per VP); broadcast
 *   gb 0    each VP aggregates its rows, then scatters raw rows and
 *           partial states by owner and posts them with pems_exchange;
 *           everything is freed before bsp_sync so the context written
 *           back is small.  Two ways to aggregate:
 *           - core (every aggregate a built-in): one 48-byte state
 *             {key, count, sum, min, max} serves any mix of count, sum,
 *             min, max and avg, updated inline.  The table is sized to
 *             the cache (TABLE_CORE); when it fills it is flushed and
 *             reused, or, if the fill showed little reduction (fewer than
 *             2 rows per entry), rows pass through raw for PASS_FILLS
 *             fills' worth of rows (heavy keys still go to a table of
 *             their own).  A flushed state of count <= 3 goes out as its
 *             count raw rows (min, max, sum-min-max are those rows'
 *             values), so what a VP sends never exceeds its input.
 *           - generic (a user-defined aggregate): a table of about
 *             table_bytes; after a probe of PROBE rows that shows little
 *             reduction (distinct > PROBE/2) rows pass through raw,
 *             except heavy keys; rows whose key misses a full table
 *             pass through raw too.
 *           Owners are found through a 2^16-entry table over the top key
 *           bits (then a short search among the splitters).
 *   gb 1    the owner buckets the received raw rows and partials by key
 *           range ((key - min) >> shift, at most 2^BUCKET_BITS buckets of
 *           about BUCKET rows) in one pass, then sorts each bucket in
 *           cache (LSD radix over the bits that vary within it); the
 *           walk merges the two sorted streams group by group.  In core
 *           mode, when the groups take less than half the bytes of the
 *           rows, they are compacted into one sorted state per group.
 *
 * Invariants:
 *  (1) a key's rows all go to one owner: bucket = number of splitters
 *      <= key, the same function on every VP;
 *  (2) what a VP sends is at most 16 B per input row (core), or 16 B per
 *      row plus one partial per table entry (generic), so a VP's send
 *      buffer is bounded by its input and its table;
 *  (3) results do not depend on v, k or the order rows meet: aggregates
 *      are associative and commutative (the built-ins are exact integer
 *      arithmetic; avg is computed from the exact sum and count at the end);
 *  (4) in the core loop, raw rows are compacted to the front of the row
 *      array: a row is written at w <= i (i = rows consumed), because
 *      every table entry, partial and raw row stands for >= as many
 *      consumed rows as it occupies raw slots.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pems_algorithms.h"
#include "aggregate/agg_internal.h"

#define PROBE 65536		/* generic: rows inserted before judging the reduction */
#define HEAVY_MAX 4096
#define TABLE_CORE (1u << 15)	/* core table slots (48 B each: 1.5 MiB, in L2/L3) */
#define PASS_FILLS 16		/* core: rows passed raw after a poor fill, in fills */
#define POOR_FILL 2		/* core: a fill of fewer rows per entry is poor */
#define RAW_COUNT 3		/* core: a flushed state of count <= this goes out as rows */
#define COMPACT 2		/* compact when the groups' states take <= 1/COMPACT of the bytes */
#define BUCKET 8192		/* owner: target rows per bucket (sorted in cache) */
#define BUCKET_BITS 12		/* owner: at most 4096 buckets */
#define DIGIT 11		/* owner: radix digit bits */

/* ---- built-in aggregates ---- */

static void count_init(void *s) { memset(s, 0, 8); }
static void count_update(void *s, int64_t v)
{
	uint64_t c;

	(void)v;
	memcpy(&c, s, 8);
	c++;
	memcpy(s, &c, 8);
}
static void count_combine(void *s, const void *o)
{
	uint64_t a, b;

	memcpy(&a, s, 8);
	memcpy(&b, o, 8);
	a += b;
	memcpy(s, &a, 8);
}
static int count_final(const void *s, struct pems_agg_result *r)
{
	r->type = PEMS_AGG_UINT64;
	memcpy(&r->u, s, 8);
	return 0;
}

static void sum_init(void *s) { memset(s, 0, 16); }
static void sum_update(void *s, int64_t v)
{
	__int128 a;

	memcpy(&a, s, 16);
	a += v;
	memcpy(s, &a, 16);
}
static void sum_combine(void *s, const void *o)
{
	__int128 a, b;

	memcpy(&a, s, 16);
	memcpy(&b, o, 16);
	a += b;
	memcpy(s, &a, 16);
}
static int sum_final(const void *s, struct pems_agg_result *r)
{
	__int128 a;

	memcpy(&a, s, 16);
	r->type = PEMS_AGG_INT64;
	if (a > INT64_MAX || a < INT64_MIN)
		return -ERANGE;
	r->i = (int64_t)a;
	return 0;
}

static void min_init(void *s)
{
	int64_t m = INT64_MAX;

	memcpy(s, &m, 8);
}
static void min_update(void *s, int64_t v)
{
	int64_t m;

	memcpy(&m, s, 8);
	if (v < m)
		memcpy(s, &v, 8);
}
static void min_combine(void *s, const void *o)
{
	int64_t v;

	memcpy(&v, o, 8);
	min_update(s, v);
}
static int i64_final(const void *s, struct pems_agg_result *r)
{
	r->type = PEMS_AGG_INT64;
	memcpy(&r->i, s, 8);
	return 0;
}

static void max_init(void *s)
{
	int64_t m = INT64_MIN;

	memcpy(s, &m, 8);
}
static void max_update(void *s, int64_t v)
{
	int64_t m;

	memcpy(&m, s, 8);
	if (v > m)
		memcpy(s, &v, 8);
}
static void max_combine(void *s, const void *o)
{
	int64_t v;

	memcpy(&v, o, 8);
	max_update(s, v);
}

/* avg: {__int128 sum, u64 count} */
static void avg_init(void *s) { memset(s, 0, 24); }
static void avg_update(void *s, int64_t v)
{
	sum_update(s, v);
	count_update((uint8_t *)s + 16, v);
}
static void avg_combine(void *s, const void *o)
{
	sum_combine(s, o);
	count_combine((uint8_t *)s + 16, (const uint8_t *)o + 16);
}
static int avg_final(const void *s, struct pems_agg_result *r)
{
	__int128 a;
	uint64_t c;

	memcpy(&a, s, 16);
	memcpy(&c, (const uint8_t *)s + 16, 8);
	r->type = c ? PEMS_AGG_MEAN : PEMS_AGG_DOUBLE;
	r->d = c ? (double)((long double)a / (long double)c) : 0.0;
	r->num = a;
	r->den = c;
	return 0;
}

static const struct pems_aggregate builtins[] = {
	{ "count", 8, count_init, count_update, count_combine, count_final },
	{ "sum", 16, sum_init, sum_update, sum_combine, sum_final },
	{ "min", 8, min_init, min_update, min_combine, i64_final },
	{ "max", 8, max_init, max_update, max_combine, i64_final },
	{ "avg", 24, avg_init, avg_update, avg_combine, avg_final },
};

const struct pems_aggregate *pems_aggregate_builtin(const char *name)
{
	size_t i;

	for (i = 0; name && i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (!strcmp(builtins[i].name, name))
			return &builtins[i];
	return NULL;
}

/* ---- the built-ins' common state ---- */

/* One slot of a core table, one core partial: enough for count, sum,
 * min, max and avg at once.  16-byte aligned wherever it is stored
 * (tables, the send and receive buffers, the blob: all offsets are
 * multiples of 16). */
struct core {
	uint64_t key;
	uint64_t count;
	__int128 sum;
	int64_t min, max;
};

static inline void core_first(struct core *c, uint64_t key, int64_t v)
{
	c->key = key;
	c->count = 1;
	c->sum = v;
	c->min = v;
	c->max = v;
}

static inline void core_add(struct core *c, int64_t v)
{
	c->count++;
	c->sum += v;
	if (v < c->min)
		c->min = v;
	if (v > c->max)
		c->max = v;
}

static inline void core_merge(struct core *c, const struct core *o)
{
	c->count += o->count;
	c->sum += o->sum;
	if (o->min < c->min)
		c->min = o->min;
	if (o->max > c->max)
		c->max = o->max;
}

enum kind { K_COUNT, K_SUM, K_MIN, K_MAX, K_AVG, K_USER };

/* ---- small helpers ---- */

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

struct spec {
	const struct pems_aggregate *aggs[PEMS_AGG_MAX];
	size_t off[PEMS_AGG_MAX];
	enum kind kind[PEMS_AGG_MAX];
	unsigned naggs;
	size_t ss;		/* bytes of the states handed to the walk, rounded to 8 */
	bool core;		/* every aggregate a built-in: struct core inside */
	size_t slot;		/* bytes of a table entry / partial: key + state */
};

static void spec_init(struct spec *sp, const struct pems_aggregate *const *aggs,
		      unsigned naggs)
{
	unsigned i;

	if (naggs > PEMS_AGG_MAX)
		bsp_abort("pems_groupby: %u aggregates; at most %d", naggs, PEMS_AGG_MAX);
	memset(sp, 0, sizeof(*sp));
	sp->naggs = naggs;
	sp->core = true;
	for (i = 0; i < naggs; i++) {
		size_t b;

		if (!aggs[i] || !aggs[i]->state_size ||
		    aggs[i]->state_size > PEMS_AGG_STATE_MAX)
			bsp_abort("pems_groupby: aggregate %u has no valid state size", i);
		sp->aggs[i] = aggs[i];
		sp->off[i] = sp->ss;
		sp->ss += aggs[i]->state_size;
		sp->kind[i] = K_USER;
		for (b = 0; b < sizeof(builtins) / sizeof(builtins[0]); b++)
			if (aggs[i] == &builtins[b])
				sp->kind[i] = (enum kind)b;
		if (sp->kind[i] == K_USER)
			sp->core = false;
	}
	sp->ss = (sp->ss + 7) & ~(size_t)7;
	sp->slot = sp->core ? sizeof(struct core) : 8 + sp->ss;
}

static void st_init(const struct spec *sp, uint8_t *st)
{
	unsigned i;

	for (i = 0; i < sp->naggs; i++)
		sp->aggs[i]->init(st + sp->off[i]);
}

static void st_update(const struct spec *sp, uint8_t *st, int64_t v)
{
	unsigned i;

	for (i = 0; i < sp->naggs; i++)
		sp->aggs[i]->update(st + sp->off[i], v);
}

static void st_combine(const struct spec *sp, uint8_t *st, const uint8_t *o)
{
	unsigned i;

	for (i = 0; i < sp->naggs; i++)
		sp->aggs[i]->combine(st + sp->off[i], o + sp->off[i]);
}

/* The states of the requested built-ins, laid out as the callbacks of
 * builtins[] keep them, from one core state. */
static void core_states(const struct spec *sp, const struct core *c, uint8_t *st)
{
	unsigned i;

	for (i = 0; i < sp->naggs; i++) {
		uint8_t *p = st + sp->off[i];

		switch (sp->kind[i]) {
		case K_COUNT:
			memcpy(p, &c->count, 8);
			break;
		case K_SUM:
			memcpy(p, &c->sum, 16);
			break;
		case K_MIN:
			memcpy(p, &c->min, 8);
			break;
		case K_MAX:
			memcpy(p, &c->max, 8);
			break;
		default:	/* K_AVG */
			memcpy(p, &c->sum, 16);
			memcpy(p + 16, &c->count, 8);
			break;
		}
	}
}

/* ---- radix sort of {u64 key, u64 payload} pairs within one bucket ---- */

/* Stable LSD sort of @n pairs whose keys differ only in the low @bits
 * bits of (key - base), DIGIT bits at a time; @tmp has room for n pairs,
 * @cnt for (64 / DIGIT + 1) << DIGIT counters.  A digit that is the same
 * for every pair costs no pass. */
static void sort_bucket(struct agg_pair *a, struct agg_pair *tmp, size_t n,
			uint64_t base, unsigned bits, uint32_t *cnt)
{
	unsigned nd = (bits + DIGIT - 1) / DIGIT, d, b;
	const unsigned R = 1u << DIGIT;
	struct agg_pair *src = a, *dst = tmp, *t;
	size_t i;

	if (n < 2 || !nd)
		return;
	if (n <= 16) {	/* insertion sort */
		for (i = 1; i < n; i++) {
			struct agg_pair x = a[i];
			size_t j = i;

			for (; j && a[j - 1].key > x.key; j--)
				a[j] = a[j - 1];
			a[j] = x;
		}
		return;
	}
	memset(cnt, 0, (size_t)nd * R * sizeof(*cnt));
	for (i = 0; i < n; i++) {
		uint64_t x = a[i].key - base;

		for (d = 0; d < nd; d++)
			cnt[d * R + ((x >> (d * DIGIT)) & (R - 1))]++;
	}
	for (d = 0; d < nd; d++) {
		uint32_t *c = cnt + d * R, sum = 0;

		if (c[((a[0].key - base) >> (d * DIGIT)) & (R - 1)] == n)
			continue;
		for (b = 0; b < R; b++) {
			uint32_t x = c[b];

			c[b] = sum;
			sum += x;
		}
		for (i = 0; i < n; i++)
			dst[c[((src[i].key - base) >> (d * DIGIT)) & (R - 1)]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}

/* Any bucket: in-place MSD passes (8 bits, American flag) until the
 * pieces fit @tmp (@tmpn pairs), then sort_bucket. */
static void sort_big(struct agg_pair *a, size_t n, uint64_t base, unsigned bits,
		     struct agg_pair *tmp, size_t tmpn, uint32_t *cnt)
{
	size_t c[256], start[257], i, b;
	unsigned d;

	if (n <= tmpn || !bits) {
		sort_bucket(a, tmp, n, base, bits, cnt);
		return;
	}
	d = bits > 8 ? bits - 8 : 0;
	memset(c, 0, sizeof(c));
	for (i = 0; i < n; i++)
		c[((a[i].key - base) >> d) & 255]++;
	for (b = 0, start[0] = 0; b < 256; b++)
		start[b + 1] = start[b] + c[b];
	for (b = 0; b < 256; b++) {
		size_t end = start[b + 1], at = end - c[b];

		while (at < end) {
			struct agg_pair x = a[at], y;
			size_t db = ((x.key - base) >> d) & 255;

			while (db != b) {	/* put x where its digit goes next */
				size_t to = start[db + 1] - c[db]--;

				y = a[to];
				a[to] = x;
				x = y;
				db = ((x.key - base) >> d) & 255;
			}
			a[at++] = x;
			c[b]--;
		}
	}
	for (b = 0; b < 256; b++)
		sort_big(a + start[b], start[b + 1] - start[b], base, d, tmp, tmpn, cnt);
}

/* ---- plan ---- */

struct pems_groupby_plan {
	unsigned v;
	unsigned nheavy;
	uint64_t *spl;		/* v-1 splitters */
	uint64_t *heavy;	/* nheavy keys, ascending */
	/* spl and heavy follow in the same allocation */
};

struct sample_msg {
	uint32_t count;
	uint32_t pad;
	uint64_t k[PEMS_GROUPBY_SAMPLES];
};

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t plan_bytes(unsigned v)
{
	return sizeof(struct pems_groupby_plan) + (v + HEAVY_MAX) * sizeof(uint64_t);
}

static void pick_plan(struct pems_groupby_plan *pl, struct sample_msg *all)
{
	unsigned v = pl->v;
	size_t total = 0, i, j, t = 0, nrun = 0, thr;
	uint64_t *flat, *rk, *rw, wsum = 0, acc = 0;

	for (i = 0; i < v; i++)
		total += all[i].count;
	flat = pems_malloc((total + 1) * sizeof(*flat));
	rk = pems_malloc((total + 1) * sizeof(*rk));
	rw = pems_malloc((total + 1) * sizeof(*rw));
	for (i = 0; i < v; i++)
		for (j = 0; j < all[i].count; j++)
			flat[t++] = all[i].k[j];
	qsort(flat, total, sizeof(*flat), u64_cmp);
	/* a key holding 1/16 of one VP's share of the sample is heavy */
	thr = total / (16 * (size_t)v);
	if (thr < 4)
		thr = 4;
	pl->nheavy = 0;
	for (i = 0; i < total; i = j) {
		for (j = i; j < total && flat[j] == flat[i]; j++)
			;
		rk[nrun] = flat[i];
		rw[nrun] = j - i;
		if (j - i >= thr && pl->nheavy < HEAVY_MAX) {
			pl->heavy[pl->nheavy++] = flat[i];
			rw[nrun] = 1;
		}
		wsum += rw[nrun++];
	}
	/* splitter b-1 is the first key past b/v of the weight */
	for (i = 0, j = 1; i < nrun && j < v; i++) {
		acc += rw[i];
		while (j < v && acc * v >= wsum * j && i + 1 < nrun)
			pl->spl[j++ - 1] = rk[i + 1];
	}
	for (; j < v; j++)
		pl->spl[j - 1] = UINT64_MAX;
	pems_free(rw);
	pems_free(rk);
	pems_free(flat);
}

struct pems_groupby_plan *pems_groupby_plan(const uint64_t *keys, size_t m)
{
	unsigned v = bsp_nprocs(), pid = bsp_pid();
	struct pems_groupby_plan *pl = pems_malloc(plan_bytes(v));
	struct sample_msg *mine = pems_calloc(1, sizeof(*mine)), *all = NULL;

	if (m > PEMS_GROUPBY_SAMPLES)
		m = PEMS_GROUPBY_SAMPLES;
	mine->count = (uint32_t)m;
	if (m)
		memcpy(mine->k, keys, m * sizeof(*keys));
	pl->v = v;
	pl->spl = (uint64_t *)(pl + 1);
	pl->heavy = pl->spl + v;
	if (pid == 0)
		all = pems_malloc(v * sizeof(*all));
	pems_gather(0, mine, all, sizeof(*mine));
	pems_free(mine);
	if (pid == 0) {
		pick_plan(pl, all);
		pems_free(all);
	}
	pems_broadcast(0, pl, plan_bytes(v));
	pl->spl = (uint64_t *)(pl + 1);	/* VP 0's pointers came with it */
	pl->heavy = pl->spl + v;
	return pl;
}

/* ---- owners: key -> VP ---- */

#define LUT_BITS 16

/* lut[t] = owner of the least key whose top LUT_BITS bits are t; the
 * owner of any key with top bits t lies in [lut[t], lut[t + 1]]. */
static uint32_t *owner_lut(const struct pems_groupby_plan *pl)
{
	uint32_t *lut = pems_malloc(sizeof(*lut) << LUT_BITS);
	unsigned o = 0;
	uint64_t t;

	for (t = 0; t < 1u << LUT_BITS; t++) {
		while (o + 1 < pl->v && pl->spl[o] <= t << (64 - LUT_BITS))
			o++;
		lut[t] = o;
	}
	return lut;
}

/* the number of splitters <= key (invariant 1) */
static inline unsigned owner_of(const struct pems_groupby_plan *pl, const uint32_t *lut,
				uint64_t key)
{
	uint64_t t = key >> (64 - LUT_BITS);
	unsigned o = lut[t], hi = t + 1 < (1u << LUT_BITS) ? lut[t + 1] : pl->v - 1;

	if (hi - o > 8) {
		while (o < hi) {
			unsigned mid = (o + hi) / 2;

			if (pl->spl[mid] <= key)
				o = mid + 1;
			else
				hi = mid;
		}
		return o;
	}
	while (o < hi && pl->spl[o] <= key)
		o++;
	return o;
}

/* ---- gb 0, generic: the bounded pre-aggregation table ---- */

struct table {
	size_t mask, count, limit;
	size_t slot;		/* 8 + ss */
	uint8_t *used;
	uint8_t *slots;		/* key, state */
};

static void table_init(struct table *t, size_t bytes, size_t ss, size_t min_slots)
{
	size_t n = 64;

	t->slot = 8 + ss;
	while (n * 2 * (t->slot + 1) <= bytes)
		n *= 2;
	while (n < min_slots)
		n *= 2;
	t->mask = n - 1;
	t->count = 0;
	t->limit = n / 10 * 7;
	t->used = pems_calloc(n, 1);
	t->slots = pems_malloc(n * t->slot);
}

static void table_free(struct table *t)
{
	pems_free(t->slots);
	pems_free(t->used);
}

/* State of @key, inserted when there is room; NULL when full (or when
 * !insert and absent). */
static uint8_t *table_get(struct table *t, const struct spec *sp, uint64_t key,
			  bool insert)
{
	size_t i = hash64(key) & t->mask;

	for (;;) {
		uint8_t *s = t->slots + i * t->slot;

		if (!t->used[i]) {
			if (!insert || t->count >= t->limit)
				return NULL;
			t->used[i] = 1;
			t->count++;
			memcpy(s, &key, 8);
			st_init(sp, s + 8);
			return s + 8;
		}
		if (!memcmp(s, &key, 8))
			return s + 8;
		i = (i + 1) & t->mask;
	}
}

/* ---- gb 0, core: a cache-sized table of struct core; count 0 = empty ---- */

struct ctable {
	size_t mask, count, limit;
	struct core *s;
};

static void ctable_init(struct ctable *t, size_t slots)
{
	size_t n = 16;

	while (n < slots)
		n *= 2;
	t->mask = n - 1;
	t->count = 0;
	t->limit = n / 2;
	t->s = pems_calloc(n, sizeof(*t->s));
}

/* the slot of @key, or the empty slot where it would go */
static inline struct core *ctable_slot(const struct ctable *t, uint64_t key)
{
	size_t i = hash64(key) & t->mask;

	while (t->s[i].count && t->s[i].key != key)
		i = (i + 1) & t->mask;
	return &t->s[i];
}

/* What a VP sends, before it is scattered by owner: raw rows compacted
 * at the front of the input (invariant 4) and partial states. */
struct sendset {
	struct agg_pair *rows;
	size_t nraw;
	uint8_t *part;
	size_t npart, cap, slot;
};

static uint8_t *sendset_part(struct sendset *s)
{
	if (s->npart == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1024;
		s->part = pems_realloc(s->part, s->cap * s->slot);
	}
	return s->part + s->npart++ * s->slot;
}

/* A state of count <= 3 is its rows again: min, max, and sum-min-max. */
static void emit_core(struct sendset *s, const struct core *c)
{
	struct agg_pair *r = s->rows + s->nraw;

	_Static_assert(RAW_COUNT == 3, "emit_core writes out at most three rows");
	if (c->count > RAW_COUNT) {
		memcpy(sendset_part(s), c, sizeof(*c));
		return;
	}
	r[0].key = c->key;
	r[0].val = (uint64_t)c->min;
	if (c->count >= 2) {
		r[1].key = c->key;
		r[1].val = (uint64_t)c->max;
	}
	if (c->count == 3) {
		r[2].key = c->key;
		r[2].val = (uint64_t)(int64_t)(c->sum - c->min - c->max);
	}
	s->nraw += c->count;
}

static void ctable_flush(struct ctable *t, struct sendset *s)
{
	size_t i;

	for (i = 0; i <= t->mask && t->count; i++) {
		if (!t->s[i].count)
			continue;
		emit_core(s, &t->s[i]);
		t->s[i].count = 0;
		t->count--;
	}
}

/* The heavy keys of the plan, fixed at start: found by key, never inserted. */
struct htable {
	size_t mask;
	uint8_t *used;
	struct core *s;
};

static void htable_init(struct htable *h, const struct pems_groupby_plan *pl)
{
	size_t n = 16, i, j;

	while (n < 2 * (size_t)pl->nheavy)
		n *= 2;
	h->mask = n - 1;
	h->used = pems_calloc(n, 1);
	h->s = pems_malloc(n * sizeof(*h->s));
	for (i = 0; i < pl->nheavy; i++) {
		for (j = hash64(pl->heavy[i]) & h->mask; h->used[j]; j = (j + 1) & h->mask)
			;
		h->used[j] = 1;
		h->s[j].key = pl->heavy[i];
		h->s[j].count = 0;
		h->s[j].sum = 0;
		h->s[j].min = INT64_MAX;
		h->s[j].max = INT64_MIN;
	}
}

static inline struct core *htable_get(const struct htable *h, uint64_t key)
{
	size_t i;

	for (i = hash64(key) & h->mask; h->used[i]; i = (i + 1) & h->mask)
		if (h->s[i].key == key)
			return &h->s[i];
	return NULL;
}

static void htable_flush_free(struct htable *h, struct sendset *s)
{
	size_t i;

	for (i = 0; i <= h->mask; i++)
		if (h->used[i] && h->s[i].count)
			emit_core(s, &h->s[i]);
	pems_free(h->s);
	pems_free(h->used);
}

static void preagg_core(const struct pems_groupby_plan *pl, struct sendset *s, size_t n,
			agg_ready_fn ready, void *arg)
{
	struct agg_pair *rows = s->rows;
	struct ctable t;
	struct htable heavy;
	size_t i, fill_rows = 0, pass = 0, avail = ready ? 0 : n;

	ctable_init(&t, n < TABLE_CORE / 2 ? 2 * n : TABLE_CORE);
	htable_init(&heavy, pl);
	for (i = 0; i < n; i++) {
		uint64_t k;
		int64_t v;
		struct core *c;

		if (i >= avail)	/* (4) holds: rows are only written below i */
			avail = ready(arg, i);
		k = rows[i].key;
		v = (int64_t)rows[i].val;

		if (pass) {	/* little reduction lately: rows go raw */
			pass--;
			if (pl->nheavy && (c = htable_get(&heavy, k))) {
				core_add(c, v);
				continue;
			}
			rows[s->nraw++] = rows[i];
			continue;
		}
		c = ctable_slot(&t, k);
		if (c->count) {
			core_add(c, v);
		} else if (t.count < t.limit) {
			core_first(c, k, v);
			t.count++;
		} else {
			/* full: fewer than 2 rows per entry means little to gain */
			if (fill_rows < POOR_FILL * t.count)
				pass = PASS_FILLS * t.limit;
			ctable_flush(&t, s);
			fill_rows = 0;
			i--;	/* again, into the empty table or raw */
			continue;
		}
		fill_rows++;
	}
	ctable_flush(&t, s);
	htable_flush_free(&heavy, s);
	pems_free(t.s);
}

/* ---- gb 0, generic: the old policy (table of about table_bytes) ---- */

static void generic_table_emit(const struct table *t, struct sendset *s)
{
	size_t i;

	for (i = 0; i <= t->mask; i++)
		if (t->used[i])
			memcpy(sendset_part(s), t->slots + i * t->slot, t->slot);
}

static void preagg_generic(const struct pems_groupby_plan *pl, const struct spec *sp,
			   struct sendset *s, size_t n, size_t table_bytes)
{
	struct agg_pair *rows = s->rows;
	struct table main_t, heavy_t;
	size_t i, probe = n < PROBE ? n : PROBE;
	bool passthrough = false;

	table_init(&main_t, table_bytes, sp->ss, 64);
	table_init(&heavy_t, 0, sp->ss, 2 * (size_t)pl->nheavy + 64);
	for (i = 0; i < pl->nheavy; i++)
		table_get(&heavy_t, sp, pl->heavy[i], true);
	for (i = 0; i < n; i++) {
		uint64_t k = rows[i].key;
		uint8_t *st;

		if (i == probe && probe && main_t.count * 2 > probe)
			passthrough = true;	/* groups ~ rows: little to gain */
		st = passthrough ? NULL : table_get(&main_t, sp, k, true);
		if (!st && pl->nheavy)
			st = table_get(&heavy_t, sp, k, false);
		if (st)
			st_update(sp, st, (int64_t)rows[i].val);
		else
			rows[s->nraw++] = rows[i];	/* raw: compact at the front */
	}
	/* the partials need their own memory: one table's worth */
	s->cap = main_t.count + heavy_t.count + 1;
	s->part = pems_malloc(s->cap * s->slot);
	generic_table_emit(&main_t, s);
	generic_table_emit(&heavy_t, s);
	table_free(&heavy_t);
	table_free(&main_t);
}

struct chunk_hdr {
	uint64_t nraw, npart;
};

/* Scatter the send set by owner into one buffer of v chunks
 * {chunk_hdr, raw rows, partials} and post it. */
static void scatter_send(const struct pems_groupby_plan *pl, struct sendset *s,
			 void **recv, size_t *recvbytes)
{
	unsigned v = pl->v, b;
	uint32_t *lut = owner_lut(pl);
	uint64_t *nraw = pems_calloc(v, sizeof(*nraw)), *npart = pems_calloc(v, sizeof(*npart));
	size_t *rpos = pems_malloc(v * sizeof(*rpos)), *ppos = pems_malloc(v * sizeof(*ppos));
	size_t *sendcounts = pems_malloc(v * sizeof(*sendcounts));
	size_t i, total, slot = s->slot;
	uint8_t *out;

	for (i = 0; i < s->nraw; i++)
		nraw[owner_of(pl, lut, s->rows[i].key)]++;
	for (i = 0; i < s->npart; i++) {
		uint64_t k;

		memcpy(&k, s->part + i * slot, 8);
		npart[owner_of(pl, lut, k)]++;
	}
	for (b = 0, total = 0; b < v; b++) {
		sendcounts[b] = sizeof(struct chunk_hdr) + nraw[b] * sizeof(struct agg_pair) +
				npart[b] * slot;
		rpos[b] = total + sizeof(struct chunk_hdr);
		ppos[b] = rpos[b] + nraw[b] * sizeof(struct agg_pair);
		total += sendcounts[b];
	}
	out = pems_malloc(total + 1);
	for (b = 0; b < v; b++) {
		struct chunk_hdr h = { nraw[b], npart[b] };

		memcpy(out + rpos[b] - sizeof(h), &h, sizeof(h));
	}
	for (i = 0; i < s->nraw; i++) {
		b = owner_of(pl, lut, s->rows[i].key);
		memcpy(out + rpos[b], &s->rows[i], sizeof(s->rows[i]));
		rpos[b] += sizeof(s->rows[i]);
	}
	for (i = 0; i < s->npart; i++) {
		uint64_t k;

		memcpy(&k, s->part + i * slot, 8);
		b = owner_of(pl, lut, k);
		memcpy(out + ppos[b], s->part + i * slot, slot);
		ppos[b] += slot;
	}
	pems_free(s->part);
	pems_free(s->rows);
	pems_free(lut);
	pems_exchange(out, sendcounts, recv, recvbytes, NULL);
	/* the data is in the message store now: free it before the sync */
	pems_free(out);
	pems_free(sendcounts);
	pems_free(ppos);
	pems_free(rpos);
	pems_free(npart);
	pems_free(nraw);
}

static void partition(const struct pems_groupby_plan *pl, const struct spec *sp,
		      struct agg_pair *rows, size_t n, size_t table_bytes,
		      void **recv, size_t *recvbytes, agg_ready_fn ready, void *arg)
{
	struct sendset s = { .rows = rows, .slot = sp->slot };

	if (sp->core) {
		preagg_core(pl, &s, n, ready, arg);
	} else {
		size_t have = 0;

		while (ready && have < n)	/* the generic path wants them all */
			have = ready(arg, have);
		preagg_generic(pl, sp, &s, n, table_bytes);
	}
	scatter_send(pl, &s, recv, recvbytes);
}

/* ---- gb 1: the owner's side ---- */

struct pems_groupby {
	struct spec sp;
	uint8_t *blob;		/* raw, part and pidx, in one allocation */
	size_t blob_bytes;
	void *parked;		/* pems_groupby_park: the blob arrives here */
	size_t parked_bytes;
	struct agg_pair *raw;	/* {key, value} sorted by key */
	size_t nraw;
	uint8_t *part;		/* partial records (sp.slot bytes: key, state) */
	struct agg_pair *pidx;	/* {key, index into part} sorted by key; NULL
				 * when part itself is sorted (compacted) */
	size_t npart;
	bool compact;		/* part = one state per group, sorted; no raw */
	uint64_t ngroups;
};

static void set_pointers(struct pems_groupby *g)
{
	g->raw = (struct agg_pair *)(void *)g->blob;
	g->part = g->blob + g->nraw * sizeof(*g->raw);
	g->pidx = g->compact ? NULL :
		  (struct agg_pair *)(void *)(g->part + g->npart * g->sp.slot);
}

static inline uint64_t part_key(const uint8_t *p)
{
	uint64_t k;

	memcpy(&k, p, 8);
	return k;
}

/* Bucket the received rows and partials by key range in one pass, then
 * sort each bucket in cache (see the design block, gb 1). */
static void absorb(struct pems_groupby *g, uint8_t *recv, size_t bytes)
{
	size_t slot = g->sp.slot, off, nraw = 0, npart = 0, i, nb, b, maxb = 0;
	uint64_t lo = UINT64_MAX, hi = 0, span;
	unsigned bits, nbits, shift;
	size_t *rpos, *ppos, *rcnt, *pcnt;
	struct agg_pair *tmp;
	uint32_t *cnt;
	struct chunk_hdr h;

	for (off = 0; off < bytes;) {
		const uint8_t *p = recv + off + sizeof(h);

		memcpy(&h, recv + off, sizeof(h));
		for (i = 0; i < h.nraw; i++) {
			uint64_t k = part_key(p + i * sizeof(struct agg_pair));

			lo = k < lo ? k : lo;
			hi = k > hi ? k : hi;
		}
		p += h.nraw * sizeof(struct agg_pair);
		for (i = 0; i < h.npart; i++) {
			uint64_t k = part_key(p + i * slot);

			lo = k < lo ? k : lo;
			hi = k > hi ? k : hi;
		}
		nraw += h.nraw;
		npart += h.npart;
		off += sizeof(h) + h.nraw * sizeof(struct agg_pair) + h.npart * slot;
	}
	if (nraw + npart == 0)
		lo = hi = 0;
	/* bits = width of span (0..64); nbits >= 1 keeps shift <= 63, so
	 * every (key - lo) >> shift is defined and below 2^nbits (a span
	 * of 2^63 or more over few rows would otherwise shift by 64) */
	span = hi - lo;
	bits = span ? 64 - (unsigned)__builtin_clzll(span) : 0;
	nbits = 1;
	while (nbits < BUCKET_BITS && ((size_t)BUCKET << nbits) < nraw + npart)
		nbits++;
	shift = bits > nbits ? bits - nbits : 0;
	nb = (size_t)(span >> shift) + 1;	/* <= 2^nbits */
	rcnt = pems_calloc(nb, sizeof(*rcnt));
	pcnt = pems_calloc(nb, sizeof(*pcnt));
	rpos = pems_malloc(nb * sizeof(*rpos));
	ppos = pems_malloc(nb * sizeof(*ppos));
	for (off = 0; off < bytes;) {
		const uint8_t *p = recv + off + sizeof(h);

		memcpy(&h, recv + off, sizeof(h));
		for (i = 0; i < h.nraw; i++)
			rcnt[(part_key(p + i * sizeof(struct agg_pair)) - lo) >> shift]++;
		p += h.nraw * sizeof(struct agg_pair);
		for (i = 0; i < h.npart; i++)
			pcnt[(part_key(p + i * slot) - lo) >> shift]++;
		off += sizeof(h) + h.nraw * sizeof(struct agg_pair) + h.npart * slot;
	}
	for (b = 0, off = 0, i = 0; b < nb; b++) {
		rpos[b] = off;
		ppos[b] = i;
		off += rcnt[b];
		i += pcnt[b];
		maxb = rcnt[b] > maxb ? rcnt[b] : maxb;
		maxb = pcnt[b] > maxb ? pcnt[b] : maxb;
	}
	g->blob_bytes = nraw * sizeof(*g->raw) + npart * (slot + sizeof(*g->pidx));
	g->blob = pems_malloc(g->blob_bytes + 1);
	g->nraw = nraw;
	g->npart = npart;
	set_pointers(g);
	for (off = 0; off < bytes;) {
		const uint8_t *p = recv + off + sizeof(h);

		memcpy(&h, recv + off, sizeof(h));
		for (i = 0; i < h.nraw; i++, p += sizeof(struct agg_pair)) {
			uint64_t k = part_key(p);

			memcpy(&g->raw[rpos[(k - lo) >> shift]++], p, sizeof(struct agg_pair));
		}
		for (i = 0; i < h.npart; i++, p += slot) {
			uint64_t k = part_key(p);
			size_t j = ppos[(k - lo) >> shift]++;

			memcpy(g->part + j * slot, p, slot);
			g->pidx[j].key = k;
			g->pidx[j].val = j;
		}
		off += sizeof(h) + h.nraw * sizeof(struct agg_pair) + h.npart * slot;
	}
	pems_free(recv);
	/* rpos/ppos are now the ends of the buckets */
	if (maxb > (size_t)BUCKET * 8)
		maxb = (size_t)BUCKET * 8;	/* larger buckets: sort_big's MSD passes */
	tmp = pems_malloc(maxb * sizeof(*tmp) + 1);
	cnt = pems_malloc(((64 / DIGIT + 1) * sizeof(*cnt)) << DIGIT);
	for (b = 0; b < nb; b++) {
		struct agg_pair *arrs[2] = { g->raw + rpos[b] - rcnt[b], g->pidx + ppos[b] - pcnt[b] };
		size_t ns[2] = { rcnt[b], pcnt[b] };
		unsigned a;

		for (a = 0; a < 2; a++)
			sort_big(arrs[a], ns[a], lo, shift, tmp, maxb, cnt);
	}
	pems_free(cnt);
	pems_free(tmp);
	pems_free(ppos);
	pems_free(rpos);
	pems_free(pcnt);
	pems_free(rcnt);
}

static inline const uint8_t *part_at(const struct pems_groupby *g, size_t j)
{
	return g->part + (g->pidx ? g->pidx[j].val : j) * g->sp.slot;
}

static inline uint64_t pkey_at(const struct pems_groupby *g, size_t j)
{
	return g->pidx ? g->pidx[j].key : part_key(g->part + j * g->sp.slot);
}

/* the smallest key not yet walked */
static inline uint64_t next_key(const struct pems_groupby *g, size_t i, size_t j)
{
	if (j >= g->npart || (i < g->nraw && g->raw[i].key <= pkey_at(g, j)))
		return g->raw[i].key;
	return pkey_at(g, j);
}

static void count_groups(struct pems_groupby *g)
{
	size_t i = 0, j = 0;
	uint64_t n = 0;

	while (i < g->nraw || j < g->npart) {
		uint64_t k = next_key(g, i, j);

		while (i < g->nraw && g->raw[i].key == k)
			i++;
		while (j < g->npart && pkey_at(g, j) == k)
			j++;
		n++;
	}
	g->ngroups = n;
}

/* core: the group of the key at (i, j), advancing both */
static inline void core_group(const struct pems_groupby *g, size_t *i, size_t *j,
			      struct core *c)
{
	uint64_t k = next_key(g, *i, *j);

	c->key = k;
	c->count = 0;
	c->sum = 0;
	c->min = INT64_MAX;
	c->max = INT64_MIN;
	for (; *i < g->nraw && g->raw[*i].key == k; (*i)++)
		core_add(c, (int64_t)g->raw[*i].val);
	for (; *j < g->npart && pkey_at(g, *j) == k; (*j)++) {
		struct core o;

		memcpy(&o, part_at(g, *j), sizeof(o));
		core_merge(c, &o);
	}
}

/* Core: one sorted state per group instead of rows, when that is at most
 * 1/COMPACT of the bytes (few groups: the walks and the park get cheap). */
static void compact(struct pems_groupby *g)
{
	size_t i = 0, j = 0, n = 0, bytes = g->ngroups * sizeof(struct core);
	struct core *out;

	if (!g->sp.core || g->compact || bytes * COMPACT > g->blob_bytes)
		return;
	out = pems_malloc(bytes + 1);
	while (i < g->nraw || j < g->npart)
		core_group(g, &i, &j, &out[n++]);
	pems_free(g->blob);
	g->blob = (uint8_t *)out;
	g->blob_bytes = bytes;
	g->nraw = 0;
	g->npart = n;
	g->compact = true;
	set_pointers(g);
}

struct pems_groupby *pems_groupby(const struct pems_groupby_plan *plan,
				  void *rows, size_t n,
				  const struct pems_aggregate *const *aggs,
				  unsigned naggs, size_t table_bytes,
				  uint64_t *ngroups)
{
	return pems_groupby_fed(plan, rows, n, aggs, naggs, table_bytes, ngroups, NULL, NULL);
}

struct pems_groupby *pems_groupby_fed(const struct pems_groupby_plan *plan, void *rows,
				      size_t n, const struct pems_aggregate *const *aggs,
				      unsigned naggs, size_t table_bytes, uint64_t *ngroups,
				      agg_ready_fn ready, void *arg)
{
	struct pems_groupby *g = pems_calloc(1, sizeof(*g));
	void *recv = NULL;
	size_t recvbytes = 0;

	spec_init(&g->sp, aggs, naggs);
	if (!table_bytes)
		table_bytes = n * 4;
	partition(plan, &g->sp, rows, n, table_bytes, &recv, &recvbytes, ready, arg);
	bsp_sync();
	absorb(g, recv, recvbytes);
	count_groups(g);
	compact(g);
	if (ngroups)
		*ngroups = g->ngroups;
	return g;
}

void pems_groupby_walk(const struct pems_groupby *g, pems_group_fn fn, void *arg)
{
	const struct spec *sp = &g->sp;
	size_t i = 0, j = 0;
	uint8_t st[PEMS_AGG_STATE_MAX * PEMS_AGG_MAX + 8];

	if (sp->core) {
		while (i < g->nraw || j < g->npart) {
			struct core c;

			core_group(g, &i, &j, &c);
			core_states(sp, &c, st);
			fn(c.key, st, arg);
		}
		return;
	}
	while (i < g->nraw || j < g->npart) {
		uint64_t k = next_key(g, i, j);

		st_init(sp, st);
		for (; i < g->nraw && g->raw[i].key == k; i++)
			st_update(sp, st, (int64_t)g->raw[i].val);
		for (; j < g->npart && pkey_at(g, j) == k; j++)
			st_combine(sp, st, part_at(g, j) + 8);
		fn(k, st, arg);
	}
}

size_t pems_groupby_bytes(const struct pems_groupby *g)
{
	return g->blob_bytes;
}

void pems_groupby_park(struct pems_groupby *g)
{
	unsigned v = bsp_nprocs();
	size_t *counts = pems_calloc(v, sizeof(*counts));

	if (!g->blob)
		bsp_abort("pems_groupby_park: the groups are parked already");
	counts[bsp_pid()] = g->blob_bytes;
	pems_exchange(g->blob, counts, &g->parked, &g->parked_bytes, NULL);
	pems_free(counts);
	pems_free(g->blob);
	g->blob = NULL;
	g->raw = NULL;
	g->part = NULL;
	g->pidx = NULL;
}

void pems_groupby_unpark(struct pems_groupby *g)
{
	if (g->blob || g->parked_bytes != g->blob_bytes)
		bsp_abort("pems_groupby_unpark: no parked groups (call it after the sync that follows pems_groupby_park)");
	g->blob = g->parked;
	g->parked = NULL;
	set_pointers(g);
}

void pems_groupby_free(struct pems_groupby *g)
{
	if (!g)
		return;
	pems_free(g->blob);
	pems_free(g->parked);
	pems_free(g);
}

void pems_groupby_shape(struct pems_aggregate_shape *s)
{
	s->table = TABLE_CORE / 2;	/* ctable_init: limit = slots / 2 */
	s->pass_fills = PASS_FILLS;
	s->poor = POOR_FILL;
	s->raw_count = RAW_COUNT;
	s->state = sizeof(struct core);
	s->row = sizeof(struct agg_pair);
	s->samples = PEMS_GROUPBY_SAMPLES;
	s->sample_msg = sizeof(struct sample_msg);
	s->chunk_hdr = sizeof(struct chunk_hdr);
	s->compact = COMPACT;
}
