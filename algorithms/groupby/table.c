/*
 * table.c - the groups of one VP: an open-addressing hash table over
 * encoded keys, each group's fixed aggregate states (all zero = the
 * empty set, for every aggregate), and value lists for the holistic
 * aggregates (median, count distinct, min/max of strings).
 *
 * Fixed states (offsets within the aggregate's 16-aligned slot):
 *   count            u64 n
 *   sum, avg         int: __int128 s; float: long double s; u64 n at 16
 *   min, max         int64 / double at 0, u64 has at 16
 *   sd               u64 n; long double mean at 16, m2 at 32 (Welford)
 *   corr             u64 n; long double mx, my, m2x, m2y, cxy at 16..80
 *   top, bottom      u32 count; the best N as order encodings, best first, at 16
 *   smin, smax       u64 1 + index of the best item in the list
 * Partial states combine exactly (counts, 128-bit sums), or as Chan et
 * al.'s pairwise update (sd, corr), in long double.
 */
#include <stdlib.h>
#include <string.h>

#include "groupby/gb.h"

#define CHUNK (1u << 20)

struct gb_chunk {
	struct gb_chunk *next;
	size_t used;
	char data[];
};

struct gb_sd {
	uint64_t n, pad;
	long double mean, m2;
};

struct gb_corr {
	uint64_t n, pad;
	long double mx, my, m2x, m2y, cxy;
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 32;
	x *= 0xd6e8feb86659fd93ull;
	x ^= x >> 32;
	x *= 0xd6e8feb86659fd93ull;
	return x ^ (x >> 32);
}

