/*
 * model.c - `pems-run model`: the front of the cost model (model/,
 * pems_model.h).  calibrate measures this machine into a parameter file;
 * predict prints a job's time superstep by superstep, next to a real
 * run's with --stats-json; project prints the same job on 1..1000 nodes
 * like this machine.  Options and tables here; the equations and the
 * measurements in the library.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "pems_model.h"

#define MIB (1024.0 * 1024.0)

enum {
	OPT_PARAMS = CLI_OPT_FIRST_LOCAL, OPT_SIZE, OPT_PMPI, OPT_GROUPS,
	OPT_LINE, OPT_DIM, OPT_EPOCHS, OPT_BATCH, OPT_LSTEPS, OPT_SYNC, OPT_SHARDS,
	OPT_JSON, OPT_NODES, OPT_GBIT, OPT_LAT, OPT_MSGO, OPT_PERNODE, OPT_OUT,
	OPT_KSIZE, OPT_BSPCSV, OPT_BASE, OPT_RBW, OPT_WBW, OPT_KRUNS, OPT_NTERMS,
};

struct margs {
	const char *cmd;
	const char *params, *json, *out, *tmp, *bspcsv, *base;
	struct pems_model_job job;
	bool have_size, per_node;
	char nodes[256];
	struct pems_model_net net;	/* project */
	double ksize;			/* calibrate: kernel input bytes */
	unsigned kruns;			/* calibrate: runs of each kernel (median) */
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

/* a whole-number option into *@out */
static int uint_opt(const char *cmd, const char *name, const char *arg, unsigned *out)
{
	double x = 0;
	int rc = num_opt(cmd, name, arg, false, &x);

	*out = (unsigned)x;
	return rc;
}

/* the job's options */
static int job_option(struct margs *a, int c, const char *arg)
{
	struct pems_cost_job *j = &a->job.cost;

	switch (c) {
	case CLI_OPT_FORMAT:
		if (strcmp(arg, "u64") && strcmp(arg, "rec100") && strcmp(arg, "kv") &&
		    strcmp(arg, "dense"))
			return cli_usage("%s: --format %s: the model knows u64, rec100 (sort), kv (aggregate) and dense (sgd)",
					 a->cmd, arg);
		j->fmt = strcmp(arg, "rec100") ? PEMS_FMT_U64 : PEMS_FMT_REC100;
		return 0;
	case CLI_OPT_MEM: return num_opt(a->cmd, "mem", arg, true, &a->job.mem);
	case CLI_OPT_PROCS: return uint_opt(a->cmd, "procs", arg, &j->v);
	case CLI_OPT_THREADS: return uint_opt(a->cmd, "threads", arg, &a->job.k);
	case OPT_SIZE:
		a->have_size = true;
		return num_opt(a->cmd, "size", arg, true, &j->bytes);
	case OPT_PERNODE:
		a->have_size = a->per_node = true;
		return num_opt(a->cmd, "size-per-node", arg, true, &j->bytes);
	case OPT_PMPI: return uint_opt(a->cmd, "procs-mpi", arg, &j->p);
	case OPT_GROUPS: return num_opt(a->cmd, "groups", arg, true, &j->groups);
	case OPT_LINE: return num_opt(a->cmd, "line-bytes", arg, false, &j->line);
	case OPT_DIM: return uint_opt(a->cmd, "dim", arg, &j->dim);
	case OPT_EPOCHS: return uint_opt(a->cmd, "epochs", arg, &j->epochs);
	case OPT_BATCH: return num_opt(a->cmd, "batch", arg, true, &j->batch);
	case OPT_LSTEPS: return uint_opt(a->cmd, "local-steps", arg, &j->local_steps);
	case OPT_SHARDS: return uint_opt(a->cmd, "shards", arg, &j->shards);
	case OPT_SYNC:
		if (strcmp(arg, "bsp") && strcmp(arg, "local"))
			return cli_usage("%s: --sync %s: use bsp or local", a->cmd, arg);
		j->sync_bsp = !strcmp(arg, "bsp");
		return 0;
	}
	return -1;
}

