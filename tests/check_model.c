/*
 * check_model.c - the cost model (model/, pems_model.h): the equations
 * called directly on parameter files written here, no timing; the step
 * recorder of the runtime (pems_steps); and the `pems-run model` front
 * on what only it does (options, --stats-json, the projection table).
 *
 * Per superstep (pems_model.h):
 *   T = max(D, C/min(c,t), (F+C)/t, (X/p)*g) + Y*g + Z + l
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pems_model.h"

#define GIB 1073741824.0

static const char *pems_run = "./build/pems-run";
static char dir[4096];
static char ptext[16384];	/* the parameter file the direct tests use */

/* A parameter file: @disk_bw for reads and writes, @rate for every
 * kernel (bytes/s or rows/s per core), 2 cores, no other load. */
static void model(double disk_bw, double rate, double l1)
{
	int n = snprintf(ptext, sizeof(ptext),
			 "pems-model 1\n# test\ndate test\ncores 2\nload 0\n"
			 "read_bw %g\nwrite_bw %g\niops 1e12\nlat 1e-15\ncopy_bw 1e15\nqsort_ns 1e-9\n"
			 "vp_secs 0\nsetup 0.5\nfwrite_bw %g\n", disk_bw, disk_bw, disk_bw);

	n += snprintf(ptext + n, sizeof(ptext) - n,
		      "sort_part_u64 %g\nsort_part_rec100 %g\nsort_local_u64 %g\nsort_local_rec100 %g\n"
		      "agg_raw %g\nagg_hash %g\nagg_merge %g\nagg_write %g\nagg_compact %g\n"
		      "agg_fmt %g\nsgd %g\n", rate, rate, rate, rate, rate, rate, rate, rate, rate,
		      rate, rate);
	snprintf(ptext + n, sizeof(ptext) - n, "bsp 1 %g 1e-9\nbsp 2 0.01 3e-9\nbsp 4 0.02 5e-9\n", l1);
}

/* Append @lines to the parameter file (measured terms a test adds). */
static void more(const char *lines)
{
	ck_assert_uint_lt(strlen(ptext) + strlen(lines), sizeof(ptext));
	strcat(ptext, lines);
}

/* parse ptext; returns pems_model_read's result, @err its message */
static int load(struct pems_model_params *m, char *err, size_t len)
{
	FILE *f = fmemopen(ptext, strlen(ptext), "r");
	int rc;

	ck_assert_ptr_nonnull(f);
	rc = pems_model_read(f, "test", m, err, len);
	fclose(f);
	return rc;
}

/* A job: what the tests vary; the rest as pems_model_job_init. */
struct spec {
	enum pems_model_algo algo;
	enum pems_format fmt;
	double bytes, mem, groups;
	unsigned v, k, p;
	unsigned dim, batch, local_steps, epochs;
};
#define SORT(...) ((struct spec){ .algo = PEMS_MODEL_SORT, .bytes = GIB, __VA_ARGS__ })
#define AGG(...) ((struct spec){ .algo = PEMS_MODEL_AGGREGATE, .bytes = GIB, __VA_ARGS__ })
#define SGD(...) ((struct spec){ .algo = PEMS_MODEL_SGD, .bytes = GIB, __VA_ARGS__ })

static void job_of(const struct spec *s, struct pems_model_job *j)
{
	pems_model_job_init(j);
	j->algo = s->algo;
	j->cost.fmt = s->fmt;
	j->cost.bytes = s->bytes;
	j->cost.v = s->v;
	j->cost.p = s->p ? s->p : 1;
	j->k = s->k;
	if (s->mem)
		j->mem = s->mem;
	if (s->groups)
		j->cost.groups = s->groups;
	if (s->dim)
		j->cost.dim = s->dim;
	if (s->batch)
		j->cost.batch = s->batch;
	if (s->local_steps)
		j->cost.local_steps = s->local_steps;
	if (s->epochs)
		j->cost.epochs = s->epochs;
}

/* predict @s with ptext on this machine's layout */
static void predict(const struct spec *s, struct pems_model_prediction *pr)
{
	struct pems_model_params m;
	struct pems_model_layout L;
	struct pems_model_job j;
	char err[512];

	ck_assert_msg(load(&m, err, sizeof(err)) == 0, "%s", err);
	job_of(s, &j);
	ck_assert_int_eq(pems_model_plan(&j, (unsigned)m.cores), 0);
	ck_assert_int_eq(pems_model_layout_here(&L, &m, &j), 0);
	pems_model_predict(&j, &m, &L, pr);
}

static double predicted(struct spec s)
{
	struct pems_model_prediction pr;

	predict(&s, &pr);
	return pr.total;
}

/* cpu_s (core-seconds over the cores) of superstep @name */
static double step_cpu(struct spec s, const char *name)
{
	struct pems_model_prediction pr;
	unsigned i;

	predict(&s, &pr);
	for (i = 0; i < pr.n; i++)
		if (!strcmp(pr.s[i].name, name))
			return pr.s[i].cpu * pr.s[i].reps;
	ck_abort_msg("no superstep %s", name);
	return 0;
}

