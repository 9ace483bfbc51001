/*
 * calibrate.c - measuring a machine for the cost model: memcpy and qsort
 * rates, the CPU share other load and the comm threads' polling leave,
 * the disk through pems_file_* (bandwidths, random reads, per-call
 * latency), the superstep latency and per-VP cost, then the algorithms'
 * rates (cal_kernels.c) and the overlap share they leave.  Every test
 * runs SPMD sections of its own on the scratch directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cal.h"

/* "spread" is not measured by calibrate but fitted once on 630 stored
 * validation runs (the overlap shares adjusted as a calibration with the
 * spread would measure them); the fit is flat between 0.15 and 0.3
 * (docs/cost-model.md) */
#define MODEL_SPREAD 0.3
#define LAT_CALL ((size_t)4 << 20)	/* bytes per call of the latency test */

int cal_fail(struct cal *c, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->o->err, sizeof(c->o->err), fmt, ap);
	va_end(ap);
	return rc;
}

static double clock_secs(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double wall_now(void) { return clock_secs(CLOCK_MONOTONIC); }
static double thread_cpu(void) { return clock_secs(CLOCK_THREAD_CPUTIME_ID); }

int cal_configure(unsigned procs, unsigned k, size_t mu, size_t mem, const char *tmp)
{
	struct pems_config cfg;
	int rc = pems_config_init(&cfg);

	if (rc)
		return rc;
	cfg.procs = procs;
	cfg.threads = k;
	cfg.mu = mu;
	cfg.mem = mem;
	cfg.tmp[0] = tmp;
	cfg.ntmp = 1;
	cfg.quiet = true;
	cfg.stats = false;
	cfg.stats_json = NULL;
	return pems_configure(&cfg);
}

int cal_recorded(int (*fn)(void *), void *arg, double *wall)
{
	double t = wall_now();
	int rc;

	pems_steps_record(true);
	rc = fn(arg);
	*wall = wall_now() - t;
	pems_steps_record(false);
	return rc;
}

double cal_run_end(double wall, double *w)
{
	size_t n, i;
	const struct pems_step *s = pems_steps(&n);
	double steps = 0;

	*w = 0;
	for (i = 0; i < n; i++) {
		steps += s[i].secs;
		*w += (double)s[i].msg_written + (double)s[i].file_written;
	}
	return dmax(0, wall - steps);
}

/* ---- one core: memcpy and qsort ---- */

static double copy_rate(void)
{
	size_t n = 64u << 20;
	char *a = malloc(n), *b = malloc(n);
	double t, best = 0;
	int i;

	if (!a || !b) {
		free(a);
		free(b);
		return 0;
	}
	memset(a, 1, n);
	memset(b, 2, n);
	for (i = 0; i < 5; i++) {
		t = thread_cpu();
		memcpy(i % 2 ? a : b, i % 2 ? b : a, n);
		t = thread_cpu() - t;
		if (t > 0 && n / t > best)
			best = n / t;
	}
	free(a);
	free(b);
	return best;
}

struct qkey { uint64_t hi, lo, idx; };

static int qcmp(const void *x, const void *y)
{
	const struct qkey *a = x, *b = y;

	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* VP 0 sorts the samples' 24-byte keys with qsort */
static double qsort_rate(void)
{
	size_t n = 1u << 20, i;
	struct qkey *k = malloc(n * sizeof(*k));
	uint64_t x = 88172645463325252ull;
	double t;

	if (!k)
		return 0;
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k[i] = (struct qkey){ x, 0, i };
	}
	t = thread_cpu();
	qsort(k, n, sizeof(*k), qcmp);
	t = thread_cpu() - t;
	free(k);
	return t / (n * log2((double)n)) * 1e9;
}

/* ---- CPU share: k threads spinning get s_k cores; under CFS that is
 * min(k, c*k/(k+L)) with L runnable threads of others, so L = c*k/s_k - k */

static void *spin(void *arg)
{
	double *cpu = arg, t0 = wall_now();
	volatile uint64_t x = 0;

	while (wall_now() - t0 < 1.0)
		x = x * 6364136223846793005ull + 1;
	*cpu = thread_cpu();
	return NULL;
}

/* the comm thread's idle loop (pems/transport.c): usleep(20) between polls */
static void *poller(void *arg)
{
	double t0 = wall_now();

	(void)arg;
	while (wall_now() - t0 < 1.0)
		usleep(20);
	return NULL;
}

/* cores @k spinning threads get in one second beside @npoll pollers */
static double spin_share(unsigned k, unsigned npoll)
{
	pthread_t th[64], pt[8];
	double cpu[64], share = 0, t0 = wall_now();
	unsigned i, n = 0, np = 0;

	for (i = 0; i < npoll && i < 8; i++)
		if (!pthread_create(&pt[np], NULL, poller, NULL))
			np++;
	for (i = 0; i < k && i < 64; i++)
		if (!pthread_create(&th[n], NULL, spin, &cpu[n]))
			n++;
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		share += cpu[i];
	}
	for (i = 0; i < np; i++)
		pthread_join(pt[i], NULL);
	return n ? share / (wall_now() - t0) : 0;
}

