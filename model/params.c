/*
 * params.c - the parameter file of the cost model: "pems-model 1", then
 * "KEY VALUE" lines for the single terms (pkeys below) and per-p or
 * per-algorithm lines for the terms measured at several rank counts
 * (docs/cost-model.md lists them).  Unknown keys are refused rather than
 * skipped, so a typo cannot leave a term at its default silently.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model_internal.h"

#define MAXP PEMS_MODEL_MAXP

/* Add a line's value; -1 (a bad line) when the table is full or !@ok. */
static int ptab_add(struct pems_model_ptab *t, unsigned p, double v, bool ok)
{
	if (t->n >= MAXP || !ok)
		return -1;
	t->e[t->n].p = p;
	t->e[t->n++].v = v;
	return 0;
}

int pems_model_ptab_set(struct pems_model_ptab *t, unsigned p, double v)
{
	unsigned i;

	for (i = 0; i < t->n && t->e[i].p != p; i++)
		;
	if (i == t->n)
		return ptab_add(t, p, v, true) ? -ENOSPC : 0;
	t->e[i].v = v;
	return 0;
}

/* The value at @p ranks (the first line for it), else @dflt. */
static double ptab_at(const struct pems_model_ptab *t, unsigned p, double dflt)
{
	unsigned i;

	for (i = 0; i < t->n; i++)
		if (t->e[i].p == p)
			return t->e[i].v;
	return dflt;
}

static void ptab_write(FILE *f, const char *key, const struct pems_model_ptab *t)
{
	unsigned i;

	for (i = 0; i < t->n; i++)
		fprintf(f, "%s %u %.6g\n", key, t->e[i].p, t->e[i].v);
}

/* Add a line's value; -1 (a bad line) when @cap lines are in or !@ok.
 * @algo is sscanf's %15s into 64 zeroed bytes: 16 of them hold it. */
static int atab_add(struct pems_model_atab *t, unsigned cap, const char *algo, unsigned p,
		    double v, bool ok)
{
	if (t->n >= cap || !ok)
		return -1;
	memcpy(t->e[t->n].algo, algo, 16);
	t->e[t->n].p = p;
	t->e[t->n++].v = v;
	return 0;
}

/* The value of @algo at @p ranks (the first line for it), else @dflt;
 * a NULL @algo has none. */
static double atab_at(const struct pems_model_atab *t, const char *algo, unsigned p,
		      double dflt)
{
	unsigned i;

	for (i = 0; algo && i < t->n; i++)
		if (t->e[i].p == p && !strcmp(t->e[i].algo, algo))
			return t->e[i].v;
	return dflt;
}

/* @with_p: "KEY ALGO P VALUE" lines, else "KEY ALGO VALUE" */
static void atab_write(FILE *f, const char *key, const struct pems_model_atab *t, bool with_p)
{
	unsigned i;

	for (i = 0; i < t->n; i++)
		if (with_p)
			fprintf(f, "%s %s %u %.6g\n", key, t->e[i].algo, t->e[i].p, t->e[i].v);
		else
			fprintf(f, "%s %s %.6g\n", key, t->e[i].algo, t->e[i].v);
}

/* The rates must be in the file and positive; the terms marked zero_ok
 * may be 0 or left out (read as 0: files older than the term), since
 * calibration can measure 0 for them -- `lat` is 0 when 4 MiB calls read
 * as fast per byte as 64 MiB ones. */
