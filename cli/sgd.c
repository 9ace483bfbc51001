/*
 * sgd.c - `pems-run sgd`: the front of pems_sgd().  Parses and checks
 * the options, configures the runtime, trains and reports.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static const char sgd_help_head[] =
	"Usage: pems-run sgd --model linear|logistic --data FILE --format dense|libsvm\n"
	"                    --out MODEL [options]\n"
	"Data-parallel SGD over training data larger than memory: each epoch\n"
	"streams FILE once; the model is all-reduced across the VPs.\n"
	"\n"
	"  --model M          linear (squared loss) or logistic (log loss; labels\n"
	"                     > 0 are positive, others negative: +1/-1 or 1/0)\n"
	"  --data FILE        training data\n"
	"  --format F         dense: optional 16-byte header \"PEMSDENS\", u32 dim,\n"
	"                     u32 0, then rows of 1 + dim little-endian float32\n"
	"                     (label, features); libsvm: 'label idx:val ...' lines,\n"
	"                     idx 1..dim ('#' starts a comment)\n"
	"  --dim D            features (libsvm: required; dense: needed without header)\n"
	"  --test FILE        test data (same format): evaluated after every epoch\n"
	"  --epochs E         passes over the data (default 1)\n"
	"  --sync S           bsp: gradients all-reduced every mini-batch step (one\n"
	"                     superstep per step); local (default): H local steps per\n"
	"                     shard, then the models are averaged\n"
	"  --local-steps H    steps between averages with --sync local (default 64)\n"
	"  --batch B          rows per mini-batch of one shard (default 64); with\n"
	"                     --sync bsp a step uses S*B rows\n"
	"  --lr R             learning rate (default 0.05)\n"
	"  --lr-schedule K    const (default), sqrt (R/sqrt(1+t), t = step) or\n"
	"                     step (R * decay^floor(epoch/every))\n"
	"  --lr-decay F       step schedule factor (default 0.5)\n"
	"  --lr-every E       step schedule period in epochs (default 1)\n"
	"  --l2 L             L2 regularisation: + L/2 |w|^2, bias excluded (default 0)\n"
	"  --shards S         logical data shards (default 16); results depend on S\n"
	"                     and the seed only, never on --procs, --threads, ranks\n"
	"  --seed N           initial weights ~ 0.01*N(0,1) from N; 0: zeros (default 1)\n"
	"  --out MODEL        model file: 'pems-sgd-model 1', 'model M', 'dim D',\n"
	"                     'bias B', then D lines 'j w_j'\n"
	"  --loss-log CSV     one line per superstep: superstep,kind (train|eval),\n"
	"                     epoch,step,rows,train_loss,test_loss,test_accuracy,comm_bytes\n"
	"                     (comm_bytes: all-reduce bytes contributed by the VPs)\n"
	"  -h, --help         show this help\n"
	"\n";
static const char sgd_help_tail[] =
	"\n"
	"Losses: linear reports the mean squared error, logistic the mean log loss\n"
	"(without the L2 term); train loss is measured on each batch before its step.\n"
	"Exit status: 0 ok, 1 runtime failure (bad data, divergence), 2 usage error.\n";

enum {
	OPT_MODEL = CLI_OPT_FIRST_LOCAL, OPT_DATA, OPT_DIM, OPT_TEST, OPT_EPOCHS,
	OPT_SYNC, OPT_H, OPT_BATCH, OPT_LR, OPT_SCHED, OPT_DECAY, OPT_EVERY,
	OPT_L2, OPT_SHARDS, OPT_SEED, OPT_OUT, OPT_LOG,
};

struct sgd_args {
	struct cli_runtime rt;
	struct pems_sgd_job job;
	bool have_model, have_format;
};

static int num(const char *opt, const char *arg, double lo, double *out)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || *end || !isfinite(v) || v < lo)
		return cli_usage("sgd: --%s %s: give a number >= %g", opt, arg, lo);
	*out = v;
	return 0;
}

static int count(const char *opt, const char *arg, uint64_t max, uint64_t *out)
{
	if (cli_parse_u64(arg, true, out) || *out < 1 || *out > max)
		return cli_usage("sgd: --%s %s: give a whole number from 1 to %llu", opt, arg,
				 (unsigned long long)max);
	return 0;
}

static int sgd_option(void *ctx, int c, const char *arg)
{
	struct sgd_args *a = ctx;
	struct pems_sgd_job *j = &a->job;
	uint64_t v;
	int rc;

	switch (c) {
	case OPT_MODEL:
		if (strcmp(arg, "linear") && strcmp(arg, "logistic"))
			return cli_usage("sgd: --model %s: use linear or logistic", arg);
		j->model = strcmp(arg, "linear") ? PEMS_SGD_LOGISTIC : PEMS_SGD_LINEAR;
		a->have_model = true;
		return 0;
	case CLI_OPT_FORMAT:
		if (strcmp(arg, "dense") && strcmp(arg, "libsvm"))
			return cli_usage("sgd: --format %s: use dense or libsvm", arg);
		j->format = strcmp(arg, "dense") ? PEMS_SGD_LIBSVM : PEMS_SGD_DENSE;
		a->have_format = true;
		return 0;
	case OPT_DATA: j->data = arg; return 0;
	case OPT_TEST: j->test = arg; return 0;
	case OPT_OUT: j->out = arg; return 0;
	case OPT_LOG: j->loss_log = arg; return 0;
	case OPT_DIM:
		rc = count("dim", arg, 1u << 24, &v);
		j->dim = (uint32_t)v;
		return rc;
	case OPT_EPOCHS:
		rc = count("epochs", arg, 1u << 20, &v);
		j->epochs = (unsigned)v;
		return rc;
	case OPT_H:
		rc = count("local-steps", arg, 1u << 24, &v);
		j->local_steps = (unsigned)v;
		return rc;
	case OPT_EVERY:
		rc = count("lr-every", arg, 1u << 20, &v);
		j->lr_step = (unsigned)v;
		return rc;
	case OPT_SHARDS:
		rc = count("shards", arg, PEMS_SGD_MAX_SHARDS, &v);
		j->shards = (unsigned)v;
		return rc;
	case OPT_BATCH:
		return count("batch", arg, 1ull << 32, &j->batch);
	case OPT_SEED:
		if (cli_parse_u64(arg, false, &j->seed))
			return cli_usage("sgd: --seed %s: not a 64-bit number", arg);
		return 0;
	case OPT_SYNC:
		if (strcmp(arg, "bsp") && strcmp(arg, "local"))
			return cli_usage("sgd: --sync %s: use bsp or local", arg);
		j->sync = strcmp(arg, "bsp") ? PEMS_SGD_SYNC_LOCAL : PEMS_SGD_SYNC_BSP;
		return 0;
	case OPT_SCHED:
		if (!strcmp(arg, "const"))
			j->schedule = PEMS_SGD_LR_CONST;
		else if (!strcmp(arg, "sqrt"))
			j->schedule = PEMS_SGD_LR_SQRT;
		else if (!strcmp(arg, "step"))
			j->schedule = PEMS_SGD_LR_STEP;
		else
			return cli_usage("sgd: --lr-schedule %s: use const, sqrt or step", arg);
		return 0;
	case OPT_LR:
		rc = num("lr", arg, 0, &j->lr);
		if (!rc && !(j->lr > 0))
			return cli_usage("sgd: --lr %s: give a positive learning rate", arg);
		return rc;
	case OPT_DECAY: return num("lr-decay", arg, 0, &j->lr_decay);
	case OPT_L2: return num("l2", arg, 0, &j->l2);
	default:
		return cli_runtime_option(&a->rt, "sgd", c, arg);
	}
}

static int sgd_parse(int argc, char **argv, struct sgd_args *a)
{
	static const struct option longopts[] = {
		{ "model", required_argument, NULL, OPT_MODEL },
		{ "data", required_argument, NULL, OPT_DATA },
		{ "format", required_argument, NULL, CLI_OPT_FORMAT },
		{ "dim", required_argument, NULL, OPT_DIM },
		{ "test", required_argument, NULL, OPT_TEST },
		{ "epochs", required_argument, NULL, OPT_EPOCHS },
		{ "sync", required_argument, NULL, OPT_SYNC },
		{ "local-steps", required_argument, NULL, OPT_H },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "lr", required_argument, NULL, OPT_LR },
		{ "lr-schedule", required_argument, NULL, OPT_SCHED },
		{ "lr-decay", required_argument, NULL, OPT_DECAY },
		{ "lr-every", required_argument, NULL, OPT_EVERY },
		{ "l2", required_argument, NULL, OPT_L2 },
		{ "shards", required_argument, NULL, OPT_SHARDS },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "loss-log", required_argument, NULL, OPT_LOG },
		{ "quiet", no_argument, NULL, CLI_OPT_QUIET },
		{ "help", no_argument, NULL, CLI_OPT_HELP },
		CLI_LONGOPTS_RUNTIME,
		{ NULL, 0, NULL, 0 }
	};
	static const char *const help[] = { sgd_help_head, cli_runtime_help, sgd_help_tail, NULL };
	int rc = cli_getopt(argc, argv, "sgd", longopts, help, sgd_option, a);

	if (rc)
		return rc;
	if (optind != argc)
		return cli_usage("sgd: unexpected argument '%s'; see 'pems-run sgd --help'",
				 argv[optind]);
	if (!a->have_model)
		return cli_usage("sgd: --model is required (linear or logistic)");
	if (!a->job.data)
		return cli_usage("sgd: --data is required");
	if (!a->have_format)
		return cli_usage("sgd: --format is required (dense or libsvm)");
	if (!a->job.out)
		return cli_usage("sgd: --out is required (the model file)");
	if (a->job.format == PEMS_SGD_LIBSVM && !a->job.dim)
		return cli_usage("sgd: --dim is required with --format libsvm");
	return 0;
}

static int sgd_report(const struct sgd_args *a, double secs)
{
	const struct pems_sgd_job *j = &a->job;
	struct pems_stats st;
	char tl[64] = "";

	pems_get_stats(&st);
	if (pems_rank() != 0)
		return CLI_EXIT_OK;
	if (!a->rt.quiet) {
		if (!isnan(j->test_loss) && j->model == PEMS_SGD_LOGISTIC)
			snprintf(tl, sizeof(tl), ", test log loss %.6g, accuracy %.2f %%",
				 j->test_loss, j->test_accuracy * 100);
		else if (!isnan(j->test_loss))
			snprintf(tl, sizeof(tl), ", test MSE %.6g", j->test_loss);
		fprintf(stderr, "sgd: %u epochs, train %s %.6g%s; model in %s\n",
			j->epochs_done, j->model == PEMS_SGD_LOGISTIC ? "log loss" : "MSE",
			j->train_loss, tl, j->out);
		cli_summary("sgd", j->data_bytes * j->epochs_done, secs, &st);
	}
	if (a->rt.stats)
		cli_stats_print("sgd", &st);
	if (a->rt.stats_json &&
	    cli_stats_json(a->rt.stats_json, "sgd", j->data_bytes * j->epochs_done, secs, &st))
		return CLI_EXIT_FAIL;
	return CLI_EXIT_OK;
}

int cli_sgd_main(int argc, char **argv)
{
	struct sgd_args a = { 0 };
	struct cli_progress prog;
	double t0;
	int rc;

	a.job.epochs = 1;
	a.job.sync = PEMS_SGD_SYNC_LOCAL;
	a.job.local_steps = 64;
	a.job.batch = 64;
	a.job.lr = 0.05;
	a.job.lr_decay = 0.5;
	a.job.lr_step = 1;
	a.job.seed = 1;
	cli_runtime_init(&a.rt);
	rc = sgd_parse(argc, argv, &a);
	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	if (cli_check_out_dir("sgd", a.job.out) ||
	    (a.job.loss_log && cli_check_out_dir("sgd", a.job.loss_log)))
		return CLI_EXIT_FAIL;
	rc = cli_runtime_apply(&a.rt, "sgd", a.job.out);
	if (rc)
		return rc;
	cli_progress_init(&prog, "sgd", a.rt.quiet || pems_rank() != 0);
	a.job.cfg = &a.rt.cfg;
	a.job.progress = prog.enabled ? cli_progress_cb : NULL;
	a.job.progress_arg = &prog;
	t0 = cli_now();
	rc = pems_sgd(&a.job);
	t0 = cli_now() - t0;
	cli_progress_clear(&prog);
	if (rc) {
		if (pems_rank() == 0 && rc != -PEMS_E_BUDGET)	/* explained already */
			cli_error("sgd: training on '%s' failed: %s", a.job.data,
				  rc == -EDOM ? "diverged" : rc == -EINVAL ? "bad input (see above)" : pems_strerror(rc));
		return CLI_EXIT_FAIL;
	}
	return sgd_report(&a, t0);
}
