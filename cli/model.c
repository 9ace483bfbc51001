/*
 * model.c - `pems-run model`: a BSP cost model of the bundled algorithms.
 *
 *   model calibrate   measure this machine's parameters into a file
 *   model predict     a job's time superstep by superstep; with
 *                     --stats-json, next to a real run's measurement
 *   model project     the same job on 1..1000 nodes like this machine
 *
 * Design (docs/cost-model.md derives it and shows the measurements):
 *  (1) A job is the list of its supersteps, built from the structure of
 *      the algorithm (algorithms/sort/sort.c, aggregate/, sgd/): per
 *      superstep, kernel work in core-seconds (work / calibrated rate),
 *      bytes the VPs move with pems_file_* (synchronously: sgd's reads,
 *      the aggregate's output; or in pieces while computing: the sort's
 *      input and output, the aggregate's kv input), bytes of the
 *      message store (asynchronous: chunk writes, read-ahead), random
 *      4 KiB reads (sampling), bytes crossing ranks, bytes of rank-level
 *      collectives each rank receives, and work only VP 0 does.  v, k,
 *      mu and the message chunk come from the algorithms' own planners
 *      (pems_sort_plan, pems_aggregate_plan: plan.c with each mu_for),
 *      asked for c cores and p ranks -- no copy of their formulas here.
 *  (2) One superstep, on a node with c cores, t = (p/nodes)*k workers and
 *      one disk shared by its ranks:
 *        T = max(D, C/c_eff, (F+C)/t, (X/p)*g) + E_s(D, K) + a*min(D, K)
 *            + Y*g + Z + l,       K = max(C/c_eff, (F+C)/t)
 *      (E_s: what the expected max of D and K exceeds their max by when
 *      each has relative deviation s, "spread" -- largest where the two
 *      are equal; a: the share of the lesser of disk and compute the
 *      calibration runs did not hide beyond that, per algorithm and p
 *      when measured; C includes
 *      the CPU factors of p ranks, per superstep, and for the aggregate's
 *      load per part: pre-aggregated rows and raw rows)
 *      D: disk time of all the node's bytes; C: its core-seconds; F: disk
 *      time of the synchronous part (a worker reading a slice computes
 *      nothing meanwhile, the others do; 0 when the VP reads or writes
 *      in pieces while computing); X: bytes crossing ranks (X/p
 *      per rank, g per byte per rank as bench/bsp_params.c fits it);
 *      Y: collective bytes a rank receives; Z: VP 0's serial work;
 *      l: superstep latency.  Reading the message store costs at least
 *      one random read per chunk.
 *  (3) Nothing is fitted to the runs the model is compared with: rates
 *      are work per CPU second of the real algorithms' supersteps (the
 *      process's CPU time, which other load does not lengthen; the
 *      median of several runs), disk rates through pems_file_* on the
 *      scratch directory, the CPU share from spinning threads, g and l
 *      from bench/bsp-params.sh.
 *  (4) project runs the same equations for one rank per node: the
 *      node's cores and disk as calibrated here, g and l of a network,
 *      and the terms of the job's algorithm (kscale, overlap_alg, CPU
 *      factors, lbusy) that predict takes at p, taken at p = 1 -- or at
 *      --node-terms P ranks here for more than one node -- through the
 *      one function both use (layout_terms).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"

#define MAXBSP 16
#define MAXAGG 8	/* "agg_at" lines: calibrated group counts */
#define MIB (1024.0 * 1024.0)
/* "spread" that calibrate writes: not measured by it but fitted once on
 * the 630 stored validation runs of the fifth and sixth passes (seven
 * rounds, the overlap shares adjusted as a calibration with the spread
 * would measure them); flat between 0.15 and 0.3 (docs/cost-model.md,
 * seventh pass) */
#define MODEL_SPREAD 0.3


/* ---- parameters (the file written by calibrate) ---- */

/* A parameter measured per rank count: "KEY P VALUE" lines. */
struct ptab {
	unsigned n;
	struct { unsigned p; double v; } e[MAXBSP];
};

/* Add a line's value; -1 (a bad line) when the table is full or !@ok. */
static int ptab_add(struct ptab *t, unsigned p, double v, bool ok)
{
	if (t->n >= MAXBSP || !ok)
		return -1;
	t->e[t->n].p = p;
	t->e[t->n++].v = v;
	return 0;
}

/* Set the value at @p ranks (the first line for it, else a new one);
 * -1 when the table is full. */
static int ptab_set(struct ptab *t, unsigned p, double v)
{
	unsigned i;

	for (i = 0; i < t->n && t->e[i].p != p; i++)
		;
	if (i == t->n)
		return ptab_add(t, p, v, true);
	t->e[i].v = v;
	return 0;
}

/* The value at @p ranks (the first line for it), else @dflt. */
static double ptab_at(const struct ptab *t, unsigned p, double dflt)
{
	unsigned i;

	for (i = 0; i < t->n; i++)
		if (t->e[i].p == p)
			return t->e[i].v;
	return dflt;
}

static void ptab_write(FILE *f, const char *key, const struct ptab *t)
{
	unsigned i;

	for (i = 0; i < t->n; i++)
		fprintf(f, "%s %u %.6g\n", key, t->e[i].p, t->e[i].v);
}

/* A parameter measured per algorithm (and rank count): "KEY ALGO P VALUE"
 * lines, or "KEY ALGO VALUE" ones stored at p = 0. */
struct atab {
	unsigned n;
	struct { char algo[16]; unsigned p; double v; } e[8 * MAXBSP];
};

/* Add a line's value; -1 (a bad line) when @cap lines are in or !@ok.
 * @algo is sscanf's %15s: its NUL is within 16 bytes. */
static int atab_add(struct atab *t, unsigned cap, const char *algo, unsigned p, double v,
		    bool ok)
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
static double atab_at(const struct atab *t, const char *algo, unsigned p, double dflt)
{
	unsigned i;

	for (i = 0; algo && i < t->n; i++)
		if (t->e[i].p == p && !strcmp(t->e[i].algo, algo))
			return t->e[i].v;
	return dflt;
}

/* @with_p: "KEY ALGO P VALUE" lines, else "KEY ALGO VALUE" */
static void atab_write(FILE *f, const char *key, const struct atab *t, bool with_p)
{
	unsigned i;

	for (i = 0; i < t->n; i++)
		if (with_p)
			fprintf(f, "%s %s %u %.6g\n", key, t->e[i].algo, t->e[i].p, t->e[i].v);
		else
			fprintf(f, "%s %s %.6g\n", key, t->e[i].algo, t->e[i].v);
}

struct mparams {
	char date[32];
	double cores;
	double load;			/* other runnable threads met (CFS share) */
	double poll;			/* cores an idle MPI comm thread uses (p > 1) */
	double read_bw, write_bw;	/* bytes/s, 64 MiB pems_file_* calls */
	double fwrite_bw;		/* bytes/s into a hole (sized outputs) */
	double iops;			/* 4 KiB random reads/s, 32 in flight per VP */
	double lat;			/* s per synchronous call beyond its bytes (4 MiB calls) */
	double copy_bw;			/* memcpy bytes/s, one core */
	double qsort_ns;		/* ns per element * log2(elements), 24-byte keys */
	double vp_secs;			/* runtime core-seconds per VP per superstep */
	double setup;			/* seconds per run outside the supersteps */
	double flush_bw;		/* bytes written per second of a run's end */
	double overlap;			/* share of the lesser of disk and compute not hidden */
	double spread;			/* relative spread of a superstep's disk and compute
					 * terms: max() becomes their expected max (emax) */
	double sort_part[2];		/* bytes/s per core, superstep 2: u64, rec100 */
	double sort_local[2];		/* bytes/s per core, superstep 3 */
	double agg_raw, agg_hash;	/* rows/s per core, superstep 2 */
	double agg_merge, agg_write;	/* rows/s per core, supersteps 3, 4 */
	double agg_compact, agg_fmt;	/* groups/s per core: compacting (3), formatting (4) */
	double sgd;			/* rows * dim / s per core */
	unsigned nbsp;
	struct { unsigned p; double l, g; } bsp[MAXBSP];
	struct ptab setup_p;	/* "setup_mpi P S" */
	struct ptab poll_p;	/* "poll_p P C" */
	struct ptab cpu_p;	/* "cpu_p P F" */
	struct atab cpu_a;	/* "cpu_alg A P F", at most 4 * MAXBSP */
	struct ptab lbusy;	/* "lbusy P S" */
	unsigned ncpus;
	struct { char algo[16]; unsigned step, p; double f; } cpu_s[16 * MAXBSP];	/* "cpu_step A S P F" */
	struct ptab overlap_p;	/* "overlap_p P A" */
	struct atab ovl_a;	/* "overlap_alg A P S", at most 8 * MAXBSP */
	struct atab ks;		/* "kscale A F" (p = 0), at most 8 */
	unsigned nagg;		/* "agg_at X M W", ascending X (agg_secs_at) */
	struct { double x, merge, write; } agg_at[MAXAGG];
};

/* The rates must be in the file and positive; the terms marked zero_ok
 * may be 0 or left out (read as 0: files older than the term), since
 * calibration can measure 0 for them — `lat` is 0 when 4 MiB calls read
 * as fast per byte as 64 MiB ones. */
