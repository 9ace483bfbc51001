/*
 * gb_send.c - the sending side of the GROUP BY core (groupby.c design,
 * plan 0-1 and gb 0): the sampled plan, pre-aggregation (core and
 * generic tables, heavy keys), and the scatter of raw rows and partial
 * states to their owners.
 */
#include <stdlib.h>
#include <string.h>

#include "aggregate/gb_int.h"

/* ---- plan ---- */

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

void gb_partition(const struct pems_groupby_plan *pl, const struct spec *sp,
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
