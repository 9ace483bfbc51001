/*
 * sgd.c - data-parallel SGD (linear / logistic regression) over training
 * data larger than memory, on the BSP API.
 *
 * Design
 *  (1) The data is cut into S logical shards (--shards, default 16),
 *      independent of v, p and k: dense shard j owns rows
 *      [j*n/S, (j+1)*n/S); LIBSVM shard j owns the lines whose first
 *      byte lies in [j*F/S, (j+1)*F/S) of the F-byte file (a line starts
 *      at offset 0 or after a '\n'; a shard therefore starts at the first
 *      line start >= j*F/S).  VP i hosts shards [i*S/v, (i+1)*S/v).
 *  (2) Rows are visited in file order inside each shard (no shuffling:
 *      shuffle the file beforehand if it is sorted).  A mini-batch is the
 *      next --batch rows of a shard.
 *  (3) --sync bsp: one superstep per step.  Every shard computes the
 *      gradient sum of its next batch at the common model w; the sums are
 *      all-reduced and every VP applies the same update
 *      w -= lr * (G/n + l2*w).  The global batch is thus S*batch rows.
 *      --sync local: one superstep per H local steps.  Every shard starts
 *      from w, takes up to H steps on its own batches, and the models of
 *      the shards that took a step are averaged (all-reduce).
 *  (4) Everything that crosses shards is summed in 64-bit fixed point
 *      (gradients/models: 2^-20, losses: 2^-8), so the sums do not depend
 *      on the order of combination: for a given seed and S the model and
 *      the loss log are bit-identical for every v, p and k (and backend).
 *      A value that does not fit (|x| > 2^26 per shard) or is not finite
 *      counts as divergence.
 *  (5) I/O: a VP streams its rows with pems_file_read in blocks of up to
 *      4 MiB into a buffer allocated at the top of its heap and freed
 *      before the sync, so the context written back at each barrier is a
 *      few pages (the model, shard positions); an epoch costs one
 *      sequential read of the data.  LIBSVM reads that end inside a line
 *      re-read that line's bytes in the next block (small overlap).
 *  (6) Every decision that ends a loop is taken from all-reduced values,
 *      so all VPs call the same collectives: epoch end (no shard has rows
 *      left), data errors (counted, the first one by offset is reported)
 *      and divergence.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pems_algorithms.h"
#include "formats/pems_formats.h"

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

static struct {
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
} G = { .err_mu = PTHREAD_MUTEX_INITIALIZER };

/* ---- errors found by one VP: the first by (file, offset) wins ---- */