/* the projection of @s on @nodes nodes of the default network */
static double projected(struct spec s, double nodes, unsigned node_terms, bool per_node)
{
	struct pems_model_net net = { .gbit = 10, .latency = 20e-6, .msg_overhead = 2e-6,
				      .node_terms = node_terms };
	struct pems_model_projection pj;
	struct pems_model_params m;
	struct pems_model_job j;
	char err[512];

	ck_assert_msg(load(&m, err, sizeof(err)) == 0, "%s", err);
	job_of(&s, &j);
	pems_model_project(&j, &m, &net, nodes, per_node, &pj);
	ck_assert_msg(pj.fits, "%.0f nodes: does not fit", nodes);
	ck_assert_uint_eq(pj.job.cost.p, (unsigned)nodes);
	ck_assert_uint_eq(pj.terms_p, nodes > 1 ? node_terms : 1);
	return pj.pred.total;
}

START_TEST(predictions_grow_with_the_input)
{
	static const struct spec job[] = {
		{ .algo = PEMS_MODEL_SORT, .fmt = PEMS_FMT_U64 },
		{ .algo = PEMS_MODEL_SORT, .fmt = PEMS_FMT_REC100 },
		{ .algo = PEMS_MODEL_AGGREGATE }, { .algo = PEMS_MODEL_SGD },
	};
	double last = 0, t;
	unsigned i;

	model(5e8, 2e8, 1e-4);
	for (i = 0; i < 5; i++) {
		struct spec s = job[_i];

		s.bytes = GIB / 4 * (1u << (2 * i));	/* 256M .. 64G */
		s.mem = 4 * GIB;
		t = predicted(s);
		ck_assert_msg(t > last, "job %d, %.0f bytes: %.4f s, not above %.4f s", _i, s.bytes,
			      t, last);
		last = t;
	}
}
END_TEST

/* Disk-bound sort (kernels and random reads free): 4N at the disk
 * bandwidth, plus setup and 4 latencies, when every message goes to the
 * disk (PEMS_MSG_HOLD=0); 2N when the budget keeps them all in memory
 * (pems/msg.c invariant 7: 1 GiB of messages, 8 GiB of budget). */
START_TEST(disk_bound_sort_moves_4N)
{
	double t;

	model(1e8, 1e15, 0.001);
	setenv("PEMS_MSG_HOLD", "0", 1);
	t = predicted(SORT(.v = 8, .mem = 8 * GIB));
	unsetenv("PEMS_MSG_HOLD");
	ck_assert_msg(fabs(t - (4 * GIB / 1e8 + 0.5 + 4 * 0.001)) < 0.01, "no holding: %.4f s", t);
	t = predicted(SORT(.v = 8, .mem = 8 * GIB));
	ck_assert_msg(fabs(t - (2 * GIB / 1e8 + 0.5 + 4 * 0.001)) < 0.01, "holding: %.4f s", t);
}
END_TEST

/* CPU-bound sort (disk free) on 2 cores with k = 2: N/rate for each of
 * the two data supersteps, over 2 cores; with k = 1 twice that. */
START_TEST(cpu_bound_sort_uses_min_of_cores_and_threads)
{
	double t2, t1;

	model(1e15, 1e8, 0);
	t2 = predicted(SORT(.v = 8, .k = 2));
	t1 = predicted(SORT(.v = 8, .k = 1));
	ck_assert_msg(fabs(t2 - (2 * GIB / 1e8 / 2 + 0.5)) < 0.01, "k=2: %.4f s", t2);
	ck_assert_msg(fabs(t1 - (2 * GIB / 1e8 + 0.5)) < 0.01, "k=1: %.4f s", t1);
}
END_TEST

/* p = 2: the N/2 bytes that cross ranks in the partition travel while
 * the workers compute ((X/p)*(g(2)-g(1)) = 0.27 s, hidden under 5.4 s of
 * compute), and l(2) instead of l(1) per superstep (4 of them); with
 * kernels 100x faster the crossing is what bounds the partition. */
START_TEST(two_ranks_overlap_h_g_and_add_l)
{
	double t1, t2, want, xfer = GIB / 2 / 2 * (3e-9 - 1e-9);

	model(1e15, 1e8, 0);
	t1 = predicted(SORT(.v = 8, .k = 1));
	t2 = predicted(SORT(.v = 8, .k = 1, .p = 2));
	want = (t1 - 0.5) / 2 + 0.5 + 4 * 0.01;	/* t = 2 threads on 2 cores */
	ck_assert_msg(fabs(t2 - want) < 0.01 + 1e-6 * want, "p=2: %.4f s, want %.4f s", t2, want);
	model(1e15, 1e10, 0);
	t2 = predicted(SORT(.v = 8, .k = 1, .p = 2));
	want = 0.5 + 4 * 0.01 + xfer + GIB / 1e10 / 2;	/* partition: net; sort: cpu */
	ck_assert_msg(fabs(t2 - want) < 0.01, "net-bound p=2: %.4f s, want %.4f s", t2, want);
}
END_TEST

/* "poll_p P C": at p = 2 each rank's comm thread takes C cores from the
 * workers; C = 0.5 leaves the two workers one core of two, so the
 * compute of k = 1 at p = 1 is not halved.  "cpu_p P F" (measured CPU
 * of p ranks per CPU of one) replaces it. */
START_TEST(comm_threads_take_what_poll_p_says)
{
	double t1, t2, want;

	model(1e15, 1e8, 0);
	t1 = predicted(SORT(.v = 8, .k = 1));
	more("poll_p 2 0.5\npoll_p 4 0.1\n");
	t2 = predicted(SORT(.v = 8, .k = 1, .p = 2));
	want = t1 + 4 * 0.01;
	ck_assert_msg(fabs(t2 - want) < 0.01 + 1e-3 * want, "p=2: %.4f s, want %.4f s", t2, want);
	more("cpu_p 2 1.5\n");
	t2 = predicted(SORT(.v = 8, .k = 1, .p = 2));
	want = (t1 - 0.5) / 2 * 1.5 + 0.5 + 4 * 0.01;
	ck_assert_msg(fabs(t2 - want) < 0.01 + 1e-3 * want, "cpu_p: %.4f s, want %.4f s", t2, want);
}
END_TEST