uint64_t gb_hash(const uint8_t *k, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len, w;

	while (len >= 8) {
		memcpy(&w, k, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 29;
		k += 8;
		len -= 8;
	}
	w = 0;
	memcpy(&w, k, len);
	return mix64(h ^ w);
}

void gb_table_init(struct gb_table *t, const struct gb_query *q, size_t groups,
		   size_t key_bytes, const size_t *items)
{
	unsigned i, l;

	memset(t, 0, sizeof(*t));
	t->q = q;
	if (groups < 64)
		groups = 64;
	t->nslots = 128;
	while (t->nslots < groups * 2 && t->nslots < (1u << 31))
		t->nslots *= 2;
	t->slots = pems_calloc(t->nslots, 8);
	t->gcap = (uint32_t)groups;
	t->koff = pems_malloc((size_t)t->gcap * 8);
	t->states = pems_malloc((size_t)t->gcap * q->state_size + 16);
	t->kcap = key_bytes > 1024 ? key_bytes : 1024;
	t->keys = pems_malloc(t->kcap);
	for (i = 0; i < q->naggs; i++) {
		const struct gb_agg *a = &q->agg[i];

		if (a->list < 0)
			continue;
		l = (unsigned)a->list;
		t->list[l].str = q->need_type[a->col] == GB_STR;
		if (items && items[l]) {
			t->list[l].cap = items[l];
			t->list[l].e = pems_malloc(items[l] * sizeof(struct gb_item));
		}
	}
}

void gb_table_free(struct gb_table *t)
{
	unsigned l;

	while (t->chunks) {
		struct gb_chunk *c = t->chunks;

		t->chunks = c->next;
		pems_free(c);
	}
	for (l = 0; l < GB_MAX_AGGS; l++) {
		pems_free(t->list[l].e);
		pems_free(t->list[l].start);
	}
	pems_free(t->slots);
	pems_free(t->koff);
	pems_free(t->states);
	pems_free(t->keys);
	pems_free(t->order);
	memset(t, 0, sizeof(*t));
}

size_t gb_table_bytes(const struct gb_table *t)
{
	size_t b = t->nslots * 8 + (size_t)t->gcap * (8 + t->q->state_size) + t->kcap;
	unsigned l;

	for (l = 0; l < t->q->nlists; l++)
		b += t->list[l].cap * sizeof(struct gb_item);
	return b;
}

static void grow_slots(struct gb_table *t)
{
	size_t n = t->nslots * 2, i;
	uint64_t *s = pems_calloc(n, 8);

	for (i = 0; i < t->nslots; i++) {
		uint64_t e = t->slots[i], j;

		if (!e)
			continue;
		for (j = (e >> 32) * 0x9e3779b9u & (n - 1); s[j]; j = (j + 1) & (n - 1))
			;
		s[j] = e;
	}
	pems_free(t->slots);
	t->slots = s;
	t->nslots = n;
}

static uint32_t new_group(struct gb_table *t, const uint8_t *k, size_t klen)
{
	uint32_t g = t->ngroups++;
	size_t ss = t->q->state_size;

	if (g >= t->gcap) {
		t->gcap *= 2;
		t->koff = pems_realloc(t->koff, (size_t)t->gcap * 8);
		t->states = pems_realloc(t->states, (size_t)t->gcap * ss + 16);
	}
	if (t->kbytes + klen > t->kcap) {
		while (t->kbytes + klen > t->kcap)
			t->kcap *= 2;
		t->keys = pems_realloc(t->keys, t->kcap);
	}
	memcpy(t->keys + t->kbytes, k, klen);
	t->koff[g] = (uint64_t)t->kbytes << 24 | klen;
	t->kbytes += klen;
	memset(t->states + (size_t)g * ss, 0, ss);
	return g;
}

/* find or add the group of key k */
static uint32_t lookup(struct gb_table *t, const uint8_t *k, size_t klen, uint64_t h)
{
	uint64_t tag = h >> 32 << 32, j;

	if ((size_t)t->ngroups * 2 + 2 >= t->nslots)
		grow_slots(t);
	for (j = (h >> 32) * 0x9e3779b9u & (t->nslots - 1);; j = (j + 1) & (t->nslots - 1)) {
		uint64_t e = t->slots[j];
		uint32_t g;
		size_t len;

		if (!e) {
			g = new_group(t, k, klen);
			t->slots[j] = tag | ((uint64_t)g + 1);
			return g;
		}
		if ((e & ~0xffffffffull) != tag)
			continue;
		g = (uint32_t)(e & 0xffffffffu) - 1;
		len = (size_t)(t->koff[g] & 0xffffff);
		if (len == klen && !memcmp(t->keys + (t->koff[g] >> 24), k, klen))
			return g;
	}
}

static uint64_t copy_bytes(struct gb_table *t, const char *s, size_t len)
{
	struct gb_chunk *c = t->chunks;
	uint64_t d = 0;

	if (len <= 8) {
		memcpy(&d, s, len);
		return d;
	}
	if (!c || c->used + len > CHUNK) {
		size_t cap = len > CHUNK ? len : CHUNK;

		c = pems_malloc(sizeof(*c) + cap);
		c->used = 0;
		c->next = t->chunks;
		t->chunks = c;
	}
	memcpy(c->data + c->used, s, len);
	c->used += len;
	return (uint64_t)(uintptr_t)(c->data + c->used - len);
}

static struct gb_item *list_add(struct gb_list *l, uint32_t g, uint32_t len, uint64_t data)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->e = pems_realloc(l->e, l->cap * sizeof(*l->e));
	}
	l->e[l->n] = (struct gb_item){ g, len, data };
	return &l->e[l->n++];
}

