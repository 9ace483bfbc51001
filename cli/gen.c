/*
 * gen.c - `pems-run gen`: the option fronts of the generators (gen/,
 * pems_gen.h), their progress bar and summary.  Each --format has a
 * table of options (name, where the value goes, its range, the message
 * for a bad value) read by one parser; its help, checks and summary.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static const char gen_help[] =
	"Usage: pems-run gen --format FMT --count N [--seed S] [--skew SKEW] OUT\n"
	"Write N deterministic records to OUT (same arguments, same bytes).\n"
	"Training data for sgd: --format dense|libsvm (see\n"
	"'pems-run gen --format dense --help'); GROUP BY data: --format kv\n"
	"and --format groupby (the db-benchmark G1 CSV; see their --help).\n"
	"Text for sort: --format lines|csv (see 'pems-run gen --format lines --help').\n"
	"\n"
	"  --format FMT   u64 (8-byte native integers), rec100 (10-byte key,\n"
	"                 90-byte payload) or ascii100 (the same keys as 99\n"
	"                 printable bytes and a newline, for sort(1) with LC_ALL=C)\n"
	"  --count N      number of records; K/M/G suffixes (powers of 1024)\n"
	"  --seed S       64-bit seed (default 1)\n"
	"  --skew SKEW    key distribution: uniform (default), zipf (Zipf(1.1),\n"
	"                 heavy repeats), dup (16 distinct keys), sorted, reverse,\n"
	"                 equal (all keys equal)\n"
	"  --quiet        no progress bar and no summary\n"
	"  -h, --help     show this help\n"
	"\n"
	"Exit status: 0 ok, 1 runtime failure, 2 usage error.\n";

static const char kv_help[] =
	"Usage: pems-run gen --format kv --count N [--groups G] [--skew SKEW]\n"
	"                    [--seed S] OUT\n"
	"Write N 16-byte records {u64 key, i64 value} (little-endian) for\n"
	"`pems-run aggregate` (same arguments, same bytes).\n"
	"\n"
	"  --count N      number of records; K/M/G suffixes (powers of 1024)\n"
	"  --groups G     distinct keys to draw from (default 1000); 0: every\n"
	"                 key distinct\n"
	"  --skew SKEW    uniform (default) or zipf:S, Zipf with exponent S > 0\n"
	"                 over the G keys (zipf alone means zipf:1.1)\n"
	"  --seed S       64-bit seed (default 1)\n"
	"  --quiet        no progress bar and no summary\n"
	"  -h, --help     show this help\n"
	"\n"
	"Values are uniform in [-1000000, 1000000].\n"
	"Exit status: 0 ok, 1 runtime failure, 2 usage error.\n";

static const char gb_help[] =
	"Usage: pems-run gen --format groupby --rows N [--k K] [--na PCT]\n"
	"                    [--sorted] [--seed S] OUT\n"
	"Write the G1 table of the db-benchmark groupby task as CSV, with the\n"
	"header id1,id2,id3,id4,id5,id6,v1,v2,v3 (OUT may be - for stdout):\n"
	"  id1, id2   strings id001 .. idK            id4, id5  integers 1..K\n"
	"  id3        strings id0000000001 .. (N/K)   id6       integer 1..N/K\n"
	"  v1, v2     integers 1..5                   v3        float [0,100), 4 decimals\n"
	"\n"
	"  --rows N       number of rows; K/M/G suffixes (powers of 1024)\n"
	"  --k K          groups of id1, id2, id4, id5 (default 100)\n"
	"  --na PCT       percent of the fields left empty (NULL), 0..100\n"
	"                 (default 0), each field independently\n"
	"  --sorted       rows sorted by id1..id6 (NULL first)\n"
	"  --seed S       64-bit seed (default 1)\n"
	"  --quiet        no progress bar and no summary\n"
	"  -h, --help     show this help\n"
	"\n"
	"The same arguments give the same bytes.\n"
	"Exit status: 0 ok, 1 runtime failure, 2 usage error.\n";

static const char gt_help[] =
	"Usage: pems-run gen --format lines|csv --size SIZE [--seed S] OUT\n"
	"Write about SIZE bytes of text for 'pems-run sort' (OUT may be - for\n"
	"stdout).  lines: NAME,INT,DEC,WORDS lines of 20..300 bytes (sort them\n"
	"with e.g. -t, -k2,2n -k1,1); csv: a header id,name,price,qty,comment\n"
	"and rows whose comment is sometimes quoted with a delimiter, a quote or\n"
	"a newline inside.  Names and numbers repeat; 1 % of the lines are\n"
	"duplicates.  The same arguments give the same bytes.\n"
	"\n"
	"  --size SIZE    bytes to write (K/M/G suffixes); the last line ends\n"
	"                 at or just past SIZE\n"
	"  --seed S       64-bit seed (default 1)\n"
	"  --quiet        no progress bar and no summary\n"
	"  -h, --help     show this help\n"
	"\n"
	"Exit status: 0 ok, 1 runtime failure, 2 usage error.\n";

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

/* what every front fills */
struct gen_args {
	struct pems_gen_records r;
	struct pems_gen_kv kv;
	struct pems_gen_sgd s;
	struct pems_gen_text t;
	struct pems_gen_groupby gb;
	bool quiet;
	const char *out;
	unsigned seen;		/* bit i: option i of the table was given */
};