/* "lbusy P S": a loop of identical supersteps (sgd's training) pays S per
 * superstep at p ranks instead of the idle l(p) = 0.01; the sort's four
 * supersteps keep l.  "cpu_alg ALGO P F": the CPU factor of p ranks for
 * that algorithm only; "cpu_step ALGO S P F" for one superstep of it. */
START_TEST(lbusy_and_cpu_alg_apply_where_they_belong)
{
	double n = floor((GIB - 16) / 260), spe = ceil(ceil(n / 16) / (64 * 64));
	double s0, s1, u0, u1, r0, r1, want;

	model(1e15, 1e8, 0);
	s0 = predicted(SGD(.p = 2));
	u0 = predicted(SORT(.v = 8, .p = 2));
	r0 = predicted(SORT(.fmt = PEMS_FMT_REC100, .v = 8, .p = 2));
	more("lbusy 2 0.05\ncpu_alg sort-rec100 2 2\n");
	s1 = predicted(SGD(.p = 2));
	u1 = predicted(SORT(.v = 8, .p = 2));
	r1 = predicted(SORT(.fmt = PEMS_FMT_REC100, .v = 8, .p = 2));
	want = spe * (0.05 - 0.01);
	ck_assert_msg(fabs(s1 - s0 - want) < 1e-3 + 1e-3 * want, "sgd: +%.4f s, want +%.4f s",
		      s1 - s0, want);
	ck_assert_msg(fabs(u1 - u0) < 1e-4, "u64 sort moved: %.4f -> %.4f s", u0, u1);
	want = 2 * (r0 - 0.5 - 4 * 0.01) + 0.5 + 4 * 0.01;
	ck_assert_msg(fabs(r1 - want) < 0.01 * want, "rec100 x2: %.4f s, want %.4f s", r1, want);
	/* only the partition (superstep 2) of the u64 sort takes 3x its CPU;
	 * it and the sort superstep had equal work */
	more("cpu_step sort-u64 2 2 3\n");
	u1 = predicted(SORT(.v = 8, .p = 2));
	want = (u0 - 0.5 - 4 * 0.01) * 2 + 0.5 + 4 * 0.01;
	ck_assert_msg(fabs(u1 - want) < 0.01 * want, "u64 partition x3: %.4f s, want %.4f s", u1,
		      want);
}
END_TEST

/* "overlap a": a superstep takes the greater of its disk and compute
 * times plus a times the lesser.  Disk 1 GB/s, kernels 1 GB/s per core,
 * k = 2: partition and sort+write each have D = 2 GiB / 1 GB/s and
 * compute 0.5 GiB / 1 GB/s, so a = 0.5 adds 0.5 * 2 * 0.537 s. */
START_TEST(overlap_adds_a_share_of_the_lesser)
{
	double t0, t5;

	model(1e9, 1e9, 0);
	t0 = predicted(SORT(.v = 8, .k = 2));
	more("overlap 0.5\n");
	t5 = predicted(SORT(.v = 8, .k = 2));
	ck_assert_msg(fabs(t5 - t0 - GIB / 1e9 / 2) < 0.01, "overlap 0.5 added %.4f s, want %.4f s",
		      t5 - t0, GIB / 1e9 / 2);
}
END_TEST

/* "spread S": a superstep takes the expected max of its disk and compute
 * times, each with relative deviation S (Clark's formula).  A sort whose
 * two data supersteps are balanced gains S * a / sqrt(pi) in each; one
 * whose compute is a tenth of its disk gains nothing measurable; a file
 * without "spread" predicts as before. */
START_TEST(spread_prices_balanced_supersteps)
{
	double a = 2 * GIB / 1e9, t0, t1, want = 2 * 0.3 * a / sqrt(M_PI);

	setenv("PEMS_MSG_HOLD", "0", 1);
	model(1e9, 2.5e8, 0);
	t0 = predicted(SORT(.v = 8, .k = 2));
	ck_assert_msg(fabs(t0 - (2 * a + 0.5)) < 0.01, "balanced, no spread: %.4f s", t0);
	more("spread 0.3\n");
	t1 = predicted(SORT(.v = 8, .k = 2));
	ck_assert_msg(fabs(t1 - t0 - want) < 0.01, "spread 0.3 added %.4f s, want %.4f s", t1 - t0,
		      want);
	model(1e9, 2.5e9, 0);
	t0 = predicted(SORT(.v = 8, .k = 2));
	more("spread 0.3\n");
	t1 = predicted(SORT(.v = 8, .k = 2));
	unsetenv("PEMS_MSG_HOLD");
	ck_assert_msg(fabs(t1 - t0) < 1e-3, "compute a tenth of the disk: +%.4f s", t1 - t0);
}
END_TEST

/* The sort's output is fallocated when it is created (algorithms/output.c):
 * its writes take write_bw, the rate into allocated blocks, not
 * fwrite_bw, the rate into holes, which the aggregate's appended output
 * still takes.  Disk-bound jobs (kernels free), holes 100x slower. */
