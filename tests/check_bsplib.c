/*
 * check_bsplib.c - unmodified BSPlib programs (the files of tests/bsplib, only
 * <bsp.h> and the C library) run as a user runs them: no PEMS_PROCS, the
 * number of processors asked for by the program, both dialects of bsp.h.
 *
 * The Makefile builds each program of tests/bsplib into
 * $PEMS_BUILD/tests/bsplib/: NAME98.c in the BSPlib-1998 int dialect
 * only (-DBSPLIB_1998), any other NAME.c in both (NAME and NAME.98), all
 * with -Wall -Wextra -Werror -Werror=incompatible-pointer-types.  Every
 * program prints one result line on processor 0; this file computes the
 * same result sequentially and compares the lines.
 *
 * globals.c and rules.c keep their per-process state in globals and
 * statics: they pass only because every VP has its own copy
 * (pems/globals.c); with PEMS_GLOBALS=shared they fail.
 *
 * The children get an environment without PEMS_* variables, plus what a
 * configuration adds (threads, a budget that spills, stats).
 */
#include "spmd_test.h"

#include <limits.h>
#include <signal.h>

#include "pems.h"

#define NPROG_ARGS 8

static char bindir[PATH_MAX];

/* ---- running a program ---- */

struct prog_run {
	const char *bin;		/* file in bindir */
	const char *in;			/* stdin text, or NULL: /dev/null */
	const char *args[NPROG_ARGS];	/* NULL-terminated */
	const char *env[8];		/* NAME=VALUE added, NULL-terminated */
	unsigned mpi_np;		/* 0: plain, else mpirun -np */
};

static void child_exec(void *arg)
{
	const struct prog_run *pr = arg;
	char path[PATH_MAX + 64], inpath[PATH_MAX + 64], np[16];
	char *argv[NPROG_ARGS + 8];
	extern char **environ;
	unsigned a = 0, i;
	char **e;

	/* no PEMS_* from the test's own environment */
	for (e = environ; *e;) {
		if (!strncmp(*e, "PEMS_", 5) && strncmp(*e, "PEMS_TEST", 9)) {
			char name[256];

			snprintf(name, sizeof(name), "%.*s", (int)(strchr(*e, '=') - *e), *e);
			unsetenv(name);
			e = environ;
			continue;
		}
		e++;
	}
	setenv("TMPDIR", spmd_tmp(), 1);
	/* the programs are the users': their leaks are not the library's */
	setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
	for (i = 0; pr->env[i]; i++)
		putenv((char *)pr->env[i]);
	if (pr->in) {
		int fd;

		snprintf(inpath, sizeof(inpath), "%s/stdin.%d", spmd_tmp(), (int)getpid());
		fd = open(inpath, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || write(fd, pr->in, strlen(pr->in)) < 0 || lseek(fd, 0, SEEK_SET) ||
		    dup2(fd, 0) < 0)
			_exit(126);
		unlink(inpath);
	}
	snprintf(path, sizeof(path), "%s/%s", bindir, pr->bin);
	if (pr->mpi_np) {
		snprintf(np, sizeof(np), "%u", pr->mpi_np);
		argv[a++] = "mpirun";
		argv[a++] = "--oversubscribe";
		argv[a++] = "-np";
		argv[a++] = np;
	}
	argv[a++] = path;
	for (i = 0; pr->args[i]; i++)
		argv[a++] = (char *)pr->args[i];
	argv[a] = NULL;
	execvp(argv[0], argv);
	_exit(127);
}

static void run_prog(const struct prog_run *pr, struct child_result *cr)
{
	run_child(child_exec, (void *)pr, 600, cr);
	ck_assert_msg(!cr->timed_out && !cr->signaled, "%s %s: hung or crashed (signal %d); stderr: %s",
		      pr->bin, pr->args[0] ? pr->args[0] : "", cr->sig, cr->err);
}

