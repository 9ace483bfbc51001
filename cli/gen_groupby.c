/*
 * gen_groupby.c - `pems-run gen --format groupby`: the options of the
 * generator of the db-benchmark groupby task's G1 table (gen/groupby.c,
 * pems_gen_groupby_file); OUT may be - for stdout.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

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

enum { OPT_ROWS = CLI_OPT_FIRST_LOCAL, OPT_K, OPT_NA, OPT_SORTED, OPT_SEED };

struct gb_args {
	struct pems_gen_groupby *g;
	bool *quiet;
	bool have_rows;
};

static int gb_option(void *ctx, int c, const char *arg)
{
	struct gb_args *a = ctx;
	struct pems_gen_groupby *g = a->g;
	char *end;

	switch (c) {
	case CLI_OPT_FORMAT:
		return 0;
	case OPT_ROWS:
		a->have_rows = true;
		if (cli_parse_u64(arg, true, &g->rows) || g->rows > (1ull << 50))
			return cli_usage("gen: --rows %s: not a row count; give e.g. --rows 10M",
					 arg);
		return 0;
	case OPT_K:
		if (cli_parse_u64(arg, true, &g->k) || !g->k || g->k > 1000000)
			return cli_usage("gen: --k %s: give a group count 1..1000000, e.g. --k 100",
					 arg);
		return 0;
	case OPT_NA:
		g->na = strtod(arg, &end);
		if (end == arg || *end || !(g->na >= 0 && g->na <= 100))
			return cli_usage("gen: --na %s: give a percentage 0..100, e.g. --na 5",
					 arg);
		return 0;
	case OPT_SORTED:
		g->sorted = true;
		return 0;
	case OPT_SEED:
		if (cli_parse_u64(arg, false, &g->seed))
			return cli_usage("gen: --seed %s: not a 64-bit number", arg);
		return 0;
	case CLI_OPT_QUIET:
		*a->quiet = true;
		return 0;
	default:
		return CLI_EXIT_USAGE;
	}
}

static int gb_parse(int argc, char **argv, struct pems_gen_groupby *g, const char **out,
		    bool *quiet)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, CLI_OPT_FORMAT },
		{ "rows", required_argument, NULL, OPT_ROWS },
		{ "k", required_argument, NULL, OPT_K },
		{ "na", required_argument, NULL, OPT_NA },
		{ "sorted", no_argument, NULL, OPT_SORTED },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "quiet", no_argument, NULL, CLI_OPT_QUIET },
		{ "help", no_argument, NULL, CLI_OPT_HELP },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const help[] = { gb_help, NULL };
	struct gb_args a = { .g = g, .quiet = quiet };
	int rc = cli_getopt(argc, argv, "gen", longopts, help, gb_option, &a);

	if (rc)
		return rc;
	if (g->sorted && g->k > 4096)
		return cli_usage("gen: --sorted needs --k 4096 or less");
	if (!a.have_rows)
		return cli_usage("gen: --rows is required for --format groupby");
	if (optind != argc - 1)
		return cli_usage("gen: expected one output file; see 'pems-run gen --format groupby --help'");
	*out = argv[optind];
	return 0;
}

int cli_gen_groupby_main(int argc, char **argv)
{
	struct pems_gen_groupby g = { .k = 100, .seed = 1 };
	struct cli_progress prog;
	const char *out = NULL;
	bool quiet = false, std;
	uint64_t bytes = 0;
	double t0;
	int rc;

	rc = gb_parse(argc, argv, &g, &out, &quiet);
	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	std = !strcmp(out, "-");
	if (!std && cli_check_out_dir("gen", out))
		return CLI_EXIT_FAIL;
	cli_progress_init(&prog, "gen", quiet || std);
	t0 = cli_now();
	rc = pems_gen_groupby_file(&g, out, &bytes, cli_progress_cb, &prog);
	cli_progress_clear(&prog);
	if (rc) {
		cli_error("gen: cannot write '%s': %s", out, strerror(-rc));
		return CLI_EXIT_FAIL;
	}
	if (quiet)
		return CLI_EXIT_OK;
	t0 = cli_now() - t0;
	fprintf(stderr, "gen: %llu groupby rows (%llu bytes) to %s in %.2f s (%.1f MB/s)\n",
		(unsigned long long)g.rows, (unsigned long long)bytes, out, t0,
		t0 > 0 ? bytes / t0 / 1e6 : 0.0);
	return CLI_EXIT_OK;
}