START_TEST(sort_output_is_written_into_allocated_blocks)
{
	struct spec sort = SORT(.v = 8, .k = 2), agg = AGG(.groups = 1e7, .v = 16, .k = 2);
	double s0, s1, g0, g1;

	model(1e9, 1e15, 0);
	s0 = predicted(sort);
	g0 = predicted(agg);
	more("fwrite_bw 1e7\n");
	s1 = predicted(sort);
	g1 = predicted(agg);
	ck_assert_msg(fabs(s1 - s0) < 1e-3, "sort moved with fwrite_bw: %.4f -> %.4f s", s0, s1);
	ck_assert_msg(g1 > g0 + 1, "aggregate output not at fwrite_bw: %.4f -> %.4f s", g0, g1);
	more("write_bw 5e8\n");
	s1 = predicted(sort);
	ck_assert_msg(s1 > s0 + GIB / 1e9 * 0.9, "sort output not at write_bw: %.4f -> %.4f s", s0, s1);
}
END_TEST

/* "overlap_alg ALGO P A" replaces the overlap for that algorithm at p
 * ranks only: an aggregate of 10^3 groups (its load hashes every row) is
 * "aggregate-pre", one of 10^7 groups (rows pass raw) is "aggregate". */
START_TEST(overlap_alg_is_per_algorithm)
{
	const struct spec job[] = {
		SORT(.v = 8, .k = 2), SORT(.fmt = PEMS_FMT_REC100, .v = 8, .k = 2),
		AGG(.groups = 1000, .v = 16, .k = 2), AGG(.groups = 1e7, .v = 16, .k = 2),
	};
	double t0[4], t1;
	unsigned i;

	model(1e9, 1e9, 0);
	for (i = 0; i < 4; i++)
		t0[i] = predicted(job[i]);
	more("overlap_alg sort-u64 1 0.5\noverlap_alg aggregate-pre 1 0.5\n"
	     "overlap_alg sort-u64 2 0.9\noverlap_alg aggregate 2 1\n");
	t1 = predicted(job[0]);
	ck_assert_msg(fabs(t1 - t0[0] - GIB / 1e9 / 2) < 0.01, "u64: +%.4f s, want +%.4f s",
		      t1 - t0[0], GIB / 1e9 / 2);
	t1 = predicted(job[1]);
	ck_assert_msg(fabs(t1 - t0[1]) < 1e-4, "rec100 moved: %.4f -> %.4f s", t0[1], t1);
	t1 = predicted(job[2]);
	ck_assert_msg(t1 > t0[2] + 0.01, "10^3 groups: %.4f -> %.4f s, want more", t0[2], t1);
	t1 = predicted(job[3]);
	ck_assert_msg(fabs(t1 - t0[3]) < 1e-4, "10^7 groups moved: %.4f -> %.4f s", t0[3], t1);
}
END_TEST

/* The sort reads its input and writes its output in pieces while it
 * computes: with one worker the partition and sort+write take max(D, C)
 * = C, not F + C; the sgd reads its rows synchronously: each training
 * superstep takes F + C. */
START_TEST(async_file_io_stays_out_of_the_chain)
{
	double t, n = floor((GIB - 16) / 260), f, c;

	model(1e9, 1e8, 0);
	t = predicted(SORT(.v = 8, .k = 1));
	ck_assert_msg(fabs(t - (2 * GIB / 1e8 + 0.5)) < 0.01, "sort: %.4f s, want %.4f s", t,
		      2 * GIB / 1e8 + 0.5);
	t = predicted(SGD(.k = 1));
	f = n * 260 / 1e9;
	c = n * 64 / 1e8;
	ck_assert_msg(fabs(t - (f + c + 0.5)) < 0.01, "sgd: %.4f s, want %.4f s", t, f + c + 0.5);
}
END_TEST

/* "agg_at X M W": the aggregate's merge superstep costs 1/M core-seconds
 * per row received and its write superstep 1/W per group at X groups per
 * VP; between two lines the seconds are linear in ln X, beyond them the
 * nearest line's.  10^7 groups in 1 GiB (2^26 rows, nearly all sent raw)
 * on 16 VPs, k = 2 on 2 cores: cpu_s = core-seconds / 2. */
START_TEST(agg_at_interpolates_in_log_groups_per_vp)
{
	double n = 67108864, G = 1e7, gd = G * -expm1(-n / G), x = gd / 16, m0, w0;
	struct spec job = AGG(.groups = 1e7, .v = 16, .k = 2);
	struct pems_model_params m;
	char lines[512], err[512];

	model(1e15, 1e8, 0);	/* without agg_at lines: the single rates, compacted */
	ck_assert_double_eq_tol(step_cpu(job, "merge"), (n + gd) / 1e8 / 2, 0.01);
	more("agg_at 1000 1e7 1e6\nagg_at 1e9 1e7 1e6\n");	/* 1e-7 s per row, 1e-6 per group */
	m0 = step_cpu(job, "merge");
	w0 = step_cpu(job, "write");
	ck_assert_msg(fabs(m0 - n * 1e-7 / 2) < 0.005 * m0, "merge %.3f s", m0);
	ck_assert_msg(fabs(w0 - gd * 1e-6 / 2) < 0.002 * w0, "write %.3f s", w0);
	/* x halfway in ln between x/10 and 10x (lines in any order): the
	 * mean of 1e-7 and 4e-7 s per row, of 1e-6 and 0.25e-6 s per group */
	model(1e15, 1e8, 0);
	snprintf(lines, sizeof(lines), "agg_at %.9g 2.5e6 4e6\nagg_at %.9g 1e7 1e6\n", 10 * x, x / 10);
	more(lines);
	ck_assert_msg(fabs(step_cpu(job, "merge") - 2.5 * m0) < 0.01 * 2.5 * m0, "halfway merge");
	ck_assert_msg(fabs(step_cpu(job, "write") - 0.625 * w0) < 0.01 * 0.625 * w0, "halfway write");
	model(1e15, 1e8, 0);	/* below the smallest X: that line's rates */
	snprintf(lines, sizeof(lines), "agg_at %.9g 2.5e6 4e6\nagg_at %.9g 1e7 1e6\n", 10 * x, 100 * x);
	more(lines);
	ck_assert_msg(fabs(step_cpu(job, "merge") - 4 * m0) < 0.04 * m0, "below merge");
	ck_assert_msg(fabs(step_cpu(job, "write") - 0.25 * w0) < 0.0025 * w0, "below write");
	/* a repeated X or a rate that is not positive is refused */
	model(1e15, 1e8, 0);
	more("agg_at 1000 1e7 1e6\nagg_at 1000 2e7 1e6\n");
	ck_assert_int_eq(load(&m, err, sizeof(err)), -EINVAL);
	model(1e15, 1e8, 0);
	more("agg_at 1000 0 1e6\n");
	ck_assert_int_eq(load(&m, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "line 29") != NULL, "%s", err);
}
END_TEST

