/*
 * gen_kv.c - `pems-run gen --format kv`: the options of the GROUP BY row
 * generator (gen/kv.c, pems_gen_kv_file).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

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

enum { OPT_COUNT = CLI_OPT_FIRST_LOCAL, OPT_SEED, OPT_SKEW, OPT_GROUPS };

struct kv_args {
	struct pems_gen_kv *g;
	bool *quiet;
	bool have_count;
};

static int kv_option(void *ctx, int c, const char *arg)
{
	struct kv_args *a = ctx;
	struct pems_gen_kv *g = a->g;
	char *end;

	switch (c) {
	case CLI_OPT_FORMAT:
		return 0;
	case OPT_COUNT:
		a->have_count = true;
		if (cli_parse_u64(arg, true, &g->count) || g->count > UINT64_MAX / 32)
			return cli_usage("gen: --count %s: not a record count; give e.g. --count 1M",
					 arg);
		return 0;
	case OPT_GROUPS:
		if (cli_parse_u64(arg, true, &g->groups))
			return cli_usage("gen: --groups %s: not a number; give e.g. --groups 1000000",
					 arg);
		return 0;
	case OPT_SEED:
		if (cli_parse_u64(arg, false, &g->seed))
			return cli_usage("gen: --seed %s: not a 64-bit number", arg);
		return 0;
	case OPT_SKEW:
		if (!strcmp(arg, "uniform")) {
			g->zipf = 0;
		} else if (!strcmp(arg, "zipf")) {
			g->zipf = 1.1;
		} else if (!strncmp(arg, "zipf:", 5)) {
			g->zipf = strtod(arg + 5, &end);
			if (end == arg + 5 || *end || !(g->zipf > 0) || g->zipf > 100)
				return cli_usage("gen: --skew %s: give zipf:S with 0 < S <= 100, e.g. zipf:1.1",
						 arg);
		} else {
			return cli_usage("gen: --skew %s: unknown distribution for kv; use uniform or zipf:S",
					 arg);
		}
		return 0;
	case CLI_OPT_QUIET:
		*a->quiet = true;
		return 0;
	default:
		return CLI_EXIT_USAGE;
	}
}

static int kv_parse(int argc, char **argv, struct pems_gen_kv *g, const char **out,
		    bool *quiet)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, CLI_OPT_FORMAT },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "groups", required_argument, NULL, OPT_GROUPS },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "skew", required_argument, NULL, OPT_SKEW },
		{ "quiet", no_argument, NULL, CLI_OPT_QUIET },
		{ "help", no_argument, NULL, CLI_OPT_HELP },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const help[] = { kv_help, NULL };
	struct kv_args a = { .g = g, .quiet = quiet };
	int rc = cli_getopt(argc, argv, "gen", longopts, help, kv_option, &a);

	if (rc)
		return rc;
	if (!a.have_count)
		return cli_usage("gen: --count is required");
	if (optind != argc - 1)
		return cli_usage("gen: expected one output file; see 'pems-run gen --format kv --help'");
	*out = argv[optind];
	return 0;
}

int cli_gen_kv_main(int argc, char **argv)
{
	struct pems_gen_kv g = { .groups = 1000, .seed = 1 };
	struct cli_progress prog;
	const char *out = NULL;
	bool quiet = false;
	char size[32];
	double t0;
	int rc;

	rc = kv_parse(argc, argv, &g, &out, &quiet);
	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	if (g.zipf > 0 && g.groups == 0)
		return cli_usage("gen: --skew zipf needs --groups G > 0");
	if (cli_check_out_dir("gen", out))
		return CLI_EXIT_FAIL;
	cli_progress_init(&prog, "gen", quiet);
	t0 = cli_now();
	rc = pems_gen_kv_file(&g, out, cli_progress_cb, &prog);
	cli_progress_clear(&prog);
	if (rc) {
		cli_error("gen: cannot write '%s': %s", out, strerror(-rc));
		return CLI_EXIT_FAIL;
	}
	if (quiet)
		return CLI_EXIT_OK;
	t0 = cli_now() - t0;
	fprintf(stderr, "gen: %llu kv records (%s) to %s in %.2f s (%.1f MB/s)\n",
		(unsigned long long)g.count, cli_human(g.count * 16, size, sizeof(size)),
		out, t0, t0 > 0 ? g.count * 16 / t0 / 1e6 : 0.0);
	return CLI_EXIT_OK;
}