enum gen_kind { G_U64, G_U32, G_DBL, G_FLAG, G_FN };

struct gen_opt {
	const char *name;
	enum gen_kind kind;
	size_t off;		/* of the value in struct gen_args */
	bool suffix;		/* K/M/G suffixes */
	double min, max;	/* accepted values */
	const char *bad;	/* usage message; %s: the value given */
	int (*fn)(struct gen_args *a, const char *arg);	/* G_FN; NULL: ignored */
};

struct gen_front {
	const char *help;
	const struct gen_opt *opts;	/* up to "quiet" */
	int (*check)(struct gen_args *a);	/* after the options */
	const char *usage;	/* "expected one output file" message */
	int (*run)(struct gen_args *a);
};

#define ARG(field) offsetof(struct gen_args, field)
#define SEEN(a, i) (((a)->seen >> (i)) & 1)
#define QUIET { "quiet", G_FLAG, ARG(quiet), false, 0, 0, NULL, NULL }
#define SEED(field, msg) { "seed", G_U64, ARG(field), false, 0, (double)UINT64_MAX, msg, NULL }

struct gen_parse {
	const struct gen_opt *opts;
	struct gen_args *a;
};

static int gen_value(const struct gen_opt *o, struct gen_args *a, const char *arg)
{
	char *p = (char *)a + o->off, *end;
	uint64_t v;
	double d;

	switch (o->kind) {
	case G_FN:
		return o->fn ? o->fn(a, arg) : 0;
	case G_FLAG:
		*(bool *)p = true;
		return 0;
	case G_DBL:
		d = strtod(arg, &end);
		if (end == arg || *end || !(d >= o->min && d <= o->max) || !isfinite(d))
			return cli_usage(o->bad, arg);
		*(double *)p = d;
		return 0;
	default:
		if (cli_parse_u64(arg, o->suffix, &v) || v < o->min || (double)v > o->max)
			return cli_usage(o->bad, arg);
		if (o->kind == G_U32)
			*(uint32_t *)p = (uint32_t)v;
		else
			*(uint64_t *)p = v;
		return 0;
	}
}

static int gen_option(void *ctx, int c, const char *arg)
{
	struct gen_parse *g = ctx;
	int i = c - CLI_OPT_FIRST_LOCAL;

	g->a->seen |= 1u << i;
	return gen_value(&g->opts[i], g->a, arg);
}