/* At p > 1 the aggregate's load superstep takes "cpu_step aggregate-pre 2
 * P F" for the rows it hashes into states and "cpu_step aggregate 2 P F"
 * for the rest: 10^3 groups on 16 VPs hash every row, 10^7 groups send
 * every row raw. */
START_TEST(aggregate_load_factor_follows_the_rows_mode)
{
	struct spec pre = AGG(.groups = 1000, .v = 16, .k = 2, .p = 2);
	struct spec raw = AGG(.groups = 1e7, .v = 16, .k = 2, .p = 2);
	double p0, p1, r0, r1;

	model(1e15, 1e8, 0);
	more("cpu_step aggregate 2 2 3\n");
	p0 = step_cpu(pre, "load+partition");
	r0 = step_cpu(raw, "load+partition");
	more("cpu_step aggregate-pre 2 2 1.5\n");
	p1 = step_cpu(pre, "load+partition");
	r1 = step_cpu(raw, "load+partition");
	ck_assert_msg(fabs(p1 - p0 / 2) < 0.01 * p0, "10^3 groups: %.4f -> %.4f s, want x0.5", p0, p1);
	ck_assert_msg(fabs(r1 - r0) < 1e-3 * r0, "10^7 groups: %.4f -> %.4f s, want x1", r0, r1);
}
END_TEST

/* "kscale ALGO F" multiplies the kernel core-seconds of ALGO's jobs at
 * every p (the aggregate's hashed rows by "kscale aggregate-pre"). */
START_TEST(kscale_scales_the_algorithms_kernels)
{
	struct spec pre = AGG(.groups = 1000, .v = 16, .k = 2);
	struct spec raw = AGG(.groups = 1e7, .v = 16, .k = 2);
	struct spec u64 = SORT(.v = 8, .k = 2, .p = 2);
	struct spec r100 = SORT(.fmt = PEMS_FMT_REC100, .v = 8, .k = 2);
	double u0, r0, u1, r1, p0, p1, w0, w1;

	model(1e15, 1e8, 0);
	u0 = predicted(u64);
	r0 = predicted(r100);
	p0 = step_cpu(pre, "load+partition");
	w0 = step_cpu(raw, "load+partition");
	more("kscale sort-u64 2\nkscale aggregate-pre 2\n");
	u1 = predicted(u64);
	r1 = predicted(r100);
	p1 = step_cpu(pre, "load+partition");
	w1 = step_cpu(raw, "load+partition");
	ck_assert_msg(fabs((u1 - 0.5 - 4 * 0.01) - 2 * (u0 - 0.5 - 4 * 0.01)) < 0.01 * u0,
		      "u64 at p = 2: %.4f -> %.4f s, want its supersteps x2", u0, u1);
	ck_assert_msg(fabs(r1 - r0) < 1e-4, "rec100 moved: %.4f -> %.4f s", r0, r1);
	ck_assert_msg(fabs(p1 - 2 * p0) < 0.01 * p0, "10^3 groups: %.4f -> %.4f s, want x2", p0, p1);
	ck_assert_msg(fabs(w1 - w0) < 1e-3 * w0, "10^7 groups: %.4f -> %.4f s, want x1", w0, w1);
}
END_TEST

/* sgd: one superstep per H*batch rows of every shard, plus the last.
 * 1 MiB + 16 header bytes of dim 63 rows (256 B): 4096 rows, 16 shards
 * of 256 rows, 16 rows per superstep: 16 supersteps per epoch */
START_TEST(sgd_supersteps_follow_the_batches)
{
	struct pems_model_prediction pr;
	struct spec s = { .algo = PEMS_MODEL_SGD, .bytes = 1048592, .dim = 63, .batch = 4,
			  .local_steps = 4, .epochs = 3 };

	model(1e9, 1e9, 0);
	predict(&s, &pr);
	ck_assert_uint_eq(pr.n, 2);
	ck_assert_str_eq(pr.s[0].name, "train");
	ck_assert_double_eq(pr.s[0].reps, 48);
	ck_assert_str_eq(pr.s[1].name, "end");
	ck_assert_uint_eq(pr.s[1].first, 48);
}
END_TEST

/* The projection takes the algorithm's terms as predict does: "kscale
 * sort-u64 2" doubles a CPU-bound sort's compute on 1 and 10 nodes; the
 * CPU factors of 2 ranks here apply beyond one node only with node_terms
 * 2.  Setup 0.5 s, l of the network (10 nodes: 9 * 2 us + 6 * 4 * 20 us). */
