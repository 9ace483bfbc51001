/*
 * bsp_params.c - the BSP machine parameters of pems, in the manner of
 * Bisseling's bspbench: superstep latency l and per-byte cost g, fitted
 * as  time(superstep) = l + g*h  by least squares over several h.
 * Run under `mpirun -np P` (or alone for one rank); see bench/bsp-params.sh.
 *
 *   bsp_params empty --v V [--steps N]
 *       N empty supersteps: l = seconds per superstep (g not measured)
 *   bsp_params hrel --v V --sizes H1,H2,... [--kind NAME]
 *       h-relations: every VP puts H bytes into the VP with its index on
 *       the next rank (VP p + v/P; on one rank p + v/2), so each rank
 *       sends and receives h = (v/P)*H bytes per superstep; the fit is
 *       over that per-rank h
 *   bsp_params busy --v V --work USEC [--steps N]
 *       N supersteps in each of which every VP spins USEC microseconds
 *       of its thread's CPU time: the superstep latency under busy
 *       workers.  Prints the wall seconds per superstep and the CPU
 *       seconds per superstep of every thread of this rank (the model's
 *       lbusy = wall - p * cpu / cores: what a superstep costs beyond
 *       the CPU its work and the runtime need)
 *   bsp_params a2a --sizes B1,B2,...        (v = P: one VP per rank)
 *       pems_alltoallv where every VP sends an equal block of B/P bytes to
 *       every VP: h = B bytes sent per rank; compare bench/mpi/alltoallv.c
 *
 * Common options: --mu SIZE --mem SIZE --threads K --tmp DIR (may hold
 * %r) --reps R (timed supersteps per size, after one warm-up).
 * Rank 0 prints one line per run (STYLE.md rule 10):
 *   bench=bsp-params p=.. v=.. kind=.. l=.. g=.. r2=.. [ctx_rw=.. msg_rw=..]
 * and one line per size with --points:
 *   bench=bsp-params-point p=.. v=.. kind=.. h=.. secs=..
 * Times are VP 0's: the median over the timed supersteps of the interval
 * between its starts of consecutive supersteps (which includes the
 * barrier and the delivery of the previous superstep's messages).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pems.h"

#define MAXSIZES 32

enum mode { M_EMPTY, M_HREL, M_A2A, M_BUSY };

struct job {
	enum mode mode;
	const char *kind;
	unsigned v, ranks, steps, reps, nsizes;
	size_t sizes[MAXSIZES];		/* per VP (hrel), per rank (a2a) */
	double secs[MAXSIZES];		/* per superstep (median), filled on rank 0 */
	double *t;			/* reps + 1 start times of VP 0 */
	double l_empty;
	double work;			/* busy: seconds of CPU per VP per superstep */
	double cpu;			/* busy: this rank's CPU seconds per superstep */
};

/* ---- the SPMD programs ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median superstep time from the reps + 1 start times in j->t. */
static double median_step(struct job *j)
{
	double d[256];
	unsigned i, n = j->reps;

	for (i = 0; i < n; i++)
		d[i] = j->t[i + 1] - j->t[i];
	qsort(d, n, sizeof(double), cmp_double);
	return n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
}

static void empty_spmd(void *arg)
{
	struct job *j = arg;
	unsigned i;
	double t0 = 0;

	bsp_sync();
	if (bsp_pid() == 0)
		t0 = bsp_time();
	for (i = 0; i < j->steps; i++)
		bsp_sync();
	if (bsp_pid() == 0)
		j->l_empty = (bsp_time() - t0) / j->steps;
}

static double clock_secs(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Spin @secs of this thread's CPU time (a VP's compute). */
static void spin(double secs)
{
	double end = clock_secs(CLOCK_THREAD_CPUTIME_ID) + secs;
	volatile unsigned long x = 0;

	while (clock_secs(CLOCK_THREAD_CPUTIME_ID) < end)
		for (unsigned i = 0; i < 1000; i++)
			x += i;
}

/* Many short supersteps with work: the barrier while the workers of
 * every rank compute, as sgd's 95 supersteps per epoch meet it (the
 * empty supersteps' l is that of idle workers). */
static void busy_spmd(void *arg)
{
	struct job *j = arg;
	unsigned i;
	double t0 = 0, c0 = 0;

	spin(j->work);		/* warm-up superstep */
	bsp_sync();
	if (bsp_pid() == 0) {
		t0 = bsp_time();
		c0 = clock_secs(CLOCK_PROCESS_CPUTIME_ID);
	}
	for (i = 0; i < j->steps; i++) {
		spin(j->work);
		bsp_sync();
	}
	if (bsp_pid() == 0) {
		j->l_empty = (bsp_time() - t0) / j->steps;
		j->cpu = (clock_secs(CLOCK_PROCESS_CPUTIME_ID) - c0) / j->steps;
	}
}

