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

#endif
