/*
 * gen.c - `pems-run gen`: the options of the generators (gen/,
 * pems_gen.h), their progress bar and summary.  kv, dense/libsvm and
 * groupby have options of their own (gen_kv.c, gen_sgd.c, gen_groupby.c).
 */
#include <errno.h>
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

enum { OPT_COUNT = CLI_OPT_FIRST_LOCAL, OPT_SEED, OPT_SKEW };

struct gen_args {
	struct pems_gen_records g;
	const char *out;
	bool quiet;
	bool have_format, have_count;
};

static int gen_option(struct gen_args *a, int c, const char *arg)
{
	switch (c) {
	case CLI_OPT_FORMAT:
		a->have_format = true;
		return cli_parse_format("gen", arg, &a->g.fmt);
	case OPT_COUNT:
		a->have_count = true;
		if (cli_parse_u64(arg, true, &a->g.count) ||
		    a->g.count > UINT64_MAX / 128)
			return cli_usage("gen: --count %s: not a record count; give e.g. --count 1M",
					 arg);
		return 0;
	case OPT_SEED:
		if (cli_parse_u64(arg, false, &a->g.seed))
			return cli_usage("gen: --seed %s: not a 64-bit number", arg);
		return 0;
	case OPT_SKEW:
		if (pems_gen_skew_parse(arg, &a->g.skew))
			return cli_usage("gen: --skew %s: unknown distribution; use uniform, zipf, dup, sorted, reverse or equal",
					 arg);
		return 0;
	case CLI_OPT_QUIET:
		a->quiet = true;
		return 0;
	default:
		return CLI_EXIT_USAGE;
	}
}

static int gen_parse(int argc, char **argv, struct gen_args *a)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, CLI_OPT_FORMAT },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "skew", required_argument, NULL, OPT_SKEW },
		{ "quiet", no_argument, NULL, CLI_OPT_QUIET },
		{ "help", no_argument, NULL, CLI_OPT_HELP },
		{ NULL, 0, NULL, 0 }
	};
	int c, rc;

	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == CLI_OPT_HELP) {
			fputs(gen_help, stdout);
			return -1;
		}
		if (c == '?' || c == ':')
			return cli_bad_option("gen", c, argv);
		rc = gen_option(a, c, optarg);
		if (rc)
			return rc;
	}
	if (!a->have_format)
		return cli_usage("gen: --format is required (u64, rec100 or ascii100)");
	if (!a->have_count)
		return cli_usage("gen: --count is required");
	if (optind != argc - 1)
		return cli_usage("gen: expected one output file; see 'pems-run gen --help'");
	a->out = argv[optind];
	return 0;
}

/* The value of --format on a gen command line ("" if none): kv and the
 * SGD formats have generators of their own, with options of their own. */
static const char *gen_format_arg(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--format") && i + 1 < argc)
			return argv[i + 1];
		if (!strncmp(argv[i], "--format=", 9))
			return argv[i] + 9;
	}
	return "";
}

/* @out as @g says, with a progress bar and a summary unless @quiet */
static int records_file(const struct pems_gen_records *g, const char *out, bool quiet)
{
	struct cli_progress prog;
	char size[32];
	uint64_t bytes = g->count * pems_format_size(g->fmt);
	double t0 = cli_now();
	int rc;

	cli_progress_init(&prog, "gen", quiet);
	rc = pems_gen_records_file(g, out, cli_progress_cb, &prog);
	cli_progress_clear(&prog);
	if (rc) {
		cli_error("gen: cannot write '%s': %s", out, strerror(-rc));
		return CLI_EXIT_FAIL;
	}
	if (quiet)
		return CLI_EXIT_OK;
	t0 = cli_now() - t0;
	fprintf(stderr, "gen: %llu %s records (%s) to %s in %.2f s (%.1f MB/s)\n",
		(unsigned long long)g->count, pems_format_name(g->fmt),
		cli_human(bytes, size, sizeof(size)), out, t0, t0 > 0 ? bytes / t0 / 1e6 : 0.0);
	return CLI_EXIT_OK;
}

int cli_gen_main(int argc, char **argv)
{
	struct gen_args a = { .g = { .seed = 1, .skew = PEMS_GEN_UNIFORM } };
	const char *fmt = gen_format_arg(argc, argv);
	int rc;

	if (!strcmp(fmt, "dense") || !strcmp(fmt, "libsvm"))
		return cli_gen_sgd_main(argc, argv);	/* gen_sgd.c */
	if (!strcmp(fmt, "kv"))
		return cli_gen_kv_main(argc, argv);	/* gen_kv.c */
	if (!strcmp(fmt, "groupby"))
		return cli_gen_groupby_main(argc, argv);	/* gen_groupby.c */
	if (!strcmp(fmt, "lines") || !strcmp(fmt, "csv"))
		return cli_gen_text_main(argc, argv);	/* gen_text.c */
	rc = gen_parse(argc, argv, &a);
	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	if (cli_check_out_dir("gen", a.out))
		return CLI_EXIT_FAIL;
	return records_file(&a.g, a.out, a.quiet);
}