static const struct pkey {
	const char *key;
	size_t off;
	const char *what;
	bool zero_ok;
} pkeys[] = {
#define K(f, w) { #f, offsetof(struct pems_model_params, f), w, false }
#define K0(f, w) { #f, offsetof(struct pems_model_params, f), w, true }
	K(cores, "online cores"),
	K0(load, "runnable threads of other processes during calibration (0: quiet)"),
	K0(poll, "cores a rank's comm thread takes from busy workers polling (usleep(20) loop, transport.c), p > 1"),
	K(read_bw, "bytes/s, sequential reads through pems_file_read (64 MiB calls, all workers)"),
	K(write_bw, "bytes/s, sequential writes through pems_file_write into allocated blocks (message logs)"),
	K(fwrite_bw, "bytes/s, the same into a hole of a sized file (outputs)"),
	K(iops, "4 KiB random reads/s in the sampling pattern (superstep 0 of the kernel sort)"),
	K0(lat, "seconds a synchronous pems_file_read call costs beyond its bytes (4 MiB calls, every worker reading)"),
	K(copy_bw, "bytes/s of memcpy on one core"),
	K(qsort_ns, "ns per n*log2(n) of qsort of 24-byte keys (VP 0's splitters)"),
	K0(vp_secs, "core-seconds of runtime work per VP per superstep"),
	K0(setup, "seconds per run outside the supersteps besides its end's flush_bw term (plan, files, runtime start)"),
	K0(flush_bw, "bytes written (message store, files) per second of a run's end (freeing the deleted logs, the output's fsync)"),
	K0(overlap, "share of the lesser of a superstep's disk and compute times not hidden under the greater (the kernel runs' supersteps)"),
	K0(spread, "relative spread of a superstep's disk and compute times: the superstep takes their expected max (fitted, docs/cost-model.md)"),
	{ "sort_part_u64", offsetof(struct pems_model_params, sort_part[0]), "bytes/s per core, sort superstep 2 (classify, scatter, exchange), u64", false },
	{ "sort_part_rec100", offsetof(struct pems_model_params, sort_part[1]), "the same, rec100", false },
	{ "sort_local_u64", offsetof(struct pems_model_params, sort_local[0]), "bytes/s per core, sort superstep 3 (radix sort, write), u64", false },
	{ "sort_local_rec100", offsetof(struct pems_model_params, sort_local[1]), "the same, rec100", false },
	K(agg_raw, "input rows/s per core, aggregate superstep 2, rows passed through raw"),
	K(agg_hash, "input rows/s per core, aggregate superstep 2, hash pre-aggregation"),
	K(agg_merge, "rows/s per core, aggregate superstep 3 (bucket, sort, pass 1, park), per row received"),
	K(agg_write, "rows/s per core, aggregate superstep 4 (unpark, walk the rows), per parked row"),
	K(agg_compact, "groups/s per core, aggregate superstep 3: compacting few groups into states"),
	K(agg_fmt, "groups/s per core, aggregate superstep 4: finalize, format, write a group"),
	K(sgd, "rows*dim/s per core, sgd gradient steps (dense)"),
#undef K
#undef K0
};
#define NPKEYS (sizeof(pkeys) / sizeof(pkeys[0]))

static double *pfield(struct pems_model_params *m, const struct pkey *k)
{
	return (double *)(void *)((char *)m + k->off);
}

static double pvalue(const struct pems_model_params *m, const struct pkey *k)
{
	return *(const double *)(const void *)((const char *)m + k->off);
}

/* the per-p and per-algorithm lines, with a comment where one helps */
static void write_tables(FILE *f, const struct pems_model_params *m)
{
	unsigned i;

	ptab_write(f, "setup_mpi", &m->setup_p);
	if (m->poll_p.n)
		fprintf(f, "# poll_p P C: cores one rank's comm thread takes from busy workers when P\n"
			   "# ranks of k workers share this machine (P*k spinning threads beside P pollers)\n");
	ptab_write(f, "poll_p", &m->poll_p);
	ptab_write(f, "cpu_p", &m->cpu_p);
	atab_write(f, "cpu_alg", &m->cpu_a, true);
	ptab_write(f, "lbusy", &m->lbusy);
	ptab_write(f, "overlap_p", &m->overlap_p);
	atab_write(f, "overlap_alg", &m->ovl_a, true);
	atab_write(f, "kscale", &m->ks, false);
	for (i = 0; i < m->ncpus; i++)
		fprintf(f, "cpu_step %s %u %u %.6g\n", m->cpu_s[i].algo, m->cpu_s[i].step,
			m->cpu_s[i].p, m->cpu_s[i].f);
	if (m->nagg)
		fprintf(f, "# agg_at X M W: the aggregate at X groups per VP: merge superstep (3)\n"
			   "# M rows received/s per core, write superstep (4) W groups/s per core\n");
	for (i = 0; i < m->nagg; i++)
		fprintf(f, "agg_at %.6g %.6g %.6g\n", m->agg_at[i].x, m->agg_at[i].merge,
			m->agg_at[i].write);
}