static int gen_parse(int argc, char **argv, const struct gen_front *f, struct gen_args *a)
{
	struct option longopts[16];
	const char *help[] = { f->help, NULL };
	struct gen_parse g = { f->opts, a };
	int i, rc;

	for (i = 0; f->opts[i].name; i++)
		longopts[i] = (struct option){ f->opts[i].name,
			f->opts[i].kind == G_FLAG ? no_argument : required_argument,
			NULL, CLI_OPT_FIRST_LOCAL + i };
	longopts[i++] = (struct option){ "help", no_argument, NULL, CLI_OPT_HELP };
	longopts[i] = (struct option){ NULL, 0, NULL, 0 };
	rc = cli_getopt(argc, argv, "gen", longopts, help, gen_option, &g);
	if (!rc)
		rc = f->check(a);
	if (!rc && optind != argc - 1)
		rc = cli_usage("%s", f->usage);
	if (!rc)
		a->out = argv[optind];
	return rc;
}

/* the end of a run: progress bar cleared, failure said */
static int gen_done(struct cli_progress *prog, int rc, const char *verb, const char *out)
{
	if (prog)
		cli_progress_clear(prog);
	if (rc) {
		cli_error("gen: %s '%s': %s", verb, out, strerror(-rc));
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

static double gen_rate(uint64_t bytes, double t0)
{
	return t0 > 0 ? bytes / t0 / 1e6 : 0.0;
}

/* ---- u64, rec100, ascii100 records ---- */

static int records_format(struct gen_args *a, const char *arg)
{
	return cli_parse_format("gen", arg, &a->r.fmt);
}

static int records_skew(struct gen_args *a, const char *arg)
{
	if (pems_gen_skew_parse(arg, &a->r.skew))
		return cli_usage("gen: --skew %s: unknown distribution; use uniform, zipf, dup, sorted, reverse or equal",
				 arg);
	return 0;
}

static const struct gen_opt records_opts[] = {
	{ "format", G_FN, 0, false, 0, 0, NULL, records_format },
	{ "count", G_U64, ARG(r.count), true, 0, (double)(UINT64_MAX / 128),
	  "gen: --count %s: not a record count; give e.g. --count 1M", NULL },
	SEED(r.seed, "gen: --seed %s: not a 64-bit number"),
	{ "skew", G_FN, 0, false, 0, 0, NULL, records_skew },
	QUIET, { NULL, 0, 0, false, 0, 0, NULL, NULL }
};

static int records_check(struct gen_args *a)
{
	if (!SEEN(a, 0))
		return cli_usage("gen: --format is required (u64, rec100 or ascii100)");
	if (!SEEN(a, 1))
		return cli_usage("gen: --count is required");
	return 0;
}

static int records_run(struct gen_args *a)
{
	const struct pems_gen_records *g = &a->r;
	struct cli_progress prog;
	char size[32];
	uint64_t bytes = g->count * pems_format_size(g->fmt);
	double t0 = cli_now();
	int rc;

	if (cli_check_out_dir("gen", a->out))
		return CLI_EXIT_FAIL;
	cli_progress_init(&prog, "gen", a->quiet);
	rc = gen_done(&prog, pems_gen_records_file(g, a->out, cli_progress_cb, &prog),
		      "cannot write", a->out);
	if (rc || a->quiet)
		return rc;
	t0 = cli_now() - t0;
	fprintf(stderr, "gen: %llu %s records (%s) to %s in %.2f s (%.1f MB/s)\n",
		(unsigned long long)g->count, pems_format_name(g->fmt),
		cli_human(bytes, size, sizeof(size)), a->out, t0, gen_rate(bytes, t0));
	return CLI_EXIT_OK;
}

/* ---- kv rows ---- */

static int kv_skew(struct gen_args *a, const char *arg)
{
	char *end;

	if (!strcmp(arg, "uniform")) {
		a->kv.zipf = 0;
	} else if (!strcmp(arg, "zipf")) {
		a->kv.zipf = 1.1;
	} else if (!strncmp(arg, "zipf:", 5)) {
		a->kv.zipf = strtod(arg + 5, &end);
		if (end == arg + 5 || *end || !(a->kv.zipf > 0) || a->kv.zipf > 100)
			return cli_usage("gen: --skew %s: give zipf:S with 0 < S <= 100, e.g. zipf:1.1",
					 arg);
	} else {
		return cli_usage("gen: --skew %s: unknown distribution for kv; use uniform or zipf:S",
				 arg);
	}
	return 0;
}

static const struct gen_opt kv_opts[] = {
	{ "format", G_FN, 0, false, 0, 0, NULL, NULL },
	{ "count", G_U64, ARG(kv.count), true, 0, (double)(UINT64_MAX / 32),
	  "gen: --count %s: not a record count; give e.g. --count 1M", NULL },
	{ "groups", G_U64, ARG(kv.groups), true, 0, (double)UINT64_MAX,
	  "gen: --groups %s: not a number; give e.g. --groups 1000000", NULL },
	SEED(kv.seed, "gen: --seed %s: not a 64-bit number"),
	{ "skew", G_FN, 0, false, 0, 0, NULL, kv_skew },
	QUIET, { NULL, 0, 0, false, 0, 0, NULL, NULL }
};

static int kv_check(struct gen_args *a)
{
	return SEEN(a, 1) ? 0 : cli_usage("gen: --count is required");
}

static int kv_run(struct gen_args *a)
{
	const struct pems_gen_kv *g = &a->kv;
	struct cli_progress prog;
	char size[32];
	double t0;
	int rc;

	if (g->zipf > 0 && g->groups == 0)
		return cli_usage("gen: --skew zipf needs --groups G > 0");
	if (cli_check_out_dir("gen", a->out))
		return CLI_EXIT_FAIL;
	cli_progress_init(&prog, "gen", a->quiet);
	t0 = cli_now();
	rc = gen_done(&prog, pems_gen_kv_file(g, a->out, cli_progress_cb, &prog),
		      "cannot write", a->out);
	if (rc || a->quiet)
		return rc;
	t0 = cli_now() - t0;
	fprintf(stderr, "gen: %llu kv records (%s) to %s in %.2f s (%.1f MB/s)\n",
		(unsigned long long)g->count, cli_human(g->count * 16, size, sizeof(size)),
		a->out, t0, gen_rate(g->count * 16, t0));
	return CLI_EXIT_OK;
}

/* ---- the db-benchmark G1 table ---- */

static const struct gen_opt gb_opts[] = {
	{ "format", G_FN, 0, false, 0, 0, NULL, NULL },
	{ "rows", G_U64, ARG(gb.rows), true, 0, (double)(1ull << 50),
	  "gen: --rows %s: not a row count; give e.g. --rows 10M", NULL },
	{ "k", G_U64, ARG(gb.k), true, 1, 1000000,
	  "gen: --k %s: give a group count 1..1000000, e.g. --k 100", NULL },
	{ "na", G_DBL, ARG(gb.na), false, 0, 100,
	  "gen: --na %s: give a percentage 0..100, e.g. --na 5", NULL },
	{ "sorted", G_FLAG, ARG(gb.sorted), false, 0, 0, NULL, NULL },
	SEED(gb.seed, "gen: --seed %s: not a 64-bit number"),
	QUIET, { NULL, 0, 0, false, 0, 0, NULL, NULL }
};

static int gb_check(struct gen_args *a)
{
	if (a->gb.sorted && a->gb.k > 4096)
		return cli_usage("gen: --sorted needs --k 4096 or less");
	if (!SEEN(a, 1))
		return cli_usage("gen: --rows is required for --format groupby");
	return 0;
}

static int gb_run(struct gen_args *a)
{
	const struct pems_gen_groupby *g = &a->gb;
	struct cli_progress prog;
	bool std = !strcmp(a->out, "-");
	uint64_t bytes = 0;
	double t0;
	int rc;

	if (!std && cli_check_out_dir("gen", a->out))
		return CLI_EXIT_FAIL;
	cli_progress_init(&prog, "gen", a->quiet || std);
	t0 = cli_now();
	rc = gen_done(&prog, pems_gen_groupby_file(g, a->out, &bytes, cli_progress_cb, &prog),
		      "cannot write", a->out);
	if (rc || a->quiet)
		return rc;
	t0 = cli_now() - t0;
	fprintf(stderr, "gen: %llu groupby rows (%llu bytes) to %s in %.2f s (%.1f MB/s)\n",
		(unsigned long long)g->rows, (unsigned long long)bytes, a->out, t0,
		gen_rate(bytes, t0));
	return CLI_EXIT_OK;
}

/* ---- text lines and CSV ---- */

static int text_format(struct gen_args *a, const char *arg)
{
	a->t.csv = !strcmp(arg, "csv");
	return 0;
}

static const struct gen_opt text_opts[] = {
	{ "format", G_FN, 0, false, 0, 0, NULL, text_format },
	{ "size", G_U64, ARG(t.size), true, 1, (double)UINT64_MAX,
	  "gen: --size %s: give a size, e.g. --size 256M", NULL },
	SEED(t.seed, "gen: --seed %s: not a number"),
	QUIET, { NULL, 0, 0, false, 0, 0, NULL, NULL }
};

static int text_check(struct gen_args *a)
{
	if (!a->t.size)
		return cli_usage("gen: --size is required for --format %s", a->t.csv ? "csv" : "lines");
	return 0;
}

static int text_run(struct gen_args *a)
{
	struct cli_progress prog;
	uint64_t lines = 0;
	bool out = strcmp(a->out, "-") != 0;
	int rc;

	if (out && cli_check_out_dir("gen", a->out))
		return CLI_EXIT_FAIL;
	cli_progress_init(&prog, "gen", a->quiet || !out);
	rc = gen_done(&prog, pems_gen_text_file(&a->t, a->out, &lines, cli_progress_cb, &prog),
		      "writing", a->out);
	if (!rc && !a->quiet && out)
		fprintf(stderr, "gen: %llu %s lines to %s\n", (unsigned long long)lines,
			a->t.csv ? "csv" : "text", a->out);
	return rc;
}

/* ---- sgd rows (dense, libsvm) ---- */

static int sgd_format(struct gen_args *a, const char *arg)
{
	a->s.libsvm = !strcmp(arg, "libsvm");
	return 0;
}

static int sgd_model(struct gen_args *a, const char *arg)
{
	if (strcmp(arg, "linear") && strcmp(arg, "logistic"))
		return cli_usage("gen: --model %s: use linear or logistic", arg);
	a->s.logistic = !strcmp(arg, "logistic");
	return 0;
}

enum { SGD_NOISE = 4, SGD_ROWSEED = 6 };	/* indexes in sgd_opts */

static const struct gen_opt sgd_opts[] = {
	{ "format", G_FN, 0, false, 0, 0, NULL, sgd_format },
	{ "count", G_U64, ARG(s.count), true, 0, (double)(1ull << 40),
	  "gen: --count %s: not a row count; give e.g. --count 1M", NULL },
	{ "dim", G_U32, ARG(s.dim), false, 1, (double)(1u << 24),
	  "gen: --dim %s: give a dimension between 1 and 16777216", NULL },
	{ "model", G_FN, 0, false, 0, 0, NULL, sgd_model },
	{ "noise", G_DBL, ARG(s.noise), false, 0, HUGE_VAL,
	  "gen: --noise %s: give a scale >= 0, e.g. --noise 0.1", NULL },
	SEED(s.seed, "gen: --seed %s: not a 64-bit number"),
	{ "row-seed", G_U64, ARG(s.row_seed), false, 0, (double)UINT64_MAX,
	  "gen: --row-seed %s: not a 64-bit number", NULL },
	{ "nnz", G_U64, ARG(s.nnz), false, 1, (double)UINT64_MAX,
	  "gen: --nnz %s: give a positive count", NULL },
	QUIET, { NULL, 0, 0, false, 0, 0, NULL, NULL }
};

static int sgd_check(struct gen_args *a)
{
	if (!SEEN(a, 1))
		return cli_usage("gen: --count is required");
	if (!SEEN(a, 2))
		return cli_usage("gen: --dim is required with --format %s",
				 a->s.libsvm ? "libsvm" : "dense");
	return 0;
}

/* defaults that depend on other options, then the files */
static int sgd_run(struct gen_args *a)
{
	struct pems_gen_sgd *g = &a->s;
	char size[32];
	double t0 = cli_now();
	uint64_t bytes;

	if (!SEEN(a, SGD_NOISE))
		g->noise = g->logistic ? 1.0 : 0.1;
	if (!SEEN(a, SGD_ROWSEED))
		g->row_seed = g->seed;
	if (cli_check_out_dir("gen", a->out))
		return CLI_EXIT_FAIL;
	if (gen_done(NULL, pems_gen_sgd_file(g, a->out), "cannot write", a->out))
		return CLI_EXIT_FAIL;
	if (a->quiet)
		return CLI_EXIT_OK;
	bytes = g->libsvm ? 0 : PEMS_SGD_DENSE_HEADER + g->count * ((uint64_t)g->dim + 1) * 4;
	t0 = cli_now() - t0;
	fprintf(stderr, "gen: %llu %s %s rows of %u features%s%s%s to %s (weights: %s.weights) in %.2f s\n",
		(unsigned long long)g->count, g->logistic ? "logistic" : "linear",
		g->libsvm ? "libsvm" : "dense", g->dim, bytes ? " (" : "",
		bytes ? cli_human(bytes, size, sizeof(size)) : "", bytes ? ")" : "",
		a->out, a->out, t0);
	return CLI_EXIT_OK;
}

/* ---- the command ---- */

static const struct gen_front fronts[] = {
	{ gen_help, records_opts, records_check,
	  "gen: expected one output file; see 'pems-run gen --help'", records_run },
	{ kv_help, kv_opts, kv_check,
	  "gen: expected one output file; see 'pems-run gen --format kv --help'", kv_run },
	{ gb_help, gb_opts, gb_check,
	  "gen: expected one output file; see 'pems-run gen --format groupby --help'", gb_run },
	{ gt_help, text_opts, text_check,
	  "gen: expected one output file; see 'pems-run gen --format lines --help'", text_run },
	{ gen_sgd_help, sgd_opts, sgd_check,
	  "gen: expected one output file; see 'pems-run gen --help'", sgd_run },
};

/* The front for the value of --format on a gen command line: kv, the
 * SGD formats, groupby and text have options of their own. */
static const struct gen_front *gen_front(int argc, char **argv)
{
	const char *fmt = "";
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			fmt = argv[i + 1];
			break;
		}
		if (!strncmp(argv[i], "--format=", 9)) {
			fmt = argv[i] + 9;
			break;
		}
	}
	if (!strcmp(fmt, "kv"))
		return &fronts[1];
	if (!strcmp(fmt, "groupby"))
		return &fronts[2];
	if (!strcmp(fmt, "lines") || !strcmp(fmt, "csv"))
		return &fronts[3];
	if (!strcmp(fmt, "dense") || !strcmp(fmt, "libsvm"))
		return &fronts[4];
	return &fronts[0];
}

static const struct gen_args gen_defaults = {
	.r = { .seed = 1, .skew = PEMS_GEN_UNIFORM },
	.kv = { .groups = 1000, .seed = 1 },
	.s = { .seed = 1 },
	.t = { .seed = 1 },
	.gb = { .k = 100, .seed = 1 },
};

int cli_gen_main(int argc, char **argv)
{
	struct gen_args a = gen_defaults;
	const struct gen_front *f = gen_front(argc, argv);
	int rc = gen_parse(argc, argv, f, &a);

	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	return f->run(&a);
}