/* ---- sequential references ---- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 32);
}

static double inprod_ref(long n)
{
	double sum = 0;
	long i;

	for (i = 0; i < n; i++)
		sum += (double)(i + 1) * (double)(i + 1);
	return sum;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t sort_ref(uint64_t n)
{
	uint64_t *k = malloc(n * sizeof(*k)), i, sum = 0;

	for (i = 0; i < n; i++)
		k[i] = mix(i);
	qsort(k, n, sizeof(*k), cmp_u64);
	for (i = 0; i < n; i++)
		sum += k[i] * (i + 1);
	free(k);
	return sum;
}

static uint64_t fft_ref(unsigned p, size_t m)
{
	uint64_t *x = malloc((size_t)p * m * sizeof(*x)), *y = malloc((size_t)p * m * sizeof(*y));
	uint64_t sum = 0;
	unsigned p2, s;
	size_t j, r;

	for (p2 = 1; p2 * 2 <= p; p2 *= 2)
		;
	for (s = 0; s < p; s++)
		for (j = 0; j < m; j++)
			x[s * m + j] = mix((uint64_t)s * m + j);
	for (s = p2; s < p; s++)
		for (j = 0; j < m; j++)
			x[(s - p2) * m + j] += 3 * x[s * m + j];
	for (r = 1; r < p2; r *= 2) {
		for (s = 0; s < p2; s++)
			for (j = 0; j < m; j++) {
				unsigned q = s ^ (unsigned)r;
				uint64_t w = mix(r * 1000003 + j) | 1;

				y[s * m + j] = s < q ? x[s * m + j] + w * x[q * m + j] :
						       x[q * m + j] - w * x[s * m + j];
			}
		memcpy(x, y, (size_t)p2 * m * sizeof(*x));
	}
	for (s = p2; s < p; s++)
		memcpy(x + s * m, x + (s - p2) * m, m * sizeof(*x));
	for (s = 0; s < p; s++)
		for (j = 0; j < m; j++)
			sum += x[s * m + j] * mix(((uint64_t)s << 32) + j);
	free(x);
	free(y);
	return sum;
}

static uint64_t lu_ref(long n)
{
	double *a = malloc((size_t)(n * n) * sizeof(*a));
	uint64_t sum = 0, bits;
	long i, j, k;

	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			a[i * n + j] = (double)(mix((uint64_t)(i * n + j)) % 1000) / 1000.0 +
				       (i == j ? (double)n : 0.0);
	for (k = 0; k < n; k++) {
		for (i = k + 1; i < n; i++)
			a[i * n + k] = a[i * n + k] / a[k * n + k];
		for (i = k + 1; i < n; i++)
			for (j = k + 1; j < n; j++)
				a[i * n + j] = a[i * n + j] - a[i * n + k] * a[k * n + j];
	}
	for (i = 0; i < n * n; i++) {
		memcpy(&bits, &a[i], sizeof(bits));
		sum += mix(bits ^ (uint64_t)i);
	}
	free(a);
	return sum;
}

/* greedy matching by decreasing weight on match98.c's circulant graph */
struct edge {
	uint64_t w;
	int u, v;
};

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->w != y->w)
		return x->w < y->w ? 1 : -1;
	if (x->u != y->u)
		return x->u < y->u ? 1 : -1;
	return x->v < y->v ? 1 : (x->v > y->v ? -1 : 0);
}

static void match_ref(int n, long *pairs, uint64_t *sum)
{
	static const int off[3] = { 1, 7, 31 };
	struct edge *e = malloc((size_t)n * 3 * sizeof(*e));
	char *used = calloc((size_t)n, 1);
	size_t ne = 0, i, j;
	int u;

	for (u = 0; u < n; u++)
		for (i = 0; i < 3; i++) {
			int v = (u + off[i]) % n, lo = u < v ? u : v, hi = u < v ? v : u;

			if (u == v)
				continue;
			for (j = 0; j < ne; j++)	/* small n only: skip duplicates */
				if (e[j].u == lo && e[j].v == hi)
					break;
			if (j == ne)
				e[ne++] = (struct edge){ mix((uint64_t)lo * (uint64_t)n + (uint64_t)hi), lo, hi };
		}
	qsort(e, ne, sizeof(*e), cmp_edge);
	*pairs = 0;
	*sum = 0;
	for (i = 0; i < ne; i++)
		if (!used[e[i].u] && !used[e[i].v]) {
			used[e[i].u] = used[e[i].v] = 1;
			++*pairs;
			*sum += mix((uint64_t)e[i].u * (uint64_t)n + (uint64_t)e[i].v);
		}
	free(e);
	free(used);
}

