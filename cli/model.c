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
	pems_model_print_table(stdout, &pr, ms);
	pems_model_print_summary(stdout, &a->job, m, &L, &pr, ms);
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

		struct pems_model_projection pj;

		if (!(n >= 1))
			return cli_usage("%s: --nodes %s: not a node count", a.cmd, tok);
		pems_model_project(&a.job, &m, &a.net, n, a.per_node, &pj);
		if (pj.fits && !base)	/* one node's time per node-share */
			base = a.per_node ? pj.pred.total / n : pj.pred.total * n;
		if (pj.fits)
			pj.speedup = a.per_node ? base * n / pj.pred.total : base / pj.pred.total;
		pems_model_print_projection(stdout, &pj);
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
