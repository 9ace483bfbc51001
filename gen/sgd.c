/*
 * sgd.c - sgd training rows from known true weights (pems_gen_sgd_file):
 * dense (a 16-byte header "PEMSDENS", u32 dim, u32 0, then rows of
 * 1 + dim little-endian float32: label, features) or libsvm text, and the
 * weights in sgd's model-file format.  Row i is a pure function of the
 * row seed and i; the weights of the seed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen_internal.h"

#define GS_ROWS 8192		/* dense rows per block */

struct gs {
	bool libsvm, logistic;
	uint64_t count, seed, row_seed;
	uint32_t dim;
	double noise, q;	/* q: the share of features a row keeps */
	double *w;		/* dim + 1, bias last */
	int fd;			/* libsvm: the file */
};

/* splitmix64 */
static uint64_t mix(uint64_t x)
{
	return gen_mix64(x + 0x9e3779b97f4a7c15ull);
}

struct rng { uint64_t s; };

static double unif(struct rng *r)	/* (0, 1) */
{
	r->s = mix(r->s);
	return ((r->s >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(struct rng *r)
{
	double u1 = unif(r), u2 = unif(r);

	return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

static void make_weights(struct gs *g)
{
	struct rng r = { mix(g->seed ^ 0x5eed5eed5eedull) };
	double scale = (g->logistic ? 2.0 : 1.0) / sqrt(g->q * g->dim);
	uint32_t j;

	for (j = 0; j < g->dim; j++)
		g->w[j] = normal(&r) * scale;
	g->w[g->dim] = 0.25 * normal(&r);
}

/*
 * Row @i: its label, and its features into x.  Dense rows (q = 1) fill
 * x[0..dim).  Sparse rows (q < 1) keep each feature with probability q;
 * the gaps between kept features are drawn as geometric skips, so a row
 * costs O(nnz) rather than O(dim), and the kept ones go to idx[0..*k) and
 * x[0..*k) in ascending index order.
 */
static double make_row(const struct gs *g, uint64_t i, uint32_t *idx, double *x,
		       uint32_t *k)
{
	struct rng r = { mix(g->row_seed * 0x100000001b3ull + i) };
	double z = g->w[g->dim], u, lq = g->q < 1 ? log1p(-g->q) : 0;
	uint64_t j = 0;

	*k = 0;
	while (j < g->dim) {
		if (g->q < 1) {
			j += (uint64_t)floor(log(unif(&r)) / lq);
			if (j >= g->dim)
				break;
			idx[*k] = (uint32_t)j;
		}
		x[*k] = normal(&r);
		z += g->w[j] * x[*k];
		++*k;
		j++;
	}
	if (!g->logistic)
		return z + g->noise * normal(&r);
	u = unif(&r);
	return z + g->noise * log(u / (1 - u)) > 0 ? 1 : -1;
}

static int dense_rows(const void *arg, uint64_t first, size_t n, uint8_t *out)
{
	const struct gs *g = arg;
	size_t rowf = (size_t)g->dim + 1, i;
	double *x = malloc(rowf * sizeof(double));
	float *buf = (float *)(void *)out;
	uint32_t j, k;

	if (!x)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		float *row = buf + i * rowf;

		row[0] = (float)make_row(g, first + i, NULL, x, &k);
		for (j = 0; j < g->dim; j++)
			row[1 + j] = (float)x[j];
	}
	free(x);
	return 0;
}

static int write_dense(struct gs *g, const char *out)
{
	uint8_t hdr[PEMS_SGD_DENSE_HEADER] = { 0 };
	struct gen_file f = { .count = g->count, .item = ((size_t)g->dim + 1) * sizeof(float),
			      .per_block = GS_ROWS, .head = hdr, .off0 = sizeof(hdr),
			      .fill = dense_rows, .g = g };

	memcpy(hdr, PEMS_SGD_DENSE_MAGIC, 8);
	memcpy(hdr + 8, &g->dim, 4);
	return gen_write(&f, out);
}

static int write_libsvm(struct gs *g)
{
	FILE *f = fdopen(dup(g->fd), "w");
	double *x = malloc(((size_t)g->dim + 1) * sizeof(double));
	uint32_t *idx = malloc(((size_t)g->dim + 1) * sizeof(uint32_t));
	uint64_t i;
	uint32_t j, k;
	int rc = 0;

	if (!f || !x || !idx) {
		if (f)
			fclose(f);
		free(x);
		free(idx);
		return -ENOMEM;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	for (i = 0; i < g->count; i++) {
		double y = make_row(g, i, idx, x, &k);

		if (g->logistic)
			fputs(y > 0 ? "+1" : "-1", f);
		else
			fprintf(f, "%.7g", y);
		for (j = 0; j < k; j++)
			fprintf(f, " %u:%.6g", (g->q < 1 ? idx[j] : j) + 1, x[j]);
		fputc('\n', f);
	}
	if (fflush(f) || ferror(f))
		rc = errno ? -errno : -EIO;
	if (fclose(f) && !rc)
		rc = -errno;
	free(x);
	free(idx);
	return rc;
}

/* libsvm text is written in order by one thread (rows differ in length) */
static int libsvm_body(int fd, void *arg)
{
	struct gs *g = arg;

	g->fd = fd;
	return write_libsvm(g);
}

/* the true weights as sgd's model file (logistic: scaled by 1/noise, the
 * weights a noise-free fit finds) */
static int weights_file(const struct gs *g, const char *out)
{
	char path[4200], tmp[4300];
	double *w = malloc(((size_t)g->dim + 1) * sizeof(double));
	double s = g->logistic && g->noise > 0 ? 1 / g->noise : 1;
	uint32_t j;
	int rc;

	if (!w)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s.weights", out);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	for (j = 0; j <= g->dim; j++)
		w[j] = g->w[j] * s;
	rc = pems_sgd_model_write(tmp, g->logistic ? PEMS_SGD_LOGISTIC : PEMS_SGD_LINEAR, g->dim, w);
	free(w);
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

int pems_gen_sgd_file(const struct pems_gen_sgd *a, const char *out)
{
	struct gs g = { .libsvm = a->libsvm, .logistic = a->logistic, .count = a->count,
			.seed = a->seed, .row_seed = a->row_seed, .dim = a->dim, .noise = a->noise };
	uint64_t nnz = a->nnz ? a->nnz : (a->dim < 16 ? a->dim : 16);
	int rc;

	if (!a->dim)
		return -EINVAL;
	g.q = g.libsvm ? fmin(1.0, (double)nnz / g.dim) : 1.0;
	g.w = malloc(((size_t)g.dim + 1) * sizeof(double));
	if (!g.w)
		return -ENOMEM;
	make_weights(&g);
	rc = g.libsvm ? gen_to_file(out, libsvm_body, &g) : write_dense(&g, out);
	if (!rc)
		rc = weights_file(&g, out);
	free(g.w);
	return rc;
}
