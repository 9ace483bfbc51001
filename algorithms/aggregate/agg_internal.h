/*
 * agg_internal.h - pieces shared by groupby.c and aggregate.c (not
 * installed).
 */
#ifndef PEMS_AGG_INTERNAL_H
#define PEMS_AGG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* a kv row ({u64 key, i64 value}, the 16-byte input record) or a sort
 * index entry ({key, position}) */
struct agg_pair {
	uint64_t key;
	uint64_t val;
};

/* Stable LSD radix sort of @n pairs by key; @tmp is scratch of n pairs.
 * Uses a small pems_calloc for counters.  Cannot fail (aborts past mu). */
void agg_sort_pairs(struct agg_pair *a, struct agg_pair *tmp, size_t n);

#endif