/* ---- the programs and their expected lines ---- */

enum prog { INPROD, MATCH, SORT, FFT, LU, GLOBALS, RULES, NPROGS };
static const char *const prog_name[NPROGS] = { "inprod98", "match98", "sort", "fft", "lu",
					       "globals", "rules" };

/* Fill @pr for program @g at @P (binary @bin) and write the expected
 * stdout line to @want. */
static void prog_setup(enum prog g, unsigned P, const char *bin, struct prog_run *pr,
		       char *ps, char *want, size_t len)
{
	static char in[64];
	uint64_t x;
	long pairs;
	int n;

	memset(pr, 0, sizeof(*pr));
	pr->bin = bin;
	snprintf(ps, 16, "%u", P);
	switch (g) {
	case INPROD:
		n = 1000;
		snprintf(in, sizeof(in), "%u\n%d\n", P, n);
		pr->in = in;
		snprintf(want, len, "How many processors do you want to use?\ninprod: p=%u n=%d sum=%.0f\n",
			 P, n, inprod_ref(n));
		break;
	case MATCH:
		n = 600;
		pr->args[0] = ps;
		pr->args[1] = "600";
		match_ref(n, &pairs, &x);
		snprintf(want, len, "match: p=%u n=%d pairs=%ld sum=%016llx\n", P, n, pairs,
			 (unsigned long long)x);
		break;
	case SORT:
		pr->args[0] = ps;
		pr->args[1] = "20000";
		snprintf(want, len, "sort: p=%u n=20000 sum=%016llx\n", P,
			 (unsigned long long)sort_ref(20000));
		break;
	case FFT:
		pr->args[0] = ps;
		pr->args[1] = "16";
		snprintf(want, len, "fft: p=%u m=16 sum=%016llx\n", P,
			 (unsigned long long)fft_ref(P, 16));
		break;
	case GLOBALS:
		pr->args[0] = ps;
		pr->args[1] = "10";
		snprintf(want, len, "globals: p=%u bad=0 sum=%ld\n", P, 10L * P * (P + 1) / 2);
		break;
	case RULES:
		pr->args[0] = ps;
		snprintf(want, len, "rules: p=%u rounds=1 ok\n", P);
		break;
	default:
		pr->args[0] = ps;
		pr->args[1] = "24";
		snprintf(want, len, "lu: p=%u n=24 sum=%016llx\n", P,
			 (unsigned long long)lu_ref(24));
		break;
	}
}

/* Run program @g built as @bin at @P with @env added (NULL-terminated,
 * up to 6); assert its output is the reference. */
static void check_prog(enum prog g, const char *bin, unsigned P, const char *const *env,
		       unsigned mpi_np)
{
	struct prog_run pr;
	struct child_result cr;
	char ps[16], want[512];
	unsigned i;

	prog_setup(g, P, bin, &pr, ps, want, sizeof(want));
	for (i = 0; env && env[i]; i++)
		pr.env[i] = env[i];
	pr.mpi_np = mpi_np;
	run_prog(&pr, &cr);
	ck_assert_msg(cr.exited && cr.status == 0, "%s P=%u%s: exit %d; stderr: %s", bin, P,
		      mpi_np ? " (mpirun)" : "", cr.status, cr.err);
	ck_assert_msg(!strcmp(cr.out, want), "%s P=%u%s: stdout\n%s\nexpected\n%s", bin, P,
		      mpi_np ? " (mpirun)" : "", cr.out, want);
}

