/*
 * agg_internal.h - pieces shared by groupby.c and aggregate.c (not
 * installed).
 */
#ifndef PEMS_AGG_INTERNAL_H
#define PEMS_AGG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pems_algorithms.h"

/* a kv row ({u64 key, i64 value}, the 16-byte input record) or a sort
 * index entry ({key, position}) */
struct agg_pair {
	uint64_t key;
	uint64_t val;
};

/* pems_groupby_fed: pems_groupby over rows that are still arriving (the
 * load reads its slice in pieces while the pre-aggregation runs).
 * Before touching row i >= the count it was last told, the core loop
 * calls ready(arg, i), which blocks until more rows are in and returns
 * how many are (> i; n when all are).  Rows up to that count must then
 * stay where they are.  ready = NULL: all n rows are there. */
typedef size_t (*agg_ready_fn)(void *arg, size_t i);

struct pems_groupby;
struct pems_groupby_plan;
struct pems_aggregate;
struct pems_groupby *pems_groupby_fed(const struct pems_groupby_plan *plan, void *rows,
				      size_t n, const struct pems_aggregate *const *aggs,
				      unsigned naggs, size_t table_bytes, uint64_t *ngroups,
				      agg_ready_fn ready, void *arg);

/* The groupby's part of pems_aggregate_shape (all but sample_pages and
 * info, which are aggregate.c's). */
struct pems_aggregate_shape;
void pems_groupby_shape(struct pems_aggregate_shape *s);

/* How the output reads an aggregate's state: the built-ins directly. */
enum agg_kind { AK_USER, AK_COUNT, AK_SUM, AK_MINMAX, AK_AVG };

/* The output of one job (agg_output.c). */
struct agg_out {
	bool kv;		/* kv records, else csv lines */
	unsigned naggs;
	const struct pems_aggregate *const *aggs;
	enum agg_kind kind[PEMS_AGG_MAX];
};

/* Format one group into @line (NULL: only count its bytes); returns its
 * bytes, or -1 (and *bad = the aggregate) when a result overflows. */
long agg_format_group(const struct agg_out *f, uint64_t key, const uint8_t *states,
		      char *line, unsigned *bad);
/* The csv header line "key,<names>\n" into @hdr (@cap bytes, cut to
 * fit); returns its length, 0 for kv output. */
size_t agg_format_header(const struct agg_out *f, char *hdr, size_t cap);

#endif