int pems_model_save(const char *path, const struct pems_model_params *m)
{
	FILE *f = fopen(path, "w");
	size_t i;

	if (!f)
		return -errno;
	fprintf(f, "pems-model 1\n# written by 'pems-run model calibrate'; docs/cost-model.md\n");
	fprintf(f, "date %s\n", m->date);
	for (i = 0; i < NPKEYS; i++)
		fprintf(f, "%-17s %.6g\t# %s\n", pkeys[i].key, pvalue(m, &pkeys[i]), pkeys[i].what);
	fprintf(f, "# bsp P L G: superstep latency L (s) and cost G (s per byte each rank\n"
		   "# sends to other VPs) at P ranks on this machine (bench/bsp-params.sh)\n");
	for (i = 0; i < m->nbsp; i++)
		fprintf(f, "bsp %u %.6g %.6g\n", m->bsp[i].p, m->bsp[i].l, m->bsp[i].g);
	write_tables(f, m);
	if (ferror(f)) {
		fclose(f);
		return -EIO;
	}
	return fclose(f) ? -errno : 0;
}

int params_agg_at_add(struct pems_model_params *m, double x, double merge, double write)
{
	unsigned i;

	if (m->nagg >= PEMS_MODEL_MAXAGG)
		return -ENOSPC;
	if (!(x > 0) || !(merge > 0) || !(write > 0))
		return -EINVAL;
	for (i = 0; i < m->nagg; i++)
		if (m->agg_at[i].x == x)
			return -EINVAL;
	for (i = m->nagg; i > 0 && m->agg_at[i - 1].x > x; i--)
		m->agg_at[i] = m->agg_at[i - 1];
	m->agg_at[i].x = x;
	m->agg_at[i].merge = merge;
	m->agg_at[i].write = write;
	m->nagg++;
	return 0;
}

/* the lines with a rank count or an algorithm; 1: not one of them */
static int table_line(struct pems_model_params *m, const char *line)
{
	char key[64] = { 0 };	/* what is copied past a name's NUL: zeros */
	double x, y, z;
	unsigned p, st;

	if (sscanf(line, "bsp %u %lf %lf", &p, &x, &y) == 3) {
		if (m->nbsp >= MAXP)
			return -1;
		m->bsp[m->nbsp].p = p;
		m->bsp[m->nbsp].l = x;
		m->bsp[m->nbsp++].g = y;
		return 0;
	}
	if (sscanf(line, "setup_mpi %u %lf", &p, &x) == 2)
		return ptab_add(&m->setup_p, p, x, true);
	if (sscanf(line, "cpu_p %u %lf", &p, &x) == 2)
		return ptab_add(&m->cpu_p, p, x, x > 0);
	if (sscanf(line, "cpu_alg %15s %u %lf", key, &p, &x) == 3)
		return atab_add(&m->cpu_a, 4 * MAXP, key, p, x, x > 0);
	if (sscanf(line, "cpu_step %15s %u %u %lf", key, &st, &p, &x) == 4) {
		if (m->ncpus >= 16 * MAXP || !(x > 0))
			return -1;
		memcpy(m->cpu_s[m->ncpus].algo, key, 16);	/* %15s: fits */
		m->cpu_s[m->ncpus].step = st;
		m->cpu_s[m->ncpus].p = p;
		m->cpu_s[m->ncpus++].f = x;
		return 0;
	}
	if (sscanf(line, "kscale %15s %lf", key, &x) == 2)
		return atab_add(&m->ks, 8, key, 0, x, x > 0);
	if (sscanf(line, "overlap_alg %15s %u %lf", key, &p, &x) == 3)
		return atab_add(&m->ovl_a, 8 * MAXP, key, p, x, x >= 0 && x <= 1);
	if (sscanf(line, "overlap_p %u %lf", &p, &x) == 2)
		return ptab_add(&m->overlap_p, p, x, x >= 0 && x <= 1);
	if (sscanf(line, "agg_at %lf %lf %lf", &x, &y, &z) == 3)
		return params_agg_at_add(m, x, y, z) ? -1 : 0;
	if (sscanf(line, "lbusy %u %lf", &p, &x) == 2)
		return ptab_add(&m->lbusy, p, x, x >= 0);
	if (sscanf(line, "poll_p %u %lf", &p, &x) == 2)
		return ptab_add(&m->poll_p, p, x, true);
	return 1;
}

