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

#include "sgd/sgd_internal.h"
#include "job.h"

struct sgd_state sgd_g = { .err_mu = PTHREAD_MUTEX_INITIALIZER };

static int64_t fx(double x, double scale, double lim, int64_t *bad)
{
	if (!isfinite(x) || fabs(x) > lim) {
		(*bad)++;
		return 0;
	}
	return (int64_t)llrint(x * scale);
}

/* ---- the models ---- */

static double predict(const double *w, const struct row *r)
{
	uint32_t d = sgd_g.d, j;
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
	if (sgd_g.job->model == PEMS_SGD_LINEAR) {
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
	uint32_t d = sgd_g.d, j;
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

	memset(g, 0, (sgd_g.d + 1) * sizeof(*g));
	rc = 0;
	while ((uint64_t)rows < n && (rc = sgd_next_row(s, &r)) > 0) {
		*loss += row_loss(predict(w, &r), r.y, &resid, &ok);
		add_grad(g, &r, resid);
		rows++;
	}
	return rc < 0 ? -1 : rows;
}

static double lr_at(uint64_t step, unsigned epoch)
{
	const struct pems_sgd_job *j = sgd_g.job;

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
	uint32_t d = sgd_g.d, j;
	double l2 = sgd_g.job->l2;

	for (j = 0; j < d; j++)
		w[j] -= lr * (g[j] / n + l2 * w[j]);
	w[d] -= lr * g[d] / n;
}

/* ---- the SPMD program ---- */

static void init_weights(double *w)
{
	uint32_t j;

	memset(w, 0, (sgd_g.d + 1) * sizeof(*w));
	if (!sgd_g.job->seed)
		return;
	for (j = 0; j < sgd_g.d; j++) {
		double u1 = ((pems_mix64(sgd_g.job->seed * 2654435761u + 2 * j) >> 11) + 0.5) / 9007199254740992.0;
		double u2 = ((pems_mix64(sgd_g.job->seed * 2654435761u + 2 * j + 1) >> 11) + 0.5) / 9007199254740992.0;

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
	size_t d1 = sgd_g.d + 1;

	s->g = pems_malloc(d1 * sizeof(double));
	s->wl = pems_malloc(d1 * sizeof(double));
	if (sgd_g.job->format == PEMS_SGD_LIBSVM) {
		s->idx = pems_malloc(sgd_g.d * sizeof(uint32_t) + 4);
		s->val = pems_malloc(sgd_g.d * sizeof(double) + 8);
	}
	s->raw = pems_malloc((sgd_g.job->format == PEMS_SGD_DENSE ?
			      (BLOCK > 2 * sgd_g.rowb ? BLOCK : 2 * sgd_g.rowb) : MAX_LINE) + 2 * PAGE);
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
	return (sgd_g.job->format == PEMS_SGD_DENSE ?
		(BLOCK > 2 * sgd_g.rowb ? BLOCK : 2 * sgd_g.rowb) : MAX_LINE) + PAGE;
}

/* bytes communicated: every VP contributes one all-reduce vector of
 * (d + 1 + X_NSLOTS) int64 (combined per rank, then across ranks) */
static void csv_row(uint64_t superstep, const char *kind, unsigned epoch,
		    uint64_t step, int64_t rows, double train, double test_loss,
		    double test_acc)
{
	char tl[40] = "", ta[40] = "", tr[40] = "";

	if (!sgd_g.csv)
		return;
	if (!isnan(train))
		snprintf(tr, sizeof(tr), "%.9g", train);
	if (!isnan(test_loss))
		snprintf(tl, sizeof(tl), "%.9g", test_loss);
	if (!isnan(test_acc))
		snprintf(ta, sizeof(ta), "%.6f", test_acc);
	fprintf(sgd_g.csv, "%llu,%s,%u,%llu,%lld,%s,%s,%s,%llu\n",
		(unsigned long long)superstep, kind, epoch, (unsigned long long)step,
		(long long)rows, tr, tl, ta,
		(unsigned long long)sgd_g.v * (sgd_g.d + 1 + X_NSLOTS) * 8);
}

static bool check_red(const int64_t *x, uint64_t superstep, unsigned epoch)
{
	if (x[X_ERR]) {
		sgd_g.any_err = true;
		return false;
	}
	if (x[X_BAD]) {
		sgd_g.diverged = true;
		sgd_g.div_superstep = superstep;
		sgd_g.div_epoch = epoch;
		return false;
	}
	return true;
}

/* evaluate w on my test shards (one superstep); returns false to stop */
static bool evaluate(struct shard *sh, unsigned nsh, const double *w,
		     int64_t *red, unsigned epoch, uint64_t superstep, double train)
{
	size_t d1 = sgd_g.d + 1;
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

		sgd_stream_open(&s, &sgd_g.te, true, sh[i].tlo, sh[i].thi, sc.raw, scratch_cap(),
			    sc.idx, sc.val, &sh[i].avg_line, UINT64_MAX);
		while ((rc = sgd_next_row(&s, &r)) > 0) {
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
		sgd_g.any_err = true;
		return false;
	}
	if (bsp_pid() == 0) {
		double n = x[X_ROWS] ? (double)x[X_ROWS] : 1;

		sgd_g.test_loss = x[X_LOSS] / FXL / n;
		sgd_g.test_acc = sgd_g.job->model == PEMS_SGD_LOGISTIC ? x[X_CORRECT] / n : NAN;
		csv_row(superstep, "eval", epoch, 0, x[X_ROWS], train, sgd_g.test_loss,
			sgd_g.test_acc);
	}
	return true;
}

/* one training superstep over my shards; fills red */
static void train_step(struct shard *sh, unsigned nsh, const double *w,
		       int64_t *red, uint64_t round, unsigned epoch)
{
	const struct pems_sgd_job *j = sgd_g.job;
	size_t d1 = sgd_g.d + 1, k;
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
		sgd_stream_open(&s, &sgd_g.tr, false, sh[i].pos, sh[i].hi, sc.raw, scratch_cap(),
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
		sgd_stream_close(&s);
		sh[i].pos = s.pos;
		x[X_LOSS] += fx(loss, FXL, LIM_L, &x[X_BAD]);
		x[X_ROWS] += rows;
		if (sh[i].pos < sh[i].hi)
			x[X_MORE]++;
	}
	scratch_free(&sc);
}

/* The byte ranges of this VP's @nsh shards from @s0 on (libsvm: line
 * starts), training and test; read errors counted in *errs. */
static void shards_setup(struct shard *sh, unsigned nsh, unsigned s0, int64_t *errs)
{
	uint8_t *raw = pems_malloc(65536 + PAGE);
	unsigned i;

	for (i = 0; i < nsh; i++) {
		sgd_shard_ranges(&sgd_g.tr, s0 + i, &sh[i].lo, &sh[i].hi, raw, errs);
		if (sgd_g.have_test)
			sgd_shard_ranges(&sgd_g.te, s0 + i, &sh[i].tlo, &sh[i].thi, raw, errs);
	}
	pems_free(raw);
}

/* Apply the all-reduced round @red (some rows were seen) to @w: a
 * gradient step (bsp) or the average of the shards' models (local).
 * Returns false when the model diverged (recorded in sgd_g). */
static bool apply_round(double *w, const int64_t *red, double lr, uint64_t *step,
			uint64_t superstep, unsigned epoch)
{
	size_t d1 = sgd_g.d + 1, k;
	const int64_t *x = red + d1;

	if (sgd_g.job->sync == PEMS_SGD_SYNC_BSP) {
		double *g = pems_malloc(d1 * sizeof(double));

		for (k = 0; k < d1; k++)
			g[k] = red[k] / FXG;
		update(w, g, (double)x[X_ROWS], lr);
		pems_free(g);
		(*step)++;
	} else if (x[X_ACTIVE]) {
		for (k = 0; k < d1; k++)
			w[k] = red[k] / FXG / (double)x[X_ACTIVE];
	}
	for (k = 0; k < d1; k++)
		if (!isfinite(w[k]) || fabs(w[k]) > LIM_G) {
			sgd_g.diverged = true;
			sgd_g.div_superstep = superstep;
			sgd_g.div_epoch = epoch;
			return false;
		}
	return true;
}

void sgd_spmd(void *arg)
{
	const struct pems_sgd_job *j = sgd_g.job;
	unsigned pid = bsp_pid(), v = bsp_nprocs();
	unsigned s0 = (unsigned)((uint64_t)sgd_g.S * pid / v);
	unsigned nsh = (unsigned)((uint64_t)sgd_g.S * (pid + 1) / v) - s0, i, epoch;
	size_t d1 = sgd_g.d + 1;
	struct shard *sh = pems_calloc(nsh + 1, sizeof(*sh));
	double *w = pems_malloc(d1 * sizeof(double));
	int64_t *red = pems_malloc((d1 + X_NSLOTS) * sizeof(int64_t));
	int64_t *x = red + d1;
	uint64_t superstep = 0, step = 0, round = 0;
	int64_t setup_errs = 0;
	bool go = true;

	(void)arg;
	init_weights(w);
	shards_setup(sh, nsh, s0, &setup_errs);
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
				go = apply_round(w, red, lr, &step, superstep, epoch);
				eloss += x[X_LOSS] / FXL;
				erows += n;
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
			sgd_g.diverged = true;
			break;
		}
		tl = erows ? eloss / erows : NAN;
		if (bsp_pid() == 0)
			sgd_g.train_loss = tl;	/* one writer: VPs run on several threads */
		if (sgd_g.have_test) {
			superstep++;
			if (!evaluate(sh, nsh, w, red, epoch + 1, superstep, tl))
				break;
		}
		if (pid == 0)
			sgd_g.epochs_done = epoch + 1;
	}
	if (pid == 0)
		memcpy(sgd_g.w_final, w, d1 * sizeof(double));
	pems_free(red);
	pems_free(w);
	pems_free(sh);
}