/* the binaries of program @g: one per dialect it builds in */
static unsigned prog_bins(enum prog g, char bins[2][64])
{
	snprintf(bins[0], 64, "%s", prog_name[g]);
	if (strstr(prog_name[g], "98"))
		return 1;
	snprintf(bins[1], 64, "%s.98", prog_name[g]);
	return 2;
}

static const unsigned sizes[] = { 1, 3, 4, 64, 1000 };

/* every program, both dialects, P = 1, 3, 4, 64, 1000: no environment */
START_TEST(ask_for_p_without_environment)
{
	enum prog g = (enum prog)_i;
	char bins[2][64];
	unsigned nb = prog_bins(g, bins), b, i;

	for (b = 0; b < nb; b++)
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			check_prog(g, bins[b], sizes[i], NULL, 0);
}
END_TEST

/* Run @g at @P on @k workers under the least budget the runtime accepts
 * (so every context but the computing ones is on disk between
 * supersteps); the run's statistics must show contexts written and read. */
static void check_spill(enum prog g, const char *bin, unsigned P, unsigned k)
{
	static char mem[64], threads[64], json[PATH_MAX + 32];
	const char *env[] = { threads, "PEMS_MU=1M", mem, "PEMS_MSG_HOLD=0", json, NULL };
	struct pems_config pc;
	char stats[4096];
	FILE *f;
	size_t n;

	pems_config_init(&pc);
	pc.procs = P;
	pc.threads = k;
	pc.mu = MiB;
	pc.stack = 256 * KiB;
	snprintf(threads, sizeof(threads), "PEMS_THREADS=%u", k);
	snprintf(mem, sizeof(mem), "PEMS_MEM=%zuK", spmd_min_budget(&pc) >> 10);
	snprintf(json, sizeof(json), "PEMS_STATS_JSON=%s/stats.json", spmd_tmp());
	check_prog(g, bin, P, env, 0);
	f = fopen(json + strlen("PEMS_STATS_JSON="), "r");
	ck_assert_msg(f, "%s P=%u k=%u: no statistics file", bin, P, k);
	n = fread(stats, 1, sizeof(stats) - 1, f);
	fclose(f);
	stats[n] = 0;
	ck_assert_msg(!strstr(stats, "\"ctx_written\": 0,") && !strstr(stats, "\"ctx_read\": 0,"),
		      "%s P=%u k=%u (%s): contexts did not spill: %s", bin, P, k, mem, stats);
}

/* one worker, and budgets that spill every context, at P = 4, 64, 1000 */
START_TEST(threads_and_spilling)
{
	static const char *const k1[] = { "PEMS_THREADS=1", NULL };
	enum prog g = (enum prog)_i;
	char bins[2][64];
	unsigned nb = prog_bins(g, bins), b;

	for (b = 0; b < nb; b++) {
		check_prog(g, bins[b], 4, k1, 0);
		check_prog(g, bins[b], 64, k1, 0);
		check_spill(g, bins[b], 4, 2);
		check_spill(g, bins[b], 64, 2);
		check_spill(g, bins[b], 64, 1);
	}
	check_spill(g, bins[0], 1000, 2);
}
END_TEST

static bool have_mpirun(void)
{
	return !system("mpirun --version >/dev/null 2>&1");
}

START_TEST(under_mpirun_two_ranks)
{
	enum prog g = (enum prog)_i;
	char bins[2][64];
	unsigned nb = prog_bins(g, bins), b;

	if (!have_mpirun()) {
		printf("skip: no mpirun\n");
		return;
	}
	for (b = 0; b < nb; b++) {
		check_prog(g, bins[b], 4, NULL, 2);
		check_prog(g, bins[b], 64, NULL, 2);
	}
}
END_TEST

/* ---- machine size ---- */

/* bsp_nprocs() before bsp_begin is the machine's size; bsp_begin(P)
 * grants P, or PEMS_PROCS when that is smaller */