static void data_error(bool test, uint64_t off, uint64_t row, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void data_error(bool test, uint64_t off, uint64_t row, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&G.err_mu);
	if (!G.err_set || (test < G.err_test) ||
	    (test == G.err_test && off < G.err_off)) {
		G.err_set = true;
		G.err_test = test;
		G.err_off = off;
		G.err_row = row;
		va_start(ap, fmt);
		vsnprintf(G.err_msg, sizeof(G.err_msg), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&G.err_mu);
}

static int64_t fx(double x, double scale, double lim, int64_t *bad)
{
	if (!isfinite(x) || fabs(x) > lim) {
		(*bad)++;
		return 0;
	}
	return (int64_t)llrint(x * scale);
}

/* ---- row streams over one shard ---- */

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

static void stream_open(struct stream *s, const struct dfile *f, bool test,
			uint64_t pos, uint64_t end, uint8_t *raw, size_t cap,
			uint32_t *idx, double *val, double *avg_line, uint64_t budget)
{
	memset(s, 0, sizeof(*s));
	s->budget = budget;
	s->f = f;
	s->test = test;
	s->pos = pos;
	s->end = end;
	s->raw = raw;
	s->buf = (uint8_t *)(((uintptr_t)raw + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
	s->cap = cap;
	s->idx = idx;
	s->val = val;
	s->avg_line = avg_line;
}

/* read file bytes [off, off+len) so that buf+head holds them; the read
 * starts at the page below off so that its interior goes O_DIRECT */
static int fill(struct stream *s, uint64_t off, size_t len)
{
	uint64_t a0 = off & ~(uint64_t)(PAGE - 1);
	size_t head = (size_t)(off - a0);
	long long rc;

	rc = pems_file_read(s->f->fd, s->buf, head + len, a0);
	if (rc != (long long)(head + len)) {
		data_error(s->test, off, UINT64_MAX, "cannot read %s at byte %llu: %s",
			   s->f->path, (unsigned long long)off,
			   rc < 0 ? strerror((int)-rc) : "short read (file changed?)");
		return -1;
	}
	s->boff = a0;
	s->have = head + len;
	s->cur = head;
	return 0;
}

/* dense: the next row, reading at most @rows_left rows ahead */
static int next_dense(struct stream *s, struct row *r, uint64_t rows_left)
{
	uint32_t d = G.d, j;
	const float *p;
	uint64_t row;

	if (s->pos >= s->end || !rows_left)
		return 0;
	if (s->cur + G.rowb > s->have) {
		uint64_t n = (s->cap - PAGE) / G.rowb;

		if (n > rows_left)
			n = rows_left;
		if (n > s->end - s->pos)
			n = s->end - s->pos;
		if (fill(s, s->f->off0 + s->pos * G.rowb, n * G.rowb))
			return -1;
	}
	row = s->pos;
	p = (const float *)(const void *)(s->buf + s->cur);
	s->cur += G.rowb;
	s->pos++;
	r->y = p[0];
	r->x = p + 1;
	if (!isfinite(p[0])) {
		data_error(s->test, s->f->off0 + row * G.rowb, row,
			   "%s: row %llu: the label is %s", s->f->path,
			   (unsigned long long)row, isnan(p[0]) ? "NaN" : "infinite");
		return -1;
	}
	for (j = 0; j < d; j++)
		if (!isfinite(p[1 + j])) {
			data_error(s->test, s->f->off0 + row * G.rowb, row,
				   "%s: row %llu: feature %u is %s", s->f->path,
				   (unsigned long long)row, j + 1,
				   isnan(p[1 + j]) ? "NaN" : "infinite");
			return -1;
		}
	return 1;
}

/* parse one LIBSVM line [p, e) starting at file byte @off */
static int parse_line(struct stream *s, const char *p, const char *e,
		      uint64_t off, struct row *r)
{
	struct pems_libsvm_row lr = { .idx = s->idx, .val = s->val };
	char err[sizeof(G.err_msg)];
	int rc = pems_libsvm_parse(p, e, G.d, &lr, err, sizeof(err));

	r->x = NULL;
	r->idx = s->idx;
	r->val = s->val;
	r->nnz = rc > 0 ? lr.nnz : 0;
	r->y = lr.y;
	if (rc < 0)
		data_error(s->test, off, UINT64_MAX, "%s", err);
	return rc;
}

/* libsvm: the next non-blank line */
static int next_libsvm(struct stream *s, struct row *r)
{
	for (;;) {
		const char *p, *nl;
		uint64_t off;
		size_t avail;
		int rc;

		if (s->pos >= s->end)
			return 0;
		avail = s->have - s->cur;
		p = (const char *)s->buf + s->cur;
		nl = s->have > s->cur ? memchr(p, '\n', avail) : NULL;
		if (!nl && !(s->have > s->cur && s->boff + s->have == s->end)) {
			/* refill from this line's start */
			uint64_t want = s->want ? s->want : 1;
			double est = *s->avg_line > 0 ? *s->avg_line : 256;
			size_t len = (size_t)fmin((double)(s->cap - PAGE),
						  want * est * 1.05 + 4096);

			if (s->have > s->cur && avail >= len) {
				len = avail * 2;	/* a line longer than the guess */
				if (len > s->cap - PAGE) {
					data_error(s->test, s->pos, UINT64_MAX,
						   "line longer than %zu MiB", MAX_LINE >> 20);
					return -1;
				}
			}
			if (len > s->end - s->pos)
				len = (size_t)(s->end - s->pos);
			if (fill(s, s->pos, len))
				return -1;
			continue;
		}
		off = s->pos;
		if (!nl)
			nl = (const char *)s->buf + s->have;	/* last line of the file */
		rc = parse_line(s, p, nl, off, r);
		s->cur = (size_t)((const uint8_t *)nl - s->buf) + 1;
		if (s->cur > s->have)
			s->cur = s->have;
		s->pos = s->boff + s->cur;
		atomic_fetch_add(&G.done, s->test ? 0 : s->pos - off);
		s->lines++;
		s->lbytes += s->pos - off;
		if (rc)
			return rc;
	}
}

/* the next row of the stream; reads ahead at most s->budget rows */
static int next_row(struct stream *s, struct row *r)
{
	int rc;

	if (!s->budget)
		return 0;
	if (G.job->format == PEMS_SGD_DENSE) {
		rc = next_dense(s, r, s->budget);
		if (rc > 0 && !s->test)
			atomic_fetch_add(&G.done, G.rowb);
	} else {
		s->want = s->budget;
		rc = next_libsvm(s, r);
	}
	if (rc > 0)
		s->budget--;
	return rc;
}

static void stream_close(struct stream *s)
{
	if (s->lines && s->avg_line) {
		double a = (double)s->lbytes / s->lines;

		*s->avg_line = *s->avg_line > 0 ? 0.5 * (*s->avg_line + a) : a;
	}
}

/* ---- the models ---- */

static double predict(const double *w, const struct row *r)
{
	uint32_t d = G.d, j;
	double z = w[d];
	size_t i;

	if (r->x)
		for (j = 0; j < d; j++)
			z += w[j] * r->x[j];
	else
		for (i = 0; i < r->nnz; i++)
			z += w[r->idx[i]] * r->val[i];
	return z;
}

/* loss of one row at score z; *resid = dloss/dz */
static double row_loss(double z, double y, double *resid, bool *correct)
{
	if (G.job->model == PEMS_SGD_LINEAR) {
		*resid = z - y;
		*correct = false;
		return (z - y) * (z - y);
	} else {
		double t = y > 0 ? 1.0 : 0.0;
		double p = z >= 0 ? 1 / (1 + exp(-z)) : exp(z) / (1 + exp(z));

		*resid = p - t;
		*correct = (z > 0) == (t > 0);
		return log1p(exp(-fabs(z))) + (z > 0 ? z : 0) - t * z;
	}
}

static void add_grad(double *g, const struct row *r, double c)
{
	uint32_t d = G.d, j;
	size_t i;

	if (r->x)
		for (j = 0; j < d; j++)
			g[j] += c * r->x[j];
	else
		for (i = 0; i < r->nnz; i++)
			g[r->idx[i]] += c * r->val[i];
	g[d] += c;
}

/* one mini-batch of up to @n rows at model @w: gradient sum into g
 * (zeroed here), loss into *loss; returns rows, or -1 on a data error */
static long long batch(struct stream *s, const double *w, double *g,
		       double *loss, uint64_t n)
{
	struct row r;
	long long rows = 0;
	double resid;
	bool ok;
	int rc;

	memset(g, 0, (G.d + 1) * sizeof(*g));
	rc = 0;
	while ((uint64_t)rows < n && (rc = next_row(s, &r)) > 0) {
		*loss += row_loss(predict(w, &r), r.y, &resid, &ok);
		add_grad(g, &r, resid);
		rows++;
	}
	return rc < 0 ? -1 : rows;
}

static double lr_at(uint64_t step, unsigned epoch)
{
	const struct pems_sgd_job *j = G.job;

	switch (j->schedule) {
	case PEMS_SGD_LR_SQRT:
		return j->lr / sqrt(1.0 + (double)step);
	case PEMS_SGD_LR_STEP:
		return j->lr * pow(j->lr_decay, (double)(epoch / (j->lr_step ? j->lr_step : 1)));
	default:
		return j->lr;
	}
}

static void update(double *w, const double *g, double n, double lr)
{
	uint32_t d = G.d, j;
	double l2 = G.job->l2;

	for (j = 0; j < d; j++)
		w[j] -= lr * (g[j] / n + l2 * w[j]);
	w[d] -= lr * g[d] / n;
}

/* ---- setup: LIBSVM line starts ---- */

/* first line start >= off (offset 0, or just after a '\n') */
static uint64_t line_start(const struct dfile *f, uint64_t off, uint8_t *raw,
			   int64_t *errs)
{
	uint8_t *buf = (uint8_t *)(((uintptr_t)raw + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
	uint64_t at = off - 1;

	if (off == 0 || off >= f->size)
		return off >= f->size ? f->size : 0;
	while (at < f->size) {
		size_t len = 65536;
		long long rc;
		uint8_t *nl;

		if (len > f->size - at)
			len = (size_t)(f->size - at);
		rc = pems_file_read(f->fd, buf, len, at);
		if (rc != (long long)len) {
			data_error(false, at, UINT64_MAX, "cannot read %s: %s", f->path,
				   rc < 0 ? strerror((int)-rc) : "short read");
			(*errs)++;
			return f->size;
		}
		nl = memchr(buf, '\n', len);
		if (nl)
			return at + (uint64_t)(nl - buf) + 1;
		at += len;
	}
	return f->size;
}

static void shard_ranges(const struct dfile *f, unsigned j, uint64_t *lo,
			 uint64_t *hi, uint8_t *raw, int64_t *errs)
{
	uint64_t n = G.job->format == PEMS_SGD_DENSE ? f->rows : f->size;
	uint64_t a = n * j / G.S, b = n * (j + 1) / G.S;

	if (G.job->format == PEMS_SGD_DENSE) {
		*lo = a;
		*hi = b;
		return;
	}
	*lo = line_start(f, a, raw, errs);
	*hi = line_start(f, b, raw, errs);
}

/* ---- the SPMD program ---- */

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void init_weights(double *w)
{
	uint32_t j;

	memset(w, 0, (G.d + 1) * sizeof(*w));
	if (!G.job->seed)
		return;
	for (j = 0; j < G.d; j++) {
		double u1 = ((mix(G.job->seed * 2654435761u + 2 * j) >> 11) + 0.5) / 9007199254740992.0;
		double u2 = ((mix(G.job->seed * 2654435761u + 2 * j + 1) >> 11) + 0.5) / 9007199254740992.0;

		w[j] = 0.01 * sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
	}
}

struct scratch {
	uint8_t *raw;
	double *g, *wl;
	uint32_t *idx;
	double *val;
};

/* allocated at the top of the heap each superstep, freed before the sync
 * (invariant (5)): frees in reverse order lower the heap's top */
static void scratch_alloc(struct scratch *s)
{
	size_t d1 = G.d + 1;

	s->g = pems_malloc(d1 * sizeof(double));
	s->wl = pems_malloc(d1 * sizeof(double));
	if (G.job->format == PEMS_SGD_LIBSVM) {
		s->idx = pems_malloc(G.d * sizeof(uint32_t) + 4);
		s->val = pems_malloc(G.d * sizeof(double) + 8);
	}
	s->raw = pems_malloc((G.job->format == PEMS_SGD_DENSE ?
			      (BLOCK > 2 * G.rowb ? BLOCK : 2 * G.rowb) : MAX_LINE) + 2 * PAGE);
}

static void scratch_free(struct scratch *s)
{
	pems_free(s->raw);
	if (s->val)
		pems_free(s->val);
	if (s->idx)
		pems_free(s->idx);
	pems_free(s->wl);
	pems_free(s->g);
	memset(s, 0, sizeof(*s));
}

static size_t scratch_cap(void)
{
	return (G.job->format == PEMS_SGD_DENSE ?
		(BLOCK > 2 * G.rowb ? BLOCK : 2 * G.rowb) : MAX_LINE) + PAGE;
}

/* bytes communicated: every VP contributes one all-reduce vector of
 * (d + 1 + X_NSLOTS) int64 (combined per rank, then across ranks) */
static void csv_row(uint64_t superstep, const char *kind, unsigned epoch,
		    uint64_t step, int64_t rows, double train, double test_loss,
		    double test_acc)
{
	char tl[40] = "", ta[40] = "", tr[40] = "";

	if (!G.csv)
		return;
	if (!isnan(train))
		snprintf(tr, sizeof(tr), "%.9g", train);
	if (!isnan(test_loss))
		snprintf(tl, sizeof(tl), "%.9g", test_loss);
	if (!isnan(test_acc))
		snprintf(ta, sizeof(ta), "%.6f", test_acc);
	fprintf(G.csv, "%llu,%s,%u,%llu,%lld,%s,%s,%s,%llu\n",
		(unsigned long long)superstep, kind, epoch, (unsigned long long)step,
		(long long)rows, tr, tl, ta,
		(unsigned long long)G.v * (G.d + 1 + X_NSLOTS) * 8);
}

static bool check_red(const int64_t *x, uint64_t superstep, unsigned epoch)
{
	if (x[X_ERR]) {
		G.any_err = true;
		return false;
	}
	if (x[X_BAD]) {
		G.diverged = true;
		G.div_superstep = superstep;
		G.div_epoch = epoch;
		return false;
	}
	return true;
}

/* evaluate w on my test shards (one superstep); returns false to stop */
static bool evaluate(struct shard *sh, unsigned nsh, const double *w,
		     int64_t *red, unsigned epoch, uint64_t superstep, double train)
{
	size_t d1 = G.d + 1;
	int64_t *x = red + d1;
	struct scratch sc = { 0 };
	double correct = 0;
	unsigned i;

	memset(red, 0, (d1 + X_NSLOTS) * sizeof(*red));
	scratch_alloc(&sc);
	for (i = 0; i < nsh; i++) {
		struct stream s;
		struct row r;
		double resid, sl = 0;
		bool ok;
		int rc;
		int64_t rows = 0;

		stream_open(&s, &G.te, true, sh[i].tlo, sh[i].thi, sc.raw, scratch_cap(),
			    sc.idx, sc.val, &sh[i].avg_line, UINT64_MAX);
		while ((rc = next_row(&s, &r)) > 0) {
			sl += row_loss(predict(w, &r), r.y, &resid, &ok);
			correct += ok;
			rows++;
		}
		if (rc < 0)
			x[X_ERR]++;
		x[X_LOSS] += fx(sl, FXL, LIM_L, &x[X_BAD]);
		x[X_ROWS] += rows;
	}
	x[X_CORRECT] = (int64_t)correct;
	scratch_free(&sc);
	pems_allreduce(red, red, d1 + X_NSLOTS, PEMS_INT64, PEMS_SUM);
	if (x[X_ERR]) {
		G.any_err = true;
		return false;
	}
	if (bsp_pid() == 0) {
		double n = x[X_ROWS] ? (double)x[X_ROWS] : 1;

		G.test_loss = x[X_LOSS] / FXL / n;
		G.test_acc = G.job->model == PEMS_SGD_LOGISTIC ? x[X_CORRECT] / n : NAN;
		csv_row(superstep, "eval", epoch, 0, x[X_ROWS], train, G.test_loss,
			G.test_acc);
	}
	return true;
}

/* one training superstep over my shards; fills red */
static void train_step(struct shard *sh, unsigned nsh, const double *w,
		       int64_t *red, uint64_t round, unsigned epoch)
{
	const struct pems_sgd_job *j = G.job;
	size_t d1 = G.d + 1, k;
	int64_t *x = red + d1;
	struct scratch sc = { 0 };
	unsigned i, h, H = j->sync == PEMS_SGD_SYNC_LOCAL ? j->local_steps : 1;

	memset(red, 0, (d1 + X_NSLOTS) * sizeof(*red));
	scratch_alloc(&sc);
	for (i = 0; i < nsh; i++) {
		struct stream s;
		double loss = 0;
		long long rows = 0, n;
		bool stepped = false;

		if (sh[i].pos >= sh[i].hi)
			continue;
		stream_open(&s, &G.tr, false, sh[i].pos, sh[i].hi, sc.raw, scratch_cap(),
			    sc.idx, sc.val, &sh[i].avg_line, (uint64_t)H * j->batch);
		if (j->sync == PEMS_SGD_SYNC_BSP) {
			n = batch(&s, w, sc.g, &loss, j->batch);
			if (n < 0) {
				x[X_ERR]++;
				continue;
			}
			rows = n;
			for (k = 0; k < d1; k++)
				red[k] += fx(sc.g[k], FXG, LIM_G, &x[X_BAD]);
		} else {
			memcpy(sc.wl, w, d1 * sizeof(double));
			/* the stream reads all H batches at once (<= 4 MiB blocks) */
			for (h = 0; h < H && s.pos < s.end; h++) {
				n = batch(&s, sc.wl, sc.g, &loss, j->batch);
				if (n < 0) {
					x[X_ERR]++;
					break;
				}
				if (!n)
					break;
				rows += n;
				stepped = true;
				update(sc.wl, sc.g, (double)n, lr_at(round * H + h, epoch));
			}
			if (stepped) {
				for (k = 0; k < d1; k++)
					red[k] += fx(sc.wl[k], FXG, LIM_G, &x[X_BAD]);
				x[X_ACTIVE]++;
			}
		}
		stream_close(&s);
		sh[i].pos = s.pos;
		x[X_LOSS] += fx(loss, FXL, LIM_L, &x[X_BAD]);
		x[X_ROWS] += rows;
		if (sh[i].pos < sh[i].hi)
			x[X_MORE]++;
	}
	scratch_free(&sc);
}

static void sgd_spmd(void *arg)
{
	const struct pems_sgd_job *j = G.job;
	unsigned pid = bsp_pid(), v = bsp_nprocs();
	unsigned s0 = (unsigned)((uint64_t)G.S * pid / v);
	unsigned nsh = (unsigned)((uint64_t)G.S * (pid + 1) / v) - s0, i, epoch;
	size_t d1 = G.d + 1;
	struct shard *sh = pems_calloc(nsh + 1, sizeof(*sh));
	double *w = pems_malloc(d1 * sizeof(double));
	int64_t *red = pems_malloc((d1 + X_NSLOTS) * sizeof(int64_t));
	int64_t *x = red + d1;
	uint64_t superstep = 0, step = 0, round = 0;
	int64_t setup_errs = 0;
	bool go = true;

	(void)arg;
	init_weights(w);
	{
		uint8_t *raw = pems_malloc(65536 + PAGE);

		for (i = 0; i < nsh; i++) {
			shard_ranges(&G.tr, s0 + i, &sh[i].lo, &sh[i].hi, raw, &setup_errs);
			if (G.have_test)
				shard_ranges(&G.te, s0 + i, &sh[i].tlo, &sh[i].thi, raw,
					     &setup_errs);
		}
		pems_free(raw);
	}
	for (epoch = 0; go && epoch < j->epochs; epoch++) {
		double eloss = 0, erows = 0, tl;

		for (i = 0; i < nsh; i++)
			sh[i].pos = sh[i].lo;
		for (;;) {
			double n, lr = lr_at(step, epoch);

			train_step(sh, nsh, w, red, round, epoch);
			x[X_ERR] += setup_errs;
			setup_errs = 0;
			pems_allreduce(red, red, d1 + X_NSLOTS, PEMS_INT64, PEMS_SUM);
			superstep++;
			if (!check_red(x, superstep, epoch)) {
				go = false;
				break;
			}
			n = (double)x[X_ROWS];
			if (x[X_ROWS]) {
				size_t k;

				if (j->sync == PEMS_SGD_SYNC_BSP) {
					double *g = pems_malloc(d1 * sizeof(double));

					for (k = 0; k < d1; k++)
						g[k] = red[k] / FXG;
					update(w, g, n, lr);
					pems_free(g);
					step++;
				} else if (x[X_ACTIVE]) {
					for (k = 0; k < d1; k++)
						w[k] = red[k] / FXG / (double)x[X_ACTIVE];
				}
				eloss += x[X_LOSS] / FXL;
				erows += n;
				for (k = 0; k < d1 && go; k++)
					if (!isfinite(w[k]) || fabs(w[k]) > LIM_G) {
						G.diverged = true;
						G.div_superstep = superstep;
						G.div_epoch = epoch;
						go = false;
					}
			}
			round++;
			if (pid == 0)
				csv_row(superstep, "train", epoch + 1,
					j->sync == PEMS_SGD_SYNC_BSP ? step : round * j->local_steps,
					x[X_ROWS], x[X_ROWS] ? x[X_LOSS] / FXL / n : NAN, NAN, NAN);
			if (!go || !x[X_MORE])
				break;
		}
		if (!go)
			break;
		if (!isfinite(eloss)) {
			G.diverged = true;
			break;
		}
		tl = erows ? eloss / erows : NAN;
		if (bsp_pid() == 0)
			G.train_loss = tl;	/* one writer: VPs run on several threads */
		if (G.have_test) {
			superstep++;
			if (!evaluate(sh, nsh, w, red, epoch + 1, superstep, tl))
				break;
		}
		if (pid == 0)
			G.epochs_done = epoch + 1;
	}
	if (pid == 0)
		memcpy(G.w_final, w, d1 * sizeof(double));
	pems_free(red);
	pems_free(w);
	pems_free(sh);
}

/* ---- model files ---- */

/* The text is formatted in memory and written with pems_file_write, so
 * that a failing disk (and PEMS_IO_FAULT in tests) reaches it like any
 * other output of the runtime. */
int pems_sgd_model_write(const char *path, enum pems_sgd_model model,
			 uint32_t dim, const double *w)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	long long n;
	uint32_t j;
	int h, fd, rc = 0;

	if (!f)
		return -errno;
	fprintf(f, "pems-sgd-model 1\nmodel %s\ndim %u\nbias %.17g\n",
		model == PEMS_SGD_LOGISTIC ? "logistic" : "linear", dim, w[dim]);
	for (j = 0; j < dim; j++)
		fprintf(f, "%u %.17g\n", j + 1, w[j]);
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	h = pems_file_open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (h < 0) {
		free(text);
		return h;
	}
	n = pems_file_write(h, text, len, 0);
	free(text);
	if (n < 0)
		rc = (int)n;
	else if ((size_t)n != len)
		rc = -EIO;	/* the disk stopped taking bytes */
	if (pems_file_close(h) && !rc)
		rc = -EIO;
	/* fsync applies to the file, whichever descriptor asks */
	fd = rc ? -1 : open(path, O_WRONLY | O_CLOEXEC);
	if (!rc && (fd < 0 || fsync(fd)))
		rc = -errno;
	if (fd >= 0)
		close(fd);
	return rc;
}

int pems_sgd_model_read(const char *path, enum pems_sgd_model *model,
			uint32_t *dim, double **w)
{
	FILE *f = fopen(path, "r");
	char name[32];
	unsigned ver, d, j, ix;
	double b, x;
	double *m;

	if (!f)
		return -errno;
	if (fscanf(f, "pems-sgd-model %u model %31s dim %u bias %lf", &ver, name, &d, &b) != 4 ||
	    ver != 1 || d > (1u << 30)) {
		fclose(f);
		return -EINVAL;
	}
	/* each weight takes a line of at least 4 bytes ("j w\n"): a header
	 * promising more than the file holds must not allocate it
	 * (found by tests/fuzz/fuzz_records.c) */
	{
		struct stat st;

		if (fstat(fileno(f), &st) || (uint64_t)d > (uint64_t)st.st_size / 4) {
			fclose(f);
			return -EINVAL;
		}
	}
	m = calloc((size_t)d + 1, sizeof(*m));
	if (!m) {
		fclose(f);
		return -ENOMEM;
	}
	for (j = 0; j < d; j++) {
		if (fscanf(f, "%u %lf", &ix, &x) != 2 || ix != j + 1) {
			free(m);
			fclose(f);
			return -EINVAL;
		}
		m[j] = x;
	}
	m[d] = b;
	fclose(f);
	*model = strcmp(name, "logistic") ? PEMS_SGD_LINEAR : PEMS_SGD_LOGISTIC;
	*dim = d;
	*w = m;
	return 0;
}

/* ---- host side: files, plan, run, outputs ---- */

static int open_data(struct dfile *f, const char *path, const char *what, uint32_t *dim)
{
	const struct pems_sgd_job *j = G.job;
	struct stat st;
	uint8_t hdr[PEMS_SGD_DENSE_HEADER];
	int fd;

	memset(f, 0, sizeof(*f));
	f->path = path;
	f->fd = -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		int rc = -errno;

		fprintf(stderr, "pems: error: sgd: cannot read %s '%s': %s\n", what, path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	f->size = (uint64_t)st.st_size;
	if (j->format == PEMS_SGD_DENSE) {
		uint32_t hd = 0;

		if (f->size >= sizeof(hdr) && pread(fd, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr) &&
		    !memcmp(hdr, PEMS_SGD_DENSE_MAGIC, 8)) {
			memcpy(&hd, hdr + 8, 4);
			f->off0 = PEMS_SGD_DENSE_HEADER;
			if (*dim && *dim != hd) {
				fprintf(stderr, "pems: error: sgd: %s '%s' has dim %u in its header but --dim is %u\n",
					what, path, hd, *dim);
				close(fd);
				return -EINVAL;
			}
			*dim = hd;
		}
		if (!*dim) {
			fprintf(stderr, "pems: error: sgd: %s '%s' has no PEMSDENS header; give --dim\n",
				what, path);
			close(fd);
			return -EINVAL;
		}
		G.rowb = 4 * ((size_t)*dim + 1);
		if ((f->size - f->off0) % G.rowb) {
			fprintf(stderr, "pems: error: sgd: %s '%s': %llu bytes of rows is not a multiple of the %zu-byte row (1 + %u float32)\n",
				what, path, (unsigned long long)(f->size - f->off0), G.rowb, *dim);
			close(fd);
			return -EINVAL;
		}
		f->rows = (f->size - f->off0) / G.rowb;
	} else if (!*dim) {
		fprintf(stderr, "pems: error: sgd: --dim is required for LIBSVM data\n");
		close(fd);
		return -EINVAL;
	}
	close(fd);
	f->fd = pems_file_open(path, O_RDONLY, 0);
	if (f->fd < 0) {
		fprintf(stderr, "pems: error: sgd: cannot open %s '%s': %s\n", what, path,
			strerror(-f->fd));
		return f->fd;
	}
	return 0;
}

/* 1-based line number of byte @off of @path (for error messages) */
static uint64_t line_of(const char *path, uint64_t off)
{
	char buf[1 << 16];
	uint64_t line = 1, at = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	while (at < off && (n = read(fd, buf, sizeof(buf))) > 0) {
		ssize_t i, lim = (uint64_t)n > off - at ? (ssize_t)(off - at) : n;

		for (i = 0; i < lim; i++)
			line += buf[i] == '\n';
		at += (uint64_t)n;
	}
	close(fd);
	return line;
}

/*
 * Memory plan per rank: k contexts of mu = model state + scratch (read
 * block, gradient, local model, sparse row) + stack, and the runtime's
 * overhead (message buffers etc.); v defaults to S (one shard per VP).
 */
static int plan(struct pems_config *cfg)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	struct pems_budget b;
	size_t d1 = G.d + 1, mu, need, over;

	if (!cfg->mem) {
		long pages = sysconf(_SC_PHYS_PAGES);

		cfg->mem = (size_t)pages * 4096 / 4;
	}
	if (!cfg->threads)
		cfg->threads = cores > 0 ? (unsigned)cores : 1;
	if (!cfg->procs)
		cfg->procs = G.S;
	mu = d1 * 8 * 4 + (size_t)G.S / cfg->procs * 64 + 4096 * 4 +
	     (G.job->format == PEMS_SGD_LIBSVM ? G.d * 12 + MAX_LINE : 2 * G.rowb + BLOCK) +
	     d1 * 8 * 2 + (d1 + X_NSLOTS) * 8 + 4 * PAGE + cfg->stack + (1u << 20);
	if (!cfg->mu)
		cfg->mu = (mu + (1u << 20) - 1) & ~(size_t)((1u << 20) - 1);
	if (!cfg->msg_mem) {
		cfg->msg_mem = cfg->mem / 8;
		if (cfg->msg_mem > (64u << 20))
			cfg->msg_mem = 64u << 20;
	}
	pems_budget(cfg, 0, 0, &b);
	over = b.overhead;
	need = cfg->threads * cfg->mu + over + cfg->mem / 16;
	if (need > cfg->mem) {
		fprintf(stderr, "pems: error: sgd: --mem %zu MiB is too small: %u threads x %zu MiB contexts + %zu MiB runtime; raise --mem to %zu MiB or lower --threads\n",
			cfg->mem >> 20, cfg->threads, cfg->mu >> 20, over >> 20,
			(need + (1u << 20) - 1) >> 20);
		return -EINVAL;
	}
	return 0;
}

static atomic_int progress_stop;

static void *progress_main(void *arg)
{
	const struct pems_sgd_job *job = arg;
	struct timespec ts = { 0, 200 * 1000 * 1000 };
	char phase[64];

	while (!atomic_load(&progress_stop)) {
		uint64_t done = atomic_load(&G.done);
		uint64_t per = G.tr.size ? G.tr.size - G.tr.off0 : 1;
		unsigned e = (unsigned)(done / (per ? per : 1)) + 1;

		if (e > job->epochs)
			e = job->epochs;
		snprintf(phase, sizeof(phase), "epoch %u/%u", e, job->epochs);
		job->progress(phase, done, G.total, job->progress_arg);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static int open_tmp(const char *final, char *tmp, size_t n)
{
	snprintf(tmp, n, "%s.pems-tmp", final);
	unlink(tmp);
	return 0;
}

static int finish_file(const char *tmp, const char *final)
{
	if (rename(tmp, final)) {
		int rc = -errno;

		fprintf(stderr, "pems: error: sgd: cannot rename %s to %s: %s\n", tmp, final,
			strerror(errno));
		unlink(tmp);
		return rc;
	}
	return 0;
}

static int run(struct pems_sgd_job *job, const struct pems_config *cfg)
{
	pthread_t th;
	bool have_th = false;
	int rc;

	if (job->progress && !pthread_create(&th, NULL, progress_main, job))
		have_th = true;
	/* VP 0 records losses, errors and epochs here: a resumed run needs
	 * them as they were at its checkpoint (docs/checkpoint.md) */
	pems_checkpoint_global(&G, sizeof(G));
	rc = pems_spmd(cfg, sgd_spmd, NULL);
	atomic_store(&progress_stop, 1);
	if (have_th)
		pthread_join(th, NULL);
	return rc;
}

static void report_error(void)
{
	const char *path = G.err_test ? G.te.path : G.tr.path;

	if (G.job->format == PEMS_SGD_LIBSVM && G.err_off != UINT64_MAX &&
	    strncmp(G.err_msg, "cannot read", 11))
		fprintf(stderr, "pems: error: sgd: %s:%llu: %s\n", path,
			(unsigned long long)line_of(path, G.err_off), G.err_msg);
	else
		fprintf(stderr, "pems: error: sgd: %s\n", G.err_msg);
}

int pems_sgd(struct pems_sgd_job *job)
{
	struct pems_config cfg = job->cfg ? *job->cfg : *pems_current_config();
	char out_tmp[4096], csv_tmp[4096];
	uint32_t dim;
	bool r0;
	int rc;

	/* pems_rank() is 0 on every rank until MPI is up: a barrier starts it */
	pems_rank_barrier();
	r0 = pems_rank() == 0;

	pthread_mutex_destroy(&G.err_mu);
	memset(&G, 0, sizeof(G));
	pthread_mutex_init(&G.err_mu, NULL);
	atomic_store(&progress_stop, 0);
	G.job = job;
	G.tr.fd = G.te.fd = -1;
	G.test_loss = G.test_acc = G.train_loss = NAN;
	job->test_loss = job->test_accuracy = job->train_loss = NAN;
	if (!job->epochs || !job->batch || !(job->lr > 0) ||
	    (job->sync == PEMS_SGD_SYNC_LOCAL && !job->local_steps)) {
		fprintf(stderr, "pems: error: sgd: epochs, batch, lr and local steps must be positive\n");
		return -EINVAL;
	}
	dim = job->dim;
	rc = open_data(&G.tr, job->data, "training data", &dim);
	if (rc)
		return rc;
	G.d = dim;
	if (job->test) {
		rc = open_data(&G.te, job->test, "test data", &dim);
		if (rc)
			goto out_close;
		G.have_test = true;
	}
	G.S = job->shards ? job->shards : 16;
	if (G.S > PEMS_SGD_MAX_SHARDS) {
		fprintf(stderr, "pems: error: sgd: at most %u shards\n", PEMS_SGD_MAX_SHARDS);
		rc = -EINVAL;
		goto out_close;
	}
	job->data_bytes = G.tr.size;
	G.total = (G.tr.size - G.tr.off0) * job->epochs;
	rc = plan(&cfg);
	if (rc)
		goto out_close;
	G.v = cfg.procs;
	G.w_final = calloc((size_t)G.d + 1, sizeof(double));
	if (!G.w_final) {
		rc = -ENOMEM;
		goto out_close;
	}
	if (r0 && job->loss_log) {
		open_tmp(job->loss_log, csv_tmp, sizeof(csv_tmp));
		G.csv = fopen(csv_tmp, "w");
		if (!G.csv) {
			rc = -errno;
			fprintf(stderr, "pems: error: sgd: cannot create %s: %s\n", csv_tmp,
				strerror(errno));
			goto out_close;
		}
		pems_remove_on_abort(csv_tmp);
		fputs("superstep,kind,epoch,step,rows,train_loss,test_loss,test_accuracy,comm_bytes\n",
		      G.csv);
	}
	rc = run(job, &cfg);
	if (!rc && G.err_set) {
		report_error();
		rc = -EINVAL;
	} else if (!rc && (G.any_err || G.diverged)) {
		if (G.diverged) {
			if (r0)
				fprintf(stderr, "pems: error: sgd: training diverged in epoch %u (superstep %llu): loss or weights are not finite or beyond 6.7e7; lower --lr (now %g)%s\n",
					G.div_epoch + 1, (unsigned long long)G.div_superstep,
					job->lr, job->l2 > 0 ? "" : " or add --l2");
			rc = -EDOM;
		} else {
			/* another rank hit a data error and has printed it */
			rc = -EINVAL;
		}
	}
	job->train_loss = G.train_loss;
	job->test_loss = G.test_loss;
	job->test_accuracy = G.test_acc;
	job->epochs_done = G.epochs_done;
	job->rows = G.tr.rows;
	if (G.csv) {
		bool bad = ferror(G.csv);
		int cerr;

		errno = 0;
		cerr = fclose(G.csv) ? errno : 0;
		if ((cerr || bad) && !rc) {
			rc = cerr ? -cerr : -EIO;
			fprintf(stderr, "pems: error: sgd: cannot write %s: %s\n", csv_tmp,
				strerror(-rc));
		}
		G.csv = NULL;
		if (rc)
			unlink(csv_tmp);
		else
			rc = finish_file(csv_tmp, job->loss_log);
	}
	if (!rc && r0) {
		open_tmp(job->out, out_tmp, sizeof(out_tmp));
		rc = pems_sgd_model_write(out_tmp, job->model, G.d, G.w_final);
		if (rc) {
			fprintf(stderr, "pems: error: sgd: cannot write %s: %s\n", out_tmp,
				strerror(-rc));
			unlink(out_tmp);
		} else {
			rc = finish_file(out_tmp, job->out);
		}
	}
	pems_rank_barrier();
	pems_remove_on_abort(NULL);
out_close:
	free(G.w_final);
	G.w_final = NULL;
	if (G.tr.fd >= 0)
		pems_file_close(G.tr.fd);
	if (G.te.fd >= 0)
		pems_file_close(G.te.fd);
	return rc;
}
