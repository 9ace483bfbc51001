/*
 * groupby.c - the BSP GROUP BY core: built-in aggregates, the sampled
 * plan (owner key ranges, heavy keys), pre-aggregation, repartitioning
 * and the owners' merge.  Written only against bsp.h / pems.h.
 *
 * Supersteps of one pems_groupby_plan + pems_groupby:
 *   plan 0  every VP's sample keys are gathered at VP 0
 *   plan 1  VP 0 sorts them, picks heavy keys (>= HEAVY_SHARE of a VP's
 *           worth of samples) and v-1 splitters by sampled weight, where a
 *           heavy key weighs 1 (it is pre-aggregated: it sends at most one
 *           partial per VP); broadcast
 *   gb 0    each VP aggregates its rows into a bounded table; after a
 *           probe of PROBE rows that shows little reduction (distinct >
 *           PROBE/2) it stops inserting and passes rows through raw,
 *           except heavy keys (a small table of their own).  Rows whose
 *           key misses a full table pass through raw too.  Raw rows and
 *           partial states are scattered by owner and posted with
 *           pems_exchange; everything is freed before bsp_sync so the
 *           context written back is small.
 *   gb 1    the owner copies the raw rows (16 B each) and partials out of
 *           the received buffer, radix-sorts both by key; the walk merges
 *           the two sorted streams group by group.
 *
 * Invariants:
 *  (1) a key's rows all go to one owner: bucket = number of splitters
 *      <= key, the same function on every VP;
 *  (2) what a VP sends is at most 16 B per input row plus one partial per
 *      table entry, so a VP's send buffer is bounded by its input and its
 *      table;
 *  (3) results do not depend on v, k or the order rows meet: aggregates
 *      are associative and commutative (the built-ins are exact integer
 *      arithmetic; avg is computed from the exact sum and count at the end).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pems_algorithms.h"
#include "aggregate/agg_internal.h"

#define PROBE 65536		/* rows inserted before judging the reduction */
#define HEAVY_MAX 4096

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
	unsigned naggs;
	size_t ss;		/* state bytes, rounded to 8 */
};