START_TEST(projection_applies_the_algorithms_terms)
{
	double l10 = 9 * 2e-6 + 6 * 4 * 20e-6, a1, a10, b1, b10, want;
	struct spec s = SORT(.mem = 4 * GIB);

	model(1e15, 1e8, 0);
	a1 = projected(s, 1, 1, true) - 0.5;
	a10 = projected(s, 10, 1, true) - 0.5 - 4 * l10;
	more("kscale sort-u64 2\nkscale sort-rec100 3\n");
	b1 = projected(s, 1, 1, true) - 0.5;
	b10 = projected(s, 10, 1, true) - 0.5 - 4 * l10;
	ck_assert_msg(fabs(b1 - 2 * a1) < 0.01 * a1, "1 node: %.4f -> %.4f s, want x2", a1, b1);
	ck_assert_msg(fabs(b10 - 2 * a10) < 0.01 * a10, "10 nodes: %.4f -> %.4f s, want x2", a10, b10);
	more("cpu_alg sort-u64 2 3\n");
	ck_assert_msg(fabs(projected(s, 10, 1, true) - 0.5 - 4 * l10 - b10) < 1e-3 * b10, "p=1 terms");
	ck_assert_msg(fabs(projected(s, 1, 2, true) - 0.5 - b1) < 1e-3 * b1, "1 node moved");
	want = 3 * b10;
	ck_assert_msg(fabs(projected(s, 10, 2, true) - 0.5 - 4 * l10 - want) < 0.02 * want,
		      "10 nodes, cpu_alg 3: want %.4f s", want + 0.5);
	model(1e9, 1e9, 0);	/* overlap_alg at p = 1: disk and kernels both 1 GB/s */
	a1 = projected(s, 1, 1, false);
	more("overlap_alg sort-u64 1 0.5\n");
	ck_assert_msg(projected(s, 1, 1, false) > a1 + 0.2, "overlap_alg ignored");
}
END_TEST

/* Calibration can measure a term at 0 (lat: small calls as fast per byte
 * as large ones); the loader takes it.  A rate of 0 or a negative term is
 * refused with the key's name. */
START_TEST(zero_terms_load_zero_rates_do_not)
{
	struct pems_model_params m;
	char err[512];

	model(5e8, 2e8, 1e-4);
	more("lat 0\nsetup 0\n");
	ck_assert_int_eq(load(&m, err, sizeof(err)), 0);
	ck_assert_msg(predicted(SORT()) > 0, "no time");
	model(5e8, 2e8, 1e-4);
	more("read_bw 0\n");
	ck_assert_int_eq(load(&m, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "'read_bw' is missing or not positive"), "%s", err);
	model(5e8, 2e8, 1e-4);
	more("lat -1e-6\n");
	ck_assert_int_eq(load(&m, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "'lat' is negative"), "%s", err);
}
END_TEST