/* L: the other runnable threads that explain the share k spinners get;
 * *poll: the cores one comm thread's polling takes from busy workers
 * (what two pollers take from them, halved; alone on an idle core a
 * poller uses more, but that is not taken from anyone) */
static double background_load(unsigned k, double cores, double *poll)
{
	double share = spin_share(k, 0);

	*poll = dmax(0, (share - spin_share(k, 2)) / 2);
	if (share <= 0)
		return 0;
	return dmax(0, dmin(cores, k) * k / share - k);
}

/* poll_p: p ranks of k workers each put p*k busy threads beside p comm
 * threads polling; measured with as many threads as the runs have (on a
 * shared core a poller's wake-ups wait longer the more are runnable) */
static void cal_poll(struct cal *c)
{
	static const unsigned ps[] = { 2, 4 };
	unsigned i;

	for (i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		double s0 = spin_share(ps[i] * c->o->k, 0), s1 = spin_share(ps[i] * c->o->k, ps[i]);

		if (pems_model_ptab_set(&c->m->poll_p, ps[i], dmax(0, (s0 - s1) / ps[i])))
			return;
	}
}

/* ---- disk: supersteps of every worker's VP ---- */

struct disk_job {
	int fd;
	double per_vp;		/* bytes */
	unsigned rounds;	/* of 32 random 4 KiB reads */
	bool reads;		/* the second run: reads, after an fdatasync */
	double secs[5];		/* write, write into a hole, read, random, 4 MiB calls */
};

static void disk_io(int fd, void *buf, size_t len, uint64_t off, bool write)
{
	long long n = write ? pems_file_write(fd, buf, len, off) : pems_file_read(fd, buf, len, off);

	if (n != (long long)len)
		bsp_abort("pems: error: model calibrate: %s the test file failed",
			  write ? "writing" : "reading");
}

static void disk_random(const struct disk_job *d, char *buf, uint64_t x)
{
	uint64_t offs[32];
	unsigned r, i;

	for (r = 0; r < d->rounds; r++) {
		for (i = 0; i < 32; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			offs[i] = x % (uint64_t)(d->per_vp * bsp_nprocs() / 4096) * 4096;
		}
		if (pems_file_read_pieces(d->fd, buf, offs, 32, 4096) != 32 * 4096)
			bsp_abort("pems: error: model calibrate: random reads failed");
	}
}

/* Run 1: write into allocated blocks, then into the hole after them.
 * Run 2: read, random reads, then the hole's half in 4 MiB calls one at
 * a time per worker: what a synchronous call costs beyond its bytes (sgd
 * reads its rows so; the sort and aggregate one slice per VP). */
