/*
 * pems_gen.h - deterministic test data for the bundled algorithms
 * (layer gen/): sort records, GROUP BY kv rows, sgd training rows.  Item
 * i of a file is a pure function of the arguments and i, so the same
 * arguments give the same bytes, and blocks are made by a few threads in
 * any order.  A file is written as <out>.tmp.<pid> and renamed at the
 * end: a failure leaves nothing under <out>.  Uses only the public
 * headers and the algorithms' formats; functions return 0 or -errno.
 */
#ifndef PEMS_GEN_H
#define PEMS_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pems_algorithms.h"

/* Called from one thread as the file grows (the algorithms' shape). */
typedef void pems_gen_progress(const char *phase, uint64_t done, uint64_t total, void *arg);

/* ---- sort records (any format with an encoder) ---- */

enum pems_gen_skew {
	PEMS_GEN_UNIFORM, PEMS_GEN_ZIPF, PEMS_GEN_DUP, PEMS_GEN_SORTED,
	PEMS_GEN_REVERSE, PEMS_GEN_EQUAL,
};

struct pems_gen_records {
	enum pems_format fmt;
	enum pems_gen_skew skew;	/* zipf: Zipf(1.1) ranks; dup: 16 keys */
	uint64_t seed;
	uint64_t count;			/* records */
};

/* "uniform", "zipf", "dup", "sorted", "reverse", "equal"; -EINVAL else. */
int pems_gen_skew_parse(const char *name, enum pems_gen_skew *out);
/* Records first .. first+n-1 of @g into @buf (n * record size bytes). */
void pems_gen_records(const struct pems_gen_records *g, uint64_t first, size_t n, uint8_t *buf);
int pems_gen_records_file(const struct pems_gen_records *g, const char *out,
			  pems_gen_progress *progress, void *arg);

/* ---- kv rows: 16-byte little-endian {u64 key, i64 value} ---- */

struct pems_gen_kv {
	uint64_t count;		/* rows */
	uint64_t groups;	/* distinct keys; 0: every key distinct */
	double zipf;		/* Zipf exponent over the groups; 0: uniform */
	uint64_t seed;
};

/* -EINVAL for zipf without groups or an exponent outside (0, 100]. */
int pems_gen_kv_file(const struct pems_gen_kv *g, const char *out, pems_gen_progress *progress,
		     void *arg);

/* ---- sgd rows from known true weights ---- */

struct pems_gen_sgd {
	bool libsvm;		/* text 'label idx:val ...', else dense float32 rows */
	bool logistic;		/* labels +1/-1, else linear with noise */
	uint64_t count;		/* rows */
	uint32_t dim;		/* features per row */
	double noise;		/* noise scale */
	uint64_t seed;		/* of the true weights */
	uint64_t row_seed;	/* of the rows */
	uint64_t nnz;		/* libsvm: expected nonzero features per row */
};

/* The rows into @out and the true weights into <out>.weights (sgd's
 * model-file format). */
int pems_gen_sgd_file(const struct pems_gen_sgd *g, const char *out);

#endif