START_TEST(machine_size_rule)
{
	static const char *const procs64[] = { "PEMS_PROCS=64", NULL };
	static const char *const procs3[] = { "PEMS_PROCS=3", NULL };
	struct prog_run pr = { .bin = "nprocs" };
	struct child_result cr;

	run_prog(&pr, &cr);
	ck_assert_msg(cr.exited && cr.status == 3, "exit %d: %s", cr.status, cr.err);
	ck_assert_str_eq(cr.out, "machine=1024\ngranted=1024\nmain goes on\n");
	pr.args[0] = "4";
	run_prog(&pr, &cr);
	ck_assert_str_eq(cr.out, "machine=1024\ngranted=4\nmain goes on\n");
	pr.args[0] = "5000";
	run_prog(&pr, &cr);
	ck_assert_str_eq(cr.out, "machine=1024\ngranted=5000\nmain goes on\n");
	pr.env[0] = procs64[0];
	pr.args[0] = "4";
	run_prog(&pr, &cr);
	ck_assert_str_eq(cr.out, "machine=64\ngranted=4\nmain goes on\n");
	pr.env[0] = procs3[0];
	run_prog(&pr, &cr);
	ck_assert_str_eq(cr.out, "machine=3\ngranted=3\nmain goes on\n");
}
END_TEST

/* ---- SPMD start-up ---- */

/* Code before bsp_begin (main is the SPMD function) runs once per VP,
 * never once more; main's status is the process's; with and without
 * spilling, and under mpirun (the initial thread of each rank is a VP) */
START_TEST(code_before_bsp_begin_runs_once_per_vp)
{
	static const char *const k1[] = { "PEMS_THREADS=1", "PEMS_MU=1M", "PEMS_MEM=24M", NULL };
	static const unsigned ps[] = { 1, 3, 64, 1000 };
	struct prog_run pr = { .bin = "count" };
	struct child_result cr;
	char arg[16], want[64];
	unsigned i, j, n, runs = 0;

	for (i = 0; i < 3 * sizeof(ps) / sizeof(ps[0]); i++) {
		unsigned P = ps[i % 4], mode = i / 4;
		const char *s;

		if (mode == 2 && (P > 64 || !have_mpirun()))
			continue;
		snprintf(arg, sizeof(arg), "%u", P);
		pr.args[0] = arg;
		for (j = 0; k1[j]; j++)
			pr.env[j] = mode == 1 ? k1[j] : NULL;
		pr.mpi_np = mode == 2 ? 2 : 0;
		if (mode == 2 && P < 2)
			continue;
		run_prog(&pr, &cr);
		ck_assert_msg(cr.exited && cr.status == 5, "count %u (mode %u): exit %d; %s", P, mode,
			      cr.status, cr.err);
		for (n = 0, s = cr.out; (s = strstr(s, "before\n")); s++)
			n++;
		ck_assert_msg(n == P, "count %u (mode %u): \"before\" printed %u times:\n%.300s", P,
			      mode, n, cr.out);
		snprintf(want, sizeof(want), "after: p=%u\n", P);
		ck_assert_msg(strstr(cr.out, want), "count %u: %s", P, cr.out);
		runs++;
	}
	ck_assert_uint_ge(runs, 8);
}
END_TEST

/* Sharing the globals (the opt-out) breaks the per-process-globals
 * programs: what the default gives them is what they need */
START_TEST(shared_globals_break_per_process_programs)
{
	static const char *const shared[] = { "PEMS_GLOBALS=shared", NULL };
	struct prog_run pr;
	struct child_result cr;
	char ps[16], want[512];

	prog_setup(GLOBALS, 4, "globals", &pr, ps, want, sizeof(want));
	pr.env[0] = shared[0];
	run_prog(&pr, &cr);
	ck_assert_msg(strcmp(cr.out, want), "globals passed with PEMS_GLOBALS=shared: %s", cr.out);
}
END_TEST

/* ---- kill -9 and resume ---- */

