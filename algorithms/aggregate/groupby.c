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
#include "aggregate/gb_int.h"

/* ---- the aggregates of a job ---- */

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
		if (!aggs[i] || !aggs[i]->state_size ||
		    aggs[i]->state_size > PEMS_AGG_STATE_MAX)
			bsp_abort("pems_groupby: aggregate %u has no valid state size", i);
		sp->aggs[i] = aggs[i];
		sp->off[i] = sp->ss;
		sp->ss += aggs[i]->state_size;
		sp->kind[i] = gb_builtin_kind(aggs[i]);
		if (sp->kind[i] == K_USER)
			sp->core = false;
	}
	sp->ss = (sp->ss + 7) & ~(size_t)7;
	sp->slot = sp->core ? sizeof(struct core) : 8 + sp->ss;
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

/* The owner's buckets over the received keys [lo, hi]: bucket b holds
 * the keys with (key - lo) >> shift == b; per bucket, how many raw rows
 * and partials fall in it and (after place_fn) where its run ends. */
struct buckets {
	uint64_t lo;
	unsigned shift;
	size_t nb, maxb;	/* buckets; rows of the largest run */
	size_t nraw, npart;
	size_t *rcnt, *pcnt, *rpos, *ppos;
};

/* Walk the received chunks: fn(arg, key, p, raw) for every raw row and
 * partial, in arrival order. */
static inline __attribute__((always_inline)) void
each_received(const struct pems_groupby *g, const uint8_t *recv, size_t bytes,
	      void (*fn)(void *arg, uint64_t key, const uint8_t *p, bool raw), void *arg)
{
	size_t slot = g->sp.slot, off, i;
	struct chunk_hdr h;

	for (off = 0; off < bytes;) {
		const uint8_t *p = recv + off + sizeof(h);

		memcpy(&h, recv + off, sizeof(h));
		for (i = 0; i < h.nraw; i++, p += sizeof(struct agg_pair))
			fn(arg, part_key(p), p, true);
		for (i = 0; i < h.npart; i++, p += slot)
			fn(arg, part_key(p), p, false);
		off += sizeof(h) + h.nraw * sizeof(struct agg_pair) + h.npart * slot;
	}
}

struct key_span {
	uint64_t lo, hi;
	size_t nraw, npart;
};

static void span_fn(void *arg, uint64_t k, const uint8_t *p, bool raw)
{
	struct key_span *s = arg;

	(void)p;
	s->lo = k < s->lo ? k : s->lo;
	s->hi = k > s->hi ? k : s->hi;
	if (raw)
		s->nraw++;
	else
		s->npart++;
}

static void count_fn(void *arg, uint64_t k, const uint8_t *p, bool raw)
{
	struct buckets *bk = arg;

	(void)p;
	if (raw)
		bk->rcnt[(k - bk->lo) >> bk->shift]++;
	else
		bk->pcnt[(k - bk->lo) >> bk->shift]++;
}