static int params_line(struct pems_model_params *m, char *line)
{
	char key[64];
	double x;
	size_t i;
	int rc = table_line(m, line);

	if (rc <= 0)
		return rc;
	if (sscanf(line, "date %31s", m->date) == 1)
		return 0;
	if (sscanf(line, "%63s %lf", key, &x) != 2)
		return -1;
	for (i = 0; i < NPKEYS; i++)
		if (!strcmp(key, pkeys[i].key)) {
			*pfield(m, &pkeys[i]) = x;
			return 0;
		}
	return -1;
}

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* every single term present and positive, or 0 where it may be */
static int params_check(const struct pems_model_params *m, const char *name, char *err,
			size_t len)
{
	size_t i;

	for (i = 0; i < NPKEYS; i++) {
		double x = pvalue(m, &pkeys[i]);

		if (!(x >= 0) || (!pkeys[i].zero_ok && x == 0))
			return fail(err, len, "%s: '%s' is %s", name, pkeys[i].key,
				    pkeys[i].zero_ok ? "negative" : "missing or not positive");
	}
	return 0;
}

int pems_model_read(FILE *f, const char *name, struct pems_model_params *m, char *err,
		    size_t errlen)
{
	char line[512];
	unsigned n = 0;
	bool header = false;

	memset(m, 0, sizeof(*m));
	while (fgets(line, sizeof(line), f)) {
		if (++n == 1) {
			header = !strncmp(line, "pems-model 1", 12);
			if (!header)
				break;
			continue;
		}
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (params_line(m, line))
			return fail(err, errlen, "%s: line %u: not 'KEY VALUE' or 'bsp P L G'",
				    name, n);
	}
	if (!header)
		return fail(err, errlen, "%s: not a parameter file (first line 'pems-model 1')",
			    name);
	return params_check(m, name, err, errlen);
}