/* The superstep of the checkpoint in @dir, or -1. */
static long ckpt_superstep(const char *dir)
{
	char path[PATH_MAX + 64], line[256];
	long step = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/manifest", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "superstep %ld", &step) == 1)
			break;
	fclose(f);
	return step;
}

struct resume_run {
	struct prog_run pr;
	const char *ckdir;
};

static void child_resume(void *arg)
{
	const struct resume_run *rr = arg;
	const char *run = getenv("PEMS_RUN");
	struct prog_run pr = rr->pr;
	char bin[PATH_MAX];

	snprintf(bin, sizeof(bin), "%s", run && *run ? run : "build/pems-run");
	pr.args[0] = "resume";
	pr.args[1] = rr->ckdir;
	pr.args[2] = NULL;
	/* child_exec runs bindir/bin: give it pems-run's absolute path */
	snprintf(bindir, sizeof(bindir), "%s", "/");
	pr.bin = bin;
	child_exec(&pr);
}

/* Start rules.c at @P checkpointing every superstep, SIGKILL it once a
 * checkpoint of superstep 4 or later exists, resume it with pems-run
 * resume and expect the uninterrupted result (its globals come back
 * from the checkpointed contexts); @spill: the least budget. */
static void rules_killed_and_resumed(unsigned P, bool spill)
{
	static char mem[64], ck[PATH_MAX + 32], ckenv[PATH_MAX + 64], json[PATH_MAX + 32];
	struct resume_run rr;
	struct child_result cr;
	char ps[16], want[256], saved[PATH_MAX], stats[4096];
	struct pems_config pc;
	pid_t pid;
	int st, i;
	FILE *f;
	size_t n;

	snprintf(ck, sizeof(ck), "%s/ck.rules.%u.%d", spmd_tmp(), P, spill);
	snprintf(ckenv, sizeof(ckenv), "PEMS_CHECKPOINT_DIR=%s", ck);
	snprintf(json, sizeof(json), "PEMS_STATS_JSON=%s/rules.json", spmd_tmp());
	pems_config_init(&pc);
	pc.procs = P;
	pc.threads = 2;
	pc.mu = MiB;
	pc.stack = 256 * KiB;
	snprintf(mem, sizeof(mem), "PEMS_MEM=%zuK", spill ? spmd_min_budget(&pc) >> 10 : 256 * 1024);
	memset(&rr, 0, sizeof(rr));
	rr.pr.bin = "rules";
	snprintf(ps, sizeof(ps), "%u", P);
	rr.pr.args[0] = ps;
	rr.pr.args[1] = "30";	/* ms per superstep */
	rr.pr.args[2] = "1";	/* one round: ~20 supersteps */
	rr.pr.env[0] = "PEMS_THREADS=2";
	rr.pr.env[1] = "PEMS_MU=1M";
	rr.pr.env[2] = mem;
	rr.pr.env[3] = ckenv;
	rr.pr.env[4] = "PEMS_CHECKPOINT_EVERY=1";
	rr.pr.env[5] = json;
	rr.ckdir = ck;
	snprintf(want, sizeof(want), "rules: p=%u rounds=1 ok\n", P);
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		child_exec(&rr.pr);
	}
	for (i = 0; i < 6000 && ckpt_superstep(ck) < 4; i++)
		usleep(10000);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	ck_assert_msg(ckpt_superstep(ck) >= 4, "rules %u: no checkpoint after %d s", P, i / 100);
	memcpy(saved, bindir, sizeof(saved));
	run_child(child_resume, &rr, 600, &cr);
	memcpy(bindir, saved, sizeof(bindir));
	ck_assert_msg(cr.exited && cr.status == 0, "resume of rules %u: exit %d; %s", P, cr.status,
		      cr.err);
	ck_assert_msg(!strcmp(cr.out, want), "resumed rules %u%s: %s", P, spill ? " (spilling)" : "",
		      cr.out);
	if (!spill)
		return;
	f = fopen(json + strlen("PEMS_STATS_JSON="), "r");
	ck_assert_msg(f, "no statistics of the resumed run");
	n = fread(stats, 1, sizeof(stats) - 1, f);
	fclose(f);
	stats[n] = 0;
	ck_assert_msg(!strstr(stats, "\"ctx_written\": 0,"), "the resumed run did not spill: %s", stats);
}

