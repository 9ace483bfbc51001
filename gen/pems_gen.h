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

/* ---- text for the text sort ---- */

struct pems_gen_text {
	bool csv;		/* a CSV table with quoted fields, else plain lines */
	uint64_t size;		/* bytes; the last line ends at or just past it */
	uint64_t seed;
};

/* Written line by line (@out "-": to stdout); *@lines: how many. */
int pems_gen_text_file(const struct pems_gen_text *g, const char *out, uint64_t *lines,
		       pems_gen_progress *progress, void *arg);

/* ---- the db-benchmark groupby task's G1 table (CSV) ---- */

struct pems_gen_groupby {
	uint64_t rows;
	uint64_t k;		/* groups of id1, id2, id4, id5: 1..10^6 */
	double na;		/* percent of the fields left empty (NULL) */
	bool sorted;		/* rows by id1..id6, NULL first (k <= 4096) */
	uint64_t seed;
};

/* @out "-": to stdout; *@bytes: the bytes written.  -EINVAL for a k, na
 * or sorted k out of range. */
int pems_gen_groupby_file(const struct pems_gen_groupby *g, const char *out, uint64_t *bytes,
			  pems_gen_progress *progress, void *arg);

#endif