static void disk_spmd(void *arg)
{
	struct disk_job *d = arg;
	size_t blk = 64u << 20, off0 = (size_t)d->per_vp * bsp_pid(), o;
	char *buf = pems_malloc(blk);

	memset(buf, 0x5a, blk);
	for (o = 0; o < d->per_vp; o += blk)
		disk_io(d->fd, buf, blk, off0 + o, !d->reads);
	bsp_sync();
	if (d->reads) {
		disk_random(d, buf, 0x9e3779b97f4a7c15ull * (bsp_pid() + 1));
		bsp_sync();
	}
	off0 += (size_t)d->per_vp * bsp_nprocs();
	for (o = 0; o < d->per_vp; o += d->reads ? LAT_CALL : blk)
		disk_io(d->fd, buf, d->reads ? LAT_CALL : blk, off0 + o, !d->reads);
	pems_free(buf);
}

static int run_disk(void *arg)
{
	return pems_spmd(NULL, disk_spmd, arg);
}

/* the test file, allocated ahead like the message logs and the outputs:
 * O_DIRECT writes that extend a file take ext4's slow path */
static int disk_file(struct cal *c, const char *path, const struct disk_job *d)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd >= 0) {
		if (posix_fallocate(fd, 0, (off_t)(d->per_vp * c->o->k)) ||
		    ftruncate(fd, (off_t)(2 * d->per_vp * c->o->k)))
			fprintf(stderr, "pems: warning: model calibrate: cannot size '%s'\n", path);
		close(fd);
	}
	fd = pems_file_open(path, O_RDWR, 0600);
	return fd < 0 ? cal_fail(c, fd, "cannot create '%s': %s", path, pems_strerror(fd)) : fd;
}

/* both runs; their supersteps' seconds into d->secs */
static int disk_runs(struct cal *c, struct disk_job *d)
{
	const struct pems_step *s;
	double wall;
	size_t n;
	int rc;

	rc = cal_configure(c->o->k, c->o->k, 80u << 20, (size_t)c->o->k * (80u << 20) + (256u << 20),
			   c->o->dir);
	if (rc || (rc = cal_recorded(run_disk, d, &wall)))
		return rc;
	s = pems_steps(&n);
	if (n != 2)
		return -EIO;
	d->secs[0] = s[0].secs;
	d->secs[1] = s[1].secs;
	d->reads = true;
	if ((rc = cal_recorded(run_disk, d, &wall)))
		return rc;
	s = pems_steps(&n);
	if (n != 3)
		return -EIO;
	d->secs[2] = s[0].secs;
	d->secs[3] = s[1].secs;
	d->secs[4] = s[2].secs;
	return 0;
}

static int disk_test(struct cal *c, double size, struct disk_job *out)
{
	char path[4096];
	struct disk_job d = { .rounds = 64 };
	int rc;

	snprintf(path, sizeof(path), "%s/pems-model-cal.%d", c->o->dir, (int)getpid());
	d.per_vp = floor(size / c->o->k / (64 * MIB)) * 64 * MIB;
	if (d.per_vp < 64 * MIB)
		d.per_vp = 64 * MIB;
	d.fd = disk_file(c, path, &d);
	if (d.fd < 0)
		return d.fd;
	rc = disk_runs(c, &d);
	pems_file_close(d.fd);
	unlink(path);
	if (rc)
		return cal_fail(c, rc, "the disk test on %s failed: %s", c->o->dir, pems_strerror(rc));
	*out = d;
	return 0;
}

static double median3(double a, double b, double c)
{
	return a > b ? (b > c ? b : a > c ? c : a) : (a > c ? a : b > c ? c : b);
}

/* A virtual machine's disk is cached by its host: one test gave writes at
 * 0.99 and, 13 minutes later, 1.79 GB/s.  So a warm-up test of a quarter
 * of the size first (not kept: the first pass over new blocks), then
 * three tests, and each figure is the median of its three. */