START_TEST(rules_after_kill_and_resume)
{
	rules_killed_and_resumed(_i ? 64 : 4, false);
	rules_killed_and_resumed(_i ? 64 : 4, true);
}
END_TEST

/* ---- the int dialect ---- */

/* A 1998 program built without the switch does not compile (the
 * switch is what makes it build cleanly) */
START_TEST(int_program_needs_the_switch)
{
	char cmd[1024];
	int rc;

	snprintf(cmd, sizeof(cmd),
		 "cc -std=gnu11 -Wall -Wextra -Werror=incompatible-pointer-types -Iinclude -c -o /dev/null tests/bsplib/match98.c 2>/dev/null");
	rc = system(cmd);
	ck_assert_msg(rc != 0, "match98.c compiled without -DBSPLIB_1998");
	snprintf(cmd, sizeof(cmd),
		 "cc -std=gnu11 -Wall -Wextra -Werror -Werror=incompatible-pointer-types -DBSPLIB_1998 -Iinclude -c -o /dev/null tests/bsplib/match98.c");
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* negative sizes abort with the call's name */
START_TEST(int_dialect_negative_size_aborts)
{
	static const char *const cases[][2] = {
		{ "put", "bsp_put: nbytes is negative (-1)\n" },
		{ "send", "bsp_send: payload_nbytes is negative (-8)\n" },
		{ "tagsize", "bsp_set_tagsize: the tag size is negative (-4)\n" },
	};
	struct prog_run pr = { .bin = "abuse98" };
	struct child_result cr;
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pr.args[0] = cases[i][0];
		run_prog(&pr, &cr);
		ck_assert_msg(cr.exited && cr.status == 1, "%s: exit %d", cases[i][0], cr.status);
		ck_assert_str_eq(cr.err, cases[i][1]);
	}
}
END_TEST

int main(void)
{
	const char *b = getenv("PEMS_BUILD");
	Suite *s = suite_create("bsplib");
	TCase *tc;
	SRunner *sr;
	int failed;

	snprintf(bindir, sizeof(bindir), "%s/tests/bsplib", b && *b ? b : "build");
	if (access(bindir, X_OK)) {
		printf("skip: %s not built\n", bindir);
		return 77;
	}
	tc = tcase_create("ask_for_p_without_environment");
	tcase_set_timeout(tc, 1200);
	tcase_add_loop_test(tc, ask_for_p_without_environment, 0, NPROGS);
	suite_add_tcase(s, tc);
	tc = tcase_create("threads_and_spilling");
	tcase_set_timeout(tc, 1200);
	tcase_add_loop_test(tc, threads_and_spilling, 0, NPROGS);
	suite_add_tcase(s, tc);
	tc = tcase_create("under_mpirun_two_ranks");
	tcase_set_timeout(tc, 1200);
	tcase_add_loop_test(tc, under_mpirun_two_ranks, 0, NPROGS);
	suite_add_tcase(s, tc);
	tc = tcase_create("machine_size");
	tcase_add_test(tc, machine_size_rule);
	suite_add_tcase(s, tc);
	tc = tcase_create("spmd_start_up");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, code_before_bsp_begin_runs_once_per_vp);
	suite_add_tcase(s, tc);
	tc = tcase_create("private_globals");
	tcase_add_test(tc, shared_globals_break_per_process_programs);
	suite_add_tcase(s, tc);
	tc = tcase_create("rules_after_kill_and_resume");
	tcase_set_timeout(tc, 1200);
	tcase_add_loop_test(tc, rules_after_kill_and_resume, 0, 2);
	suite_add_tcase(s, tc);
	tc = tcase_create("int_dialect");
	tcase_add_test(tc, int_program_needs_the_switch);
	tcase_add_test(tc, int_dialect_negative_size_aborts);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
