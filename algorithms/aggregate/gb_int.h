/*
 * gb_int.h - what the parts of the GROUP BY core share (not installed):
 * groupby.c (design, the owner's side, the walk), gb_send.c (the plan,
 * pre-aggregation and the scatter to the owners), builtin.c (the
 * built-in aggregates).  The invariants are groupby.c's.
 */
#ifndef PEMS_GB_INT_H
#define PEMS_GB_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

static inline uint64_t hash64(uint64_t x)
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

static inline void st_init(const struct spec *sp, uint8_t *st)
{
	unsigned i;

	for (i = 0; i < sp->naggs; i++)
		sp->aggs[i]->init(st + sp->off[i]);
}

static inline void st_update(const struct spec *sp, uint8_t *st, int64_t v)
{
	unsigned i;

	for (i = 0; i < sp->naggs; i++)
		sp->aggs[i]->update(st + sp->off[i], v);
}

static inline void st_combine(const struct spec *sp, uint8_t *st, const uint8_t *o)
{
	unsigned i;

	for (i = 0; i < sp->naggs; i++)
		sp->aggs[i]->combine(st + sp->off[i], o + sp->off[i]);
}

/* The built-in @a is (enum kind: builtins[] is in that order), else K_USER
 * (builtin.c). */
enum kind gb_builtin_kind(const struct pems_aggregate *a);

/* ---- the plan and the exchange (gb_send.c) ---- */

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

struct chunk_hdr {
	uint64_t nraw, npart;
};

/* ---- the core table: a cache-sized table of struct core; count 0 = empty ---- */

struct ctable {
	size_t mask, count, limit;
	struct core *s;
};

static inline void ctable_init(struct ctable *t, size_t slots)
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

/* gb 0 of pems_groupby: pre-aggregate @rows (ready: as they arrive),
 * scatter raw rows and partials by owner, post them (pems_exchange);
 * the rows are freed.  *recv / *recvbytes: what arrives after the sync. */
void gb_partition(const struct pems_groupby_plan *pl, const struct spec *sp,
		  struct agg_pair *rows, size_t n, size_t table_bytes,
		  void **recv, size_t *recvbytes, agg_ready_fn ready, void *arg);

#endif