static void hrel_spmd(void *arg)
{
	struct job *j = arg;
	unsigned p = bsp_pid(), v = bsp_nprocs(), P = pems_nranks(), si, r;
	unsigned target = P > 1 ? (p + v / P) % v : (p + v / 2) % v;
	size_t hmax = j->sizes[j->nsizes - 1];
	char *src = pems_malloc(hmax + 1), *dst = pems_malloc(hmax + 1);
	memset(src, (int)(p & 0xff), hmax + 1);
	memset(dst, 0, hmax + 1);
	bsp_push_reg(dst, hmax + 1);
	bsp_sync();
	for (si = 0; si < j->nsizes; si++) {
		size_t h = j->sizes[si];

		/* superstep 0 of each size: warm-up (delivers the last size) */
		for (r = 0; r <= j->reps; r++) {
			if (p == 0 && r >= 1)
				j->t[r - 1] = bsp_time();
			if (h)
				bsp_put(target, src, dst, 0, h);
			src[r % (hmax + 1)]++;	/* the context changes every superstep */
			bsp_sync();
		}
		if (p == 0) {
			j->t[j->reps] = bsp_time();
			j->secs[si] = median_step(j);
		}
	}
	bsp_pop_reg(dst);
	bsp_sync();
	pems_free(src);
	pems_free(dst);
}

static void a2a_spmd(void *arg)
{
	struct job *j = arg;
	unsigned p = bsp_pid(), v = bsp_nprocs(), si, r, q;
	size_t bmax = j->sizes[j->nsizes - 1];
	char *sb = pems_malloc(bmax + v), *rb = pems_malloc(bmax + v);
	size_t *cnt = pems_malloc(v * sizeof(size_t)), *dsp = pems_malloc(v * sizeof(size_t));
	memset(sb, (int)(p & 0xff), bmax + v);
	memset(rb, 0, bmax + v);
	bsp_sync();
	for (si = 0; si < j->nsizes; si++) {
		size_t blk = j->sizes[si] / v;

		for (q = 0; q < v; q++) {
			cnt[q] = blk;
			dsp[q] = q * blk;
		}
		for (r = 0; r <= j->reps; r++) {
			if (p == 0 && r >= 1)
				j->t[r - 1] = bsp_time();
			pems_alltoallv(sb, cnt, dsp, rb, cnt, dsp);
			bsp_sync();
		}
		if (p == 0) {
			j->t[j->reps] = bsp_time();
			j->secs[si] = median_step(j);
		}
	}
	pems_free(sb);
	pems_free(rb);
	pems_free(cnt);
	pems_free(dsp);
}

/* ---- least squares: secs = l + g*h ---- */

static void fit(const double *x, const double *y, unsigned n, double *l, double *g, double *r2)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0, res = 0;
	unsigned i;

	for (i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= n;
	my /= n;
	for (i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
		syy += (y[i] - my) * (y[i] - my);
	}
	*g = sxx > 0 ? sxy / sxx : 0;
	*l = my - *g * mx;
	for (i = 0; i < n; i++) {
		double e = y[i] - (*l + *g * x[i]);

		res += e * e;
	}
	*r2 = syy > 0 ? 1 - res / syy : 1;
}

/* ---- command line ---- */

static void usage(void)
{
	fprintf(stderr,
		"usage: bsp_params empty|hrel|a2a|busy [--v V] [--sizes H1,H2,...] [--kind NAME]\n"
		"                  [--mu SIZE] [--mem SIZE] [--threads K] [--tmp DIR]\n"
		"                  [--reps R] [--steps N] [--work USEC] [--points]\n");
	exit(2);
}

static size_t size_arg(const char *s)
{
	size_t v;

	if (pems_parse_size(s, &v)) {
		fprintf(stderr, "bsp_params: error: %s is not a size (e.g. 64K, 4M)\n", s);
		exit(2);
	}
	return v;
}

static void sizes_arg(struct job *j, const char *s)
{
	char *dup = strdup(s), *tok, *save;

	j->nsizes = 0;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (j->nsizes == MAXSIZES)
			usage();
		j->sizes[j->nsizes++] = size_arg(tok);
	}
	free(dup);
	if (j->nsizes < 2)
		usage();
}