static int m_option(void *ctx, int c, const char *arg)
{
	struct margs *a = ctx;
	int rc = job_option(a, c, arg);

	if (rc >= 0)
		return rc;
	switch (c) {
	case CLI_OPT_TMP: a->tmp = arg; return 0;
	case OPT_PARAMS: a->params = arg; return 0;
	case OPT_OUT: a->out = arg; return 0;
	case OPT_BSPCSV: a->bspcsv = arg; return 0;
	case OPT_BASE: a->base = arg; return 0;
	case OPT_JSON: a->json = arg; return 0;
	case OPT_KSIZE: return num_opt(a->cmd, "kernel-size", arg, true, &a->ksize);
	case OPT_NODES: snprintf(a->nodes, sizeof(a->nodes), "%s", arg); return 0;
	case OPT_GBIT: return num_opt(a->cmd, "net-gbit", arg, false, &a->net.gbit);
	case OPT_LAT: return num_opt(a->cmd, "net-latency", arg, false, &a->net.latency);
	case OPT_MSGO: return num_opt(a->cmd, "msg-overhead", arg, false, &a->net.msg_overhead);
	case OPT_RBW: return num_opt(a->cmd, "read-bw", arg, true, &a->net.read_bw);
	case OPT_WBW: return num_opt(a->cmd, "write-bw", arg, true, &a->net.write_bw);
	case OPT_KRUNS: return uint_opt(a->cmd, "kernel-runs", arg, &a->kruns);
	case OPT_NTERMS:
		rc = uint_opt(a->cmd, "node-terms", arg, &a->net.node_terms);
		if (!rc && !(a->net.node_terms >= 1 && a->net.node_terms <= PEMS_MODEL_MAXP))
			return cli_usage("%s: --node-terms %s: a rank count from 1 to %d", a->cmd, arg,
					 PEMS_MODEL_MAXP);
		return rc;
	}
	return cli_usage("%s: internal error: option %d", a->cmd, c);
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

/* @argv[0] is the subcommand (calibrate, predict, project) */
static int parse(int argc, char **argv, struct margs *a)
{
	static const char *const help[] = { model_help, NULL };

	optind = 0;	/* full re-initialisation of getopt */
	return cli_getopt(argc, argv, a->cmd, m_longopts, help, m_option, a);
}

/* predict and project: options, then exactly one ALGO.  @argv[0] is the
 * subcommand.  Returns -1 to go on, else the exit status to return
 * (0 after --help). */
static int parse_algo(int argc, char **argv, struct margs *a)
{
	int rc = parse(argc - 1, argv + 1, a);
	const char *name;

	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	argc--;
	argv++;
	name = optind < argc ? argv[optind] : NULL;
	if (!name)
		return cli_usage("%s: expected ALGO (sort, aggregate or sgd)", a->cmd);
	if (pems_model_algo_parse(name, &a->job.algo))
		return cli_usage("%s: unknown ALGO '%s'; use sort, aggregate or sgd", a->cmd, name);
	if (optind + 1 != argc)
		return cli_usage("%s: expected one ALGO; see 'pems-run model --help'", a->cmd);
	return -1;
}

static int load_params(const char *path, struct pems_model_params *m)
{
	char err[512];
	int rc = pems_model_load(path, m, err, sizeof(err));

	if (rc == -EINVAL)
		cli_error("model: %s", err);
	else if (rc)
		cli_error("model: cannot read parameters '%s': %s; run 'pems-run model calibrate' first",
			  path, strerror(-rc));
	return rc ? CLI_EXIT_FAIL : 0;
}

/* ---- predict ---- */

static void print_row(const struct pems_model_time *t, const struct pems_model_run *ms)
{
	double pred = t->t * t->reps, r = t->reps;
	char idx[32];

	if (t->reps > 1)
		snprintf(idx, sizeof(idx), "%u-%u", t->first, t->first + (unsigned)t->reps - 1);
	else
		snprintf(idx, sizeof(idx), "%u", t->first);
	printf("%-9s %-15s %8.3f %8.3f %8.3f %8.3f %8.3f %-6s %9.3f", idx, t->name,
	       t->disk * r, t->cpu * r, t->chain * r, t->xfer * r,
	       (t->t - fmax(fmax(t->disk, t->xfer), fmax(t->cpu, t->chain))) * r, t->bound, pred);
	if (ms && ms->nsteps >= t->first + t->reps) {
		double x = 0;
		unsigned i;

		for (i = t->first; i < t->first + (unsigned)t->reps; i++)
			x += ms->steps[i];
		printf(" %9.3f %6.2f", x, x > 0 ? pred / x : 0);
	}
	putchar('\n');
}

static void print_table(const struct pems_model_prediction *pr, const struct pems_model_run *ms)
{
	unsigned i;

	printf("%-9s %-15s %8s %8s %8s %8s %8s %-6s %9s%s\n", "superstep", "phase", "disk_s",
	       "cpu_s", "chain_s", "net_s", "sync_s", "bound", "predicted",
	       ms && ms->nsteps ? "  measured  ratio" : "");
	for (i = 0; i < pr->n; i++)
		print_row(&pr->s[i], ms);
	printf("%-9s %-15s %53s %9.3f", "", "setup+flush", "", pr->setup);
	if (ms && ms->nsteps) {
		double x = ms->secs;

		for (i = 0; i < ms->nsteps; i++)
			x -= ms->steps[i];
		printf(" %9.3f", x);
	}
	printf("\n%-9s %-15s %53s %9.3f", "", "total", "", pr->total);
	if (ms)
		printf(" %9.3f %6.2f", ms->secs, pr->total / ms->secs);
	putchar('\n');
}

/* the job's size, p and budget from the run unless given; then planned */
static int job_finish(struct margs *a, const struct pems_model_params *m,
		      const struct pems_model_run *ms)
{
	struct pems_cost_job *j = &a->job.cost;
	char b[32], mm[32];

	if (ms) {
		if (!a->have_size)
			j->bytes = a->job.algo == PEMS_MODEL_SGD ?
				   ms->bytes / (j->epochs ? j->epochs : 1) : ms->bytes;
		if (!j->p && ms->p)
			j->p = (unsigned)ms->p;
		if (ms->mem)
			a->job.mem = ms->mem;
	}
	if (!j->p)
		j->p = 1;
	if (!(j->bytes > 0))
		return cli_usage("%s: --size is required (or --stats-json of a run)", a->cmd);
	if (a->job.algo == PEMS_MODEL_SGD &&
	    (!j->dim || !j->shards || !j->batch || !j->local_steps || !j->epochs))
		return cli_usage("%s: --dim, --shards, --batch, --local-steps and --epochs must be positive",
				 a->cmd);
	if (a->job.algo == PEMS_MODEL_AGGREGATE && !(j->groups >= 1))
		return cli_usage("%s: --groups must be at least 1", a->cmd);
	if (!pems_model_plan(&a->job, (unsigned)m->cores))
		return 0;
	cli_error("%s: --mem %s cannot hold %s of %s input (the planner finds no v)", a->cmd,
		  cli_human((uint64_t)a->job.mem, mm, sizeof(mm)),
		  cli_human((uint64_t)j->bytes, b, sizeof(b)), pems_model_algo_name(a->job.algo));
	return CLI_EXIT_FAIL;
}

static void print_head(const struct margs *a, const struct pems_model_params *m,
		       const struct pems_model_run *ms)
{
	const struct pems_model_job *j = &a->job;
	char b[32], mm[32];

	printf("model: %s%s %s, p=%u v=%u k=%u M=%s chunk=%.0fK; parameters %s (%s)\n",
	       pems_model_algo_name(j->algo),
	       j->algo == PEMS_MODEL_SORT ? (j->cost.fmt == PEMS_FMT_REC100 ? " rec100" : " u64") : "",
	       cli_human((uint64_t)j->cost.bytes, b, sizeof(b)), j->cost.p, j->cost.v, j->k,
	       cli_human((uint64_t)j->mem, mm, sizeof(mm)), j->chunk / 1024, a->params, m->date);
	if (ms && ms->v)
		printf("the run: v=%.0f k=%.0f (%s the planner's)\n", ms->v, ms->k,
		       ms->v == j->cost.v && ms->k == j->k ? "as" : "NOT as");
}

static void print_summary(const struct margs *a, const struct pems_model_params *m,
			  const struct pems_model_layout *L, const struct pems_model_prediction *pr,
			  const struct pems_model_run *ms)
{
	const struct pems_model_job *j = &a->job;

	printf("work: kernels %.2f core-s, disk traffic %.3f GB", pr->work_cpu, pr->work_io / 1e9);
	if (ms)
		printf("; measured: CPU %.2f s (rank 0 x p, all threads), disk traffic %.3f GB",
		       ms->cpu, ms->io / 1e9);
	printf("\nCPU share: the workers get %.2f cores (load %.1f threads, polling %.2f core per rank",
	       pr->share, m->load, j->cost.p > 1 && !(L->cpu_f > 0) ? L->poll : 0);
	if (L->cpu_f > 0)
		printf("; kernel work x %.2f at p = %u", L->cpu_f, j->cost.p);
	if (L->lbusy > 0)
		printf("; repeated supersteps pay lbusy %.2f ms", L->lbusy * 1e3);
	putchar(')');
	if (ms)
		printf("; the run used %.2f cores (CPU s / wall s, every thread)", ms->cpu / ms->secs);
	printf("\nmodel=%s bytes=%.0f p=%u v=%u k=%u predicted_secs=%.4f pred_cpu=%.3f pred_io=%.0f pred_share=%.3f",
	       pems_model_algo_name(j->algo), j->cost.bytes, j->cost.p, j->cost.v, j->k, pr->total,
	       pr->work_cpu, pr->work_io, pr->share);
	if (ms)
		printf(" measured_secs=%.4f meas_cpu=%.3f meas_io=%.0f meas_share=%.3f ratio=%.4f"
		       " run_v=%.0f run_k=%.0f", ms->secs, ms->cpu, ms->io, ms->cpu / ms->secs,
		       pr->total / ms->secs, ms->v, ms->k);
	putchar('\n');
}

static int predict_job(struct margs *a, const struct pems_model_params *m,
		       const struct pems_model_run *ms)
{
	struct pems_model_prediction pr;
	struct pems_model_layout L;
	int rc = job_finish(a, m, ms);

	if (rc)
		return rc;
	if (pems_model_layout_here(&L, m, &a->job))
		return cli_usage("%s: %s has no 'bsp %u ...' line; calibrate with --bsp-params from bench/bsp-params.sh",
				 a->cmd, a->params, a->job.cost.p);
	print_head(a, m, ms);
	pems_model_predict(&a->job, m, &L, &pr);
	print_table(&pr, ms);
	print_summary(a, m, &L, &pr, ms);
	return 0;
}

static int cmd_predict(int argc, char **argv)
{
	struct margs a = { .cmd = "model predict", .params = "pems-model.params" };
	struct pems_model_params m;
	struct pems_model_run ms;
	char err[512];
	int rc;

	pems_model_job_init(&a.job);
	rc = parse_algo(argc, argv, &a);
	if (rc >= 0)
		return rc;
	if ((rc = load_params(a.params, &m)) != 0)
		return rc;
	if (a.json && pems_model_run_load(a.json, &ms, err, sizeof(err))) {
		cli_error("model: %s", err);
		return CLI_EXIT_FAIL;
	}
	rc = predict_job(&a, &m, a.json ? &ms : NULL);
	if (a.json)
		pems_model_run_free(&ms);
	return rc;
}

/* ---- project: one rank per node, nodes like this machine ---- */

/* the superstep that takes longest (the first of equals) */
static unsigned worst_step(const struct pems_model_prediction *pr)
{
	unsigned i, worst = 0;
	double wt = -1;

	for (i = 0; i < pr->n; i++)
		if (pr->s[i].t * pr->s[i].reps > wt) {
			wt = pr->s[i].t * pr->s[i].reps;
			worst = i;
		}
	return worst;
}

/* one node count; *base: one node's time per node-share, set by the first */
static int project_nodes(const struct margs *a, const struct pems_model_params *m, double n,
			 double *base)
{
	struct pems_model_job j = a->job;
	struct pems_model_prediction pr;
	struct pems_model_layout L;
	const struct pems_model_time *w;
	unsigned tp = n > 1 ? a->net.node_terms : 1;
	double sp;

	j.cost.p = (unsigned)n;
	if (j.algo == PEMS_MODEL_SGD && j.cost.shards < j.cost.p * (j.k ? j.k : m->cores))
		j.cost.shards = j.cost.p * (j.k ? j.k : (unsigned)m->cores);	/* v = S: every worker */
	j.cost.bytes = a->per_node ? a->job.cost.bytes * n : a->job.cost.bytes;
	if (pems_model_plan(&j, (unsigned)m->cores)) {
		printf("%-6.0f %8s %10.3g %7s %9s %10s %10s %8s  does not fit: --mem %.0f MiB cannot hold v's tables\n",
		       n, "-", j.cost.bytes, "-", "-", "-", "-", "-", j.mem / MIB);
		printf("projection=%s nodes=%.0f fits=0\n", pems_model_algo_name(j.algo), n);
		return 0;
	}
	pems_model_layout_nodes(&L, m, &j, &a->net, n);
	pems_model_predict(&j, m, &L, &pr);
	w = &pr.s[worst_step(&pr)];
	if (!*base)
		*base = a->per_node ? pr.total / n : pr.total * n;
	sp = a->per_node ? *base * n / pr.total : *base / pr.total;
	printf("%-6.0f %8u %10.3g %6.0fK %9.3f %10.3f %10.1f %7.0f%%  %s %.3f s; p=%u %.3f %.3f %.3f\n",
	       n, j.cost.v, j.cost.bytes, j.chunk / 1024, L.l * 1e3, pr.total, sp, 100 * sp / n,
	       w->name, w->t * w->reps, tp, L.ks > 0 ? L.ks : 1, L.ovl, w->cpu_f);
	printf("projection=%s nodes=%.0f bytes=%.0f v=%u predicted_secs=%.4f speedup=%.2f fits=1"
	       " terms_p=%u kscale=%.4f overlap=%.4f setup=%.4f\n", pems_model_algo_name(j.algo), n,
	       j.cost.bytes, j.cost.v, pr.total, sp, tp, L.ks > 0 ? L.ks : 1, L.ovl, L.setup);
	return 0;
}

static int cmd_project(int argc, char **argv)
{
	struct margs a = { .cmd = "model project", .params = "pems-model.params",
			   .net = { .gbit = 10, .latency = 20e-6, .msg_overhead = 2e-6,
				    .node_terms = 1 } };
	struct pems_model_params m;
	double base = 0;
	char *tok, *save = NULL;
	int rc;

	pems_model_job_init(&a.job);
	snprintf(a.nodes, sizeof(a.nodes), "1,10,100,1000");
	rc = parse_algo(argc, argv, &a);
	if (rc >= 0)
		return rc;
	if (!a.have_size)
		return cli_usage("%s: --size or --size-per-node is required", a.cmd);
	if (!(a.net.gbit > 0))
		return cli_usage("%s: --net-gbit must be positive", a.cmd);
	if ((rc = load_params(a.params, &m)) != 0)
		return rc;
	printf("%-6s %8s %10s %7s %9s %10s %10s %8s  %s\n", "nodes", "v", "bytes", "chunk",
	       "l_ms", "secs", "speedup", "eff", "largest superstep; terms (p here, kscale, overlap, CPU factor)");
	for (tok = strtok_r(a.nodes, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		double n = strtod(tok, NULL);

		if (!(n >= 1))
			return cli_usage("%s: --nodes %s: not a node count", a.cmd, tok);
		project_nodes(&a, &m, n, &base);
	}
	return 0;
}

/* ---- calibrate ---- */

static int cmd_calibrate(int argc, char **argv)
{
	struct margs a = { .cmd = "model calibrate", .out = "pems-model.params",
			   .ksize = 1024 * MIB, .kruns = 3 };
	struct pems_model_cal c = { .runs = 3 };
	struct pems_model_params m;
	int rc;

	pems_model_job_init(&a.job);
	a.job.cost.bytes = 1024 * MIB;
	rc = parse(argc - 1, argv + 1, &a);
	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	if (optind != argc - 1)
		return cli_usage("%s: unexpected argument '%s'", a.cmd, argv[optind + 1]);
	if (pems_nranks() > 1)
		return cli_usage("%s: run it without mpirun; g and l of p > 1 come from --bsp-params",
				 a.cmd);
	if (a.base && (rc = load_params(a.base, &m)) != 0)
		return rc;
	c.base = a.base != NULL;
	c.k = a.job.k;
	c.dir = a.tmp ? a.tmp : (getenv("TMPDIR") ? getenv("TMPDIR") : ".");
	c.size = a.job.cost.bytes;
	c.ksize = a.ksize;
	c.runs = a.kruns;
	c.bsp_csv = a.bspcsv;
	if ((rc = pems_model_calibrate(&c, &m)) != 0) {
		cli_error("%s: %s", a.cmd, c.err);
		return CLI_EXIT_FAIL;
	}
	if ((rc = pems_model_save(a.out, &m)) != 0) {
		cli_error("model: cannot write '%s': %s", a.out, strerror(-rc));
		return CLI_EXIT_FAIL;
	}
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