static int cal_disk(struct cal *c)
{
	struct disk_job d, r[3];
	unsigned i, t, k = c->o->k;
	int rc = disk_test(c, c->o->size / 4, &d);

	for (t = 0; !rc && t < 3; t++)
		rc = disk_test(c, c->o->size, &r[t]);
	if (rc)
		return rc;
	d = r[0];
	for (i = 0; i < 5; i++)
		d.secs[i] = median3(r[0].secs[i], r[1].secs[i], r[2].secs[i]);
	c->m->write_bw = d.per_vp * k / d.secs[0];
	c->m->fwrite_bw = d.per_vp * k / d.secs[1];
	c->m->read_bw = d.per_vp * k / d.secs[2];
	c->m->iops = 32.0 * d.rounds * k / d.secs[3];
	/* every worker read per_vp in calls of LAT_CALL, all at once: the
	 * time beyond the bytes at read_bw, per call of one worker */
	c->m->lat = dmax(0, d.secs[4] - d.per_vp * k / c->m->read_bw) / (d.per_vp / LAT_CALL);
	return 0;
}

/* ---- superstep latency and the per-VP cost of a superstep ---- */

static void empty_spmd(void *arg)
{
	const unsigned *steps = arg;
	unsigned i;

	for (i = 0; i < *steps; i++)
		bsp_sync();
}

static int run_empty(void *arg)
{
	return pems_spmd(NULL, empty_spmd, arg);
}

/* the median superstep of the last recorded run from @from on, but its
 * last, which ends the run */
static double median_steps(size_t from)
{
	size_t n, m = 0, i, j;
	const struct pems_step *s = pems_steps(&n);
	double *x = malloc((n + 1) * sizeof(double)), mid;

	if (!x)
		return 0;
	for (i = from; i + 1 < n; i++) {
		double y = s[i].secs;

		for (j = m++; j > 0 && x[j - 1] > y; j--)
			x[j] = x[j - 1];
		x[j] = y;
	}
	mid = m ? x[m / 2] : 0;
	free(x);
	return mid;
}

/* l at p = 1: empty supersteps of k VPs; vp_secs: what 256 VPs add */
static int cal_latency(struct cal *c)
{
	unsigned steps = 200, big = 256, i, k = c->o->k;
	double wall, l_small, l_big;
	struct pems_model_params *m = c->m;

	if (cal_configure(k, k, 1u << 20, 256u << 20, c->o->dir) ||
	    cal_recorded(run_empty, &steps, &wall))
		return cal_fail(c, -EIO, "the superstep latency test failed");
	l_small = median_steps(1);
	if (cal_configure(big, k, 1u << 20, 512u << 20, c->o->dir) ||
	    cal_recorded(run_empty, &steps, &wall))
		return cal_fail(c, -EIO, "the superstep latency test failed");
	l_big = median_steps(1);
	m->vp_secs = dmax(0, (l_big - l_small) * dmin(k, m->cores) / (big - k));
	for (i = 0; i < m->nbsp && m->bsp[i].p != 1; i++)
		;
	if (i == m->nbsp) {
		if (i == PEMS_MODEL_MAXP)
			return cal_fail(c, -ENOSPC, "the superstep latency test failed");
		m->nbsp++;
		m->bsp[i].g = 0;
	}
	m->bsp[i].p = 1;
	m->bsp[i].l = l_small;
	return 0;
}

/* ---- the overlap share ---- */

int cal_dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* (measured - max) / lesser of each superstep of kernel job @k with both
 * terms (the lesser at least a tenth of the greater, the superstep at
 * least 0.2 s) into a[] from *n on */
static void overlap_samples(const struct cal *c, const struct kjob *k,
			    const struct pems_model_layout *L, double *a, unsigned *n)
{
	struct pems_model_job j = k->j;
	struct model_plan pl;
	unsigned s;

	if (!k->n || pems_model_plan(&j, (unsigned)c->m->cores))
		return;
	model_build(&j, c->m, &pl);
	for (s = 0; s < pl.c.n && s < k->n && *n < 64; s++) {
		struct pems_model_time t;
		double comp, big, small;

		model_step_time(&pl, s, &j, c->m, L, &t);
		comp = dmax(t.cpu, t.chain);
		big = dmax(dmax(t.disk, t.xfer), comp);
		small = dmin(t.disk, comp);
		if (small < 0.1 * big || big * pl.c.s[s].reps < 0.2 || !(k->secs[s] > 0))
			continue;
		a[(*n)++] = (k->secs[s] - t.t) / small;	/* t.t: max + sync, no overlap */
	}
}