int main(int argc, char **argv)
{
	struct job j;
	struct pems_config cfg;
	struct pems_stats st;
	bool points = false;
	double x[MAXSIZES], l, g, r2;
	unsigned i;
	int a, rc;

	if (argc < 2)
		usage();
	memset(&j, 0, sizeof(j));
	if (!strcmp(argv[1], "empty"))
		j.mode = M_EMPTY, j.kind = "empty";
	else if (!strcmp(argv[1], "hrel"))
		j.mode = M_HREL, j.kind = "net";
	else if (!strcmp(argv[1], "a2a"))
		j.mode = M_A2A, j.kind = "alltoallv-pems";
	else if (!strcmp(argv[1], "busy"))
		j.mode = M_BUSY, j.kind = "busy";
	else
		usage();
	pems_rank_barrier();	/* MPI up before pems_nranks() */
	j.ranks = pems_nranks();
	j.steps = 200;
	j.reps = 5;
	pems_config_init(&cfg);
	cfg.quiet = true;
	cfg.threads = 2;
	for (a = 2; a < argc; a++) {
		const char *o = argv[a], *val = a + 1 < argc ? argv[a + 1] : NULL;

		if (!strcmp(o, "--points")) {
			points = true;
			continue;
		}
		if (!val)
			usage();
		a++;
		if (!strcmp(o, "--v"))
			j.v = (unsigned)atoi(val);
		else if (!strcmp(o, "--sizes"))
			sizes_arg(&j, val);
		else if (!strcmp(o, "--kind"))
			j.kind = val;
		else if (!strcmp(o, "--mu"))
			cfg.mu = size_arg(val);
		else if (!strcmp(o, "--mem"))
			cfg.mem = size_arg(val);
		else if (!strcmp(o, "--threads"))
			cfg.threads = (unsigned)atoi(val);
		else if (!strcmp(o, "--tmp")) {
			cfg.tmp[0] = val;
			cfg.ntmp = 1;
		} else if (!strcmp(o, "--reps"))
			j.reps = (unsigned)atoi(val);
		else if (!strcmp(o, "--steps"))
			j.steps = (unsigned)atoi(val);
		else if (!strcmp(o, "--work"))
			j.work = atof(val) * 1e-6;
		else
			usage();
	}
	if (j.mode == M_A2A || !j.v)
		j.v = j.ranks;
	if ((j.mode != M_EMPTY && j.mode != M_BUSY && !j.nsizes) || (j.mode == M_BUSY && !(j.work > 0)) ||
	    !j.reps || j.reps > 255 || !j.steps)
		usage();
	j.t = calloc(j.reps + 1, sizeof(double));
	cfg.procs = j.v;
	rc = pems_configure(&cfg);
	if (rc) {
		fprintf(stderr, "bsp_params: error: bad configuration: %s\n", pems_strerror(rc));
		return 1;
	}
	rc = pems_spmd(NULL, j.mode == M_EMPTY ? empty_spmd : j.mode == M_HREL ? hrel_spmd :
		       j.mode == M_BUSY ? busy_spmd : a2a_spmd, &j);
	if (rc) {
		fprintf(stderr, "bsp_params: error: the run failed: %s\n", pems_strerror(rc));
		return 1;
	}
	pems_get_stats(&st);
	if (pems_rank() != 0)
		return 0;
	if (j.mode == M_BUSY) {
		printf("bench=bsp-params-busy p=%u v=%u k=%u work_us=%.0f steps=%u secs=%.9f rank_cpu=%.9f\n",
		       j.ranks, j.v, cfg.threads, j.work * 1e6, j.steps, j.l_empty, j.cpu);
		return 0;
	}
	if (j.mode == M_EMPTY) {
		printf("bench=bsp-params p=%u v=%u kind=%s l=%.9f g=nan r2=nan\n", j.ranks, j.v,
		       j.kind, j.l_empty);
		return 0;
	}
	for (i = 0; i < j.nsizes; i++) {
		/* h: bytes each rank sends (and receives) per superstep */
		x[i] = j.mode == M_HREL ? (double)j.sizes[i] * (j.v / j.ranks) :
		       (double)(j.sizes[i] / j.v * j.v);
		if (points)
			printf("bench=bsp-params-point p=%u v=%u kind=%s h=%.0f secs=%.9f\n", j.ranks,
			       j.v, j.kind, x[i], j.secs[i]);
	}
	fit(x, j.secs, j.nsizes, &l, &g, &r2);
	printf("bench=bsp-params p=%u v=%u kind=%s l=%.9f g=%.6e r2=%.4f ctx_rw=%llu msg_rw=%llu\n",
	       j.ranks, j.v, j.kind, l, g, r2,
	       (unsigned long long)(st.ctx_read + st.ctx_written),
	       (unsigned long long)(st.msg_read + st.msg_written));
	return 0;
}
