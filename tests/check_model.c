/*
 * check_model.c - the arithmetic of `pems-run model` (cli/model.c): no
 * timing, only what the equations must give for parameter files written
 * here.  Runs the binary named by $PEMS_RUN (default ./build/pems-run).
 *
 * Equation (model.c design 2), per superstep:
 *   T = max(D, C/min(c,t), (F+C)/t, (X/p)*g) + Y*g + Z + l
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define GIB 1073741824.0

static const char *pems_run = "./build/pems-run";
static char dir[4096];

/* A parameter file: @disk_bw for reads and writes, @rate for every
 * kernel (bytes/s or rows/s per core), 2 cores, no other load. */
static void params(const char *name, double disk_bw, double rate, double l1)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "pems-model 1\n# test\ndate test\ncores 2\nload 0\n"
		   "read_bw %g\nwrite_bw %g\niops 1e12\nlat 1e-15\ncopy_bw 1e15\nqsort_ns 1e-9\n"
		   "vp_secs 0\nsetup 0.5\nfwrite_bw %g\n", disk_bw, disk_bw, disk_bw);
	fprintf(f, "sort_part_u64 %g\nsort_part_rec100 %g\nsort_local_u64 %g\nsort_local_rec100 %g\n"
		   "agg_raw %g\nagg_hash %g\nagg_merge %g\nagg_write %g\nagg_compact %g\n"
		   "agg_fmt %g\nsgd %g\n",
		rate, rate, rate, rate, rate, rate, rate, rate, rate, rate, rate);
	fprintf(f, "bsp 1 %g 1e-9\nbsp 2 0.01 3e-9\nbsp 4 0.02 5e-9\n", l1);
	ck_assert_int_eq(fclose(f), 0);
}