/* What save writes, read gives back: every term and table. */
START_TEST(save_and_read_agree)
{
	struct pems_model_params a, b;
	char path[4200], err[512];

	model(5e8, 2e8, 1e-4);
	more("poll_p 2 0.25\ncpu_alg sort-u64 2 1.5\ncpu_step aggregate 2 2 3\nkscale sgd 1.25\n"
	     "overlap_alg aggregate-pre 1 0.5\nlbusy 2 0.002\nagg_at 1000 1e7 1e6\nsetup_mpi 2 0.75\n");
	ck_assert_int_eq(load(&a, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/saved.params", dir);
	ck_assert_int_eq(pems_model_save(path, &a), 0);
	ck_assert_msg(pems_model_load(path, &b, err, sizeof(err)) == 0, "%s", err);
	for (size_t i = 0; i < sizeof(a); i++)
		ck_assert_msg(((char *)&a)[i] == ((char *)&b)[i], "byte %zu of %zu differs", i, sizeof(a));
	unlink(path);
}
END_TEST

/* The algorithms' own plans (pems_algorithms.h): the sort reads and
 * writes its input once and moves it once through the message store,
 * half of it across 2 ranks; the aggregate's merge gets what its load
 * sent; sgd trains in one superstep per H batches of every shard. */
START_TEST(cost_plans_move_what_the_algorithms_move)
{
	struct pems_cost_job j = { .bytes = GIB, .p = 2, .v = 8, .fmt = PEMS_FMT_U64,
				   .groups = 1000, .line = 33, .dim = 63, .epochs = 2,
				   .shards = 16, .local_steps = 4, .batch = 4 };
	struct pems_cost_plan pl;

	ck_assert_int_eq(pems_sort_cost(&j, &pl), 0);
	ck_assert_uint_eq(pl.n, 4);
	ck_assert_str_eq(pl.s[2].name, "partition");
	ck_assert_double_eq(pl.s[2].file_r, GIB);
	ck_assert_double_eq(pl.s[2].msg_w, GIB);
	ck_assert_double_eq(pl.s[2].xfer, GIB / 2);
	ck_assert_double_eq(pl.s[3].msg_r, GIB);
	ck_assert_double_eq(pl.s[3].file_w, GIB);
	ck_assert(pl.s[3].file_alloc && pl.s[3].file_async);
	ck_assert_int_eq(pl.s[2].work[0].kind, PEMS_WORK_SORT_PART);
	ck_assert_int_eq(pems_aggregate_cost(&j, &pl), 0);
	ck_assert_uint_eq(pl.n, 5);
	ck_assert_double_eq(pl.s[3].msg_r, pl.s[2].msg_w);
	ck_assert_double_eq(pl.s[4].msg_r, pl.s[3].msg_w);
	ck_assert_int_eq(pems_sgd_cost(&j, &pl), 0);
	ck_assert_uint_eq(pl.n, 2);
	ck_assert_double_eq(pl.s[0].reps, 2 * ceil(ceil(floor((GIB - 16) / 256) / 16) / 16));
	j.fmt = PEMS_FMT_ASCII100;
	ck_assert_int_eq(pems_sort_cost(&j, &pl), -EINVAL);
}
END_TEST

/* ---- the step recorder (pems_steps) ---- */

static void three_steps(void *arg)
{
	(void)arg;
	bsp_sync();
	bsp_sync();
	bsp_sync();
}

/* one record per superstep, their seconds adding up to the section's;
 * none while recording is off */
START_TEST(the_recorder_keeps_one_record_per_superstep)
{
	struct pems_config cfg;
	struct pems_stats st;
	const struct pems_step *s;
	double sum = 0;
	size_t n, i;

	ck_assert_int_eq(pems_config_init(&cfg), 0);
	cfg.procs = 3;
	cfg.threads = 1;
	cfg.mem = 64u << 20;
	cfg.tmp[0] = dir;
	cfg.ntmp = 1;
	cfg.quiet = true;
	ck_assert_int_eq(pems_configure(&cfg), 0);
	pems_steps_record(true);
	ck_assert_int_eq(pems_spmd(NULL, three_steps, NULL), 0);
	pems_steps_record(false);
	pems_get_stats(&st);
	s = pems_steps(&n);
	ck_assert_uint_eq(n, st.supersteps);
	ck_assert_uint_eq(n, 4);
	for (i = 0; i < n; i++)
		sum += s[i].secs;
	ck_assert_msg(fabs(sum - st.total_secs) < 1e-6 + 1e-3 * st.total_secs,
		      "steps %.6f s, total %.6f s", sum, st.total_secs);
	ck_assert_int_eq(pems_spmd(NULL, three_steps, NULL), 0);
	ck_assert_uint_eq((pems_steps(&n), n), 4);	/* off: the last records stay */
}
END_TEST

/* ---- the pems-run front ---- */

/* A parameter file @name in dir from model()'s arguments. */
static void params(const char *name, double disk_bw, double rate, double l1)
{
	char path[4200];
	FILE *f;

	model(disk_bw, rate, l1);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(ptext, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* Run pems-run with the shell words in @args (cwd = dir); stdout and
 * stderr into @out; returns the exit status. */
static int run(const char *args, char *out, size_t len)
{
	char cmd[8192];
	FILE *p;
	size_t n;
	int st;

	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' %s 2>&1", dir, pems_run, args);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	n = fread(out, 1, len - 1, p);
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static double field(const char *out, const char *key)
{
	const char *q = strstr(out, key);

	ck_assert_msg(q != NULL, "no %s in: %s", key, out);
	return strtod(q + strlen(key), NULL);
}

/* --stats-json: measured seconds per superstep next to the predicted */
START_TEST(stats_json_is_compared_per_superstep)
{
	char out[16384], path[4200];
	FILE *f;

	params("j", 1e8, 1e15, 0);
	snprintf(path, sizeof(path), "%s/run.json", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "{\"cmd\": \"sort\", \"bytes\": 1073741824, \"secs\": 50.0, \"v\": 8, \"k\": 2,"
		   " \"p\": 1, \"mem\": 1073741824, \"steps\": [\n"
		   "  {\"secs\": 0.5, \"cpu\": 0},\n  {\"secs\": 0.5, \"cpu\": 0},\n"
		   "  {\"secs\": 20.0, \"cpu\": 0},\n  {\"secs\": 28.0, \"cpu\": 0}]}\n");
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(run("model predict sort --params j --stats-json run.json", out, sizeof(out)), 0);
	ck_assert_msg(fabs(field(out, "measured_secs=") - 50.0) < 1e-9, "%s", out);
	ck_assert_msg(fabs(field(out, "ratio=") - field(out, "predicted_secs=") / 50.0) < 1e-3,
		      "%s", out);
	ck_assert_msg(strstr(out, "20.000") && strstr(out, "28.000"), "%s", out);
	ck_assert_msg(fabs(field(out, "run_v=") - 8) < 1e-9, "v of the run: %s", out);
	ck_assert_msg(strstr(out, "NOT as the planner's") != NULL, "v=8 is not the plan: %s", out);
}
END_TEST

/* a real run's --stats-json: one entry per superstep whose seconds add
 * up to the SPMD section's, and predict accepts it */
START_TEST(a_real_run_records_every_superstep)
{
	char out[16384], path[4200], buf[16384];
	double total, sum = 0, n;
	const char *q;
	size_t len;
	FILE *f;

	params("r", 1e9, 1e9, 1e-5);
	ck_assert_int_eq(run("gen --format u64 --count 200000 --seed 3 --quiet in.u64", out,
			     sizeof(out)), 0);
	ck_assert_msg(run("sort --format u64 --mem 64M --procs 5 --tmp . --quiet --stats-json r.json "
			  "in.u64 out.u64", out, sizeof(out)) == 0, "%s", out);
	snprintf(path, sizeof(path), "%s/r.json", dir);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	len = fread(buf, 1, sizeof(buf) - 1, f);
	buf[len] = '\0';
	fclose(f);
	n = field(buf, "\"supersteps\": ");
	total = field(buf, "\"total_secs\": ");
	ck_assert_msg(fabs(field(buf, "\"v\": ") - 5) < 1e-9, "%s", buf);
	for (q = strstr(buf, "\"steps\""); (q = strstr(q, "{\"secs\": ")) != NULL; q++) {
		sum += strtod(q + 9, NULL);
		n--;
	}
	ck_assert_msg(n == 0, "steps do not match supersteps: %s", buf);
	ck_assert_msg(fabs(sum - total) < 0.05 + 0.05 * total, "steps %.4f s, total %.4f s", sum, total);
	ck_assert_int_eq(run("model predict sort --params r --stats-json r.json", out, sizeof(out)), 0);
	ck_assert_msg(strstr(out, "measured_secs=") != NULL, "%s", out);
}
END_TEST

/* weak scaling: no node count finishes sooner than one node (no
 * superlinear speedup); the sort's v-sized tables stop fitting in --mem
 * at some size */
START_TEST(projection_is_monotone_and_finds_the_limit)
{
	char out[32768];
	double first = 0, t;
	const char *q;

	params("p", 5e8, 2e8, 1e-4);
	ck_assert_int_eq(run("model project sort --params p --size-per-node 8G --mem 4G --nodes 1,10,100,300",
			     out, sizeof(out)), 0);
	for (q = out; (q = strstr(q, "projection=sort")) != NULL; q++) {
		ck_assert_msg(strstr(q, "fits=1") < strchr(q, '\n'), "%s", out);
		t = field(q, "predicted_secs=");
		if (!first)
			first = t;
		ck_assert_msg(t >= first, "%s", out);
	}
	ck_assert_int_eq(run("model project sort --params p --size 100000G --nodes 1", out,
			     sizeof(out)), 0);
	ck_assert_msg(strstr(out, "fits=0") != NULL, "%s", out);
}
END_TEST


START_TEST(bad_arguments_are_refused)
{
	char out[16384];

	params("p", 5e8, 2e8, 1e-4);
	ck_assert_int_eq(run("model predict frob --params p --size 1G", out, sizeof(out)), 2);
	ck_assert_msg(strstr(out, "pems-run: error: model predict: unknown ALGO 'frob'"), "%s", out);
	ck_assert_int_eq(run("model predict sort --params nonexistent --size 1G", out, sizeof(out)), 1);
	ck_assert_int_eq(run("model predict sort --params p", out, sizeof(out)), 2);
	ck_assert_int_eq(run("model predict sort --params p --size 1G --procs-mpi 3", out,
			     sizeof(out)), 2);
	ck_assert_int_eq(run("model frob", out, sizeof(out)), 2);
	ck_assert_int_eq(run("model --help", out, sizeof(out)), 0);
	ck_assert_msg(!strncmp(out, "Usage: pems-run model calibrate", 31), "%s", out);
}
END_TEST

int main(void)
{
	const char *tmp = getenv("PEMS_TEST_TMP");
	Suite *s = suite_create("model");
	TCase *tc = tcase_create("equations"), *rec = tcase_create("recorder");
	TCase *cli = tcase_create("pems-run model");
	SRunner *sr;
	int failed;

	if (getenv("PEMS_RUN"))
		pems_run = getenv("PEMS_RUN");
	snprintf(dir, sizeof(dir), "%s", tmp ? tmp : "/tmp");
	if (!tmp) {
		snprintf(dir, sizeof(dir), "/tmp/check_model.%d", (int)getpid());
		mkdir(dir, 0700);
	}
	tcase_add_loop_test(tc, predictions_grow_with_the_input, 0, 4);
	tcase_add_test(tc, disk_bound_sort_moves_4N);
	tcase_add_test(tc, cpu_bound_sort_uses_min_of_cores_and_threads);
	tcase_add_test(tc, two_ranks_overlap_h_g_and_add_l);
	tcase_add_test(tc, comm_threads_take_what_poll_p_says);
	tcase_add_test(tc, lbusy_and_cpu_alg_apply_where_they_belong);
	tcase_add_test(tc, overlap_adds_a_share_of_the_lesser);
	tcase_add_test(tc, overlap_alg_is_per_algorithm);
	tcase_add_test(tc, spread_prices_balanced_supersteps);
	tcase_add_test(tc, sort_output_is_written_into_allocated_blocks);
	tcase_add_test(tc, async_file_io_stays_out_of_the_chain);
	tcase_add_test(tc, agg_at_interpolates_in_log_groups_per_vp);
	tcase_add_test(tc, aggregate_load_factor_follows_the_rows_mode);
	tcase_add_test(tc, kscale_scales_the_algorithms_kernels);
	tcase_add_test(tc, sgd_supersteps_follow_the_batches);
	tcase_add_test(tc, projection_applies_the_algorithms_terms);
	tcase_add_test(tc, zero_terms_load_zero_rates_do_not);
	tcase_add_test(tc, save_and_read_agree);
	tcase_add_test(tc, cost_plans_move_what_the_algorithms_move);
	suite_add_tcase(s, tc);
	tcase_add_test(rec, the_recorder_keeps_one_record_per_superstep);
	suite_add_tcase(s, rec);
	tcase_add_test(cli, stats_json_is_compared_per_superstep);
	tcase_add_test(cli, projection_is_monotone_and_finds_the_limit);
	tcase_add_test(cli, a_real_run_records_every_superstep);
	tcase_add_test(cli, bad_arguments_are_refused);
	suite_add_tcase(s, cli);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