int pems_model_load(const char *path, struct pems_model_params *m, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	int rc;

	if (!f) {
		rc = -errno;
		memset(m, 0, sizeof(*m));
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	rc = pems_model_read(f, path, m, err, errlen);
	fclose(f);
	return rc;
}

/* ---- the terms at p ranks ---- */

int pems_model_bsp(const struct pems_model_params *m, unsigned p, double *l, double *g)
{
	double g1 = 0;
	unsigned i;
	int found = 0;

	/* g is what crossing ranks adds: the message store's own disk and
	 * copy costs are in the disk and compute terms already */
	for (i = 0; i < m->nbsp; i++)
		if (m->bsp[i].p == 1)
			g1 = m->bsp[i].g;
	for (i = 0; i < m->nbsp; i++)
		if (m->bsp[i].p == p) {
			*l = m->bsp[i].l;
			*g = p > 1 && m->bsp[i].g > g1 ? m->bsp[i].g - g1 : 0;
			found = 1;
		}
	return found ? 0 : -ENOENT;
}

/* "setup_mpi P S" lines are measured with a tiny job under mpirun (MPI
 * start of the transport, the barrier before the rename) */
double params_setup(const struct pems_model_params *m, unsigned p)
{
	return ptab_at(&m->setup_p, p, m->setup);
}

/* a cluster's MPI start-up beyond the rank counts measured here is not
 * known: take the largest one not above @p */
double params_setup_upto(const struct pems_model_params *m, unsigned p)
{
	double s = m->setup;
	unsigned i, best = 0;

	for (i = 0; i < m->setup_p.n; i++)
		if (m->setup_p.e[i].p <= p && m->setup_p.e[i].p > best) {
			best = m->setup_p.e[i].p;
			s = m->setup_p.e[i].v;
		}
	return s;
}

double params_poll(const struct pems_model_params *m, unsigned p)
{
	return ptab_at(&m->poll_p, p, m->poll);
}

/* every thread's CPU of p ranks per CPU second of the same work at p = 1,
 * comm threads and MPI copies included: per algorithm when measured
 * (bench/model.sh), else that of a u64 sort */
double params_cpu(const struct pems_model_params *m, unsigned p, const char *algo)
{
	return atab_at(&m->cpu_a, algo, p, ptab_at(&m->cpu_p, p, 0));
}

double params_cpu_exact(const struct pems_model_params *m, unsigned p, const char *algo,
			unsigned step)
{
	unsigned i;

	for (i = 0; i < m->ncpus; i++)
		if (m->cpu_s[i].p == p && m->cpu_s[i].step == step && !strcmp(m->cpu_s[i].algo, algo))
			return m->cpu_s[i].f;
	return atab_at(&m->cpu_a, algo, p, 0);
}

double params_cpu_step(const struct pems_model_params *m, unsigned p, const char *algo,
		       unsigned step)
{
	double f = params_cpu_exact(m, p, algo, step);

	return f > 0 ? f : params_cpu(m, p, algo);
}

/* CPU seconds of @algo's calibration jobs launched as pems-run runs are
 * (under mpirun -np 1) per core-second the in-process kernel rates give */
double params_kscale(const struct pems_model_params *m, const char *algo)
{
	return atab_at(&m->ks, algo, 0, 0);
}

/* the sorts leave about half the lesser of disk and compute unhidden
 * where the aggregate and sgd leave a tenth: per algorithm when measured */
double params_overlap_alg(const struct pems_model_params *m, unsigned p, const char *algo)
{
	return atab_at(&m->ovl_a, algo, p, ptab_at(&m->overlap_p, p, m->overlap));
}

/* what a superstep of a many-superstep loop costs beyond the max of disk
 * and compute under busy workers (an sgd under mpirun -np P) */
double params_lbusy(const struct pems_model_params *m, unsigned p)
{
	return ptab_at(&m->lbusy, p, 0);
}

/*
 * The owners' bucketing, sorting, walking, compaction and formatting run
 * faster when a VP holds fewer groups (cache and TLB footprint, rows per
 * group), so calibrate measures both supersteps at several group counts;
 * between two of them the seconds per unit are linear in ln x, outside
 * them the nearest one's.
 */
double params_agg_at(const struct pems_model_params *m, double x, bool write)
{
	double lo, hi, f;
	unsigned i;

	if (!m->nagg)
		return 0;
	for (i = 0; i < m->nagg && m->agg_at[i].x < x; i++)
		;
	if (i == 0 || i == m->nagg) {
		i = i ? i - 1 : 0;
		return 1 / (write ? m->agg_at[i].write : m->agg_at[i].merge);
	}
	lo = 1 / (write ? m->agg_at[i - 1].write : m->agg_at[i - 1].merge);
	hi = 1 / (write ? m->agg_at[i].write : m->agg_at[i].merge);
	f = log(x / m->agg_at[i - 1].x) / log(m->agg_at[i].x / m->agg_at[i - 1].x);
	return lo + f * (hi - lo);
}