/* Append @lines to the parameter file @name (measured terms a test adds). */
static void add_params(const char *name, const char *lines)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "a");
	ck_assert_ptr_nonnull(f);
	fputs(lines, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* Run pems-run with the shell words in @args (cwd = dir); stdout into
 * @out; returns the exit status. */
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

/* predicted_secs of one predict call */
static double predicted(const char *args)
{
	char out[16384], cmd[1024];

	snprintf(cmd, sizeof(cmd), "model predict %s", args);
	ck_assert_msg(run(cmd, out, sizeof(out)) == 0, "%s: %s", cmd, out);
	return field(out, "predicted_secs=");
}

START_TEST(predictions_grow_with_the_input)
{
	static const char *const algo[] = { "sort --format u64", "sort --format rec100",
					    "aggregate", "sgd" };
	static const char *const size[] = { "256M", "1G", "4G", "16G", "64G" };
	double last = 0, t;
	char args[512];
	unsigned i;

	params("p", 5e8, 2e8, 1e-4);
	for (i = 0; i < 5; i++) {
		snprintf(args, sizeof(args), "%s --params p --size %s --mem 4G", algo[_i], size[i]);
		t = predicted(args);
		ck_assert_msg(t > last, "%s: %.4f s, not above %.4f s", args, t, last);
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

	params("d", 1e8, 1e15, 0.001);
	setenv("PEMS_MSG_HOLD", "0", 1);
	t = predicted("sort --format u64 --params d --size 1G --procs 8 --mem 8G");
	unsetenv("PEMS_MSG_HOLD");
	ck_assert_msg(fabs(t - (4 * GIB / 1e8 + 0.5 + 4 * 0.001)) < 0.01, "no holding: %.4f s", t);
	t = predicted("sort --format u64 --params d --size 1G --procs 8 --mem 8G");
	ck_assert_msg(fabs(t - (2 * GIB / 1e8 + 0.5 + 4 * 0.001)) < 0.01, "holding: %.4f s", t);
}
END_TEST

/* CPU-bound sort (disk free) on 2 cores with k = 2: N/rate for each of
 * the two data supersteps, over 2 cores; with k = 1 twice that. */
START_TEST(cpu_bound_sort_uses_min_of_cores_and_threads)
{
	double t2, t1;

	params("c", 1e15, 1e8, 0);
	t2 = predicted("sort --format u64 --params c --size 1G --procs 8 --threads 2");
	t1 = predicted("sort --format u64 --params c --size 1G --procs 8 --threads 1");
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

	params("g", 1e15, 1e8, 0);
	t1 = predicted("sort --format u64 --params g --size 1G --procs 8 --threads 1");
	t2 = predicted("sort --format u64 --params g --size 1G --procs 8 --threads 1 --procs-mpi 2");
	/* p = 2, k = 1: t = 2 threads on 2 cores: compute halves */
	want = (t1 - 0.5) / 2 + 0.5 + 4 * 0.01;
	ck_assert_msg(fabs(t2 - want) < 0.01 + 1e-6 * want, "p=2: %.4f s, want %.4f s", t2, want);
	params("n", 1e15, 1e10, 0);
	t2 = predicted("sort --format u64 --params n --size 1G --procs 8 --threads 1 --procs-mpi 2");
	want = 0.5 + 4 * 0.01 + xfer + GIB / 1e10 / 2;	/* partition: net; sort: cpu */
	ck_assert_msg(fabs(t2 - want) < 0.01, "net-bound p=2: %.4f s, want %.4f s", t2, want);
}
END_TEST

/* "poll_p P C": at p = 2 each rank's comm thread takes C cores from the
 * workers (calibrate measures it with p*k spinners); C = 0.5 leaves the
 * two workers one core of two, so the compute of k = 1 at p = 1 is not
 * halved; without the line the single "poll" figure (0 here) holds.
 * "cpu_p P F" (measured CPU of p ranks per CPU of one) replaces it. */
START_TEST(comm_threads_take_what_poll_p_says)
{
	double t1, t2, want;

	params("q", 1e15, 1e8, 0);
	t1 = predicted("sort --format u64 --params q --size 1G --procs 8 --threads 1");
	add_params("q", "poll_p 2 0.5\npoll_p 4 0.1\n");
	t2 = predicted("sort --format u64 --params q --size 1G --procs 8 --threads 1 --procs-mpi 2");
	want = t1 + 4 * 0.01;	/* one core for the workers, l(2) = 0.01 per superstep */
	ck_assert_msg(fabs(t2 - want) < 0.01 + 1e-3 * want, "p=2: %.4f s, want %.4f s", t2, want);
	/* a measured "cpu_p 2 1.5" holds the polling (and the rest p = 2
	 * costs) in the work instead: both cores, 1.5x the core-seconds */
	add_params("q", "cpu_p 2 1.5\n");
	t2 = predicted("sort --format u64 --params q --size 1G --procs 8 --threads 1 --procs-mpi 2");
	want = (t1 - 0.5) / 2 * 1.5 + 0.5 + 4 * 0.01;
	ck_assert_msg(fabs(t2 - want) < 0.01 + 1e-3 * want, "cpu_p: %.4f s, want %.4f s", t2, want);
}
END_TEST

/* "lbusy P S": a loop of identical supersteps (sgd's training) pays S per
 * superstep at p ranks instead of the idle l(p) = 0.01; the sort's four
 * supersteps keep l.  "cpu_alg ALGO P F": the CPU factor of p ranks for
 * that algorithm only (here the rec100 sort; the u64 sort unchanged);
 * "cpu_step ALGO S P F" for one superstep of it. */
START_TEST(lbusy_and_cpu_alg_apply_where_they_belong)
{
	double n = floor((GIB - 16) / 260), spe = ceil(ceil(n / 16) / (64 * 64));
	double s0, s1, u0, u1, r0, r1, want;

	params("b", 1e15, 1e8, 0);
	s0 = predicted("sgd --params b --size 1G --procs-mpi 2");
	u0 = predicted("sort --format u64 --params b --size 1G --procs 8 --procs-mpi 2");
	r0 = predicted("sort --format rec100 --params b --size 1G --procs 8 --procs-mpi 2");
	add_params("b", "lbusy 2 0.05\ncpu_alg sort-rec100 2 2\n");
	s1 = predicted("sgd --params b --size 1G --procs-mpi 2");
	u1 = predicted("sort --format u64 --params b --size 1G --procs 8 --procs-mpi 2");
	r1 = predicted("sort --format rec100 --params b --size 1G --procs 8 --procs-mpi 2");
	want = spe * (0.05 - 0.01);
	ck_assert_msg(fabs(s1 - s0 - want) < 1e-3 + 1e-3 * want, "sgd: +%.4f s, want +%.4f s",
		      s1 - s0, want);
	ck_assert_msg(fabs(u1 - u0) < 1e-4, "u64 sort moved: %.4f -> %.4f s", u0, u1);
	want = 2 * (r0 - 0.5 - 4 * 0.01) + 0.5 + 4 * 0.01;
	ck_assert_msg(fabs(r1 - want) < 0.01 * want, "rec100 x2: %.4f s, want %.4f s", r1, want);
	/* "cpu_step sort-u64 2 2 3": only the partition (superstep 2) of the
	 * u64 sort takes 3x its CPU; it and the sort superstep had equal work */
	add_params("b", "cpu_step sort-u64 2 2 3\n");
	u1 = predicted("sort --format u64 --params b --size 1G --procs 8 --procs-mpi 2");
	want = (u0 - 0.5 - 4 * 0.01) * 2 + 0.5 + 4 * 0.01;
	ck_assert_msg(fabs(u1 - want) < 0.01 * want, "u64 partition x3: %.4f s, want %.4f s", u1,
		      want);
}
END_TEST

/* "overlap a": a superstep takes the greater of its disk and compute
 * times plus a times the lesser.  1 GiB sort, disk 1 GB/s, kernels 1 GB/s
 * per core, k = 2: partition and sort+write each have D = 2 GiB / 1 GB/s
 * and compute C/2 = 0.5 GiB / 1 GB/s (the sort reads and writes its
 * slices in pieces while computing: no F in the chain), so a = 0.5 adds
 * 0.5 * 2 * 0.537 s. */
START_TEST(overlap_adds_a_share_of_the_lesser)
{
	double t0, t5;

	params("o", 1e9, 1e9, 0);
	t0 = predicted("sort --format u64 --params o --size 1G --procs 8 --threads 2");
	add_params("o", "overlap 0.5\n");
	t5 = predicted("sort --format u64 --params o --size 1G --procs 8 --threads 2");
	ck_assert_msg(fabs(t5 - t0 - GIB / 1e9 / 2) < 0.01, "overlap 0.5 added %.4f s, want %.4f s",
		      t5 - t0, GIB / 1e9 / 2);
}
END_TEST

/* "spread S": a superstep takes the expected max of its disk and compute
 * times, each with relative deviation S (Clark's formula).  A sort whose
 * two data supersteps are balanced (no holding: D = 2N/bw = C = N/rate
 * over 2 workers) gains S * a / sqrt(pi) in each, a being either term;
 * one whose compute is a tenth of its disk gains nothing measurable; and
 * a file without "spread" (older calibrations) predicts as before. */
START_TEST(spread_prices_balanced_supersteps)
{
	const char *job = "sort --format u64 --params %s --size 1G --procs 8 --threads 2";
	double a = 2 * GIB / 1e9, t0, t1, want = 2 * 0.3 * a / sqrt(M_PI);
	char cmd[256];

	setenv("PEMS_MSG_HOLD", "0", 1);
	params("b", 1e9, 2.5e8, 0);
	snprintf(cmd, sizeof(cmd), job, "b");
	t0 = predicted(cmd);
	ck_assert_msg(fabs(t0 - (2 * a + 0.5)) < 0.01, "balanced, no spread: %.4f s", t0);
	add_params("b", "spread 0.3\n");
	t1 = predicted(cmd);
	ck_assert_msg(fabs(t1 - t0 - want) < 0.01, "spread 0.3 added %.4f s, want %.4f s", t1 - t0,
		      want);
	params("u", 1e9, 2.5e9, 0);
	snprintf(cmd, sizeof(cmd), job, "u");
	t0 = predicted(cmd);
	add_params("u", "spread 0.3\n");
	t1 = predicted(cmd);
	unsetenv("PEMS_MSG_HOLD");
	ck_assert_msg(fabs(t1 - t0) < 1e-3, "compute a tenth of the disk: +%.4f s", t1 - t0);
}
END_TEST

/* The sort's output is fallocated when it is created (algorithms/output.c,
 * 0f4cffd): its writes take write_bw, the rate into allocated blocks, not
 * fwrite_bw, the rate into holes, which the aggregate's appended output
 * still takes.  Disk-bound jobs (kernels free), holes 100x slower. */
START_TEST(sort_output_is_written_into_allocated_blocks)
{
	const char *sort = "sort --format u64 --params %s --size 1G --procs 8 --threads 2";
	const char *agg = "aggregate --groups 10000000 --params %s --size 1G --procs 16 --threads 2";
	double s0, s1, g0, g1;
	char cmd[256];

	params("h", 1e9, 1e15, 0);
	snprintf(cmd, sizeof(cmd), sort, "h");
	s0 = predicted(cmd);
	snprintf(cmd, sizeof(cmd), agg, "h");
	g0 = predicted(cmd);
	add_params("h", "fwrite_bw 1e7\n");
	snprintf(cmd, sizeof(cmd), sort, "h");
	s1 = predicted(cmd);
	snprintf(cmd, sizeof(cmd), agg, "h");
	g1 = predicted(cmd);
	ck_assert_msg(fabs(s1 - s0) < 1e-3, "sort moved with fwrite_bw: %.4f -> %.4f s", s0, s1);
	ck_assert_msg(g1 > g0 + 1, "aggregate output not at fwrite_bw: %.4f -> %.4f s", g0, g1);
	add_params("h", "write_bw 5e8\n");
	snprintf(cmd, sizeof(cmd), sort, "h");
	s1 = predicted(cmd);
	ck_assert_msg(s1 > s0 + GIB / 1e9 * 0.9, "sort output not at write_bw: %.4f -> %.4f s", s0, s1);
}
END_TEST

/* "overlap_alg ALGO P A" replaces the overlap for that algorithm at p
 * ranks only: the u64 sort takes 0.5 (as "overlap 0.5" above), the
 * rec100 sort keeps none; an aggregate of 10^3 groups (its load hashes
 * every row) is "aggregate-pre", one of 10^7 groups (rows pass raw) is
 * "aggregate". */
START_TEST(overlap_alg_is_per_algorithm)
{
	static const char *const job[] = {
		"sort --format u64 --params q --size 1G --procs 8 --threads 2",
		"sort --format rec100 --params q --size 1G --procs 8 --threads 2",
		"aggregate --groups 1000 --params q --size 1G --procs 16 --threads 2",
		"aggregate --groups 10000000 --params q --size 1G --procs 16 --threads 2",
	};
	double t0[4], t1;
	unsigned i;

	params("q", 1e9, 1e9, 0);
	for (i = 0; i < 4; i++)
		t0[i] = predicted(job[i]);
	add_params("q", "overlap_alg sort-u64 1 0.5\noverlap_alg aggregate-pre 1 0.5\n"
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
 * computes (sort.c: pems_file_start/wait): with one worker (t = 1) the
 * partition and sort+write take max(D, C) = C, not F + C; the sgd reads
 * its rows synchronously: each training superstep takes F + C. */
START_TEST(async_file_io_stays_out_of_the_chain)
{
	double t, n = floor((GIB - 16) / 260), f, c;

	params("y", 1e9, 1e8, 0);
	t = predicted("sort --format u64 --params y --size 1G --procs 8 --threads 1");
	ck_assert_msg(fabs(t - (2 * GIB / 1e8 + 0.5)) < 0.01, "sort: %.4f s, want %.4f s", t,
		      2 * GIB / 1e8 + 0.5);
	t = predicted("sgd --params y --size 1G --threads 1");
	f = n * 260 / 1e9;
	c = n * 64 / 1e8;
	ck_assert_msg(fabs(t - (f + c + 0.5)) < 0.01, "sgd: %.4f s, want %.4f s", t, f + c + 0.5);
}
END_TEST

/* cpu_s of the superstep named @name in a predict table */
static double step_cpu_s(const char *out, const char *name)
{
	const char *q = strstr(out, name);
	double disk, cpu;

	ck_assert_msg(q != NULL, "no %s in: %s", name, out);
	ck_assert_int_eq(sscanf(q + strlen(name), "%lf %lf", &disk, &cpu), 2);
	return cpu;
}

/* the predicted CPU seconds of @cmd's load+partition superstep */
static double load_cpu_s(const char *cmd)
{
	char out[16384];

	ck_assert_int_eq(run(cmd, out, sizeof(out)), 0);
	return step_cpu_s(out, " load+partition ");
}

/* @job with parameter file @name holding @lines: its merge and write
 * supersteps take @merge and @write cpu seconds (within 1 %). */
static void agg_at_costs(const char *job, const char *name, const char *lines, double merge,
			 double write)
{
	char out[16384], cmd[512];

	params(name, 1e15, 1e8, 0);
	add_params(name, lines);
	snprintf(cmd, sizeof(cmd), "model predict %s %s", job, name);
	ck_assert_int_eq(run(cmd, out, sizeof(out)), 0);
	ck_assert_msg(fabs(step_cpu_s(out, " merge ") - merge) < 0.01 * merge, "%s", out);
	ck_assert_msg(fabs(step_cpu_s(out, " write ") - write) < 0.01 * write, "%s", out);
}

/* "agg_at X M W": the aggregate's merge superstep costs 1/M core-seconds
 * per row received and its write superstep 1/W per group at X groups per
 * VP; between two lines the seconds are linear in ln X, beyond them the
 * nearest line's.  10^7 groups in 1 GiB (2^26 rows, nearly all sent raw)
 * on 16 VPs, k = 2 on 2 cores: cpu_s = core-seconds / 2. */
START_TEST(agg_at_interpolates_in_log_groups_per_vp)
{
	double n = 67108864, G = 1e7, gd = G * -expm1(-n / G), x = gd / 16, m0, w0;
	const char *job = "aggregate --groups 10000000 --size 1G --procs 16 --threads 2 --params";
	char out[16384], cmd[512], lines[512];

	params("a0", 1e15, 1e8, 0);
	snprintf(cmd, sizeof(cmd), "model predict %s a0", job);
	ck_assert_int_eq(run(cmd, out, sizeof(out)), 0);
	/* without agg_at lines: the five single rates (1e8), compacted */
	ck_assert_msg(fabs(step_cpu_s(out, " merge ") - (n + gd) / 1e8 / 2) < 0.01, "%s", out);
	/* one rate everywhere: 1e-7 s per row received, 1e-6 s per group */
	params("a", 1e15, 1e8, 0);
	add_params("a", "agg_at 1000 1e7 1e6\nagg_at 1e9 1e7 1e6\n");
	snprintf(cmd, sizeof(cmd), "model predict %s a", job);
	ck_assert_int_eq(run(cmd, out, sizeof(out)), 0);
	m0 = step_cpu_s(out, " merge ");
	w0 = step_cpu_s(out, " write ");
	ck_assert_msg(fabs(m0 - n * 1e-7 / 2) < 0.005 * m0, "merge %.3f s: %s", m0, out);
	ck_assert_msg(fabs(w0 - gd * 1e-6 / 2) < 0.002 * w0, "write %.3f s: %s", w0, out);
	/* x halfway in ln between x/10 and 10x (lines in any order): the
	 * mean of 1e-7 and 4e-7 s per row, of 1e-6 and 0.25e-6 s per group */
	snprintf(lines, sizeof(lines), "agg_at %.9g 2.5e6 4e6\nagg_at %.9g 1e7 1e6\n", 10 * x, x / 10);
	agg_at_costs(job, "b", lines, 2.5 * m0, 0.625 * w0);
	/* below the smallest X: that line's rates */
	snprintf(lines, sizeof(lines), "agg_at %.9g 2.5e6 4e6\nagg_at %.9g 1e7 1e6\n", 10 * x,
		 100 * x);
	agg_at_costs(job, "c", lines, 4 * m0, 0.25 * w0);
	/* a repeated X or a rate that is not positive is refused */
	params("e", 1e15, 1e8, 0);
	add_params("e", "agg_at 1000 1e7 1e6\nagg_at 1000 2e7 1e6\n");
	ck_assert_int_eq(run("model predict aggregate --size 1G --params e", out, sizeof(out)), 1);
	params("e", 1e15, 1e8, 0);
	add_params("e", "agg_at 1000 0 1e6\n");
	ck_assert_int_eq(run("model predict aggregate --size 1G --params e", out, sizeof(out)), 1);
}
END_TEST

/* At p > 1 the aggregate's load superstep takes "cpu_step aggregate-pre 2
 * P F" (a pre-aggregating calibration job) for the rows it hashes into
 * states and "cpu_step aggregate 2 P F" (a job whose rows pass raw) for
 * the rest: 10^3 groups on 16 VPs hash every row into states, 10^7
 * groups send every row raw (the fills' states hold about one row each
 * and go out as rows). */
START_TEST(aggregate_load_factor_follows_the_rows_mode)
{
	const char *pre = "model predict aggregate --groups 1000 --size 1G --procs 16 --threads 2"
			  " --procs-mpi 2 --params h";
	const char *raw = "model predict aggregate --groups 10000000 --size 1G --procs 16"
			  " --threads 2 --procs-mpi 2 --params h";
	double p0, p1, r0, r1;

	params("h", 1e15, 1e8, 0);
	add_params("h", "cpu_step aggregate 2 2 3\n");
	p0 = load_cpu_s(pre);
	r0 = load_cpu_s(raw);
	add_params("h", "cpu_step aggregate-pre 2 2 1.5\n");
	p1 = load_cpu_s(pre);
	r1 = load_cpu_s(raw);
	ck_assert_msg(fabs(p1 - p0 / 2) < 0.01 * p0, "10^3 groups: %.4f -> %.4f s, want x0.5", p0, p1);
	ck_assert_msg(fabs(r1 - r0) < 1e-3 * r0, "10^7 groups: %.4f -> %.4f s, want x1", r0, r1);
}
END_TEST

/* "kscale ALGO F" multiplies the kernel core-seconds of ALGO's jobs at
 * every p (the aggregate's pre-aggregated rows by "kscale
 * aggregate-pre", its other work by "kscale aggregate"): a CPU-bound u64
 * sort (disk free) takes twice its compute with "kscale sort-u64 2", the
 * rec100 sort keeps its own; the 10^3-group aggregate's load doubles with
 * "kscale aggregate-pre 2", the 10^7-group one's does not. */
START_TEST(kscale_scales_the_algorithms_kernels)
{
	const char *pre = "model predict aggregate --groups 1000 --size 1G --procs 16 --threads 2"
			  " --params k";
	const char *raw = "model predict aggregate --groups 10000000 --size 1G --procs 16"
			  " --threads 2 --params k";
	double u0, r0, u1, r1, p0, p1, w0, w1;

	params("k", 1e15, 1e8, 0);
	u0 = predicted("sort --format u64 --params k --size 1G --procs 8 --threads 2 --procs-mpi 2");
	r0 = predicted("sort --format rec100 --params k --size 1G --procs 8 --threads 2");
	p0 = load_cpu_s(pre);
	w0 = load_cpu_s(raw);
	add_params("k", "kscale sort-u64 2\nkscale aggregate-pre 2\n");
	u1 = predicted("sort --format u64 --params k --size 1G --procs 8 --threads 2 --procs-mpi 2");
	r1 = predicted("sort --format rec100 --params k --size 1G --procs 8 --threads 2");
	p1 = load_cpu_s(pre);
	w1 = load_cpu_s(raw);
	ck_assert_msg(fabs((u1 - 0.5 - 4 * 0.01) - 2 * (u0 - 0.5 - 4 * 0.01)) < 0.01 * u0,
		      "u64 at p = 2: %.4f -> %.4f s, want its supersteps x2", u0, u1);
	ck_assert_msg(fabs(r1 - r0) < 1e-4, "rec100 moved: %.4f -> %.4f s", r0, r1);
	ck_assert_msg(fabs(p1 - 2 * p0) < 0.01 * p0, "10^3 groups: %.4f -> %.4f s, want x2", p0, p1);
	ck_assert_msg(fabs(w1 - w0) < 1e-3 * w0, "10^7 groups: %.4f -> %.4f s, want x1", w0, w1);
}
END_TEST

/* sgd: one superstep per H*batch rows of every shard, plus the last */
START_TEST(sgd_supersteps_follow_the_batches)
{
	char out[16384];

	params("s", 1e9, 1e9, 0);
	/* 1 MiB + 16 header bytes of dim 63 rows (256 B): 4096 rows, 16 shards
	 * of 256 rows, 16 rows per superstep: 16 supersteps per epoch */
	ck_assert_int_eq(run("model predict sgd --params s --size 1048592 --dim 63 --batch 4 "
			     "--local-steps 4 --epochs 3", out, sizeof(out)), 0);
	ck_assert_msg(strstr(out, "0-47      train") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "48        end") != NULL, "%s", out);
}
END_TEST

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

/* predicted_secs of the "projection=" line of @nodes nodes in @out */
static double projected(const char *out, unsigned nodes)
{
	char key[64];
	const char *q;

	snprintf(key, sizeof(key), "nodes=%u bytes=", nodes);
	q = strstr(out, key);
	ck_assert_msg(q != NULL, "no %u nodes in: %s", nodes, out);
	return field(q, "predicted_secs=");
}

/* model project takes the algorithm's terms as predict does: a CPU-bound
 * u64 sort (disk free) takes twice its compute on 1 and on 10 nodes with
 * "kscale sort-u64 2" (the rec100 sort keeps its own), and "overlap_alg
 * sort-u64 1 A" adds to a balanced one; the CPU factors of 2 ranks here
 * ("cpu_alg sort-u64 2 3") apply beyond one node only with --node-terms 2.
 * Setup 0.5 s, l of the network (10 nodes: 9 * 2 us + 6 * 4 * 20 us). */
START_TEST(projection_applies_the_algorithms_terms)
{
	const char *job = "model project sort --params t --size-per-node 1G --mem 4G --nodes 1,10";
	double l10 = 9 * 2e-6 + 6 * 4 * 20e-6, a1, a10, b1, b10, want;
	char out[16384], cmd[512];

	params("t", 1e15, 1e8, 0);
	ck_assert_int_eq(run(job, out, sizeof(out)), 0);
	a1 = projected(out, 1) - 0.5;
	a10 = projected(out, 10) - 0.5 - 4 * l10;
	add_params("t", "kscale sort-u64 2\nkscale sort-rec100 3\n");
	ck_assert_int_eq(run(job, out, sizeof(out)), 0);
	b1 = projected(out, 1) - 0.5;
	b10 = projected(out, 10) - 0.5 - 4 * l10;
	ck_assert_msg(fabs(b1 - 2 * a1) < 0.01 * a1, "1 node: %.4f -> %.4f s, want x2", a1, b1);
	ck_assert_msg(fabs(b10 - 2 * a10) < 0.01 * a10, "10 nodes: %.4f -> %.4f s, want x2", a10, b10);
	ck_assert_msg(strstr(out, "kscale=2.0000") != NULL, "%s", out);
	/* CPU factors of 2 ranks sharing this machine: only with --node-terms 2, only beyond 1 node */
	add_params("t", "cpu_alg sort-u64 2 3\n");
	ck_assert_int_eq(run(job, out, sizeof(out)), 0);
	ck_assert_msg(fabs(projected(out, 10) - 0.5 - 4 * l10 - b10) < 1e-3 * b10, "%s", out);
	snprintf(cmd, sizeof(cmd), "%s --node-terms 2", job);
	ck_assert_int_eq(run(cmd, out, sizeof(out)), 0);
	ck_assert_msg(fabs(projected(out, 1) - 0.5 - b1) < 1e-3 * b1, "1 node moved: %s", out);
	want = 3 * b10;
	ck_assert_msg(fabs(projected(out, 10) - 0.5 - 4 * l10 - want) < 0.02 * want,
		      "10 nodes, cpu_alg 3: want %.4f s: %s", want + 0.5, out);
	/* overlap_alg at p = 1: disk and kernels both 1 GB/s (per core) */
	params("u", 1e9, 1e9, 0);
	ck_assert_int_eq(run("model project sort --params u --size 1G --mem 4G --nodes 1", out,
			     sizeof(out)), 0);
	a1 = projected(out, 1);
	add_params("u", "overlap_alg sort-u64 1 0.5\n");
	ck_assert_int_eq(run("model project sort --params u --size 1G --mem 4G --nodes 1", out,
			     sizeof(out)), 0);
	ck_assert_msg(projected(out, 1) > a1 + 0.2, "overlap_alg ignored: %.4f -> %s", a1, out);
}
END_TEST

/* Calibration can measure a term at 0 (lat: small calls as fast per byte
 * as large ones); the loader takes it.  A rate of 0 or a negative term is
 * refused with the key's name. */
START_TEST(zero_terms_load_zero_rates_do_not)
{
	char out[16384];

	params("z", 5e8, 2e8, 1e-4);
	add_params("z", "lat 0\nsetup 0\n");
	ck_assert_int_eq(run("model predict sort --params z --size 1G", out, sizeof(out)), 0);
	ck_assert_msg(field(out, "predicted_secs=") > 0, "%s", out);
	params("r", 5e8, 2e8, 1e-4);
	add_params("r", "read_bw 0\n");
	ck_assert_int_eq(run("model predict sort --params r --size 1G", out, sizeof(out)), 1);
	ck_assert_msg(strstr(out, "'read_bw' is missing or not positive"), "%s", out);
	params("n", 5e8, 2e8, 1e-4);
	add_params("n", "lat -1e-6\n");
	ck_assert_int_eq(run("model predict sort --params n --size 1G", out, sizeof(out)), 1);
	ck_assert_msg(strstr(out, "'lat' is negative"), "%s", out);
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
	TCase *tc = tcase_create("arithmetic");
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
	tcase_add_test(tc, stats_json_is_compared_per_superstep);
	tcase_add_test(tc, projection_is_monotone_and_finds_the_limit);
	tcase_add_test(tc, projection_applies_the_algorithms_terms);
	tcase_add_test(tc, a_real_run_records_every_superstep);
	tcase_add_test(tc, zero_terms_load_zero_rates_do_not);
	tcase_add_test(tc, bad_arguments_are_refused);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