/*
 * The model's max() hides the lesser of a superstep's disk and compute
 * times under the greater; the kernel runs (p = 1) show how much of it
 * is not hidden, with every other parameter as just calibrated: the
 * median over their supersteps, within [0, 1].
 */
static void cal_overlap(struct cal *c)
{
	struct pems_model_params *m = c->m;
	struct pems_model_layout L = { .nodes = 1, .cores = m->cores, .load = m->load,
				       .poll = m->poll, .lat = m->lat, .fwrite_bw = m->fwrite_bw,
				       .read_bw = m->read_bw, .write_bw = m->write_bw,
				       .iops = m->iops };
	double a[64], g;
	unsigned i, n = 0;

	m->overlap = 0;
	pems_model_bsp(m, 1, &L.l, &g);
	for (i = 0; i < CAL_KJOBS; i++)
		overlap_samples(c, &c->kj[i], &L, a, &n);
	qsort(a, n, sizeof(a[0]), cal_dcmp);
	if (n)
		m->overlap = dmin(1, dmax(0, n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2));
}

/* l and g of p > 1 from bench/bsp-params.sh's CSV: kind empty / net, v = 64 */
static int cal_bsp_csv(struct cal *c, const char *path)
{
	struct pems_model_params *m = c->m;
	FILE *f = fopen(path, "r");
	char line[256], kind[32];
	unsigned p, v, i;
	double l, g, r2;

	if (!f)
		return cal_fail(c, -errno, "cannot read '%s': %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u,%u,%31[^,],%lf,%lf,%lf", &p, &v, kind, &l, &g, &r2) < 5 || v != 64)
			continue;
		for (i = 0; i < m->nbsp && m->bsp[i].p != p; i++)
			;
		if (i == m->nbsp) {
			if (m->nbsp == PEMS_MODEL_MAXP)
				break;
			m->bsp[m->nbsp].p = p;
			m->bsp[m->nbsp].l = m->bsp[m->nbsp].g = 0;
			m->nbsp++;
		}
		if (!strcmp(kind, "empty") && p > 1)
			m->bsp[i].l = l;	/* p = 1: measured here */
		else if (!strcmp(kind, "net"))
			m->bsp[i].g = g;
	}
	fclose(f);
	return 0;
}

int pems_model_calibrate(struct pems_model_cal *o, struct pems_model_params *m)
{
	struct cal c = { .o = o, .m = m };
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	time_t now = time(NULL);
	int rc;

	o->err[0] = '\0';
	if (!o->base)
		memset(m, 0, sizeof(*m));
	strftime(m->date, sizeof(m->date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	m->cores = cores > 0 ? (double)cores : 1;
	if (!o->k)
		o->k = (unsigned)m->cores;
	m->copy_bw = copy_rate();
	m->qsort_ns = qsort_rate();
	m->load = background_load(o->k, m->cores, &m->poll);
	if ((rc = cal_latency(&c)))
		return rc;
	cal_poll(&c);
	if ((rc = cal_disk(&c)) || (rc = cal_setup(&c)))
		return rc;
	if (!o->base) {
		if ((rc = cal_kernels(&c, o->runs)))
			return rc;
		m->spread = MODEL_SPREAD;	/* before cal_overlap, which uses it */
		cal_overlap(&c);
	}
	/* the setup run's fixed part: its end less what its bytes cost */
	m->setup = dmax(0, c.end0 - (m->flush_bw > 0 ? c.w0 / m->flush_bw : 0));
	if (o->bsp_csv)
		return cal_bsp_csv(&c, o->bsp_csv);
	return 0;
}
