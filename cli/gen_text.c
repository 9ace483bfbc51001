/*
 * gen_text.c - `pems-run gen --format lines|csv`: the options of the
 * text generator (gen/text.c, pems_gen_text_file); OUT may be - for
 * stdout.
 */
#include <errno.h>
#include <string.h>
#include "cli.h"

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

enum { OPT_SIZE = CLI_OPT_FIRST_LOCAL, OPT_SEED };

struct gt_args {
	struct pems_gen_text t;
	bool quiet;
	const char *out;
};

static int gt_option(void *ctx, int c, const char *arg)
{
	struct gt_args *g = ctx;

	switch (c) {
	case CLI_OPT_FORMAT:
		g->t.csv = !strcmp(arg, "csv");
		return 0;
	case OPT_SIZE:
		if (cli_parse_u64(arg, true, &g->t.size) || !g->t.size)
			return cli_usage("gen: --size %s: give a size, e.g. --size 256M", arg);
		return 0;
	case OPT_SEED:
		if (cli_parse_u64(arg, false, &g->t.seed))
			return cli_usage("gen: --seed %s: not a number", arg);
		return 0;
	case CLI_OPT_QUIET:
		g->quiet = true;
		return 0;
	default:
		return cli_usage("gen: internal error: option %d", c);
	}
}

static int gt_parse(int argc, char **argv, struct gt_args *g)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, CLI_OPT_FORMAT },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "quiet", no_argument, NULL, CLI_OPT_QUIET },
		{ "help", no_argument, NULL, CLI_OPT_HELP },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const help[] = { gt_help, NULL };
	int rc = cli_getopt(argc, argv, "gen", longopts, help, gt_option, g);

	if (rc)
		return rc;
	if (!g->t.size)
		return cli_usage("gen: --size is required for --format %s", g->t.csv ? "csv" : "lines");
	if (optind != argc - 1)
		return cli_usage("gen: expected one output file; see 'pems-run gen --format lines --help'");
	g->out = argv[optind];
	return 0;
}

int cli_gen_text_main(int argc, char **argv)
{
	struct gt_args g = { .t = { .seed = 1 } };
	struct cli_progress prog;
	uint64_t lines = 0;
	bool out;
	int rc;

	rc = gt_parse(argc, argv, &g);
	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	out = strcmp(g.out, "-") != 0;
	if (out && cli_check_out_dir("gen", g.out))
		return CLI_EXIT_FAIL;
	cli_progress_init(&prog, "gen", g.quiet || !out);
	rc = pems_gen_text_file(&g.t, g.out, &lines, cli_progress_cb, &prog);
	cli_progress_clear(&prog);
	if (rc) {
		cli_error("gen: writing '%s': %s", g.out, strerror(-rc));
		return CLI_EXIT_FAIL;
	}
	if (!g.quiet && out)
		fprintf(stderr, "gen: %llu %s lines to %s\n", (unsigned long long)lines,
			g.t.csv ? "csv" : "text", g.out);
	return CLI_EXIT_OK;
}
