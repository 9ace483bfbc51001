/*
 * sgd_internal.h - what the files of the sgd algorithm share (not
 * installed): sgd.c (design, models, the SPMD program), sgd_stream.c
 * (rows read from a shard of the data), sgd_job.c (files, plan, run),
 * sgd_model.c (the model file).
 */
#ifndef PEMS_SGD_INTERNAL_H
#define PEMS_SGD_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pems_algorithms.h"

#define PAGE 4096u
#define BLOCK ((size_t)4 << 20)		/* read block */
#define MAX_LINE ((size_t)8 << 20)	/* longest LIBSVM line */
#define FXG 1048576.0			/* 2^20: gradients, models */
#define FXL 256.0			/* 2^8: losses */
#define LIM_G 67108864.0		/* 2^26 = 2^62 / FXG / MAX_SHARDS */
#define LIM_L 274877906944.0		/* 2^38 */

/* all-reduce slots after the d+1 model/gradient slots */
enum { X_LOSS, X_ROWS, X_ACTIVE, X_MORE, X_BAD, X_ERR, X_CORRECT, X_NSLOTS };

struct shard {
	uint64_t lo, hi;	/* rows (dense) or bytes (libsvm) */
	uint64_t pos;		/* next row / line start */
	uint64_t tlo, thi;	/* test range */
	double avg_line;	/* libsvm: bytes per line seen so far */
};

/* one data file as the VPs see it */
struct dfile {
	const char *path;
	int fd;
	uint64_t size;		/* bytes */
	uint64_t off0;		/* dense: header bytes */
	uint64_t rows;		/* dense */
};

/* The job's state: set up by the host side, read by every VP; the
 * error and result fields written under err_mu or by VP 0 (sgd.c). */
struct sgd_state {
	struct pems_sgd_job *job;
	uint32_t d;
	size_t rowb;		/* dense row bytes */
	unsigned S, v;
	struct dfile tr, te;
	bool have_test;
	FILE *csv;
	double *w_final;	/* d+1, filled by VP 0 */
	atomic_uint_fast64_t done;	/* training bytes consumed (this rank) */
	uint64_t total;
	pthread_mutex_t err_mu;
	bool err_set;
	bool err_test;
	uint64_t err_off;	/* byte offset of the bad row/line */
	uint64_t err_row;	/* dense: row index */
	char err_msg[256];
	/* set by every VP of a rank at once, with the same all-reduced
	 * values: atomic, so that this is not a data race */
	atomic_bool diverged;
	atomic_bool any_err;	/* some VP (any rank) hit a data error */
	_Atomic uint64_t div_superstep;
	atomic_uint div_epoch;
	double train_loss, test_loss, test_acc;
	unsigned epochs_done;
};

extern struct sgd_state sgd_g;

/* ---- rows of one shard (sgd_stream.c) ---- */

struct row {
	double y;
	const float *x;		/* dense: d features */
	const uint32_t *idx;	/* sparse: 0-based */
	const double *val;
	size_t nnz;
};

struct stream {
	const struct dfile *f;
	bool test;
	uint64_t pos, end;	/* next byte (libsvm) / row (dense); end */
	uint8_t *raw;		/* allocation */
	uint8_t *buf;		/* page-aligned; holds file[boff, boff+have) */
	size_t cap, have, cur;
	uint64_t boff;
	uint32_t *idx;		/* sparse row arrays (cap d) */
	double *val;
	uint64_t want;		/* libsvm: rows this superstep will need */
	uint64_t budget;	/* rows still to be consumed this superstep */
	double *avg_line;
	uint64_t lines, lbytes;
};

/* Record a data error found by one VP; the first by (file, offset) wins. */
void sgd_data_error(bool test, uint64_t off, uint64_t row, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Stream rows [pos, end) (dense: rows; libsvm: bytes) of @f through the
 * page-aligned scratch @raw of @cap bytes, at most @budget rows. */
void sgd_stream_open(struct stream *s, const struct dfile *f, bool test,
		     uint64_t pos, uint64_t end, uint8_t *raw, size_t cap,
		     uint32_t *idx, double *val, double *avg_line, uint64_t budget);
/* The next row: 1, 0 at the end (or budget spent), -1 on a data error. */
int sgd_next_row(struct stream *s, struct row *r);
void sgd_stream_close(struct stream *s);
/* Shard @j's byte range [*lo, *hi) of LIBSVM file @f (line starts),
 * found with the scratch @raw; read errors counted in *errs. */
void sgd_shard_ranges(const struct dfile *f, unsigned j, uint64_t *lo,
		      uint64_t *hi, uint8_t *raw, int64_t *errs);

/* ---- the SPMD program (sgd.c) ---- */

void sgd_spmd(void *arg);

#endif