static int item_cmp_bytes(const struct gb_item *a, const struct gb_item *b)
{
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(gb_item_bytes(a), gb_item_bytes(b), n);

	return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* the order encoding of a number */
static uint64_t ord_of(enum gb_type t, const struct gb_val *v)
{
	return t == GB_I64 ? gb_ord_i64(v->i) : gb_ord_f64(v->d);
}

static void top_insert(uint8_t *st, unsigned n, bool top, uint64_t x)
{
	uint32_t cnt;
	uint64_t *vals = (uint64_t *)(void *)(st + 16);
	unsigned i;

	memcpy(&cnt, st, 4);
	if (cnt == n && (top ? x <= vals[n - 1] : x >= vals[n - 1]))
		return;
	i = cnt < n ? cnt++ : n - 1;
	while (i > 0 && (top ? x > vals[i - 1] : x < vals[i - 1])) {
		vals[i] = vals[i - 1];
		i--;
	}
	vals[i] = x;
	memcpy(st, &cnt, 4);
}

static void sd_add(struct gb_sd *s, long double x)
{
	long double d = x - s->mean;

	s->n++;
	s->mean += d / s->n;
	s->m2 += d * (x - s->mean);
}

static void corr_add(struct gb_corr *c, long double x, long double y)
{
	long double dx = x - c->mx, dy = y - c->my;

	c->n++;
	c->mx += dx / c->n;
	c->my += dy / c->n;
	c->m2x += dx * (x - c->mx);
	c->m2y += dy * (y - c->my);
	c->cxy += dx * (y - c->my);
}

static long double num(enum gb_type t, const struct gb_val *v)
{
	return t == GB_I64 ? (long double)v->i : (long double)v->d;
}

/* string min / max: keep the best item of group g in the list */
static void sbest(struct gb_table *t, const struct gb_agg *a, uint8_t *st, uint32_t g,
		  const char *s, size_t len, bool copy)
{
	struct gb_list *l = &t->list[a->list];
	uint64_t idx;
	struct gb_item cand = { g, (uint32_t)len, 0 };

	memcpy(&idx, st, 8);
	if (len <= 8)
		memcpy(&cand.data, s, len);
	else
		cand.data = (uint64_t)(uintptr_t)s;
	if (idx) {
		int c = item_cmp_bytes(&cand, &l->e[idx - 1]);

		if (a->fn == F_SMIN ? c >= 0 : c <= 0)
			return;
	}
	if (copy)
		cand.data = copy_bytes(t, s, len);
	if (idx) {
		l->e[idx - 1] = cand;
		return;
	}
	list_add(l, g, cand.len, cand.data);
	idx = l->n;
	memcpy(st, &idx, 8);
}

static void agg_update(struct gb_table *t, const struct gb_agg *a, uint8_t *st, uint32_t g,
		       const struct gb_val *vals)
{
	const struct gb_query *q = t->q;
	const struct gb_val *x = a->col >= 0 ? &vals[a->col] : NULL;
	enum gb_type ty = a->col >= 0 ? q->need_type[a->col] : GB_STR;
	uint64_t *n = (uint64_t *)(void *)st;

	if (a->fn == F_COUNT_STAR) {
		(*n)++;
		return;
	}
	if (x->null)
		return;
	switch (a->fn) {
	case F_COUNT:
		(*n)++;
		return;
	case F_SUM:
	case F_AVG:
		if (ty == GB_I64)
			*(__int128 *)(void *)st += x->i;
		else
			*(long double *)(void *)st += x->d;
		((uint64_t *)(void *)st)[2]++;
		return;
	case F_MIN:
	case F_MAX:
		if (!((uint64_t *)(void *)st)[2] ||
		    (ty == GB_I64 ? (a->fn == F_MIN ? x->i < *(int64_t *)(void *)st : x->i > *(int64_t *)(void *)st) :
		     (a->fn == F_MIN ? x->d < *(double *)(void *)st : x->d > *(double *)(void *)st))) {
			if (ty == GB_I64)
				*(int64_t *)(void *)st = x->i;
			else
				*(double *)(void *)st = x->d;
			((uint64_t *)(void *)st)[2] = 1;
		}
		return;
	case F_SD:
		sd_add((struct gb_sd *)(void *)st, num(ty, x));
		return;
	case F_CORR:
		if (!vals[a->col2].null)
			corr_add((struct gb_corr *)(void *)st, num(ty, x),
				 num(q->need_type[a->col2], &vals[a->col2]));
		return;
	case F_TOP:
	case F_BOTTOM:
		top_insert(st, a->n, a->fn == F_TOP, ord_of(ty, x));
		return;
	case F_SMIN:
	case F_SMAX:
		sbest(t, a, st, g, x->s, x->len, true);
		return;
	default:	/* median, distinct */
		if (ty == GB_STR)
			list_add(&t->list[a->list], g, (uint32_t)x->len, copy_bytes(t, x->s, x->len));
		else
			list_add(&t->list[a->list], g, 8, ord_of(ty, x));
		return;
	}
}

void gb_table_row(struct gb_table *t, const uint8_t *k, size_t klen, uint64_t h,
		  const struct gb_val *vals)
{
	const struct gb_query *q = t->q;
	uint32_t g = lookup(t, k, klen, h);
	uint8_t *st = t->states + (size_t)g * q->state_size;
	unsigned i;

	for (i = 0; i < q->naggs; i++)
		agg_update(t, &q->agg[i], st + q->agg[i].off, g, vals);
}

static void sd_merge(struct gb_sd *a, const struct gb_sd *b)
{
	long double n, d;

	if (!b->n)
		return;
	if (!a->n) {
		*a = *b;
		return;
	}
	n = (long double)a->n + b->n;
	d = b->mean - a->mean;
	a->m2 += b->m2 + d * d * a->n * b->n / n;
	a->mean += d * b->n / n;
	a->n += b->n;
}

static void corr_merge(struct gb_corr *a, const struct gb_corr *b)
{
	long double n, dx, dy, f;

	if (!b->n)
		return;
	if (!a->n) {
		*a = *b;
		return;
	}
	n = (long double)a->n + b->n;
	dx = b->mx - a->mx;
	dy = b->my - a->my;
	f = (long double)a->n * b->n / n;
	a->m2x += b->m2x + dx * dx * f;
	a->m2y += b->m2y + dy * dy * f;
	a->cxy += b->cxy + dx * dy * f;
	a->mx += dx * b->n / n;
	a->my += dy * b->n / n;
	a->n += b->n;
}

/* state st := st u o (o: an aligned copy of a received state) */
static void agg_combine(const struct gb_query *q, const struct gb_agg *a, uint8_t *st,
			const uint8_t *o)
{
	enum gb_type ty = a->col >= 0 ? q->need_type[a->col] : GB_STR;
	const uint64_t *on = (const uint64_t *)(const void *)o;
	uint64_t *sn = (uint64_t *)(void *)st;
	uint32_t cnt, i;

	switch (a->fn) {
	case F_COUNT_STAR:
	case F_COUNT:
		sn[0] += on[0];
		return;
	case F_SUM:
	case F_AVG:
		if (ty == GB_I64)
			*(__int128 *)(void *)st += *(const __int128 *)(const void *)o;
		else
			*(long double *)(void *)st += *(const long double *)(const void *)o;
		sn[2] += on[2];
		return;
	case F_MIN:
	case F_MAX:
		if (!on[2])
			return;
		if (!sn[2] || (ty == GB_I64 ?
			       (a->fn == F_MIN ? (int64_t)on[0] < (int64_t)sn[0] : (int64_t)on[0] > (int64_t)sn[0]) :
			       (a->fn == F_MIN ? *(const double *)(const void *)o < *(double *)(void *)st :
				*(const double *)(const void *)o > *(double *)(void *)st))) {
			sn[0] = on[0];
			sn[2] = 1;
		}
		return;
	case F_SD:
		sd_merge((struct gb_sd *)(void *)st, (const struct gb_sd *)(const void *)o);
		return;
	case F_CORR:
		corr_merge((struct gb_corr *)(void *)st, (const struct gb_corr *)(const void *)o);
		return;
	case F_TOP:
	case F_BOTTOM:
		memcpy(&cnt, o, 4);
		for (i = 0; i < cnt; i++)
			top_insert(st, a->n, a->fn == F_TOP, on[2 + i]);
		return;
	default:
		return;	/* lists: merged item by item */
	}
}

static int cmp_num(const void *x, const void *y)
{
	const struct gb_item *a = x, *b = y;

	return (a->data > b->data) - (a->data < b->data);
}

static int cmp_str(const void *x, const void *y)
{
	return item_cmp_bytes(x, y);
}

/* Group list @l by group (stable counting sort) and fill l->start; with
 * @sort each group's items sorted too, with @uniq duplicates dropped. */
static void list_group(struct gb_list *l, uint32_t ngroups, bool sort, bool uniq)
{
	uint64_t *start = pems_calloc((size_t)ngroups + 1, 8), i, g, w;
	struct gb_item *e = pems_malloc((l->n ? l->n : 1) * sizeof(*e));

	for (i = 0; i < l->n; i++)
		start[l->e[i].gid + 1]++;
	for (g = 0; g < ngroups; g++)
		start[g + 1] += start[g];
	for (i = 0; i < l->n; i++)
		e[start[l->e[i].gid]++] = l->e[i];
	for (g = ngroups; g > 0; g--)	/* start[g] ran to the end of group g */
		start[g] = start[g - 1];
	start[0] = 0;
	pems_free(l->e);
	l->e = e;
	l->cap = l->n ? l->n : 1;
	if (sort) {
		for (g = 0; g < ngroups; g++)
			if (start[g + 1] - start[g] > 1)
				qsort(e + start[g], start[g + 1] - start[g], sizeof(*e),
				      l->str ? cmp_str : cmp_num);
	}
	if (uniq) {
		uint64_t s0 = 0;

		for (g = 0, w = 0; g < ngroups; g++) {
			uint64_t b = s0, end = start[g + 1];

			s0 = end;
			start[g] = w;
			for (i = b; i < end; i++)
				if (i == b || (l->str ? cmp_str(&e[i], &e[i - 1]) : cmp_num(&e[i], &e[i - 1])))
					e[w++] = e[i];
		}
		start[ngroups] = w;
		l->n = w;
	}
	pems_free(l->start);
	l->start = start;
}

static void lists_group(struct gb_table *t, bool sort)
{
	const struct gb_query *q = t->q;
	unsigned i;

	for (i = 0; i < q->naggs; i++) {
		const struct gb_agg *a = &q->agg[i];

		if (a->list >= 0)
			list_group(&t->list[a->list], t->ngroups, sort || a->fn == F_DISTINCT,
				   a->fn == F_DISTINCT);
	}
}

static int split_cmp(const uint8_t *k, size_t klen, const uint8_t *s)
{
	size_t sl = s[0], n = klen < sl ? klen : sl;
	int c = memcmp(k, s + 1, n);

	return c ? c : (klen > sl) - (klen < sl);
}

static unsigned owner_of(const uint8_t *k, size_t klen, const uint8_t *split, unsigned nsplit)
{
	unsigned lo = 0, hi = nsplit;	/* count of splitters <= key */

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (split_cmp(k, klen, split + (size_t)mid * GB_SPLIT) >= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t group_wire(const struct gb_table *t, uint32_t g)
{
	const struct gb_query *q = t->q;
	size_t n = 4 + (size_t)(t->koff[g] & 0xffffff) + q->state_size;
	unsigned l;
	uint64_t i;

	for (l = 0; l < q->nlists; l++) {
		const struct gb_list *li = &t->list[l];

		n += 4;
		for (i = li->start[g]; i < li->start[g + 1]; i++)
			n += 4 + li->e[i].len;
	}
	return n;
}

static uint8_t *group_put(const struct gb_table *t, uint32_t g, uint8_t *p)
{
	const struct gb_query *q = t->q;
	uint32_t klen = (uint32_t)(t->koff[g] & 0xffffff), cnt;
	unsigned l;
	uint64_t i;

	memcpy(p, &klen, 4);
	memcpy(p + 4, t->keys + (t->koff[g] >> 24), klen);
	p += 4 + klen;
	memcpy(p, t->states + (size_t)g * q->state_size, q->state_size);
	p += q->state_size;
	for (l = 0; l < q->nlists; l++) {
		const struct gb_list *li = &t->list[l];

		cnt = (uint32_t)(li->start[g + 1] - li->start[g]);
		memcpy(p, &cnt, 4);
		p += 4;
		for (i = li->start[g]; i < li->start[g + 1]; i++) {
			memcpy(p, &li->e[i].len, 4);
			memcpy(p + 4, gb_item_bytes(&li->e[i]), li->e[i].len);
			p += 4 + li->e[i].len;
		}
	}
	return p;
}

uint8_t *gb_table_send(struct gb_table *t, const uint8_t *split, unsigned nsplit,
		       size_t *counts, unsigned v)
{
	uint32_t *own = pems_malloc(((size_t)t->ngroups + 1) * 4), g;
	size_t *pos = pems_malloc((size_t)v * sizeof(*pos)), total = 0;
	uint8_t *buf;
	unsigned o;

	lists_group(t, false);
	memset(counts, 0, (size_t)v * sizeof(*counts));
	for (g = 0; g < t->ngroups; g++) {
		size_t klen;
		const uint8_t *k = gb_group_key(t, g, &klen);

		own[g] = owner_of(k, klen, split, nsplit);
		counts[own[g]] += group_wire(t, g);
	}
	for (o = 0; o < v; o++) {
		pos[o] = total;
		total += counts[o];
	}
	buf = pems_malloc(total + 1);
	for (g = 0; g < t->ngroups; g++)
		pos[own[g]] = (size_t)(group_put(t, g, buf + pos[own[g]]) - buf);
	pems_free(pos);
	pems_free(own);
	gb_table_free(t);
	return buf;
}

void gb_wire_count(const struct gb_query *q, const uint8_t *buf, size_t bytes,
		   size_t *groups, size_t *key_bytes, size_t *items)
{
	const uint8_t *p = buf, *end = buf + bytes;
	unsigned l;

	*groups = *key_bytes = 0;
	memset(items, 0, q->nlists * sizeof(*items));
	while (p < end) {
		uint32_t klen, cnt, len, j;

		memcpy(&klen, p, 4);
		p += 4 + klen + q->state_size;
		(*groups)++;
		*key_bytes += klen;
		for (l = 0; l < q->nlists; l++) {
			memcpy(&cnt, p, 4);
			p += 4;
			items[l] += cnt;
			for (j = 0; j < cnt; j++) {
				memcpy(&len, p, 4);
				p += 4 + len;
			}
		}
	}
}

void gb_table_absorb(struct gb_table *t, const uint8_t *buf, size_t bytes)
{
	const struct gb_query *q = t->q;
	_Alignas(16) uint8_t st[GB_MAX_AGGS * 160];
	const uint8_t *p = buf, *end = buf + bytes;
	unsigned i;

	while (p < end) {
		uint32_t klen, g, cnt, len, j;
		uint8_t *mine;

		memcpy(&klen, p, 4);
		g = lookup(t, p + 4, klen, gb_hash(p + 4, klen));
		p += 4 + klen;
		memcpy(st, p, q->state_size);
		p += q->state_size;
		mine = t->states + (size_t)g * q->state_size;
		for (i = 0; i < q->naggs; i++) {
			const struct gb_agg *a = &q->agg[i];

			if (a->list < 0) {
				agg_combine(q, a, mine + a->off, st + a->off);
				continue;
			}
		}
		for (i = 0; i < q->naggs; i++) {	/* lists come in list order = agg order */
			const struct gb_agg *a = &q->agg[i];

			if (a->list < 0)
				continue;
			memcpy(&cnt, p, 4);
			p += 4;
			for (j = 0; j < cnt; j++) {
				uint64_t d = 0;

				memcpy(&len, p, 4);
				if (a->fn == F_SMIN || a->fn == F_SMAX) {
					sbest(t, a, mine + a->off, g, (const char *)p + 4, len, false);
				} else {
					if (len <= 8)
						memcpy(&d, p + 4, len);
					else
						d = (uint64_t)(uintptr_t)(p + 4);
					list_add(&t->list[a->list], g, len, d);
				}
				p += 4 + len;
			}
		}
	}
}

static int cmp_group(const void *x, const void *y, void *arg)
{
	const struct gb_table *t = arg;
	size_t la, lb;
	const uint8_t *a = gb_group_key(t, *(const uint32_t *)x, &la);
	const uint8_t *b = gb_group_key(t, *(const uint32_t *)y, &lb);
	int c = memcmp(a, b, la < lb ? la : lb);

	return c ? c : (la > lb) - (la < lb);
}

void gb_table_finish(struct gb_table *t)
{
	uint32_t g;

	t->order = pems_malloc(((size_t)t->ngroups + 1) * 4);
	for (g = 0; g < t->ngroups; g++)
		t->order[g] = g;
	qsort_r(t->order, t->ngroups, 4, cmp_group, t);
	lists_group(t, true);
}

void gb_table_touch(struct gb_table *t, const uint8_t *k, size_t klen)
{
	lookup(t, k, klen, gb_hash(k, klen));
}
