/*
 * tsort.h - internals of the text-record sort (textsort.c: sampling and
 * partition; textsort_out.c: local sort, output and the driver).
 */
#ifndef PEMS_TSORT_H
#define PEMS_TSORT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pems_algorithms.h"

/* A sort item: the record's key prefix and its index (samples: VP *
 * SAMPLES + sample; buckets: position in the bucket). */
struct ts_item {
	uint64_t pre;
	uint32_t idx;
	uint32_t aux;
};

/* Order of two items with equal prefixes (never 0 for distinct items). */
typedef int (*ts_tie_fn)(const struct ts_item *a, const struct ts_item *b, void *arg);

/* Merge sort of @n items by (pre, tie); @tmp is scratch of n items. */
void ts_msort(struct ts_item *a, struct ts_item *tmp, size_t n, ts_tie_fn tie, void *arg);

struct ts_state {
	const struct pems_textsort_job *job;
	const struct pems_textspec *ts;
	uint64_t n;		/* input bytes */
	uint64_t out_size;	/* output bytes (before -u) */
	int in, out;		/* pems_file handles */
	unsigned v;
	unsigned ncols;		/* CSV: fields of the header row, 0: not checked */
	size_t max_rec;		/* longest record the budget allows */
	size_t avg_rec;		/* bytes per record (estimate, for the plan) */
	atomic_uint_fast64_t done[2];	/* bytes partitioned, written */
	atomic_uint_fast64_t written;	/* -u: bytes of output */
	uint64_t unique_total;	/* -u: output bytes, set by VP 0 */
};

extern struct ts_state S_ts;

/* bsp_abort with "pems: error: sort: <what>: <strerror(-rc)>". */
void ts_fail(const char *what, long long rc) __attribute__((noreturn));
/* bsp_abort with "pems: error: sort: IN: line N: <why>", N the line of
 * input byte @off. */
void ts_bad(uint64_t off, const char *why) __attribute__((noreturn));

/* Bytes of the splitter broadcast for @v VPs. */
size_t ts_spl_bytes(unsigned v);
size_t ts_sample_msg_bytes(void);
/* The SPMD section of the sort (textsort.c). */
void ts_spmd(void *arg);
/* Superstep 3 (textsort_out.c): sort the bucket @recv (@bytes, records
 * with terminators, @n of them), write it at output offset @off; with -u return the
 * bytes kept and leave the write to ts_write_unique.  VP 0 also writes
 * @hdr at offset 0. */
/* -u within a slice: @drop[i] = 1 for each of the @n records of @p
 * (record i is p[starts[i] .. starts[i+1]) with its terminator) that
 * an earlier one equals (textsort_out.c). */
void ts_unique_marks(const uint8_t *p, const uint64_t *starts, size_t n, uint8_t *drop);
struct ts_bucket;
struct ts_bucket *ts_sort_bucket(uint8_t *recv, size_t bytes, uint64_t n);
void ts_write_bucket(struct ts_bucket *b, uint64_t off);
uint64_t ts_bucket_bytes(const struct ts_bucket *b);
void ts_bucket_free(struct ts_bucket *b);

#endif