/* Size the buckets to the keys' span and count what falls in each. */
static void buckets_count(struct buckets *bk, const struct pems_groupby *g, const uint8_t *recv,
			  size_t bytes)
{
	struct key_span s = { UINT64_MAX, 0, 0, 0 };
	unsigned bits, nbits;
	uint64_t span;
	size_t b, r, p;

	each_received(g, recv, bytes, span_fn, &s);
	if (s.nraw + s.npart == 0)
		s.lo = s.hi = 0;
	/* bits = width of span (0..64); nbits >= 1 keeps shift <= 63, so
	 * every (key - lo) >> shift is defined and below 2^nbits (a span
	 * of 2^63 or more over few rows would otherwise shift by 64) */
	span = s.hi - s.lo;
	bits = span ? 64 - (unsigned)__builtin_clzll(span) : 0;
	nbits = 1;
	while (nbits < BUCKET_BITS && ((size_t)BUCKET << nbits) < s.nraw + s.npart)
		nbits++;
	bk->lo = s.lo;
	bk->shift = bits > nbits ? bits - nbits : 0;
	bk->nb = (size_t)(span >> bk->shift) + 1;	/* <= 2^nbits */
	bk->nraw = s.nraw;
	bk->npart = s.npart;
	bk->rcnt = pems_calloc(bk->nb, sizeof(*bk->rcnt));
	bk->pcnt = pems_calloc(bk->nb, sizeof(*bk->pcnt));
	bk->rpos = pems_malloc(bk->nb * sizeof(*bk->rpos));
	bk->ppos = pems_malloc(bk->nb * sizeof(*bk->ppos));
	each_received(g, recv, bytes, count_fn, bk);
	for (b = 0, r = 0, p = 0, bk->maxb = 0; b < bk->nb; b++) {
		bk->rpos[b] = r;
		bk->ppos[b] = p;
		r += bk->rcnt[b];
		p += bk->pcnt[b];
		bk->maxb = bk->rcnt[b] > bk->maxb ? bk->rcnt[b] : bk->maxb;
		bk->maxb = bk->pcnt[b] > bk->maxb ? bk->pcnt[b] : bk->maxb;
	}
}

struct place {
	struct pems_groupby *g;
	struct buckets *bk;
};

static void place_fn(void *arg, uint64_t k, const uint8_t *p, bool raw)
{
	struct place *pl = arg;
	struct pems_groupby *g = pl->g;
	size_t b = (k - pl->bk->lo) >> pl->bk->shift, j;

	if (raw) {
		memcpy(&g->raw[pl->bk->rpos[b]++], p, sizeof(struct agg_pair));
		return;
	}
	j = pl->bk->ppos[b]++;
	memcpy(g->part + j * g->sp.slot, p, g->sp.slot);
	g->pidx[j].key = k;
	g->pidx[j].val = j;
}

/* Sort every bucket's raw rows and partial index in cache. */
static void buckets_sort(struct pems_groupby *g, struct buckets *bk)
{
	size_t maxb = bk->maxb, b;
	struct agg_pair *tmp;
	uint32_t *cnt;

	if (maxb > (size_t)BUCKET * 8)
		maxb = (size_t)BUCKET * 8;	/* larger buckets: sort_big's MSD passes */
	tmp = pems_malloc(maxb * sizeof(*tmp) + 1);
	cnt = pems_malloc(((64 / DIGIT + 1) * sizeof(*cnt)) << DIGIT);
	for (b = 0; b < bk->nb; b++) {
		struct agg_pair *arrs[2] = { g->raw + bk->rpos[b] - bk->rcnt[b],
					     g->pidx + bk->ppos[b] - bk->pcnt[b] };
		size_t ns[2] = { bk->rcnt[b], bk->pcnt[b] };
		unsigned a;

		for (a = 0; a < 2; a++)
			sort_big(arrs[a], ns[a], bk->lo, bk->shift, tmp, maxb, cnt);
	}
	pems_free(cnt);
	pems_free(tmp);
}

/* Bucket the received rows and partials by key range in one pass, then
 * sort each bucket in cache (see the design block, gb 1); @recv is freed. */
static void absorb(struct pems_groupby *g, uint8_t *recv, size_t bytes)
{
	struct buckets bk;
	struct place pl = { g, &bk };

	buckets_count(&bk, g, recv, bytes);
	g->blob_bytes = bk.nraw * sizeof(*g->raw) + bk.npart * (g->sp.slot + sizeof(*g->pidx));
	g->blob = pems_malloc(g->blob_bytes + 1);
	g->nraw = bk.nraw;
	g->npart = bk.npart;
	set_pointers(g);
	each_received(g, recv, bytes, place_fn, &pl);
	pems_free(recv);
	/* rpos/ppos are now the ends of the buckets */
	buckets_sort(g, &bk);
	pems_free(bk.ppos);
	pems_free(bk.rpos);
	pems_free(bk.pcnt);
	pems_free(bk.rcnt);
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
	gb_partition(plan, &g->sp, rows, n, table_bytes, &recv, &recvbytes, ready, arg);
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
