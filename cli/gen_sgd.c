/*
 * gen_sgd.c - `pems-run gen --format dense|libsvm`: the options of the
 * generator of training data for `pems-run sgd` (gen/sgd.c,
 * pems_gen_sgd_file), drawn from known true weights, which are written
 * too (OUT.weights, in the model-file format of pems_sgd_model_write).
 *
 * True model (seeded by --seed): w_j ~ N(0,1) * s / sqrt(q*D), bias
 * b = 0.25 * N(0,1), where q*D is the expected number of nonzero
 * features per row and s = 1 (linear) or 2 (logistic).  Row i (seeded by
 * --row-seed and i only, so files of any size agree on their common
 * rows): each feature is nonzero with probability q (dense: q = 1) and
 * then N(0,1); z = w.x + b;
 *   linear:   y = z + noise * N(0,1)           (noise variance: the floor)
 *   logistic: y = +1 if z + noise * L > 0 else -1, L ~ Logistic(0,1);
 *             the log-odds are z / noise, so OUT.weights holds w/noise,
 *             b/noise (noise 0: separable, OUT.weights holds w, b).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static const char gen_sgd_help[] =
	"Usage: pems-run gen --format dense|libsvm --count N --dim D\n"
	"                    [--model linear|logistic] [--noise S] [--seed S]\n"
	"                    [--row-seed R] [--nnz K] OUT\n"
	"Write N training rows for 'pems-run sgd' drawn from known true weights,\n"
	"and those weights to OUT.weights (the sgd model-file format).\n"
	"\n"
	"  --format dense    16-byte header \"PEMSDENS\", u32 D, u32 0, then rows of\n"
	"                    1 + D little-endian float32 (label, features)\n"
	"  --format libsvm   text lines 'label idx:val ...' (idx 1..D)\n"
	"  --model M         linear (default): y = w.x + b + S*N(0,1);\n"
	"                    logistic: y = +1/-1 by the sign of w.x + b + S*Logistic\n"
	"  --count N         rows; K/M/G suffixes\n"
	"  --dim D           features per row\n"
	"  --noise S         noise scale (default 0.1 linear, 1 logistic)\n"
	"  --seed S          seed of the true weights (default 1)\n"
	"  --row-seed R      seed of the rows (default: --seed); a test set is the\n"
	"                    same --seed with another --row-seed\n"
	"  --nnz K           libsvm: expected nonzero features per row (default\n"
	"                    min(D, 16)); dense rows are all nonzero\n"
	"  --quiet           no summary\n"
	"  -h, --help        show this help\n"
	"\n"
	"Exit status: 0 ok, 1 runtime failure, 2 usage error.\n";

enum { GS_COUNT = CLI_OPT_FIRST_LOCAL, GS_DIM, GS_MODEL, GS_NOISE, GS_SEED,
	GS_ROWSEED, GS_NNZ, GS_FORMAT };

/* the options: the generator's, and what the front adds */
struct gs {
	struct pems_gen_sgd g;
	bool have_noise, have_rowseed, have_count, have_dim, have_format, quiet;
	const char *out;
};

