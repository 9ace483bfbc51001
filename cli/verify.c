/*
 * verify.c - `pems-run verify`: check that a file is sorted and, with
 * --against, that it holds the same records as the input (count and an
 * order-independent checksum: sum and xor of a 64-bit hash per record,
 * like valsort).  The check is pems_verify (algorithms/verify.c).
 */
#include <stdatomic.h>
#include <string.h>
#include "cli.h"

static const char verify_help[] =
	"Usage: pems-run verify --format FMT FILE [--against INPUT]\n"
	"Check that FILE's records are in non-decreasing key order; with\n"
	"--against, also that FILE holds exactly INPUT's records (same count and\n"
	"the same order-independent checksum).\n"
	"\n"
	"  --format FMT      u64, rec100 (key: first 10 bytes) or ascii100\n"
	"                    (key: the first 14 characters)\n"
	"  --against INPUT   the unsorted input FILE was made from\n"
	"  --quiet           no progress bar\n"
	"  -h, --help        show this help\n"
	"\n"
	"Prints 'verify: N records, sorted, checksum 0x...' on success.\n"
	"Exit status: 0 ok, 1 not sorted, not matching or unreadable, 2 usage error.\n";

enum { OPT_AGAINST = CLI_OPT_FIRST_LOCAL };

static void progress_end(void *arg)
{
	cli_progress_clear(arg);
}

static void print_ok(const struct pems_verify *f, bool against)
{
	printf("verify: %llu records, sorted, checksum 0x%016llx%016llx%s\n",
	       (unsigned long long)f->rs.records,
	       (unsigned long long)f->rs.sum, (unsigned long long)f->rs.xor,
	       against ? " matches input" : "");
}

static int verify_parse(int argc, char **argv, struct pems_verify *f,
			struct pems_verify *in, enum pems_format *fmt, bool *quiet)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, CLI_OPT_FORMAT },
		{ "against", required_argument, NULL, OPT_AGAINST },
		{ "quiet", no_argument, NULL, CLI_OPT_QUIET },
		{ "help", no_argument, NULL, CLI_OPT_HELP },
		{ NULL, 0, NULL, 0 }
	};
	bool have_format = false;
	int c;

	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case CLI_OPT_HELP:
			fputs(verify_help, stdout);
			return -1;
		case CLI_OPT_FORMAT:
			if (cli_parse_format("verify", optarg, fmt))
				return CLI_EXIT_USAGE;
			have_format = true;
			break;
		case OPT_AGAINST:
			in->path = optarg;
			break;
		case CLI_OPT_QUIET:
			*quiet = true;
			break;
		default:
			return cli_bad_option("verify", c, argv);
		}
	}
	if (!have_format)
		return cli_usage("verify: --format is required (u64, rec100 or ascii100)");
	if (optind != argc - 1)
		return cli_usage("verify: expected one FILE; see 'pems-run verify --help'");
	f->path = argv[optind];
	return 0;
}

int cli_verify_main(int argc, char **argv)
{
	struct pems_verify f = { 0 }, in = { 0 };
	struct cli_progress prog;
	enum pems_format fmt = PEMS_FMT_U64;
	atomic_bool stop = false;
	bool quiet = false;
	int rc;

	rc = verify_parse(argc, argv, &f, &in, &fmt, &quiet);
	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	f.f = in.f = pems_format_get(fmt);
	f.rsz = in.rsz = f.f->size;
	pems_record_scan_init(&f.rs, f.f, true);
	pems_record_scan_init(&in.rs, in.f, false);
	f.stop = in.stop = &stop;
	cli_progress_init(&prog, "verify", quiet);
	f.progress = cli_progress_cb;
	f.progress_end = progress_end;
	f.progress_arg = &prog;
	rc = pems_verify(cli_error, &f, &in) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
	if (!rc)
		print_ok(&f, in.path != NULL);
	pems_record_scan_free(&f.rs);
	return rc;
}