static const struct pkey {
	const char *key;
	size_t off;
	const char *what;
	bool zero_ok;
} pkeys[] = {
#define K(f, w) { #f, offsetof(struct mparams, f), w, false }
#define K0(f, w) { #f, offsetof(struct mparams, f), w, true }
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
	K0(spread, "relative spread of a superstep's disk and compute times: the superstep takes their expected max (fitted, docs/cost-model.md seventh pass)"),
	{ "sort_part_u64", offsetof(struct mparams, sort_part[0]), "bytes/s per core, sort superstep 2 (classify, scatter, exchange), u64", false },
	{ "sort_part_rec100", offsetof(struct mparams, sort_part[1]), "the same, rec100", false },
	{ "sort_local_u64", offsetof(struct mparams, sort_local[0]), "bytes/s per core, sort superstep 3 (radix sort, write), u64", false },
	{ "sort_local_rec100", offsetof(struct mparams, sort_local[1]), "the same, rec100", false },
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

static double *pfield(struct mparams *m, const struct pkey *k)
{
	return (double *)(void *)((char *)m + k->off);
}

static int params_write(const char *path, struct mparams *m)
{
	FILE *f = fopen(path, "w");
	size_t i;

	if (!f) {
		cli_error("model: cannot write '%s': %s", path, strerror(errno));
		return CLI_EXIT_FAIL;
	}
	fprintf(f, "pems-model 1\n# written by 'pems-run model calibrate'; docs/cost-model.md\n");
	fprintf(f, "date %s\n", m->date);
	for (i = 0; i < NPKEYS; i++)
		fprintf(f, "%-17s %.6g\t# %s\n", pkeys[i].key, *pfield(m, &pkeys[i]), pkeys[i].what);
	fprintf(f, "# bsp P L G: superstep latency L (s) and cost G (s per byte each rank\n"
		   "# sends to other VPs) at P ranks on this machine (bench/bsp-params.sh)\n");
	for (i = 0; i < m->nbsp; i++)
		fprintf(f, "bsp %u %.6g %.6g\n", m->bsp[i].p, m->bsp[i].l, m->bsp[i].g);
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
	if (fclose(f)) {
		cli_error("model: cannot write '%s': %s", path, strerror(errno));
		return CLI_EXIT_FAIL;
	}
	return 0;
}

/* one "agg_at X M W" line, kept in ascending X; -1 when a figure is not
 * positive, X is already there or the table is full */
static int agg_at_add(struct mparams *m, double x, double merge, double write)
{
	unsigned i;

	if (m->nagg >= MAXAGG || !(x > 0) || !(merge > 0) || !(write > 0))
		return -1;
	for (i = 0; i < m->nagg; i++)
		if (m->agg_at[i].x == x)
			return -1;
	for (i = m->nagg; i > 0 && m->agg_at[i - 1].x > x; i--)
		m->agg_at[i] = m->agg_at[i - 1];
	m->agg_at[i].x = x;
	m->agg_at[i].merge = merge;
	m->agg_at[i].write = write;
	m->nagg++;
	return 0;
}

static int params_line(struct mparams *m, char *line)
{
	char key[64];
	double x, y, z;
	unsigned p, st;
	size_t i;

	if (sscanf(line, "bsp %u %lf %lf", &p, &x, &y) == 3) {
		if (m->nbsp >= MAXBSP)
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
		return atab_add(&m->cpu_a, 4 * MAXBSP, key, p, x, x > 0);
	if (sscanf(line, "cpu_step %15s %u %u %lf", key, &st, &p, &x) == 4) {
		if (m->ncpus >= 16 * MAXBSP || !(x > 0))
			return -1;
		memcpy(m->cpu_s[m->ncpus].algo, key, 16);	/* %15s: NUL within 16 */
		m->cpu_s[m->ncpus].step = st;
		m->cpu_s[m->ncpus].p = p;
		m->cpu_s[m->ncpus++].f = x;
		return 0;
	}
	if (sscanf(line, "kscale %15s %lf", key, &x) == 2)
		return atab_add(&m->ks, 8, key, 0, x, x > 0);
	if (sscanf(line, "overlap_alg %15s %u %lf", key, &p, &x) == 3)
		return atab_add(&m->ovl_a, 8 * MAXBSP, key, p, x, x >= 0 && x <= 1);
	if (sscanf(line, "overlap_p %u %lf", &p, &x) == 2)
		return ptab_add(&m->overlap_p, p, x, x >= 0 && x <= 1);
	if (sscanf(line, "agg_at %lf %lf %lf", &x, &y, &z) == 3)
		return agg_at_add(m, x, y, z);
	if (sscanf(line, "lbusy %u %lf", &p, &x) == 2)
		return ptab_add(&m->lbusy, p, x, x >= 0);
	if (sscanf(line, "poll_p %u %lf", &p, &x) == 2)
		return ptab_add(&m->poll_p, p, x, true);
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

static int params_read(const char *path, struct mparams *m)
{
	FILE *f = fopen(path, "r");
	char line[512];
	unsigned n = 0;
	bool header = false;
	size_t i;

	memset(m, 0, sizeof(*m));
	if (!f) {
		cli_error("model: cannot read parameters '%s': %s; run 'pems-run model calibrate' first",
			  path, strerror(errno));
		return CLI_EXIT_FAIL;
	}
	while (fgets(line, sizeof(line), f)) {
		if (++n == 1) {
			header = !strncmp(line, "pems-model 1", 12);
			if (!header)
				break;
			continue;
		}
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (params_line(m, line)) {
			fclose(f);
			cli_error("model: %s: line %u: not 'KEY VALUE' or 'bsp P L G'", path, n);
			return CLI_EXIT_FAIL;
		}
	}
	fclose(f);
	if (!header) {
		cli_error("model: %s: not a parameter file (first line 'pems-model 1')", path);
		return CLI_EXIT_FAIL;
	}
	for (i = 0; i < NPKEYS; i++) {
		double x = *pfield(m, &pkeys[i]);

		if (!(x >= 0) || (!pkeys[i].zero_ok && x == 0)) {
			cli_error("model: %s: '%s' is %s", path, pkeys[i].key,
				  pkeys[i].zero_ok ? "negative" : "missing or not positive");
			return CLI_EXIT_FAIL;
		}
	}
	return 0;
}

/* l and g at p ranks; g is the extra per byte of crossing ranks, i.e.
 * g(p) - g(1): the message store's own disk and copy costs are in D and C. */
static int params_bsp(const struct mparams *m, unsigned p, double *l, double *g)
{
	double g1 = 0;
	unsigned i;
	int found = 0;

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

/* seconds outside the supersteps at p ranks (MPI start of the runtime's
 * transport, the barrier before the rename): "setup_mpi P S" lines,
 * measured with a tiny job under mpirun (bench/model.sh) */
static double params_setup(const struct mparams *m, unsigned p)
{
	return ptab_at(&m->setup_p, p, m->setup);
}

/* project: the setup of the largest calibrated rank count not above
 * @p (a cluster's MPI start-up beyond it is not measured), else "setup" */
static double params_setup_upto(const struct mparams *m, unsigned p)
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

/* cores one rank's comm thread takes from busy workers at p ranks on
 * this machine: "poll_p P C" lines (measured with p*k spinners), else
 * the single figure "poll" */
static double params_poll(const struct mparams *m, unsigned p)
{
	return ptab_at(&m->poll_p, p, m->poll);
}

/* CPU seconds of p ranks on this machine per CPU second of the same
 * work at p = 1: "cpu_alg ALGO P F" lines for the job's algorithm
 * (bench/model.sh: that algorithm under mpirun -np P on a calibration
 * input; ALGO is sort-u64, sort-rec100, aggregate or sgd), else "cpu_p P
 * F" (a u64 sort), every thread's CPU, comm threads and MPI copies
 * included; 0 when not measured */
static double params_cpu(const struct mparams *m, unsigned p, const char *algo)
{
	return atab_at(&m->cpu_a, algo, p, ptab_at(&m->cpu_p, p, 0));
}

/* "cpu_step ALGO STEP P F", else "cpu_alg ALGO P F" for exactly @algo;
 * 0 when neither was measured (the caller keeps its own factor) */
static double params_cpu_exact(const struct mparams *m, unsigned p, const char *algo,
			       unsigned step)
{
	unsigned i;

	for (i = 0; i < m->ncpus; i++)
		if (m->cpu_s[i].p == p && m->cpu_s[i].step == step && !strcmp(m->cpu_s[i].algo, algo))
			return m->cpu_s[i].f;
	return atab_at(&m->cpu_a, algo, p, 0);
}

/* the CPU factor of p ranks for superstep @step of @algo: "cpu_step
 * ALGO STEP P F" (bench/model.sh: that superstep's CPU under mpirun -np P
 * over p = 1, on the calibration input), else the algorithm's */
static double params_cpu_step(const struct mparams *m, unsigned p, const char *algo,
			      unsigned step)
{
	double f = params_cpu_exact(m, p, algo, step);

	return f > 0 ? f : params_cpu(m, p, algo);
}

/* CPU seconds of @algo's calibration jobs under mpirun -np 1 (launched as
 * pems-run runs are) per core-second the in-process kernel rates give
 * them: "kscale ALGO F" (bench/model.sh calibrate-mpi), 0 when not
 * measured */
static double params_kscale(const struct mparams *m, const char *algo)
{
	return atab_at(&m->ks, algo, 0, 0);
}

/* the overlap share at p ranks: "overlap_p P A" (bench/model.sh: the
 * calibration sorts and aggregate under mpirun -np P), else "overlap"
 * (the in-process kernel runs) */
static double params_overlap(const struct mparams *m, unsigned p)
{
	return ptab_at(&m->overlap_p, p, m->overlap);
}

/* the same for @algo's supersteps: "overlap_alg ALGO P A" (bench/model.sh:
 * that algorithm's calibration runs under mpirun -np P; the sorts left
 * about half the lesser term unhidden where the aggregate and the sgd
 * left a tenth), else params_overlap() */
static double params_overlap_alg(const struct mparams *m, unsigned p, const char *algo)
{
	return atab_at(&m->ovl_a, algo, p, params_overlap(m, p));
}

/* seconds a superstep of a many-superstep loop costs at p ranks beyond
 * the model's max of disk and compute, measured under busy workers
 * ("lbusy P S", bench/model.sh: an sgd of a calibration input under
 * mpirun -np P); 0 when not measured (the idle l then holds) */
static double params_lbusy(const struct mparams *m, unsigned p)
{
	return ptab_at(&m->lbusy, p, 0);
}

/*
 * Core-seconds per unit of the aggregate's merge superstep (@write
 * false: per row or state received) or write superstep (@write: per
 * group) at @x groups per VP, from the "agg_at" lines: the owners'
 * bucketing, sorting, walking, compaction and formatting run faster when
 * a VP holds fewer groups (cache and TLB footprint, rows per group), so
 * calibrate measures both supersteps at several group counts; between two
 * of them the seconds per unit are linear in ln x, outside them the
 * nearest one's.  0 when there are no "agg_at" lines (the five single
 * rates hold then).
 */
static double agg_secs_at(const struct mparams *m, double x, bool write)
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

/* ---- jobs and their supersteps ---- */

enum malgo { A_SORT, A_AGG, A_SGD };

struct mjob {
	enum malgo algo;
	int rec100;		/* sort: rec100 instead of u64 */
	double bytes;		/* input bytes */
	double mem;		/* M per rank */
	unsigned p, v, k;	/* v, k: 0 = as the planner chooses */
	double chunk, mu;	/* message chunk, context size (the planner's) */
	/* aggregate (kv input, count,sum) */
	double groups, line;
	/* sgd (dense) */
	unsigned dim, epochs, shards, local_steps, sync_bsp;
	double batch;
};

struct mstep {
	const char *name;
	unsigned idx;		/* superstep number (the first of reps) */
	double reps;		/* identical supersteps */
	double cpu;		/* core-seconds, all ranks */
	double cpu_pre;		/* ... of which the aggregate's rows hashed into
				 * states (its other rows pass raw): the CPU
				 * factor of p ranks differs (L->cpu_pre) */
	double file_r, file_w;	/* bytes the VPs read / write with pems_file_* */
	bool file_async;	/* ... in pieces, several in flight, while the VP
				 * computes (pems_file_start/wait): in D only,
				 * not in the worker's chain */
	bool file_alloc;	/* file_w goes into blocks allocated when the
				 * output was created (output.c size_output:
				 * fallocate): write_bw, not the hole rate */
	double reqs;		/* synchronous pems_file_* calls */
	double msg_r, msg_w;	/* bytes of message store / context I/O */
	double rand_r;		/* random 4 KiB reads */
	double xfer;		/* bytes crossing ranks, all ranks */
	double coll;		/* collective bytes one rank receives */
	double serial;		/* seconds of VP 0 alone */
};

#define MAXSTEPS 8

struct mplan {
	struct mstep s[MAXSTEPS];
	unsigned n;
};

/* where the ranks run */
struct mlayout {
	double nodes;				/* the p ranks spread over these */
	double cores, load, poll, read_bw, write_bw, fwrite_bw, iops, lat;	/* per node */
	double g, l;				/* s per byte per rank; s per superstep */
	double cpu_f;				/* cpu_p of the ranks on a node, 0: none */
	double lbusy;				/* l of repeated supersteps under load, 0: l */
	double cpu_fs[MAXSTEPS];		/* cpu_p per superstep, 0: cpu_f */
	double cpu_pre;				/* cpu_p of the aggregate's pre-aggregating
						 * load ("aggregate-pre"), 0: the step's */
	double ks, ks_pre;			/* kscale of the job's algorithm, of the
						 * aggregate's pre-aggregated rows; 0: 1 */
	bool has_ovl;				/* ovl holds the overlap at p, else overlap */
	double ovl;
	double setup;				/* seconds outside the supersteps, besides
						 * the flush */
};

/* the name of the job's "cpu_alg" lines */
static const char *cpu_key(const struct mjob *j)
{
	if (j->algo == A_SORT)
		return j->rec100 ? "sort-rec100" : "sort-u64";
	return j->algo == A_AGG ? "aggregate" : "sgd";
}

static double dmin(double a, double b) { return a < b ? a : b; }

/* the CPU factor of p ranks for one superstep (1: none measured) */
static double step_cpu_f(const struct mlayout *L, const struct mstep *s)
{
	if (s->idx < MAXSTEPS && L->cpu_fs[s->idx] > 0)
		return L->cpu_fs[s->idx];
	return L->cpu_f > 0 ? L->cpu_f : 1;
}
static double dmax(double a, double b) { return a > b ? a : b; }

/* core-seconds of superstep @s at the layout's p: each part of its work
 * times its CPU factor (the aggregate's pre-aggregated rows their own) */
static double step_core_s(const struct mlayout *L, const struct mstep *s)
{
	double f = step_cpu_f(L, s), k = L->ks > 0 ? L->ks : 1, kp = L->ks_pre > 0 ? L->ks_pre : 1;

	return (s->cpu - s->cpu_pre) * f * k + s->cpu_pre * (L->cpu_pre > 0 ? L->cpu_pre : f) * kp;
}

/* -- v, k and the chunk: the algorithms' own planners (pems_*_plan) -- */

/* The job as the planner would run it on @nranks ranks of nodes with
 * @cores cores: j->v, j->k (unless given), j->chunk, j->mu.  -1 when
 * --mem cannot hold it. */
static int plan_job(struct mjob *j, unsigned cores)
{
	struct pems_plan_env env = { .cores = cores ? cores : 1, .nranks = j->p, .quiet = true };
	struct pems_config cfg;
	double msg_mem;
	int rc;

	memset(&cfg, 0, sizeof(cfg));
	cfg.mem = (size_t)j->mem;
	cfg.procs = j->v;
	cfg.threads = j->k;
	if (j->algo == A_SGD) {	/* sgd.c plan(): v = S, k = cores, msg_mem = M/8 <= 64 MiB */
		j->v = j->v ? j->v : j->shards;
		j->k = j->k ? j->k : env.cores;
		msg_mem = j->mem / 8 < 64 * MIB ? j->mem / 8 : 64 * MIB;
		j->chunk = msg_mem / (2.0 * j->k * j->v + 8.0 * j->k);	/* unused: no spills */
		return 0;
	}
	if (j->algo == A_SORT) {
		rc = pems_sort_plan(&cfg, j->rec100 ? PEMS_FMT_REC100 : PEMS_FMT_U64,
				    (uint64_t)j->bytes, &env);
	} else {
		struct pems_aggregate_job aj;

		memset(&aj, 0, sizeof(aj));
		aj.in_fmt = PEMS_AGG_IN_KV;
		aj.aggs[0] = pems_aggregate_builtin("count");
		aj.aggs[1] = pems_aggregate_builtin("sum");
		aj.naggs = 2;
		rc = pems_aggregate_plan(&cfg, &aj, (uint64_t)j->bytes, &env);
	}
	if (rc)
		return -1;
	j->v = cfg.procs;
	j->k = cfg.threads;
	j->mu = (double)cfg.mu;
	j->chunk = (double)cfg.msg_mem / (2.0 * j->k * j->v + 8.0 * j->k);
	return 0;
}

static struct mstep *add(struct mplan *pl, const char *name)
{
	struct mstep *s = &pl->s[pl->n++];

	memset(s, 0, sizeof(*s));
	s->name = name;
	s->idx = pl->n - 1;
	s->reps = 1;
	return s;
}

static double qsort_secs(const struct mparams *m, double n)
{
	return n > 1 ? m->qsort_ns * 1e-9 * n * log2(n) : 0;
}

/* sort.c: sample, splitters, partition, sort+write; the sample sizes
 * are sort.c's own (pems_sort_shape) */
static void build_sort(const struct mjob *j, const struct mparams *m, struct mplan *pl)
{
	struct pems_sort_shape sh;
	double rec = j->rec100 ? 100 : 8, n = j->bytes / rec, v = j->v, p = j->p, ns;
	double cross = (p - 1) / p;
	struct mstep *s;

	pems_sort_shape(&sh);
	ns = v * dmin(sh.samples, n / v);

	s = add(pl, "sample");
	s->rand_r = ns * (1 + (rec - 1) / 4096);	/* a record may straddle pages */
	s = add(pl, "splitters");
	s->serial = qsort_secs(m, ns);
	s->coll = v * (double)sh.sample_msg + v * (double)sh.key;	/* gather at VP 0, broadcast */
	s = add(pl, "partition");
	s->file_r = j->bytes;	/* sort.c classify_slice: 4 MiB pieces, 4 in flight */
	s->file_async = true;
	s->msg_w = j->bytes;
	s->xfer = j->bytes * cross;
	s->cpu = j->bytes / m->sort_part[j->rec100] + v * v * 8 / m->copy_bw;
	s->coll = p * v * 8;				/* allreduce of bucket sizes */
	s = add(pl, "sort+write");
	s->msg_r = j->bytes;
	s->file_w = j->bytes;	/* sort.c: output pieces written asynchronously */
	s->file_async = true;
	s->file_alloc = true;	/* output.c: the sized output is fallocated (0f4cffd) */
	s->cpu = j->bytes / m->sort_local[j->rec100];
}

/*
 * What one VP of nvp rows over G uniform keys sends (groupby.c
 * preagg_core, constants from pems_aggregate_shape): a table of
 * a->table entries; a fill that holds fewer than a->poor rows per entry
 * makes the next a->pass_fills fills' worth of rows go raw; a flushed
 * state of count <= a->raw_count goes out as its rows.  Returns the raw
 * rows and states, per VP.
 */
static void agg_send(const struct pems_aggregate_shape *a, double nvp, double G, double *raw,
		     double *states)
{
	double lim = a->table, d = G * -expm1(-nvp / G), fill, cnt, cyc, r, st;

	if (d <= lim) {			/* the table holds every key */
		cnt = nvp / dmax(d, 1);
		*raw = cnt > a->raw_count ? 0 : nvp;
		*states = cnt > a->raw_count ? d : 0;
		return;
	}
	fill = -G * log1p(-lim / G);	/* rows until lim keys */
	cnt = fill / lim;
	r = cnt > a->raw_count ? 0 : fill;
	st = cnt > a->raw_count ? lim : 0;
	cyc = fill;
	if (fill < a->poor * lim) {	/* poor fill: rows pass raw */
		cyc += a->pass_fills * lim;
		r += a->pass_fills * lim;
	}
	*raw = r * nvp / cyc;
	*states = st * nvp / cyc;
}

/* aggregate.c + groupby.c: sample, plan, load+partition, merge, write */
static void build_agg(const struct mjob *j, const struct mparams *m, struct mplan *pl)
{
	struct pems_aggregate_shape a;
	double n, v = j->v, p = j->p, G = j->groups, nvp, gd, raw, parts, msg, blob, park, ns;
	double row, state, merge_s, write_s;
	bool compact;
	struct mstep *s;

	pems_aggregate_shape(&a);
	row = (double)a.row;
	state = (double)a.state;
	n = j->bytes / row;
	nvp = n / v;
	gd = G * -expm1(-n / G);
	agg_send(&a, nvp, G, &raw, &parts);
	raw *= v;
	parts *= v;
	blob = raw * row + parts * state;
	msg = blob + v * v * (double)a.chunk_hdr;
	compact = gd * state * a.compact <= blob;	/* groupby.c compact() */
	park = compact ? gd * state : blob;
	merge_s = agg_secs_at(m, gd / v, false);	/* 0: no agg_at lines */
	write_s = agg_secs_at(m, gd / v, true);
	ns = v * dmin(a.samples, nvp);
	s = add(pl, "sample");
	s->rand_r = v * dmin(a.sample_pages, nvp);
	s = add(pl, "plan");
	s->serial = qsort_secs(m, ns);
	s->coll = v * (double)a.sample_msg + v * 16;	/* gather; broadcast of the plan */
	s = add(pl, "load+partition");
	s->file_r = j->bytes;	/* aggregate.c load_kv: 4 MiB pieces, 4 in flight */
	s->file_async = true;
	s->msg_w = msg;
	s->xfer = msg * (p - 1) / p;
	s->cpu_pre = (n - raw) / m->agg_hash;
	s->cpu = s->cpu_pre + raw / m->agg_raw;
	s = add(pl, "merge");
	s->msg_r = msg;
	s->msg_w = park;
	s->cpu = merge_s > 0 ? (raw + parts) * merge_s :
		 (raw + parts) / m->agg_merge + (compact ? gd / m->agg_compact : 0);
	s->coll = v * (double)a.info;
	s = add(pl, "write");
	s->msg_r = park;
	s->file_w = gd * j->line;
	s->reqs = v;	/* the 1 MiB output blocks are bandwidth (lat is a 4 KiB read's) */
	s->cpu = write_s > 0 ? gd * write_s :
		 (compact ? 0 : raw + parts) / m->agg_write + gd / m->agg_fmt;
}

/* sgd.c: one superstep per H local steps of every shard, one at the end */
static void build_sgd(const struct mjob *j, const struct mparams *m, struct mplan *pl)
{
	double rowb = (1 + j->dim) * 4.0, n = floor((j->bytes - 16) / rowb);
	double per = j->sync_bsp ? j->batch : j->batch * j->local_steps;
	double spe = ceil(ceil(n / j->shards) / per), rows = n / spe;
	struct mstep *s;

	s = add(pl, "train");
	s->reps = spe * j->epochs;
	s->file_r = rows * rowb;
	s->reqs = j->shards * ceil(rows * rowb / j->shards / (4 * MIB));	/* <= 4 MiB blocks */
	s->cpu = rows * j->dim / m->sgd;
	s->coll = j->p * (j->dim + 1 + 7) * 8.0;
	add(pl, "end");
}

/* Message bytes a step writes and the next reads back stay in memory up
 * to the room the contexts leave on every rank (pems/msg.c invariant 7):
 * neither written nor read. */
static void apply_hold(const struct mjob *j, struct mplan *pl)
{
	double msg_mem = j->chunk * (2.0 * j->k * j->v + 8.0 * j->k);
	/* the sort's and the aggregate's VPs keep a few KiB between
	 * supersteps: the messages get nearly all the room */
	double room = j->p * (double)pems_hold_room(j->k, j->v, (size_t)j->mem, (size_t)msg_mem,
						    (size_t)j->mu, 0, j->p);
	unsigned i;

	for (i = 0; i + 1 < pl->n; i++) {
		double h = dmin(dmin(pl->s[i].msg_w, pl->s[i + 1].msg_r), room);

		pl->s[i].msg_w -= h;
		pl->s[i + 1].msg_r -= h;
	}
}

static void build(const struct mjob *j, const struct mparams *m, struct mplan *pl)
{
	pl->n = 0;
	if (j->algo == A_SORT)
		build_sort(j, m, pl);
	else if (j->algo == A_AGG)
		build_agg(j, m, pl);
	else
		build_sgd(j, m, pl);
	if (j->algo != A_SGD && !(getenv("PEMS_MSG_HOLD") && !strcmp(getenv("PEMS_MSG_HOLD"), "0")))
		apply_hold(j, pl);	/* as the runtime does (pems_config_init) */
}

/* The name of the job's "overlap_alg" lines: cpu_key(), but an aggregate
 * whose load pre-aggregates most of its work is "aggregate-pre" (its
 * calibration job: 10^3 groups). */
static const char *ovl_key(const struct mjob *j, const struct mparams *m)
{
	struct mplan pl;

	if (j->algo != A_AGG)
		return cpu_key(j);
	build(j, m, &pl);
	return pl.n > 2 && pl.s[2].cpu_pre > 0.5 * pl.s[2].cpu ? "aggregate-pre" : "aggregate";
}

/* The terms of @j's algorithm measured at @pt ranks on this machine into
 * @L: the CPU factors per superstep (the aggregate's pre-aggregated rows
 * their own), kscale, the overlap share, lbusy.  predict takes them at
 * the job's p; project at the ranks that stand for one node (design 4).
 * @j must be planned (ovl_key builds the job). */
static void layout_terms(struct mlayout *L, const struct mparams *m, const struct mjob *j,
			 unsigned pt)
{
	const char *key = cpu_key(j);
	unsigned i;

	L->cpu_f = params_cpu(m, pt, key);
	for (i = 0; i < MAXSTEPS; i++)
		L->cpu_fs[i] = params_cpu_step(m, pt, key, i);
	L->cpu_pre = L->ks_pre = 0;
	if (j->algo == A_AGG) {	/* bench/model.sh: 10^3 groups under mpirun */
		L->cpu_pre = params_cpu_exact(m, pt, "aggregate-pre", 2);
		L->ks_pre = params_kscale(m, "aggregate-pre");
	}
	L->ks = params_kscale(m, key);
	L->has_ovl = true;
	L->ovl = params_overlap_alg(m, pt, ovl_key(j, m));
	L->lbusy = params_lbusy(m, pt);
}

/* -- equation (2) -- */

/*
 * What the expected max of two times exceeds the max of their means by,
 * each normal with standard deviation @s times its mean, independent
 * (Clark's formula: E max(X, Y) = a Phi(z) + b Phi(-z) + th phi(z), th
 * the deviation of X - Y, z = (a - b) / th).  0 when @s is 0 or a term
 * is.  With s = 0.3 it adds 17 % of the greater when the two are equal,
 * 11.6 % when the lesser is 0.9 of it, 5.7 % at 0.75, 1 % at 0.5: it
 * matters only where the two are close, where a fixed share of the
 * lesser (the overlap) cannot follow the measured supersteps.
 */
static double emax_excess(double a, double b, double s)
{
	double th = s * hypot(a, b), z;

	if (!(th > 0) || !(a > 0) || !(b > 0))
		return 0;
	z = (a - b) / th;
	return a * 0.5 * erfc(-z / M_SQRT2) + b * 0.5 * erfc(z / M_SQRT2) +
	       th * exp(-0.5 * z * z) / sqrt(2 * M_PI) - dmax(a, b);
}

/* c_eff: the ranks' comm threads poll (p > 1); the workers share the
 * rest with the other load's threads (a fair scheduler: t of t + load).
 * With a measured cpu_p the polling is inside the work's factor instead. */
static double cores_for(const struct mlayout *L, const struct mjob *j)
{
	double t = (double)j->p / L->nodes * j->k;
	double poll = j->p > 1 && !(L->cpu_f > 0) ? j->p / L->nodes * L->poll : 0;
	double free = dmax(0.1 * L->cores, L->cores - poll);

	return dmin(t, free * t / (t + L->load));
}

struct mtime {
	double t, disk, cpu, chain, xfer, comm;
	const char *bound;
};

static void step_time(const struct mstep *s, const struct mjob *j, const struct mparams *m,
		      const struct mlayout *L, struct mtime *o)
{
	/* the busiest node's share of the work: its ranks host ceil(v/p) VPs
	 * each; nn = 1 / share is the number of nodes the work spreads over */
	double rpn = (double)j->p / L->nodes, t = rpn * j->k;
	double nn = 1 / dmin(1, rpn * ceil((double)j->v / j->p) / j->v);
	/* the ranks' comm threads poll (p > 1); the workers share the rest
	 * with the other load's threads (a fair scheduler: t of t + load) */
	double cu = cores_for(L, j);
	double file = (s->file_r / L->read_bw +
		       s->file_w / (s->file_alloc ? L->write_bw : L->fwrite_bw)) / nn;
	double mr = dmax(s->msg_r / L->read_bw, s->msg_r / j->chunk / L->iops) / nn;
	double cpu = (step_core_s(L, s) + j->v * m->vp_secs) / nn;

	o->disk = file + mr + s->msg_w / nn / L->write_bw + s->rand_r / nn / L->iops;
	o->cpu = cpu / cu;
	o->chain = ((s->file_async ? 0 : file) + s->reqs * L->lat / nn + cpu) / t;
	/* crossing bytes travel while the workers compute: each rank's comm
	 * thread ships full chunks as they fill (transport.c), so the
	 * crossing is one more resource in the max, not a term after it;
	 * the collectives are combined at the barrier, after it */
	o->xfer = s->xfer / j->p * L->g;
	o->comm = s->coll * L->g;
	o->t = dmax(dmax(o->disk, o->xfer), dmax(o->cpu, o->chain));
	o->bound = o->t == o->disk ? "disk" : o->t == o->cpu ? "cpu" :
		   o->t == o->chain ? "chain" : "net";
	/* neither term is known exactly (drift of the CPU rate, of the
	 * disk): the superstep takes the expected max of the two, which
	 * exceeds the max of the expected terms most when they are equal */
	o->t += emax_excess(o->disk, dmax(o->cpu, o->chain), m->spread);
	/* the overlap is not perfect: a share of the lesser of the disk and
	 * the compute (calibrated on the kernel runs) adds to the greater */
	o->t += (L->has_ovl ? L->ovl : m->overlap) * dmin(o->disk, dmax(o->cpu, o->chain));
	/* a loop of identical supersteps (sgd) pays the latency measured
	 * under busy workers when calibrated, else the idle l */
	o->t += o->comm + s->serial + (s->reps > 1 && L->lbusy > 0 ? L->lbusy : L->l);
}

/* ---- the measured side: --stats-json with "steps" ---- */

struct meas {
	double secs, bytes, v, k, p, mem;
	double io;		/* bytes read and written, all ranks */
	double cpu;		/* CPU seconds: rank 0's steps times p */
	double *steps;		/* seconds per superstep */
	unsigned nsteps;
};

static int json_num(const char *s, const char *key, double *out)
{
	char pat[64];
	const char *q;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	q = strstr(s, pat);
	if (!q)
		return -1;
	*out = strtod(q + strlen(pat), NULL);
	return 0;
}

static int meas_read(const char *path, struct meas *ms)
{
	FILE *f = fopen(path, "r");
	char *buf, *q;
	long len;

	memset(ms, 0, sizeof(*ms));
	if (!f) {
		cli_error("model: cannot read '%s': %s", path, strerror(errno));
		return CLI_EXIT_FAIL;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = calloc(1, len > 0 ? (size_t)len + 1 : 1);
	if (!buf || (len > 0 && fread(buf, 1, (size_t)len, f) != (size_t)len)) {
		fclose(f);
		free(buf);
		cli_error("model: cannot read '%s'", path);
		return CLI_EXIT_FAIL;
	}
	fclose(f);
	q = strstr(buf, "\"steps\":");
	if (q)
		*q = '\0';	/* top-level keys before the array */
	if (json_num(buf, "secs", &ms->secs) || json_num(buf, "bytes", &ms->bytes)) {
		free(buf);
		cli_error("model: %s: not a --stats-json file (no \"secs\" and \"bytes\")", path);
		return CLI_EXIT_FAIL;
	}
	json_num(buf, "v", &ms->v);
	json_num(buf, "k", &ms->k);
	json_num(buf, "p", &ms->p);
	json_num(buf, "mem", &ms->mem);
	{
		static const char *const io[] = { "ctx_read", "ctx_written", "msg_read",
						  "msg_written", "file_read", "file_written" };
		unsigned i;
		double x;

		for (i = 0; i < 6; i++)
			if (!json_num(buf, io[i], &x))
				ms->io += x;
	}
	if (q) {
		char *o = q + 1, *c;

		ms->steps = calloc(strlen(o) / 8 + 1, sizeof(double));
		while (ms->steps && (o = strstr(o, "{\"secs\":")) != NULL) {
			ms->steps[ms->nsteps++] = strtod(o + 8, NULL);
			c = strstr(o, "\"cpu\":");
			if (c)
				ms->cpu += strtod(c + 6, NULL) * (ms->p > 1 ? ms->p : 1);
			o++;
		}
	}
	free(buf);
	return 0;
}

/* ---- per-superstep statistics of a run (for --stats-json) ---- */

struct rec_step {
	double secs, compute, io_wait;
	double cpu;		/* CPU seconds of this process (rank) */
	uint64_t b[7];		/* ctx r/w, msg r/w, file r/w, h */
};

static struct {
	struct rec_step *s;
	size_t n, cap;
	struct pems_stats last;
	double last_cpu;
} rec;

static double cpu_now(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void stats_vec(const struct pems_stats *st, uint64_t *b)
{
	b[0] = st->ctx_read;
	b[1] = st->ctx_written;
	b[2] = st->msg_read;
	b[3] = st->msg_written;
	b[4] = st->file_read;
	b[5] = st->file_written;
	b[6] = st->h_bytes;
}

static void rec_add(const struct pems_stats *st, double scale)
{
	uint64_t a[7], b[7];
	struct rec_step *x;
	unsigned i;

	if (rec.n == rec.cap) {
		size_t cap = rec.cap ? rec.cap * 2 : 64;
		struct rec_step *n = realloc(rec.s, cap * sizeof(*n));

		if (!n)
			return;		/* statistics only: drop the rest */
		rec.s = n;
		rec.cap = cap;
	}
	x = &rec.s[rec.n++];
	stats_vec(st, a);
	stats_vec(&rec.last, b);
	x->secs = st->total_secs - rec.last.total_secs;
	x->cpu = cpu_now(CLOCK_PROCESS_CPUTIME_ID) - rec.last_cpu;
	rec.last_cpu += x->cpu;
	x->compute = st->compute_secs / scale - rec.last.compute_secs;
	x->io_wait = st->io_wait_secs / scale - rec.last.io_wait_secs;
	for (i = 0; i < 7; i++)
		x->b[i] = a[i] / scale > b[i] ? (uint64_t)(a[i] / scale) - b[i] : 0;
	rec.last = *st;
}

/* after each barrier, on every rank (pems_set_progress) */
static void rec_hook(uint64_t superstep, void *arg)
{
	struct pems_stats st;

	(void)superstep;
	(void)arg;
	pems_get_stats(&st);	/* this rank's, so far */
	rec_add(&st, 1);
}

void cli_steps_begin(void)
{
	free(rec.s);
	memset(&rec, 0, sizeof(rec));
	rec.last_cpu = cpu_now(CLOCK_PROCESS_CPUTIME_ID);
	pems_set_progress(rec_hook, NULL);
}

/* The last superstep from the final totals (@st: all ranks' sums, so the
 * last superstep's bytes are the mean over ranks when p > 1). */
static void rec_finish(const struct pems_stats *st, unsigned p)
{
	rec_add(st, p);
	pems_set_progress(NULL, NULL);
}

void cli_steps_json(FILE *f, const struct pems_stats *st)
{
	unsigned p = pems_nranks();
	size_t i;

	rec_finish(st, p);
	fprintf(f, ", \"v\": %u, \"k\": %u, \"p\": %u, \"mem\": %zu, \"steps\": [",
		st->procs, st->threads, p, st->mem);
	for (i = 0; i < rec.n; i++) {
		const struct rec_step *x = &rec.s[i];

		fprintf(f, "%s\n  {\"secs\": %.6f, \"cpu\": %.6f, \"compute\": %.6f, \"io_wait\": %.6f,"
			" \"ctx_read\": %llu, \"ctx_written\": %llu, \"msg_read\": %llu,"
			" \"msg_written\": %llu, \"file_read\": %llu, \"file_written\": %llu,"
			" \"h\": %llu}", i ? "," : "", x->secs, x->cpu, x->compute, x->io_wait,
			(unsigned long long)x->b[0], (unsigned long long)x->b[1],
			(unsigned long long)x->b[2], (unsigned long long)x->b[3],
			(unsigned long long)x->b[4], (unsigned long long)x->b[5],
			(unsigned long long)x->b[6]);
	}
	fputs("]", f);
	free(rec.s);
	memset(&rec, 0, sizeof(rec));
}

/* ---- options shared by predict and project ---- */

enum {
	OPT_PARAMS = CLI_OPT_FIRST_LOCAL, OPT_SIZE, OPT_PMPI, OPT_GROUPS,
	OPT_LINE, OPT_DIM, OPT_EPOCHS, OPT_BATCH, OPT_LSTEPS, OPT_SYNC, OPT_SHARDS,
	OPT_JSON, OPT_NODES, OPT_GBIT, OPT_LAT, OPT_MSGO, OPT_PERNODE, OPT_OUT,
	OPT_KSIZE, OPT_BSPCSV, OPT_BASE, OPT_RBW, OPT_WBW, OPT_KRUNS, OPT_NTERMS,
};

struct margs {
	const char *cmd;
	const char *params, *json, *out, *tmp, *bspcsv, *base;
	struct mjob job;
	bool have_size, per_node;
	char nodes[256];
	double gbit, lat, msgo, ksize;
	double rbw, wbw;	/* project: per-node disk, 0 = calibrated */
	unsigned nterms;	/* project: the terms of this many ranks here stand
				 * for one node's rank when nodes > 1 */
	unsigned kruns;		/* calibrate: runs of each kernel (median) */
};

static int num_opt(const char *cmd, const char *name, const char *arg, bool size, double *out)
{
	uint64_t v;
	char *end;

	if (!size) {
		*out = strtod(arg, &end);
		if (end != arg && !*end && *out >= 0)
			return 0;
	} else if (!cli_parse_u64(arg, true, &v)) {
		*out = (double)v;
		return 0;
	}
	return cli_usage("%s: --%s %s: not a %s", cmd, name, arg, size ? "size (e.g. 4G)" : "number");
}

static int m_option(void *ctx, int c, const char *arg)
{
	struct margs *a = ctx;
	struct mjob *j = &a->job;
	double x = 0;
	int rc = 0;

	switch (c) {
	case CLI_OPT_FORMAT:
		if (strcmp(arg, "u64") && strcmp(arg, "rec100") && strcmp(arg, "kv") &&
		    strcmp(arg, "dense"))
			return cli_usage("%s: --format %s: the model knows u64, rec100 (sort), kv (aggregate) and dense (sgd)",
					 a->cmd, arg);
		j->rec100 = !strcmp(arg, "rec100");
		return 0;
	case CLI_OPT_MEM: rc = num_opt(a->cmd, "mem", arg, true, &j->mem); break;
	case CLI_OPT_PROCS: rc = num_opt(a->cmd, "procs", arg, false, &x); j->v = (unsigned)x; break;
	case CLI_OPT_THREADS: rc = num_opt(a->cmd, "threads", arg, false, &x); j->k = (unsigned)x; break;
	case CLI_OPT_TMP: a->tmp = arg; break;
	case OPT_PARAMS: a->params = arg; break;
	case OPT_OUT: a->out = arg; break;
	case OPT_BSPCSV: a->bspcsv = arg; break;
	case OPT_BASE: a->base = arg; break;
	case OPT_JSON: a->json = arg; break;
	case OPT_SIZE: rc = num_opt(a->cmd, "size", arg, true, &j->bytes); a->have_size = true; break;
	case OPT_PERNODE: rc = num_opt(a->cmd, "size-per-node", arg, true, &j->bytes);
		a->have_size = a->per_node = true; break;
	case OPT_KSIZE: rc = num_opt(a->cmd, "kernel-size", arg, true, &a->ksize); break;
	case OPT_PMPI: rc = num_opt(a->cmd, "procs-mpi", arg, false, &x); j->p = (unsigned)x; break;
	case OPT_GROUPS: rc = num_opt(a->cmd, "groups", arg, true, &j->groups); break;
	case OPT_LINE: rc = num_opt(a->cmd, "line-bytes", arg, false, &j->line); break;
	case OPT_DIM: rc = num_opt(a->cmd, "dim", arg, false, &x); j->dim = (unsigned)x; break;
	case OPT_EPOCHS: rc = num_opt(a->cmd, "epochs", arg, false, &x); j->epochs = (unsigned)x; break;
	case OPT_BATCH: rc = num_opt(a->cmd, "batch", arg, true, &j->batch); break;
	case OPT_LSTEPS: rc = num_opt(a->cmd, "local-steps", arg, false, &x); j->local_steps = (unsigned)x; break;
	case OPT_SHARDS: rc = num_opt(a->cmd, "shards", arg, false, &x); j->shards = (unsigned)x; break;
	case OPT_SYNC:
		if (strcmp(arg, "bsp") && strcmp(arg, "local"))
			return cli_usage("%s: --sync %s: use bsp or local", a->cmd, arg);
		j->sync_bsp = !strcmp(arg, "bsp");
		break;
	case OPT_NODES:
		snprintf(a->nodes, sizeof(a->nodes), "%s", arg);
		break;
	case OPT_GBIT: rc = num_opt(a->cmd, "net-gbit", arg, false, &a->gbit); break;
	case OPT_LAT: rc = num_opt(a->cmd, "net-latency", arg, false, &a->lat); break;
	case OPT_MSGO: rc = num_opt(a->cmd, "msg-overhead", arg, false, &a->msgo); break;
	case OPT_RBW: rc = num_opt(a->cmd, "read-bw", arg, true, &a->rbw); break;
	case OPT_WBW: rc = num_opt(a->cmd, "write-bw", arg, true, &a->wbw); break;
	case OPT_KRUNS: rc = num_opt(a->cmd, "kernel-runs", arg, false, &x);
		a->kruns = (unsigned)x; break;
	case OPT_NTERMS: rc = num_opt(a->cmd, "node-terms", arg, false, &x);
		if (!rc && !(x >= 1 && x <= MAXBSP))
			return cli_usage("%s: --node-terms %s: a rank count from 1 to %d", a->cmd, arg,
					 MAXBSP);
		a->nterms = (unsigned)x; break;
	default:
		return cli_usage("%s: internal error: option %d", a->cmd, c);
	}
	return rc;
}

static const struct option m_longopts[] = {
	{ "help", no_argument, NULL, CLI_OPT_HELP },
	{ "format", required_argument, NULL, CLI_OPT_FORMAT },
	{ "mem", required_argument, NULL, CLI_OPT_MEM },
	{ "procs", required_argument, NULL, CLI_OPT_PROCS },
	{ "threads", required_argument, NULL, CLI_OPT_THREADS },
	{ "tmp", required_argument, NULL, CLI_OPT_TMP },
	{ "params", required_argument, NULL, OPT_PARAMS },
	{ "out", required_argument, NULL, OPT_OUT },
	{ "bsp-params", required_argument, NULL, OPT_BSPCSV },
	{ "base", required_argument, NULL, OPT_BASE },
	{ "kernel-size", required_argument, NULL, OPT_KSIZE },
	{ "kernel-runs", required_argument, NULL, OPT_KRUNS },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "size-per-node", required_argument, NULL, OPT_PERNODE },
	{ "procs-mpi", required_argument, NULL, OPT_PMPI },
	{ "groups", required_argument, NULL, OPT_GROUPS },
	{ "line-bytes", required_argument, NULL, OPT_LINE },
	{ "dim", required_argument, NULL, OPT_DIM },
	{ "epochs", required_argument, NULL, OPT_EPOCHS },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "local-steps", required_argument, NULL, OPT_LSTEPS },
	{ "sync", required_argument, NULL, OPT_SYNC },
	{ "shards", required_argument, NULL, OPT_SHARDS },
	{ "stats-json", required_argument, NULL, OPT_JSON },
	{ "nodes", required_argument, NULL, OPT_NODES },
	{ "net-gbit", required_argument, NULL, OPT_GBIT },
	{ "net-latency", required_argument, NULL, OPT_LAT },
	{ "msg-overhead", required_argument, NULL, OPT_MSGO },
	{ "read-bw", required_argument, NULL, OPT_RBW },
	{ "write-bw", required_argument, NULL, OPT_WBW },
	{ "node-terms", required_argument, NULL, OPT_NTERMS },
	{ NULL, 0, NULL, 0 }
};

static const char model_help[] =
	"Usage: pems-run model calibrate [--out FILE] [--tmp DIR]\n"
	"                                [--size SIZE] [--kernel-size SIZE] [--bsp-params CSV]\n"
	"                                [--kernel-runs N] [--base FILE]\n"
	"       pems-run model predict ALGO [job options] [--params FILE] [--stats-json RUN]\n"
	"       pems-run model project ALGO [job options] [--params FILE] --nodes LIST\n"
	"                                [--net-gbit G] [--net-latency S] [--msg-overhead S]\n"
	"                                [--read-bw B] [--write-bw B] [--node-terms P]\n"
	"A BSP cost model of the bundled algorithms (docs/cost-model.md): per\n"
	"superstep, max(disk, compute / cores, synchronous I/O + compute per worker)\n"
	"+ h*g + l, from this machine's measured parameters.\n"
	"\n"
	"calibrate: measure, on the scratch directory --tmp, the disk through the\n"
	"runtime, the CPU time of the algorithms' supersteps (inputs of\n"
	"--kernel-size, default 1G; median of --kernel-runs, default 3), the CPU\n"
	"share other load and the comm threads' polling leave, the superstep\n"
	"latency and a run's setup and end; g and l\n"
	"of p > 1 ranks come from bench/bsp-params.sh's CSV (--bsp-params).  Writes\n"
	"--out (default pems-model.params).  --base FILE keeps FILE's kernel rates,\n"
	"g and l and measures again only what other load changes (seconds instead\n"
	"of minutes).\n"
	"\n"
	"predict ALGO (sort, aggregate or sgd): the predicted time per superstep\n"
	"and in total.  --stats-json RUN (written by 'pems-run ALGO --stats-json')\n"
	"adds the measured times next to them and takes v, k, p, --mem and the\n"
	"size from the run unless given.\n"
	"\n"
	"project ALGO: one rank per node, each node like this machine (cores,\n"
	"disk, or --read-bw/--write-bw bytes/s per node) with no other load and\n"
	"the terms of ALGO measured here at p = 1 (kscale, overlap_alg, agg_at;\n"
	"--node-terms P: for more than one node those of P ranks, CPU factors\n"
	"and lbusy included); --nodes 1,10,100,1000; --size is the total\n"
	"(strong scaling) or --size-per-node (weak scaling); network --net-gbit\n"
	"(default 10) and --net-latency seconds (default 20e-6), --msg-overhead\n"
	"seconds per message (default 2e-6).\n"
	"\n"
	"Job options:\n"
	"  --size SIZE        input bytes (K/M/G suffixes)\n"
	"  --format FMT       sort: u64 (default) or rec100\n"
	"  --mem SIZE         memory budget per rank (default 1G)\n"
	"  --procs-mpi P      ranks (default 1)\n"
	"  --procs V          VPs (default: as the algorithm plans them)\n"
	"  --threads K        workers per rank (default: the calibrated cores)\n"
	"  --groups G         aggregate (kv input, count,sum): distinct keys (default 1M)\n"
	"  --line-bytes B     aggregate: output bytes per group (default 33)\n"
	"  --dim D --epochs E --batch B --local-steps H --sync bsp|local --shards S\n"
	"                     sgd (defaults 64, 1, 64, 64, local, 16)\n"
	"  -h, --help         show this help\n"
	"\n"
	"Output: a table, then one line 'model=ALGO ... predicted_secs=..\n"
	"[measured_secs=.. ratio=..]' (project: one 'projection=..' line per node\n"
	"count).  Exit status: 0 ok, 1 runtime failure, 2 usage error.\n";

static void job_defaults(struct mjob *j)
{
	memset(j, 0, sizeof(*j));
	j->mem = 1024 * MIB;
	j->groups = 1 << 20;
	j->line = 33;
	j->dim = 64;
	j->epochs = 1;
	j->batch = 64;
	j->local_steps = 64;
	j->shards = 16;
}

/* @argv[0] is the subcommand (calibrate, predict, project) */
static int parse(int argc, char **argv, struct margs *a)
{
	static const char *const help[] = { model_help, NULL };

	optind = 0;	/* full re-initialisation of getopt */
	return cli_getopt(argc, argv, a->cmd, m_longopts, help, m_option, a);
}

static int algo_of(const char *cmd, const char *name, struct mjob *j)
{
	if (!name)
		return cli_usage("%s: expected ALGO (sort, aggregate or sgd)", cmd);
	if (!strcmp(name, "sort"))
		j->algo = A_SORT;
	else if (!strcmp(name, "aggregate"))
		j->algo = A_AGG;
	else if (!strcmp(name, "sgd"))
		j->algo = A_SGD;
	else
		return cli_usage("%s: unknown ALGO '%s'; use sort, aggregate or sgd", cmd, name);
	return 0;
}

/* predict and project: options, then exactly one ALGO.  @argv[0] is the
 * subcommand.  Returns -1 to go on, else the exit status to return
 * (0 after --help). */
static int parse_algo(int argc, char **argv, struct margs *a)
{
	int rc = parse(argc - 1, argv + 1, a);

	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	argc--;
	argv++;
	rc = algo_of(a->cmd, optind < argc ? argv[optind] : NULL, &a->job);
	if (rc)
		return rc;
	if (optind + 1 != argc)
		return cli_usage("%s: expected one ALGO; see 'pems-run model --help'", a->cmd);
	return -1;
}

/* ---- predict ---- */

static void print_row(unsigned first, const struct mstep *s, const struct mtime *t,
		      const struct meas *ms)
{
	double pred = t->t * s->reps;
	char idx[32];

	if (s->reps > 1)
		snprintf(idx, sizeof(idx), "%u-%u", first, first + (unsigned)s->reps - 1);
	else
		snprintf(idx, sizeof(idx), "%u", first);
	printf("%-9s %-15s %8.3f %8.3f %8.3f %8.3f %8.3f %-6s %9.3f", idx, s->name,
	       t->disk * s->reps, t->cpu * s->reps, t->chain * s->reps, t->xfer * s->reps,
	       (t->t - dmax(dmax(t->disk, t->xfer), dmax(t->cpu, t->chain))) * s->reps,
	       t->bound, pred);
	if (ms && ms->nsteps >= first + s->reps) {
		double x = 0;
		unsigned i;

		for (i = first; i < first + (unsigned)s->reps; i++)
			x += ms->steps[i];
		printf(" %9.3f %6.2f", x, x > 0 ? pred / x : 0);
	}
	putchar('\n');
}

static const char *algo_name(enum malgo a)
{
	return a == A_SORT ? "sort" : a == A_AGG ? "aggregate" : "sgd";
}

/* The fsync that ends every run waits until the disk holds what the run
 * wrote with O_DIRECT (a virtual disk's cache), node by node. */
static double flush_secs(const struct mplan *pl, const struct mjob *j, const struct mparams *m,
			 const struct mlayout *L)
{
	double w = 0;
	unsigned i;

	if (!(m->flush_bw > 0))
		return 0;
	for (i = 0; i < pl->n; i++)
		w += (pl->s[i].msg_w + pl->s[i].file_w) * pl->s[i].reps;
	return w * dmin(1, (double)j->p / L->nodes * ceil((double)j->v / j->p) / j->v) / m->flush_bw;
}

/* Predict @j on @L; prints the table when @print; returns total seconds. */
/* the model's work: core-seconds of the kernels, bytes of disk traffic */
struct mwork {
	double cpu, io;
};

static double predict(struct mjob *j, const struct mparams *m, const struct mlayout *L,
		      const struct meas *ms, bool print, struct mwork *w)
{
	struct mplan pl;
	struct mtime t;
	double total, setup;
	unsigned i, first = 0;

	build(j, m, &pl);
	setup = L->setup + flush_secs(&pl, j, m, L);
	total = setup;
	if (w) {
		memset(w, 0, sizeof(*w));
		for (i = 0; i < pl.n; i++) {
			const struct mstep *s = &pl.s[i];

			w->cpu += step_core_s(L, s) * s->reps;
			w->io += (s->file_r + s->file_w + s->msg_r + s->msg_w + s->rand_r * 4096) * s->reps;
		}
	}
	if (print)
		printf("%-9s %-15s %8s %8s %8s %8s %8s %-6s %9s%s\n", "superstep", "phase", "disk_s",
		       "cpu_s", "chain_s", "net_s", "sync_s", "bound", "predicted",
		       ms && ms->nsteps ? "  measured  ratio" : "");
	for (i = 0; i < pl.n; i++) {
		step_time(&pl.s[i], j, m, L, &t);
		total += t.t * pl.s[i].reps;
		if (print)
			print_row(first, &pl.s[i], &t, ms);
		first += (unsigned)pl.s[i].reps;
	}
	if (print) {
		printf("%-9s %-15s %53s %9.3f", "", "setup+flush", "", setup);
		if (ms && ms->nsteps) {
			double x = ms->secs;

			for (i = 0; i < ms->nsteps; i++)
				x -= ms->steps[i];
			printf(" %9.3f", x);
		}
		printf("\n%-9s %-15s %53s %9.3f", "", "total", "", total);
		if (ms)
			printf(" %9.3f %6.2f", ms->secs, total / ms->secs);
		putchar('\n');
	}
	return total;
}

static int job_finish(struct margs *a, const struct mparams *m, const struct meas *ms)
{
	struct mjob *j = &a->job;

	if (ms) {
		if (!a->have_size)
			j->bytes = j->algo == A_SGD ? ms->bytes / (j->epochs ? j->epochs : 1) : ms->bytes;
		if (!j->p && ms->p)
			j->p = (unsigned)ms->p;
		if (ms->mem)
			j->mem = ms->mem;
	}
	if (!j->p)
		j->p = 1;
	if (!(j->bytes > 0))
		return cli_usage("%s: --size is required (or --stats-json of a run)", a->cmd);
	if (j->algo == A_SGD && (!j->dim || !j->shards || !j->batch || !j->local_steps || !j->epochs))
		return cli_usage("%s: --dim, --shards, --batch, --local-steps and --epochs must be positive",
				 a->cmd);
	if (j->algo == A_AGG && !(j->groups >= 1))
		return cli_usage("%s: --groups must be at least 1", a->cmd);
	if (plan_job(j, (unsigned)m->cores)) {
		char b[32], mm[32];

		cli_error("%s: --mem %s cannot hold %s of %s input (the planner finds no v)", a->cmd,
			  cli_human((uint64_t)j->mem, mm, sizeof(mm)),
			  cli_human((uint64_t)j->bytes, b, sizeof(b)), algo_name(j->algo));
		return CLI_EXIT_FAIL;
	}
	return 0;
}

static int cmd_predict(int argc, char **argv)
{
	struct margs a = { .cmd = "model predict", .params = "pems-model.params" };
	struct mparams m;
	struct meas ms;
	struct mlayout L;
	struct mwork w;
	double total;
	char b[32];
	int rc;

	job_defaults(&a.job);
	rc = parse_algo(argc, argv, &a);
	if (rc >= 0)
		return rc;
	if ((rc = params_read(a.params, &m)) != 0)
		return rc;
	if (a.json && (rc = meas_read(a.json, &ms)) != 0)
		return rc;
	rc = job_finish(&a, &m, a.json ? &ms : NULL);
	if (rc)
		goto out;
	L = (struct mlayout){ .nodes = 1, .cores = m.cores, .load = m.load,
			      .poll = params_poll(&m, a.job.p), .lat = m.lat,
			      .setup = params_setup(&m, a.job.p),
			      .fwrite_bw = m.fwrite_bw, .read_bw = m.read_bw,
			      .write_bw = m.write_bw, .iops = m.iops };
	layout_terms(&L, &m, &a.job, a.job.p);
	if (params_bsp(&m, a.job.p, &L.l, &L.g)) {
		rc = cli_usage("%s: %s has no 'bsp %u ...' line; calibrate with --bsp-params from bench/bsp-params.sh",
			       a.cmd, a.params, a.job.p);
		goto out;
	}
	printf("model: %s%s %s, p=%u v=%u k=%u M=%s chunk=%.0fK; parameters %s (%s)\n",
	       algo_name(a.job.algo), a.job.algo == A_SORT ? (a.job.rec100 ? " rec100" : " u64") : "",
	       cli_human((uint64_t)a.job.bytes, b, sizeof(b)), a.job.p, a.job.v, a.job.k,
	       cli_human((uint64_t)a.job.mem, (char[32]){ 0 }, 32), a.job.chunk / 1024,
	       a.params, m.date);
	if (a.json && ms.v)
		printf("the run: v=%.0f k=%.0f (%s the planner's)\n", ms.v, ms.k,
		       ms.v == a.job.v && ms.k == a.job.k ? "as" : "NOT as");
	total = predict(&a.job, &m, &L, a.json ? &ms : NULL, true, &w);
	printf("work: kernels %.2f core-s, disk traffic %.3f GB", w.cpu, w.io / 1e9);
	if (a.json)
		printf("; measured: CPU %.2f s (rank 0 x p, all threads), disk traffic %.3f GB",
		       ms.cpu, ms.io / 1e9);
	printf("\nCPU share: the workers get %.2f cores (load %.1f threads, polling %.2f core per rank",
	       cores_for(&L, &a.job), m.load, a.job.p > 1 && !(L.cpu_f > 0) ? L.poll : 0);
	if (L.cpu_f > 0)
		printf("; kernel work x %.2f at p = %u", L.cpu_f, a.job.p);
	if (L.lbusy > 0)
		printf("; repeated supersteps pay lbusy %.2f ms", L.lbusy * 1e3);
	putchar(')');
	if (a.json)
		printf("; the run used %.2f cores (CPU s / wall s, every thread)", ms.cpu / ms.secs);
	printf("\nmodel=%s bytes=%.0f p=%u v=%u k=%u predicted_secs=%.4f pred_cpu=%.3f pred_io=%.0f pred_share=%.3f",
	       algo_name(a.job.algo), a.job.bytes, a.job.p, a.job.v, a.job.k, total, w.cpu, w.io,
	       cores_for(&L, &a.job));
	if (a.json)
		printf(" measured_secs=%.4f meas_cpu=%.3f meas_io=%.0f meas_share=%.3f ratio=%.4f"
		       " run_v=%.0f run_k=%.0f", ms.secs, ms.cpu, ms.io, ms.cpu / ms.secs,
		       total / ms.secs, ms.v, ms.k);
	putchar('\n');
out:
	if (a.json)
		free(ms.steps);
	return rc;
}

/* ---- project: one rank per node, nodes like this machine ---- */

/*
 * One node of the projection (docs/cost-model.md, "Projection"): one
 * rank of job @j (planned for @n nodes) with this machine's cores, disk
 * (or --read-bw/--write-bw) and no other load; g and l of the network;
 * the setup of the largest rank count calibrated here up to @n; and the
 * terms of the job's algorithm as predict takes them (layout_terms) at
 * p = 1 -- one rank with its k workers, as on this machine -- or, with
 * --node-terms P and more than one node, at P ranks (their CPU factors
 * then hold the comm thread's polling and MPI's copies instead of
 * "poll").  A loop's barrier pays the network's l plus what lbusy
 * measured above the idle l at those ranks here.
 */
static void project_layout(struct mlayout *L, const struct mparams *m, const struct mjob *j,
			   const struct margs *a, double n)
{
	unsigned pt = n > 1 ? a->nterms : 1;
	double l1 = 0, lp = 0, g;

	*L = (struct mlayout){ .nodes = n, .cores = m->cores, .lat = m->lat, .poll = m->poll,
			       .read_bw = a->rbw ? a->rbw : m->read_bw,
			       .write_bw = a->wbw ? a->wbw : m->write_bw,
			       .fwrite_bw = a->wbw ? a->wbw : m->fwrite_bw, .iops = m->iops,
			       .g = 8 / (a->gbit * 1e9), .setup = params_setup_upto(m, j->p) };
	params_bsp(m, 1, &l1, &g);
	L->l = l1 + (n - 1) * a->msgo + 6 * ceil(log2(n)) * a->lat;
	layout_terms(L, m, j, pt);
	L->lbusy = L->lbusy > 0 && !params_bsp(m, pt, &lp, &g) ? L->l + dmax(0, L->lbusy - lp) : 0;
}

static int cmd_project(int argc, char **argv)
{
	struct margs a = { .cmd = "model project", .params = "pems-model.params", .gbit = 10,
			   .lat = 20e-6, .msgo = 2e-6, .nterms = 1 };
	struct mparams m;
	double base = 0, per = 0;
	char *tok, *save = NULL;
	int rc;

	job_defaults(&a.job);
	snprintf(a.nodes, sizeof(a.nodes), "1,10,100,1000");
	rc = parse_algo(argc, argv, &a);
	if (rc >= 0)
		return rc;
	if (!a.have_size)
		return cli_usage("%s: --size or --size-per-node is required", a.cmd);
	if (!(a.gbit > 0))
		return cli_usage("%s: --net-gbit must be positive", a.cmd);
	if ((rc = params_read(a.params, &m)) != 0)
		return rc;
	per = a.job.bytes;
	printf("%-6s %8s %10s %7s %9s %10s %10s %8s  %s\n", "nodes", "v", "bytes", "chunk",
	       "l_ms", "secs", "speedup", "eff", "largest superstep; terms (p here, kscale, overlap, CPU factor)");
	for (tok = strtok_r(a.nodes, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct mjob j = a.job;
		struct mlayout L;
		double n = strtod(tok, NULL), t, sp;
		struct mplan pl;
		struct mtime mt;
		unsigned i, worst = 0;
		double wt = -1;

		if (!(n >= 1))
			return cli_usage("%s: --nodes %s: not a node count", a.cmd, tok);
		j.p = (unsigned)n;
		if (j.algo == A_SGD && j.shards < j.p * (j.k ? j.k : m.cores))
			j.shards = j.p * (j.k ? j.k : (unsigned)m.cores);	/* v = S: every worker */
		j.v = a.job.v;
		j.bytes = a.per_node ? per * n : per;
		if (plan_job(&j, (unsigned)m.cores)) {
			printf("%-6.0f %8s %10.3g %7s %9s %10s %10s %8s  does not fit: --mem %.0f MiB cannot hold v's tables\n",
			       n, "-", j.bytes, "-", "-", "-", "-", "-", j.mem / MIB);
			printf("projection=%s nodes=%.0f fits=0\n", algo_name(j.algo), n);
			continue;
		}
		project_layout(&L, &m, &j, &a, n);
		t = predict(&j, &m, &L, NULL, false, NULL);
		build(&j, &m, &pl);
		for (i = 0; i < pl.n; i++) {
			step_time(&pl.s[i], &j, &m, &L, &mt);
			if (mt.t * pl.s[i].reps > wt) {
				wt = mt.t * pl.s[i].reps;
				worst = i;
			}
		}
		if (!base)
			base = a.per_node ? t / n : t * n;	/* one node's time per node-share */
		sp = a.per_node ? base * n / t : base / t;
		printf("%-6.0f %8u %10.3g %6.0fK %9.3f %10.3f %10.1f %7.0f%%  %s %.3f s; p=%u %.3f %.3f %.3f\n",
		       n, j.v, j.bytes, j.chunk / 1024, L.l * 1e3, t, sp, 100 * sp / n, pl.s[worst].name,
		       wt, n > 1 ? a.nterms : 1, L.ks > 0 ? L.ks : 1, L.ovl, step_cpu_f(&L, &pl.s[worst]));
		printf("projection=%s nodes=%.0f bytes=%.0f v=%u predicted_secs=%.4f speedup=%.2f fits=1"
		       " terms_p=%u kscale=%.4f overlap=%.4f setup=%.4f\n", algo_name(j.algo), n, j.bytes,
		       j.v, t, sp, n > 1 ? a.nterms : 1, L.ks > 0 ? L.ks : 1, L.ovl, L.setup);
	}
	return 0;
}

/* ---- calibrate ---- */

struct cal {
	const char *dir;
	double size, ksize;
	unsigned k;
	struct mparams *m;
	double end0, w0;	/* the setup run: seconds outside its supersteps, bytes written */
	/* the last run of each kernel job: the job and its supersteps' wall
	 * seconds (sgd: the mean training superstep), for cal_overlap() */
	struct kjob { struct mjob j; double secs[MAXSTEPS]; unsigned n; } kj[6];
};

/* Keep the recorded run of kernel job @i (@j: its shape) for cal_overlap. */
static void kernel_keep(struct cal *c, unsigned i, const struct mjob *j)
{
	struct kjob *k = &c->kj[i];
	size_t s;

	k->j = *j;
	k->j.p = 1;
	k->j.k = c->k;
	k->j.mem = 1024 * MIB;
	k->n = 0;
	if (j->algo == A_SGD) {		/* every superstep but the last trains */
		double t = 0;

		for (s = 0; s + 1 < rec.n; s++)
			t += rec.s[s].secs;
		k->secs[0] = rec.n > 1 ? t / (double)(rec.n - 1) : 0;
		k->n = 1;
		return;
	}
	for (s = 0; s < rec.n && s < MAXSTEPS; s++)
		k->secs[k->n++] = rec.s[s].secs;
}

/* seconds of the last recorded run outside its supersteps; *w: the
 * bytes it wrote (message store and files) */
static double run_end(double wall, double *w)
{
	double steps = 0;
	size_t i;

	*w = 0;
	for (i = 0; i < rec.n; i++) {
		steps += rec.s[i].secs;
		*w += (double)rec.s[i].b[3] + (double)rec.s[i].b[5];
	}
	return dmax(0, wall - steps);
}

static double now_s(void) { return cli_now(); }

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
		t = cpu_now(CLOCK_THREAD_CPUTIME_ID);
		memcpy(i % 2 ? a : b, i % 2 ? b : a, n);
		t = cpu_now(CLOCK_THREAD_CPUTIME_ID) - t;
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
	t = cpu_now(CLOCK_THREAD_CPUTIME_ID);
	qsort(k, n, sizeof(*k), qcmp);
	t = cpu_now(CLOCK_THREAD_CPUTIME_ID) - t;
	free(k);
	return t / (n * log2((double)n)) * 1e9;
}

/* -- CPU share: k threads spinning get s_k cores; under CFS that is
 * min(k, c*k/(k+L)) with L runnable threads of others, so L = c*k/s_k - k -- */

static void *spin(void *arg)
{
	double *cpu = arg, t0 = cli_now();
	volatile uint64_t x = 0;

	while (cli_now() - t0 < 1.0)
		x = x * 6364136223846793005ull + 1;
	*cpu = cpu_now(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

/* the comm thread's idle loop (pems/transport.c): usleep(20) between polls */
static void *poller(void *arg)
{
	double t0 = cli_now();

	(void)arg;
	while (cli_now() - t0 < 1.0)
		usleep(20);
	return NULL;
}

/* cores @k spinning threads get in one second beside @npoll pollers */
static double spin_share(unsigned k, unsigned npoll)
{
	pthread_t th[64], pt[8];
	double cpu[64], share = 0, t0 = cli_now();
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
	return n ? share / (cli_now() - t0) : 0;
}

/* L: the other runnable threads that explain the share k spinners get;
 * *poll: the cores one comm thread's polling takes from busy workers
 * (what two pollers take from them, halved; alone on an idle core a
 * poller uses more, 0.2 core here, but that is not taken from anyone) */
static double background_load(unsigned k, double cores, double *poll)
{
	double share = spin_share(k, 0);

	*poll = dmax(0, (share - spin_share(k, 2)) / 2);
	if (share <= 0)
		return 0;
	return dmax(0, dmin(cores, k) * k / share - k);
}

/* poll_p: p ranks of k workers each put p*k busy threads beside p comm
 * threads polling; what the pollers take from them, per rank, measured
 * with as many threads as the runs have (on a shared core a poller's
 * wake-ups wait longer the more threads are runnable) */
static void cal_poll(struct cal *c)
{
	static const unsigned ps[] = { 2, 4 };
	unsigned i;

	for (i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		double s0 = spin_share(ps[i] * c->k, 0), s1 = spin_share(ps[i] * c->k, ps[i]);

		if (ptab_set(&c->m->poll_p, ps[i], dmax(0, (s0 - s1) / ps[i])))
			return;
	}
}

/* -- disk: three supersteps of every worker's VP -- */

#define LAT_CALL ((size_t)4 << 20)	/* bytes per call of the latency test */

struct disk_job {
	int fd;
	double per_vp;		/* bytes */
	unsigned rounds;	/* of 32 random 4 KiB reads */
	bool reads;		/* the second run: reads, after an fdatasync */
	double secs[5];		/* write, write into a hole, read, random, 4 MiB calls */
};

static void disk_spmd(void *arg)
{
	struct disk_job *d = arg;
	size_t blk = 64u << 20, off0 = (size_t)d->per_vp * bsp_pid(), o;
	char *buf = pems_malloc(blk);
	uint64_t offs[32], x = 0x9e3779b97f4a7c15ull * (bsp_pid() + 1);
	unsigned r, i;

	memset(buf, 0x5a, blk);
	if (d->reads)
		goto reads;
	for (o = 0; o < d->per_vp; o += blk)	/* into allocated blocks */
		if (pems_file_write(d->fd, buf, blk, off0 + o) != (long long)blk)
			bsp_abort("pems: error: model calibrate: writing the test file failed");
	bsp_sync();
	off0 += (size_t)d->per_vp * bsp_nprocs();
	for (o = 0; o < d->per_vp; o += blk)	/* into the hole after them */
		if (pems_file_write(d->fd, buf, blk, off0 + o) != (long long)blk)
			bsp_abort("pems: error: model calibrate: writing the test file failed");
	pems_free(buf);
	return;
reads:
	for (o = 0; o < d->per_vp; o += blk)
		if (pems_file_read(d->fd, buf, blk, off0 + o) != (long long)blk)
			bsp_abort("pems: error: model calibrate: reading the test file failed");
	bsp_sync();
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
	bsp_sync();
	/* the second half (written into the hole) in 4 MiB calls, one at a
	 * time per worker: what a synchronous call costs beyond its bytes
	 * (sgd reads its rows so; the sort and aggregate one slice per VP) */
	off0 += (size_t)d->per_vp * bsp_nprocs();
	for (o = 0; o < d->per_vp; o += LAT_CALL)
		if (pems_file_read(d->fd, buf, LAT_CALL, off0 + o) != (long long)LAT_CALL)
			bsp_abort("pems: error: model calibrate: reading the test file failed");
	pems_free(buf);
}

static int configure(unsigned procs, unsigned k, size_t mu, size_t mem, const char *tmp)
{
	struct pems_config cfg;

	pems_config_init(&cfg);
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

/* Run @fn under the step recorder; the seconds of each superstep in
 * rec.s (p = 1).  Returns 0 or the algorithm's error. */
static int recorded(int (*fn)(void *), void *arg, double *wall)
{
	struct pems_stats st;
	double t = now_s();
	int rc;

	cli_steps_begin();
	rc = fn(arg);
	*wall = now_s() - t;
	pems_get_stats(&st);
	rec_finish(&st, 1);
	return rc;
}

static int run_disk(void *arg)
{
	return pems_spmd(NULL, disk_spmd, arg);
}

/* the disk test on @dir; rec.s[] holds its four supersteps */
static int disk_test(struct cal *c, const char *dir, double size, struct disk_job *dj)
{
	char path[4096];
	struct disk_job d = { .rounds = 64 };
	double wall;
	int rc;

	snprintf(path, sizeof(path), "%s/pems-model-cal.%d", dir, (int)getpid());
	d.per_vp = floor(size / c->k / (64 * MIB)) * 64 * MIB;
	if (d.per_vp < 64 * MIB)
		d.per_vp = 64 * MIB;
	/* allocated ahead, like the message logs and the outputs: O_DIRECT
	 * writes that extend a file take ext4's slow path (design.md) */
	rc = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (rc >= 0) {
		if (posix_fallocate(rc, 0, (off_t)(d.per_vp * c->k)) ||
		    ftruncate(rc, (off_t)(2 * d.per_vp * c->k)))
			cli_error("model calibrate: cannot size '%s'", path);
		close(rc);
	}
	d.fd = pems_file_open(path, O_RDWR, 0600);
	if (d.fd < 0) {
		cli_error("model calibrate: cannot create '%s': %s", path, strerror(-d.fd));
		return CLI_EXIT_FAIL;
	}
	rc = configure(c->k, c->k, 80u << 20, (size_t)c->k * (80u << 20) + (256u << 20), dir);
	if (!rc && !(rc = recorded(run_disk, &d, &wall)) && rec.n == 2) {
		d.secs[0] = rec.s[0].secs;
		d.secs[1] = rec.s[1].secs;
		d.reads = true;
		rc = recorded(run_disk, &d, &wall);
		if (!rc && rec.n == 3) {
			d.secs[2] = rec.s[0].secs;
			d.secs[3] = rec.s[1].secs;
			d.secs[4] = rec.s[2].secs;
		} else if (!rc) {
			rc = -EIO;
		}
	} else if (!rc) {
		rc = -EIO;
	}
	pems_file_close(d.fd);
	unlink(path);
	if (rc) {
		cli_error("model calibrate: the disk test on %s failed: %s", dir, pems_strerror(rc));
		return CLI_EXIT_FAIL;
	}
	*dj = d;
	return 0;
}

static double median3(double a, double b, double c)
{
	return a > b ? (b > c ? b : a > c ? c : a) : (a > c ? a : b > c ? c : b);
}

/* The disk of this VM is cached by its host: one test gave writes at
 * 0.99 and, 13 minutes later, 1.79 GB/s.  So a warm-up test of a quarter
 * of the size first (not recorded: the first pass over new blocks), then
 * three tests, and each figure is the median of its three. */
static int cal_disk(struct cal *c)
{
	struct disk_job d, r[3];
	unsigned i, t;
	int rc = disk_test(c, c->dir, c->size / 4, &d);

	for (t = 0; !rc && t < 3; t++)
		rc = disk_test(c, c->dir, c->size, &r[t]);
	if (rc)
		return rc;
	d = r[0];
	for (i = 0; i < 5; i++)
		d.secs[i] = median3(r[0].secs[i], r[1].secs[i], r[2].secs[i]);
	c->m->write_bw = d.per_vp * c->k / d.secs[0];
	c->m->fwrite_bw = d.per_vp * c->k / d.secs[1];
	c->m->read_bw = d.per_vp * c->k / d.secs[2];
	c->m->iops = 32.0 * d.rounds * c->k / d.secs[3];
	/* every worker read per_vp in calls of LAT_CALL, all at once: the
	 * time beyond the bytes at read_bw, per call of one worker */
	c->m->lat = dmax(0, d.secs[4] - d.per_vp * c->k / c->m->read_bw) / (d.per_vp / LAT_CALL);
	return 0;
}

/* -- superstep latency and the per-VP cost of a superstep -- */

struct empty_job { unsigned steps; };

static void empty_spmd(void *arg)
{
	const struct empty_job *e = arg;
	unsigned i;

	for (i = 0; i < e->steps; i++)
		bsp_sync();
}

static int run_empty(void *arg)
{
	return pems_spmd(NULL, empty_spmd, arg);
}

static double median_steps(size_t from)
{
	double *x = malloc(rec.n * sizeof(double)), mid;
	size_t n = 0, i, j;

	if (!x)
		return 0;
	for (i = from; i + 1 < rec.n; i++) {	/* not the last: it ends the run */
		double y = rec.s[i].secs;

		for (j = n++; j > 0 && x[j - 1] > y; j--)
			x[j] = x[j - 1];
		x[j] = y;
	}
	mid = n ? x[n / 2] : 0;
	free(x);
	return mid;
}

static int cal_latency(struct cal *c)
{
	struct empty_job e = { 200 };
	double wall, l_small, l_big;
	unsigned big = 256, i;

	if (configure(c->k, c->k, 1u << 20, 256u << 20, c->dir) || recorded(run_empty, &e, &wall))
		return -1;
	l_small = median_steps(1);
	if (configure(big, c->k, 1u << 20, 512u << 20, c->dir) || recorded(run_empty, &e, &wall))
		return -1;
	l_big = median_steps(1);
	c->m->vp_secs = dmax(0, (l_big - l_small) * dmin(c->k, c->m->cores) / (big - c->k));
	for (i = 0; i < c->m->nbsp && c->m->bsp[i].p != 1; i++)
		;
	if (i == c->m->nbsp) {
		if (i == MAXBSP)
			return -1;
		c->m->nbsp++;
		c->m->bsp[i].g = 0;
	}
	c->m->bsp[i].p = 1;
	c->m->bsp[i].l = l_small;
	return 0;
}

/* -- kernels: the real algorithms on data in memory -- */

/* pems-run gen ARGS (the last one the file), then the file's pages to the
 * disk: the runs read it with O_DIRECT, which first writes back dirty
 * page-cache pages -- in the reading process, allocating ext4's delayed
 * blocks on its CPU time and making its random reads wait (the first
 * calibration of 2026-12-03 measured both into the sort's rates) */
static int gen(const char *const *args)
{
	char *argv[16];
	int argc = 0, rc, fd;

	while (args[argc] && argc < 15) {
		argv[argc] = (char *)args[argc];
		argc++;
	}
	argv[argc] = NULL;
	optind = 0;
	rc = cli_gen_main(argc, argv);
	if (rc || argc < 2)
		return rc;
	fd = open(argv[argc - 1], O_RDONLY);
	if (fd < 0 || fsync(fd)) {
		cli_error("model calibrate: cannot sync '%s': %s", argv[argc - 1], strerror(errno));
		rc = CLI_EXIT_FAIL;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/* CPU seconds of superstep @i: the process's, all threads; O_DIRECT
 * transfers cost the CPU next to nothing, and other load on the machine
 * lengthens the wall time but not this */
static double kernel_secs(const struct cal *c, size_t i)
{
	(void)c;
	return rec.s[i].cpu;
}

static int run_sort(void *arg) { return pems_sort(arg); }
static int run_agg(void *arg) { return pems_aggregate(arg); }
static int run_sgd(void *arg) { return pems_sgd(arg); }

static int cal_run(struct cal *c, int (*fn)(void *), void *job, const char *what, double *wall)
{
	char scratch[4096];
	int rc;

	snprintf(scratch, sizeof(scratch), "%s", c->dir);
	rc = configure(0, c->k, 0, 1024u << 20, scratch);
	if (!rc)
		rc = recorded(fn, job, wall);
	if (rc) {
		cli_error("model calibrate: the %s run failed: %s", what, pems_strerror(rc));
		return CLI_EXIT_FAIL;
	}
	return 0;
}

static int cal_sort(struct cal *c, int rec100)
{
	char in[4096], out[4096], count[32];
	struct pems_sort_job job = { .in = in, .out = out };
	double wall, rs = rec100 ? 100 : 8;
	int rc;

	snprintf(in, sizeof(in), "%s/pems-model-cal.%d.in", c->dir, (int)getpid());
	snprintf(out, sizeof(out), "%s/pems-model-cal.%d.out", c->dir, (int)getpid());
	snprintf(count, sizeof(count), "%.0f", floor(c->ksize / rs));
	job.fmt = rec100 ? PEMS_FMT_REC100 : PEMS_FMT_U64;
	rc = gen((const char *const[]){ "gen", "--format", rec100 ? "rec100" : "u64",
					"--count", count, "--seed", "7", "--quiet", in, NULL });
	if (!rc)
		rc = cal_run(c, run_sort, &job, "sort", &wall);
	unlink(in);
	unlink(out);
	if (rc || rec.n != 4)
		return CLI_EXIT_FAIL;
	if (!rec100) {
		/* the end of a run (closing the deleted message logs frees
		 * their blocks, the output's fsync) grows with what it wrote:
		 * this run's end against the small setup run's */
		double w, end = run_end(wall, &w);

		c->m->flush_bw = end > c->end0 && w > c->w0 ? (w - c->w0) / (end - c->end0) : 0;
		/* the sampling superstep on a file as large as the runs' */
		if (rec.s[0].secs > 0 && rec.s[0].b[4] >= 4096 * 256)
			c->m->iops = rec.s[0].b[4] / 4096.0 / rec.s[0].secs;
	}
	{
		struct mjob j;

		job_defaults(&j);
		j.algo = A_SORT;
		j.rec100 = rec100;
		j.bytes = floor(c->ksize / rs) * rs;
		kernel_keep(c, (unsigned)rec100, &j);
	}
	c->m->sort_part[rec100] = floor(c->ksize / rs) * rs / kernel_secs(c, 2);
	c->m->sort_local[rec100] = floor(c->ksize / rs) * rs / kernel_secs(c, 3);
	return 0;
}

/* setup: a 128 MiB sort with input, output and scratch on the disk */
static int cal_setup(struct cal *c)
{
	char in[4096], out[4096];
	struct pems_sort_job job = { .in = in, .out = out, .fmt = PEMS_FMT_U64 };
	double wall;
	int rc;

	snprintf(in, sizeof(in), "%s/pems-model-cal.%d.in", c->dir, (int)getpid());
	snprintf(out, sizeof(out), "%s/pems-model-cal.%d.out", c->dir, (int)getpid());
	rc = gen((const char *const[]){ "gen", "--format", "u64", "--count", "16M", "--seed", "7",
					"--quiet", in, NULL });
	if (!rc)
		rc = configure(0, c->k, 0, 1024u << 20, c->dir);
	if (!rc)
		rc = recorded(run_sort, &job, &wall);
	unlink(in);
	unlink(out);
	if (rc) {
		cli_error("model calibrate: the setup run failed: %s", pems_strerror(rc));
		return CLI_EXIT_FAIL;
	}
	c->end0 = run_end(wall, &c->w0);
	/* its superstep 0 is the sampling: rounds of 32 ascending 4 KiB reads
	 * within each VP's slice, 3-10x faster here than the same number of
	 * reads spread over the whole file (the random-read test) */
	if (rec.n == 4 && rec.s[0].secs > 0 && rec.s[0].b[4] >= 4096 * 256)
		c->m->iops = rec.s[0].b[4] / 4096.0 / rec.s[0].secs;
	return 0;
}

/* aggregate count,sum over kv rows of --kernel-size with @groups keys;
 * t[] the CPU seconds of supersteps 2, 3 and 4, t[3] the run's v; kept
 * for cal_overlap as kernel job @idx (none when @idx >= 6) */
static int cal_agg_run(struct cal *c, const char *groups, unsigned idx, double t[4])
{
	char in[4096], out[4096], count[32];
	struct pems_aggregate_job job = { .in = in, .out = out };
	double wall, rows = floor(c->ksize / 16);
	int rc;

	snprintf(in, sizeof(in), "%s/pems-model-cal.%d.kv", c->dir, (int)getpid());
	snprintf(out, sizeof(out), "%s/pems-model-cal.%d.csv", c->dir, (int)getpid());
	snprintf(count, sizeof(count), "%.0f", rows);
	job.aggs[0] = pems_aggregate_builtin("count");
	job.aggs[1] = pems_aggregate_builtin("sum");
	job.naggs = 2;
	rc = gen((const char *const[]){ "gen", "--format", "kv", "--count", count, "--groups",
					groups, "--seed", "7", "--quiet", in, NULL });
	if (!rc)
		rc = cal_run(c, run_agg, &job, "aggregate", &wall);
	unlink(in);
	unlink(out);
	if (rc || rec.n != 5)
		return CLI_EXIT_FAIL;
	{
		struct mjob j;

		job_defaults(&j);
		j.algo = A_AGG;
		j.bytes = rows * 16;
		j.groups = strtod(groups, NULL);
		if (idx < 6)
			kernel_keep(c, idx, &j);
	}
	t[0] = kernel_secs(c, 2);
	t[1] = kernel_secs(c, 3);
	t[2] = kernel_secs(c, 4);
	{
		struct pems_stats st;

		pems_get_stats(&st);
		t[3] = st.procs;
	}
	return 0;
}

/* the group counts of the "agg_at" lines: 2^20 .. 2^26 (64 Mi rows of the
 * 1 GiB kernel size: 64 .. 1.6 rows per group) */
static const char *const agg_groups[] = { "1048576", "4194304", "16777216", "67108864" };
#define NAGG_CAL (sizeof(agg_groups) / sizeof(agg_groups[0]))
_Static_assert(NAGG_CAL == 4 && NAGG_CAL <= MAXAGG, "cal_kernels takes the medians of 4 agg_at lines");

/*
 * Five runs, R rows each: 1000 groups (pre-aggregation: agg_hash);
 * 64 Mi groups (R rows pass raw, Gb ~ 0.63 R groups, not compacted:
 * agg_raw, agg_merge per row, superstep 4 = R/agg_write + Gb/agg_fmt);
 * 1 Mi groups (raw, then compacted into Gc states: superstep 3 =
 * R/agg_merge + Gc/agg_compact, superstep 4 = Gc/agg_fmt); 4 Mi and
 * 16 Mi groups.  The last four also give the "agg_at" lines: at G_d/v
 * groups per VP, superstep 3's rows per CPU second and superstep 4's
 * groups per CPU second (agg_secs_at).
 */
static int cal_agg(struct cal *c)
{
	double r = floor(c->ksize / 16), h[4], t[NAGG_CAL][4], *b = t[NAGG_CAL - 1], *k = t[0];
	double gb, gc;
	unsigned i;
	int rc;

	if ((rc = cal_agg_run(c, "1000", 2, h)))
		return rc;
	for (i = 0; i < NAGG_CAL; i++) {
		double g = strtod(agg_groups[i], NULL), gd = g * -expm1(-r / g);

		if ((rc = cal_agg_run(c, agg_groups[i], i == 0 ? 4 : i == NAGG_CAL - 1 ? 3 : 6,
				      t[i])))
			return rc;
		c->m->agg_at[i].x = gd / dmax(1, t[i][3]);
		c->m->agg_at[i].merge = r / t[i][1];
		c->m->agg_at[i].write = gd / t[i][2];
	}
	c->m->nagg = NAGG_CAL;
	gb = 67108864.0 * -expm1(-r / 67108864.0);
	gc = 1048576.0 * -expm1(-r / 1048576.0);
	c->m->agg_hash = r / h[0];
	c->m->agg_raw = r / b[0];
	c->m->agg_merge = r / b[1];
	c->m->agg_fmt = gc / k[2];
	c->m->agg_write = r / dmax(b[2] - gb / c->m->agg_fmt, 0.05 * b[2]);
	c->m->agg_compact = gc / dmax(k[1] - r / c->m->agg_merge, 0.05 * k[1]);
	return 0;
}

static int cal_sgd(struct cal *c)
{
	char in[4096], out[4096], count[32];
	struct pems_sgd_job job = { .data = in, .out = out };
	double wall, rows = floor(c->ksize / (65 * 4)), secs = 0;
	size_t i;
	int rc;

	snprintf(in, sizeof(in), "%s/pems-model-cal.%d.dense", c->dir, (int)getpid());
	snprintf(out, sizeof(out), "%s/pems-model-cal.%d.model", c->dir, (int)getpid());
	snprintf(count, sizeof(count), "%.0f", rows);
	job.model = PEMS_SGD_LINEAR;
	job.format = PEMS_SGD_DENSE;
	job.epochs = 1;
	job.sync = PEMS_SGD_SYNC_LOCAL;
	job.local_steps = 64;
	job.batch = 64;
	job.lr = 0.01;
	job.lr_decay = 0.5;
	job.lr_step = 1;
	rc = gen((const char *const[]){ "gen", "--format", "dense", "--model", "linear", "--count",
					count, "--dim", "64", "--noise", "0.5", "--seed", "7",
					"--quiet", in, NULL });
	if (!rc)
		rc = cal_run(c, run_sgd, &job, "sgd", &wall);
	unlink(in);
	strncat(in, ".weights", sizeof(in) - strlen(in) - 1);
	unlink(in);
	unlink(out);
	if (rc || rec.n < 2)
		return CLI_EXIT_FAIL;
	{
		struct mjob j;

		job_defaults(&j);
		j.algo = A_SGD;
		j.bytes = 16 + rows * 65 * 4;
		j.sync_bsp = 0;
		kernel_keep(c, 5, &j);
	}
	for (i = 0; i + 1 < rec.n; i++)
		secs += kernel_secs(c, i);
	c->m->sgd = rows * 64 / secs;
	return 0;
}

/* The kernel rates, each the median of @runs calibrations (other load
 * on the machine inflates CPU time too, through caches and the
 * hypervisor, by up to 2x in single runs here). */
static int cal_kernels(struct cal *c, unsigned runs)
{
	static const size_t off[] = {
		offsetof(struct mparams, sort_part[0]), offsetof(struct mparams, sort_part[1]),
		offsetof(struct mparams, sort_local[0]), offsetof(struct mparams, sort_local[1]),
		offsetof(struct mparams, agg_raw), offsetof(struct mparams, agg_hash),
		offsetof(struct mparams, agg_merge), offsetof(struct mparams, agg_write),
		offsetof(struct mparams, agg_compact), offsetof(struct mparams, agg_fmt),
		offsetof(struct mparams, sgd), offsetof(struct mparams, flush_bw),
		offsetof(struct mparams, iops),
		offsetof(struct mparams, agg_at[0].merge), offsetof(struct mparams, agg_at[0].write),
		offsetof(struct mparams, agg_at[1].merge), offsetof(struct mparams, agg_at[1].write),
		offsetof(struct mparams, agg_at[2].merge), offsetof(struct mparams, agg_at[2].write),
		offsetof(struct mparams, agg_at[3].merge), offsetof(struct mparams, agg_at[3].write),
	};
#define NOFF (sizeof(off) / sizeof(off[0]))
	double x[NOFF][16];
	unsigned r, i, a, b;
	int rc;

	if (runs < 1 || runs > 16)
		runs = 3;
	for (r = 0; r < runs; r++) {
		if ((rc = cal_sort(c, 0)) || (rc = cal_sort(c, 1)) || (rc = cal_agg(c)) ||
		    (rc = cal_sgd(c)))
			return rc;
		for (i = 0; i < NOFF; i++)
			x[i][r] = *(double *)(void *)((char *)c->m + off[i]);
	}
	for (i = 0; i < NOFF; i++) {
		for (a = 1; a < runs; a++)	/* insertion sort, then the median */
			for (b = a; b > 0 && x[i][b - 1] > x[i][b]; b--) {
				double t = x[i][b];

				x[i][b] = x[i][b - 1];
				x[i][b - 1] = t;
			}
		*(double *)(void *)((char *)c->m + off[i]) =
			runs % 2 ? x[i][runs / 2] : (x[i][runs / 2 - 1] + x[i][runs / 2]) / 2;
	}
	return 0;
#undef NOFF
}

/*
 * overlap: the model's max() hides the lesser of a superstep's disk and
 * compute times under the greater; the kernel runs (p = 1, 1 GiB) show
 * how much of it is not hidden: for each of their supersteps with both
 * (the lesser at least a tenth of the greater, the superstep at least
 * 0.2 s), (measured - max) / lesser, with every other parameter as just
 * calibrated; the median, within [0, 1].
 */
static void cal_overlap(struct cal *c)
{
	struct mparams *m = c->m;
	struct mlayout L = { .nodes = 1, .cores = m->cores, .load = m->load, .poll = m->poll,
			     .lat = m->lat, .fwrite_bw = m->fwrite_bw, .read_bw = m->read_bw,
			     .write_bw = m->write_bw, .iops = m->iops };
	double a[64], g;
	unsigned i, s, n = 0, x, y;

	m->overlap = 0;
	params_bsp(m, 1, &L.l, &g);
	for (i = 0; i < 6; i++) {
		struct kjob *k = &c->kj[i];
		struct mjob j = k->j;
		struct mplan pl;

		if (!k->n || plan_job(&j, (unsigned)m->cores))
			continue;
		build(&j, m, &pl);
		for (s = 0; s < pl.n && s < k->n && n < 64; s++) {
			struct mtime t;
			double comp, big, small;

			step_time(&pl.s[s], &j, m, &L, &t);
			comp = dmax(t.cpu, t.chain);
			big = dmax(dmax(t.disk, t.xfer), comp);
			small = dmin(t.disk, comp);
			if (small < 0.1 * big || big * pl.s[s].reps < 0.2 || !(k->secs[s] > 0))
				continue;
			a[n++] = (k->secs[s] - t.t) / small;	/* t.t: max + sync, no overlap */
		}
	}
	for (x = 1; x < n; x++)		/* insertion sort, then the median */
		for (y = x; y > 0 && a[y - 1] > a[y]; y--) {
			double t = a[y];

			a[y] = a[y - 1];
			a[y - 1] = t;
		}
	if (n)
		m->overlap = dmin(1, dmax(0, n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2));
}

/* l and g of p > 1 from bench/bsp-params.sh's CSV: kind empty / net, v = 64 */
static int cal_bsp_csv(struct mparams *m, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256], kind[32];
	unsigned p, v;
	double l, g, r2;

	if (!f) {
		cli_error("model calibrate: cannot read '%s': %s", path, strerror(errno));
		return CLI_EXIT_FAIL;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned i;

		if (sscanf(line, "%u,%u,%31[^,],%lf,%lf,%lf", &p, &v, kind, &l, &g, &r2) < 5 || v != 64)
			continue;
		for (i = 0; i < m->nbsp && m->bsp[i].p != p; i++)
			;
		if (i == m->nbsp) {
			if (m->nbsp == MAXBSP)
				break;
			m->bsp[m->nbsp++] = (typeof(m->bsp[0])){ p, 0, 0 };
		}
		if (!strcmp(kind, "empty") && p > 1)
			m->bsp[i].l = l;	/* p = 1: measured here */
		else if (!strcmp(kind, "net"))
			m->bsp[i].g = g;
	}
	fclose(f);
	return 0;
}

static int cmd_calibrate(int argc, char **argv)
{
	struct margs a = { .cmd = "model calibrate", .out = "pems-model.params",
			   .ksize = 1024 * MIB, .kruns = 3 };
	struct mparams m;
	struct cal c = { .m = &m };
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	time_t now = time(NULL);
	int rc;

	job_defaults(&a.job);
	a.job.bytes = 1024 * MIB;
	rc = parse(argc - 1, argv + 1, &a);
	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	if (optind != argc - 1)
		return cli_usage("%s: unexpected argument '%s'", a.cmd, argv[optind + 1]);
	if (pems_nranks() > 1)
		return cli_usage("%s: run it without mpirun; g and l of p > 1 come from --bsp-params",
				 a.cmd);
	memset(&m, 0, sizeof(m));
	if (a.base && (rc = params_read(a.base, &m)) != 0)
		return rc;
	strftime(m.date, sizeof(m.date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	m.cores = cores > 0 ? (double)cores : 1;
	c.k = a.job.k ? a.job.k : (unsigned)m.cores;
	c.dir = a.tmp ? a.tmp : (getenv("TMPDIR") ? getenv("TMPDIR") : ".");
	c.size = a.job.bytes;
	c.ksize = a.ksize;
	m.copy_bw = copy_rate();
	m.qsort_ns = qsort_rate();
	m.load = background_load(c.k, m.cores, &m.poll);
	if (cal_latency(&c)) {
		cli_error("%s: the superstep latency test failed", a.cmd);
		return CLI_EXIT_FAIL;
	}
	cal_poll(&c);
	if ((rc = cal_disk(&c)) || (rc = cal_setup(&c)))
		return rc;
	if (!a.base && (rc = cal_kernels(&c, a.kruns)) != 0)
		return rc;
	if (!a.base)
		m.spread = MODEL_SPREAD;	/* before cal_overlap, which uses it */
	if (!a.base)
		cal_overlap(&c);
	/* the setup run's fixed part: its end less what its bytes cost */
	m.setup = dmax(0, c.end0 - (m.flush_bw > 0 ? c.w0 / m.flush_bw : 0));
	if (a.bspcsv && (rc = cal_bsp_csv(&m, a.bspcsv)) != 0)
		return rc;
	if ((rc = params_write(a.out, &m)) != 0)
		return rc;
	fprintf(stderr, "model calibrate: parameters written to %s\n", a.out);
	return 0;
}

int cli_model_main(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;

	if (!sub)
		return cli_usage("model: expected calibrate, predict or project; see 'pems-run model --help'");
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h")) {
		fputs(model_help, stdout);
		return CLI_EXIT_OK;
	}
	if (!strcmp(sub, "calibrate"))
		return cmd_calibrate(argc, argv);
	if (!strcmp(sub, "predict"))
		return cmd_predict(argc, argv);
	if (!strcmp(sub, "project"))
		return cmd_project(argc, argv);
	return cli_usage("model: unknown subcommand '%s'; use calibrate, predict or project", sub);
}