static int gs_option(void *ctx, int c, const char *arg)
{
	struct gs *a = ctx;
	struct pems_gen_sgd *g = &a->g;
	uint64_t v;
	char *end;

	switch (c) {
	case GS_FORMAT:
		a->have_format = true;
		g->libsvm = !strcmp(arg, "libsvm");
		return 0;
	case GS_COUNT:
		a->have_count = true;
		if (cli_parse_u64(arg, true, &g->count) || g->count > (1ull << 40))
			return cli_usage("gen: --count %s: not a row count; give e.g. --count 1M", arg);
		return 0;
	case GS_DIM:
		a->have_dim = true;
		if (cli_parse_u64(arg, false, &v) || !v || v > (1u << 24))
			return cli_usage("gen: --dim %s: give a dimension between 1 and 16777216", arg);
		g->dim = (uint32_t)v;
		return 0;
	case GS_MODEL:
		if (strcmp(arg, "linear") && strcmp(arg, "logistic"))
			return cli_usage("gen: --model %s: use linear or logistic", arg);
		g->logistic = !strcmp(arg, "logistic");
		return 0;
	case GS_NOISE:
		g->noise = strtod(arg, &end);
		if (end == arg || *end || !(g->noise >= 0) || !isfinite(g->noise))
			return cli_usage("gen: --noise %s: give a scale >= 0, e.g. --noise 0.1", arg);
		a->have_noise = true;
		return 0;
	case GS_SEED:
	case GS_ROWSEED:
		if (cli_parse_u64(arg, false, &v))
			return cli_usage("gen: --%s %s: not a 64-bit number",
					 c == GS_SEED ? "seed" : "row-seed", arg);
		if (c == GS_SEED)
			g->seed = v;
		else {
			g->row_seed = v;
			a->have_rowseed = true;
		}
		return 0;
	case GS_NNZ:
		if (cli_parse_u64(arg, false, &g->nnz) || !g->nnz)
			return cli_usage("gen: --nnz %s: give a positive count", arg);
		return 0;
	case CLI_OPT_QUIET:
		a->quiet = true;
		return 0;
	default:
		return CLI_EXIT_USAGE;
	}
}

static int gs_parse(int argc, char **argv, struct gs *a)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, GS_FORMAT },
		{ "count", required_argument, NULL, GS_COUNT },
		{ "dim", required_argument, NULL, GS_DIM },
		{ "model", required_argument, NULL, GS_MODEL },
		{ "noise", required_argument, NULL, GS_NOISE },
		{ "seed", required_argument, NULL, GS_SEED },
		{ "row-seed", required_argument, NULL, GS_ROWSEED },
		{ "nnz", required_argument, NULL, GS_NNZ },
		{ "quiet", no_argument, NULL, CLI_OPT_QUIET },
		{ "help", no_argument, NULL, CLI_OPT_HELP },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const help[] = { gen_sgd_help, NULL };
	int rc;

	optind = 1;
	rc = cli_getopt(argc, argv, "gen", longopts, help, gs_option, a);
	if (rc)
		return rc;
	if (!a->have_count)
		return cli_usage("gen: --count is required");
	if (!a->have_dim)
		return cli_usage("gen: --dim is required with --format %s",
				 a->g.libsvm ? "libsvm" : "dense");
	if (optind != argc - 1)
		return cli_usage("gen: expected one output file; see 'pems-run gen --help'");
	a->out = argv[optind];
	return 0;
}

/* defaults that depend on other options, then the files */
static int gs_run(struct gs *a)
{
	struct pems_gen_sgd *g = &a->g;
	char size[32];
	double t0 = cli_now();
	int rc;

	if (!a->have_noise)
		g->noise = g->logistic ? 1.0 : 0.1;
	if (!a->have_rowseed)
		g->row_seed = g->seed;
	if (cli_check_out_dir("gen", a->out))
		return CLI_EXIT_FAIL;
	rc = pems_gen_sgd_file(g, a->out);
	if (rc) {
		cli_error("gen: cannot write '%s': %s", a->out, strerror(-rc));
		return CLI_EXIT_FAIL;
	}
	if (!a->quiet) {
		uint64_t bytes = g->libsvm ? 0 : PEMS_SGD_DENSE_HEADER +
			g->count * ((uint64_t)g->dim + 1) * 4;

		t0 = cli_now() - t0;
		fprintf(stderr, "gen: %llu %s %s rows of %u features%s%s%s to %s (weights: %s.weights) in %.2f s\n",
			(unsigned long long)g->count, g->logistic ? "logistic" : "linear",
			g->libsvm ? "libsvm" : "dense", g->dim, bytes ? " (" : "",
			bytes ? cli_human(bytes, size, sizeof(size)) : "", bytes ? ")" : "",
			a->out, a->out, t0);
	}
	return CLI_EXIT_OK;
}

int cli_gen_sgd_main(int argc, char **argv)
{
	struct gs a = { .g = { .seed = 1 } };
	int rc;

	rc = gs_parse(argc, argv, &a);
	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	return gs_run(&a);
}