static void spec_init(struct spec *sp, const struct pems_aggregate *const *aggs,
		      unsigned naggs)
{
	unsigned i;

	if (naggs > PEMS_AGG_MAX)
		bsp_abort("pems_groupby: %u aggregates; at most %d", naggs, PEMS_AGG_MAX);
	memset(sp, 0, sizeof(*sp));
	sp->naggs = naggs;
	for (i = 0; i < naggs; i++) {
		if (!aggs[i] || !aggs[i]->state_size ||
		    aggs[i]->state_size > PEMS_AGG_STATE_MAX)
			bsp_abort("pems_groupby: aggregate %u has no valid state size", i);
		sp->aggs[i] = aggs[i];
		sp->off[i] = sp->ss;
		sp->ss += aggs[i]->state_size;
	}
	sp->ss = (sp->ss + 7) & ~(size_t)7;
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

/* ---- radix sort of {u64 key, u64 payload} pairs by key (stable) ---- */

void agg_sort_pairs(struct agg_pair *a, struct agg_pair *tmp, size_t n)
{
	size_t (*cnt)[256] = pems_calloc(8, sizeof(*cnt));
	struct agg_pair *src = a, *dst = tmp, *t;
	size_t i, sum;
	unsigned p, b;

	for (i = 0; i < n; i++) {
		uint64_t k = a[i].key;

		for (p = 0; p < 8; p++)
			cnt[p][(k >> (8 * p)) & 255]++;
	}
	for (p = 0; p < 8; p++) {
		if (n == 0 || cnt[p][(a[0].key >> (8 * p)) & 255] == n)
			continue;	/* every key has the same byte here */
		for (b = 0, sum = 0; b < 256; b++) {
			size_t c = cnt[p][b];

			cnt[p][b] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[cnt[p][(src[i].key >> (8 * p)) & 255]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	pems_free(cnt);
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

static unsigned owner_of(const struct pems_groupby_plan *pl, uint64_t key)
{
	unsigned lo = 0, hi = pl->v - 1;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (pl->spl[mid] <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- the bounded pre-aggregation table ---- */

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

/* ---- gb 0: pre-aggregate and repartition ---- */

struct chunk_hdr {
	uint64_t nraw, npart;
};

struct pems_groupby {
	struct spec sp;
	uint8_t *blob;		/* raw, part and pidx, in one allocation */
	size_t blob_bytes;
	void *parked;		/* pems_groupby_park: the blob arrives here */
	size_t parked_bytes;
	struct agg_pair *raw;	/* {key, value} sorted by key */
	size_t nraw;
	uint8_t *part;		/* partial records: key, state */
	struct agg_pair *pidx;	/* {key, index into part} sorted by key */
	size_t npart;
	uint64_t ngroups;
};

static void count_table(const struct table *t, const struct pems_groupby_plan *pl,
			uint64_t *npart)
{
	size_t i;

	for (i = 0; i <= t->mask; i++) {
		uint64_t k;

		if (!t->used[i])
			continue;
		memcpy(&k, t->slots + i * t->slot, 8);
		npart[owner_of(pl, k)]++;
	}
}

static void scatter_table(const struct table *t, const struct pems_groupby_plan *pl,
			  uint8_t *out, size_t *pos)
{
	size_t i;

	for (i = 0; i <= t->mask; i++) {
		const uint8_t *s = t->slots + i * t->slot;
		uint64_t k;
		unsigned b;

		if (!t->used[i])
			continue;
		memcpy(&k, s, 8);
		b = owner_of(pl, k);
		memcpy(out + pos[b], s, t->slot);
		pos[b] += t->slot;
	}
}

static void partition(const struct pems_groupby_plan *pl, const struct spec *sp,
		      struct agg_pair *rows, size_t n, size_t table_bytes,
		      void **recv, size_t *recvbytes)
{
	unsigned v = pl->v, b;
	struct table main_t, heavy_t;
	uint64_t *nraw = pems_calloc(v, sizeof(*nraw));
	uint64_t *npart = pems_calloc(v, sizeof(*npart));
	size_t *pos = pems_malloc(v * sizeof(*pos)), *sendcounts = pems_malloc(v * sizeof(*sendcounts));
	size_t i, w = 0, probe = n < PROBE ? n : PROBE, total;
	bool passthrough = false;
	uint32_t *bk;
	uint8_t *out;

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
			rows[w++] = rows[i];	/* raw: compact at the front */
	}
	bk = pems_malloc(w * sizeof(*bk) + 1);
	for (i = 0; i < w; i++) {
		bk[i] = owner_of(pl, rows[i].key);
		nraw[bk[i]]++;
	}
	count_table(&main_t, pl, npart);
	count_table(&heavy_t, pl, npart);
	for (b = 0, total = 0; b < v; b++) {
		sendcounts[b] = sizeof(struct chunk_hdr) + nraw[b] * sizeof(struct agg_pair) +
				npart[b] * main_t.slot;
		pos[b] = total;
		total += sendcounts[b];
	}
	out = pems_malloc(total + 1);
	for (b = 0; b < v; b++) {
		struct chunk_hdr h = { nraw[b], npart[b] };

		memcpy(out + pos[b], &h, sizeof(h));
		pos[b] += sizeof(h);
	}
	for (i = 0; i < w; i++) {
		memcpy(out + pos[bk[i]], &rows[i], sizeof(rows[i]));
		pos[bk[i]] += sizeof(rows[i]);
	}
	pems_free(bk);
	pems_free(rows);
	scatter_table(&main_t, pl, out, pos);
	scatter_table(&heavy_t, pl, out, pos);
	table_free(&heavy_t);
	table_free(&main_t);
	pems_exchange(out, sendcounts, recv, recvbytes, NULL);
	/* the data is in the message store now: free it before the sync */
	pems_free(out);
	pems_free(sendcounts);
	pems_free(pos);
	pems_free(npart);
	pems_free(nraw);
}

/* ---- gb 1: the owner's side ---- */

static void set_pointers(struct pems_groupby *g)
{
	g->raw = (struct agg_pair *)(void *)g->blob;
	g->part = g->blob + g->nraw * sizeof(*g->raw);
	g->pidx = (struct agg_pair *)(void *)(g->part + g->npart * (8 + g->sp.ss));
}

static void absorb(struct pems_groupby *g, uint8_t *recv, size_t bytes)
{
	size_t slot = 8 + g->sp.ss, off, nraw = 0, npart = 0, r = 0, p = 0;
	struct agg_pair *tmp;
	struct chunk_hdr h;

	for (off = 0; off < bytes;) {
		memcpy(&h, recv + off, sizeof(h));
		nraw += h.nraw;
		npart += h.npart;
		off += sizeof(h) + h.nraw * sizeof(struct agg_pair) + h.npart * slot;
	}
	g->blob_bytes = nraw * sizeof(*g->raw) + npart * (slot + sizeof(*g->pidx));
	g->blob = pems_malloc(g->blob_bytes + 1);
	g->nraw = nraw;
	g->npart = npart;
	set_pointers(g);
	for (off = 0; off < bytes;) {
		memcpy(&h, recv + off, sizeof(h));
		off += sizeof(h);
		memcpy(g->raw + r, recv + off, h.nraw * sizeof(struct agg_pair));
		r += h.nraw;
		off += h.nraw * sizeof(struct agg_pair);
		memcpy(g->part + p * slot, recv + off, h.npart * slot);
		p += h.npart;
		off += h.npart * slot;
	}
	pems_free(recv);
	for (p = 0; p < npart; p++) {
		memcpy(&g->pidx[p].key, g->part + p * slot, 8);
		g->pidx[p].val = p;
	}
	tmp = pems_malloc((nraw > npart ? nraw : npart) * sizeof(*tmp) + 1);
	agg_sort_pairs(g->raw, tmp, nraw);
	agg_sort_pairs(g->pidx, tmp, npart);
	pems_free(tmp);
}

static void count_groups(struct pems_groupby *g)
{
	size_t i = 0, j = 0;
	uint64_t n = 0;

	while (i < g->nraw || j < g->npart) {
		uint64_t k;

		if (j >= g->npart || (i < g->nraw && g->raw[i].key <= g->pidx[j].key))
			k = g->raw[i].key;
		else
			k = g->pidx[j].key;
		while (i < g->nraw && g->raw[i].key == k)
			i++;
		while (j < g->npart && g->pidx[j].key == k)
			j++;
		n++;
	}
	g->ngroups = n;
}

struct pems_groupby *pems_groupby(const struct pems_groupby_plan *plan,
				  void *rows, size_t n,
				  const struct pems_aggregate *const *aggs,
				  unsigned naggs, size_t table_bytes,
				  uint64_t *ngroups)
{
	struct pems_groupby *g = pems_calloc(1, sizeof(*g));
	void *recv = NULL;
	size_t recvbytes = 0;

	spec_init(&g->sp, aggs, naggs);
	if (!table_bytes)
		table_bytes = n * 4;
	partition(plan, &g->sp, rows, n, table_bytes, &recv, &recvbytes);
	bsp_sync();
	absorb(g, recv, recvbytes);
	count_groups(g);
	if (ngroups)
		*ngroups = g->ngroups;
	return g;
}

void pems_groupby_walk(const struct pems_groupby *g, pems_group_fn fn, void *arg)
{
	const struct spec *sp = &g->sp;
	size_t slot = 8 + sp->ss, i = 0, j = 0;
	uint8_t st[PEMS_AGG_STATE_MAX * PEMS_AGG_MAX + 8];

	while (i < g->nraw || j < g->npart) {
		uint64_t k;

		if (j >= g->npart || (i < g->nraw && g->raw[i].key <= g->pidx[j].key))
			k = g->raw[i].key;
		else
			k = g->pidx[j].key;
		st_init(sp, st);
		for (; i < g->nraw && g->raw[i].key == k; i++)
			st_update(sp, st, (int64_t)g->raw[i].val);
		for (; j < g->npart && g->pidx[j].key == k; j++)
			st_combine(sp, st, g->part + g->pidx[j].val * slot + 8);
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
