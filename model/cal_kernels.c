/*
 * cal_kernels.c - the algorithms' rates: the real sort, aggregate and
 * sgd on calibration inputs, each superstep's work over its CPU seconds
 * (the process's, all threads: O_DIRECT transfers cost the CPU next to
 * nothing, and other load on the machine lengthens the wall time but not
 * this).  Also the setup run, which prices a run's start and end.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cal.h"

/* After a calibration input is written (@rc: how that went), push its
 * pages to the disk: the runs read it with O_DIRECT, which first writes
 * back dirty page-cache pages -- in the reading process, allocating the
 * file system's delayed blocks on its CPU time and making its random
 * reads wait, which would count in the rates measured. */
static int gen_done(struct cal *c, int rc, const char *path)
{
	int fd;

	if (rc)
		return cal_fail(c, rc, "cannot write the input '%s': %s", path, strerror(-rc));
	fd = open(path, O_RDONLY);
	if (fd < 0 || fsync(fd))
		rc = cal_fail(c, -errno, "cannot sync '%s': %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return rc;
}

static const struct pems_step *steps(size_t *n)
{
	return pems_steps(n);
}

/* CPU seconds of superstep @i of the last recorded run */
static double kernel_secs(size_t i)
{
	size_t n;
	const struct pems_step *s = steps(&n);

	return i < n ? s[i].cpu : 0;
}

/* Keep the recorded run of kernel job @i (@j: its shape) for cal_overlap. */
static void kernel_keep(struct cal *c, unsigned i, const struct pems_model_job *j)
{
	struct kjob *k = &c->kj[i];
	size_t n, s;
	const struct pems_step *st = steps(&n);

	k->j = *j;
	k->j.cost.p = 1;
	k->j.k = c->o->k;
	k->j.mem = 1024 * MIB;
	k->n = 0;
	if (j->algo == PEMS_MODEL_SGD) {	/* every superstep but the last trains */
		double t = 0;

		for (s = 0; s + 1 < n; s++)
			t += st[s].secs;
		k->secs[0] = n > 1 ? t / (double)(n - 1) : 0;
		k->n = 1;
		return;
	}
	for (s = 0; s < n && s < PEMS_MODEL_MAXSTEPS; s++)
		k->secs[k->n++] = st[s].secs;
}

static int run_sort(void *arg) { return pems_sort(arg); }
static int run_agg(void *arg) { return pems_aggregate(arg); }
static int run_sgd(void *arg) { return pems_sgd(arg); }

/* a kernel run as pems-run would plan it, 1 GiB of budget; @want: the
 * supersteps it must have had (0: any) */
static int cal_run(struct cal *c, int (*fn)(void *), void *job, const char *what, double *wall,
		   size_t want)
{
	size_t n;
	int rc = cal_configure(0, c->o->k, 0, 1024u << 20, c->o->dir);

	if (!rc)
		rc = cal_recorded(fn, job, wall);
	if (rc)
		return cal_fail(c, rc, "the %s run failed: %s", what, pems_strerror(rc));
	steps(&n);
	if (want && n != want)
		return cal_fail(c, -EIO, "the %s run had %zu supersteps, not %zu", what, n, want);
	return 0;
}

static void cal_path(const struct cal *c, char *buf, size_t len, const char *ext)
{
	snprintf(buf, len, "%s/pems-model-cal.%d.%s", c->o->dir, (int)getpid(), ext);
}

/* its superstep 0 is the sampling: rounds of 32 ascending 4 KiB reads
 * within each VP's slice, 3-10x faster than the same number of reads
 * spread over the whole file (the random-read test) */
static void sort_iops(struct cal *c)
{
	size_t n;
	const struct pems_step *s = steps(&n);

	if (n == 4 && s[0].secs > 0 && s[0].file_read >= 4096 * 256)
		c->m->iops = s[0].file_read / 4096.0 / s[0].secs;
}

/* the end of a run (closing the deleted message logs frees their blocks,
 * the output's fsync) grows with what it wrote: this run's end against
 * the small setup run's */
static void sort_flush(struct cal *c, double wall)
{
	double w, end = cal_run_end(wall, &w);

	c->m->flush_bw = end > c->end0 && w > c->w0 ? (w - c->w0) / (end - c->end0) : 0;
}

static int cal_sort(struct cal *c, int rec100)
{
	char in[4096], out[4096];
	struct pems_sort_job job = { .in = in, .out = out };
	struct pems_gen_records g = { .skew = PEMS_GEN_UNIFORM, .seed = 7 };
	struct pems_model_job j;
	double wall, rs = rec100 ? 100 : 8, bytes = floor(c->o->ksize / rs) * rs;
	int rc;

	cal_path(c, in, sizeof(in), "in");
	cal_path(c, out, sizeof(out), "out");
	job.fmt = g.fmt = rec100 ? PEMS_FMT_REC100 : PEMS_FMT_U64;
	g.count = (uint64_t)floor(c->o->ksize / rs);
	rc = gen_done(c, pems_gen_records_file(&g, in, NULL, NULL), in);
	if (!rc)
		rc = cal_run(c, run_sort, &job, "sort", &wall, 4);
	unlink(in);
	unlink(out);
	if (rc)
		return rc;
	if (!rec100) {
		sort_flush(c, wall);
		sort_iops(c);	/* on a file as large as the runs' */
	}
	pems_model_job_init(&j);
	j.algo = PEMS_MODEL_SORT;
	j.cost.fmt = job.fmt;
	j.cost.bytes = bytes;
	kernel_keep(c, (unsigned)rec100, &j);
	c->m->sort_part[rec100] = bytes / kernel_secs(2);
	c->m->sort_local[rec100] = bytes / kernel_secs(3);
	return 0;
}

/* setup: a 128 MiB sort with input, output and scratch on the disk */
int cal_setup(struct cal *c)
{
	char in[4096], out[4096];
	struct pems_sort_job job = { .in = in, .out = out, .fmt = PEMS_FMT_U64 };
	struct pems_gen_records g = { .fmt = PEMS_FMT_U64, .skew = PEMS_GEN_UNIFORM,
				      .count = 16u << 20, .seed = 7 };
	double wall;
	int rc;

	cal_path(c, in, sizeof(in), "in");
	cal_path(c, out, sizeof(out), "out");
	rc = gen_done(c, pems_gen_records_file(&g, in, NULL, NULL), in);
	if (!rc) {
		rc = cal_configure(0, c->o->k, 0, 1024u << 20, c->o->dir);
		if (!rc)
			rc = cal_recorded(run_sort, &job, &wall);
		if (rc)
			cal_fail(c, rc, "the setup run failed: %s", pems_strerror(rc));
	}
	unlink(in);
	unlink(out);
	if (rc)
		return rc;
	c->end0 = cal_run_end(wall, &c->w0);
	sort_iops(c);
	return 0;
}

/* aggregate count,sum over kv rows of the kernel size with @groups keys;
 * t[] the CPU seconds of supersteps 2, 3 and 4, t[3] the run's v; kept
 * for cal_overlap as kernel job @idx (none when @idx >= CAL_KJOBS) */
static int cal_agg_run(struct cal *c, double groups, unsigned idx, double t[4])
{
	char in[4096], out[4096];
	struct pems_aggregate_job job = { .in = in, .out = out };
	struct pems_stats st;
	double wall, rows = floor(c->o->ksize / 16);
	struct pems_gen_kv g = { .count = (uint64_t)rows, .groups = (uint64_t)groups, .seed = 7 };
	struct pems_model_job j;
	int rc;

	cal_path(c, in, sizeof(in), "kv");
	cal_path(c, out, sizeof(out), "csv");
	job.aggs[0] = pems_aggregate_builtin("count");
	job.aggs[1] = pems_aggregate_builtin("sum");
	job.naggs = 2;
	rc = gen_done(c, pems_gen_kv_file(&g, in, NULL, NULL), in);
	if (!rc)
		rc = cal_run(c, run_agg, &job, "aggregate", &wall, 5);
	unlink(in);
	unlink(out);
	if (rc)
		return rc;
	pems_model_job_init(&j);
	j.algo = PEMS_MODEL_AGGREGATE;
	j.cost.bytes = rows * 16;
	j.cost.groups = groups;
	if (idx < CAL_KJOBS)
		kernel_keep(c, idx, &j);
	t[0] = kernel_secs(2);
	t[1] = kernel_secs(3);
	t[2] = kernel_secs(4);
	pems_get_stats(&st);
	t[3] = st.procs;
	return 0;
}

/* the group counts of the "agg_at" lines: 2^20 .. 2^26 (64 Mi rows of
 * the 1 GiB kernel size: 64 .. 1.6 rows per group) */
static const double agg_groups[] = { 1048576, 4194304, 16777216, 67108864 };
#define NAGG_CAL (sizeof(agg_groups) / sizeof(agg_groups[0]))
_Static_assert(NAGG_CAL == 4 && NAGG_CAL <= PEMS_MODEL_MAXAGG,
	       "cal_kernels takes the medians of 4 agg_at lines");

/*
 * Five runs, R rows each: 1000 groups (pre-aggregation: agg_hash);
 * 64 Mi groups (R rows pass raw, Gb ~ 0.63 R groups, not compacted:
 * agg_raw, agg_merge per row, superstep 4 = R/agg_write + Gb/agg_fmt);
 * 1 Mi groups (raw, then compacted into Gc states: superstep 3 =
 * R/agg_merge + Gc/agg_compact, superstep 4 = Gc/agg_fmt); 4 Mi and
 * 16 Mi groups.  The last four also give the "agg_at" lines: at G_d/v
 * groups per VP, superstep 3's rows per CPU second and superstep 4's
 * groups per CPU second.
 */
static int cal_agg(struct cal *c)
{
	double r = floor(c->o->ksize / 16), h[4], t[NAGG_CAL][4], *b = t[NAGG_CAL - 1], *k = t[0];
	struct pems_model_params *m = c->m;
	double gb, gc;
	unsigned i;
	int rc;

	if ((rc = cal_agg_run(c, 1000, 2, h)))
		return rc;
	for (i = 0; i < NAGG_CAL; i++) {
		double g = agg_groups[i], gd = g * -expm1(-r / g);

		if ((rc = cal_agg_run(c, g, i == 0 ? 4 : i == NAGG_CAL - 1 ? 3 : CAL_KJOBS, t[i])))
			return rc;
		m->agg_at[i].x = gd / dmax(1, t[i][3]);
		m->agg_at[i].merge = r / t[i][1];
		m->agg_at[i].write = gd / t[i][2];
	}
	m->nagg = NAGG_CAL;
	gb = 67108864.0 * -expm1(-r / 67108864.0);
	gc = 1048576.0 * -expm1(-r / 1048576.0);
	m->agg_hash = r / h[0];
	m->agg_raw = r / b[0];
	m->agg_merge = r / b[1];
	m->agg_fmt = gc / k[2];
	m->agg_write = r / dmax(b[2] - gb / m->agg_fmt, 0.05 * b[2]);
	m->agg_compact = gc / dmax(k[1] - r / m->agg_merge, 0.05 * k[1]);
	return 0;
}

static int cal_sgd(struct cal *c)
{
	char in[4096], out[4096];
	struct pems_sgd_job job = { .data = in, .out = out };
	double wall, rows = floor(c->o->ksize / (65 * 4)), secs = 0;
	struct pems_gen_sgd g = { .count = (uint64_t)rows, .dim = 64, .noise = 0.5, .seed = 7,
				  .row_seed = 7 };
	struct pems_model_job j;
	size_t i, n;
	int rc;

	cal_path(c, in, sizeof(in), "dense");
	cal_path(c, out, sizeof(out), "model");
	job.model = PEMS_SGD_LINEAR;
	job.format = PEMS_SGD_DENSE;
	job.epochs = 1;
	job.sync = PEMS_SGD_SYNC_LOCAL;
	job.local_steps = 64;
	job.batch = 64;
	job.lr = 0.01;
	job.lr_decay = 0.5;
	job.lr_step = 1;
	rc = gen_done(c, pems_gen_sgd_file(&g, in), in);
	if (!rc)
		rc = cal_run(c, run_sgd, &job, "sgd", &wall, 0);
	unlink(in);
	strncat(in, ".weights", sizeof(in) - strlen(in) - 1);
	unlink(in);
	unlink(out);
	if (rc)
		return rc;
	if (steps(&n), n < 2)
		return cal_fail(c, -EIO, "the sgd run had %zu supersteps", n);
	pems_model_job_init(&j);
	j.algo = PEMS_MODEL_SGD;
	j.cost.bytes = 16 + rows * 65 * 4;
	kernel_keep(c, 5, &j);
	for (i = 0; i + 1 < n; i++)
		secs += kernel_secs(i);
	c->m->sgd = rows * 64 / secs;
	return 0;
}

/* the figures the kernel runs measure, each taken as a median */
static double *kernel_figure(struct pems_model_params *m, unsigned i)
{
	double *f[] = { &m->sort_part[0], &m->sort_part[1], &m->sort_local[0], &m->sort_local[1],
			&m->agg_raw, &m->agg_hash, &m->agg_merge, &m->agg_write, &m->agg_compact,
			&m->agg_fmt, &m->sgd, &m->flush_bw, &m->iops,
			&m->agg_at[0].merge, &m->agg_at[0].write, &m->agg_at[1].merge,
			&m->agg_at[1].write, &m->agg_at[2].merge, &m->agg_at[2].write,
			&m->agg_at[3].merge, &m->agg_at[3].write };

	return i < sizeof(f) / sizeof(f[0]) ? f[i] : NULL;
}

/* The kernel rates, each the median of @runs calibrations (other load
 * on the machine inflates CPU time too, through caches and the
 * hypervisor, by up to 2x in single runs). */
int cal_kernels(struct cal *c, unsigned runs)
{
	double x[32][16];
	unsigned r, i;
	double *f;
	int rc;

	if (runs < 1 || runs > 16)
		runs = 3;
	for (r = 0; r < runs; r++) {
		if ((rc = cal_sort(c, 0)) || (rc = cal_sort(c, 1)) || (rc = cal_agg(c)) ||
		    (rc = cal_sgd(c)))
			return rc;
		for (i = 0; (f = kernel_figure(c->m, i)) != NULL; i++)
			x[i][r] = *f;
	}
	for (i = 0; (f = kernel_figure(c->m, i)) != NULL; i++) {
		qsort(x[i], runs, sizeof(double), cal_dcmp);
		*f = runs % 2 ? x[i][runs / 2] : (x[i][runs / 2 - 1] + x[i][runs / 2]) / 2;
	}
	return 0;
}
