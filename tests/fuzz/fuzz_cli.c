/*
 * fuzz_cli.c - fuzz target: pems-run's option parsing (cli/opts.c and
 * each subcommand's parser) and the size parsers.
 *
 * Input: byte 0 picks the subcommand; the rest, split at NUL bytes, is
 * its argument vector.  Every argument is also given to cli_parse_u64
 * (with and without suffixes), pems_parse_size, cli_parse_format and
 * pems_gen_skew_parse.  Parsers print usage errors on stderr, nothing else
 * happens: only parsing is reached, never a job.
 */
#include <getopt.h>
#include <stdlib.h>

#include "cli.h"
#include "fuzz.h"
#include "fuzz_cli.h"

static int (*const parsers[])(int, char **) = {
	fuzz_cli_sort, fuzz_cli_aggregate, fuzz_cli_sgd, fuzz_cli_gen,
	fuzz_cli_gen_kv, fuzz_cli_gen_sgd, fuzz_cli_verify,
};

static const char *const names[] = {
	"sort", "aggregate", "sgd", "gen", "gen", "gen", "verify",
};

#define NPARSERS (sizeof(parsers) / sizeof(parsers[0]))

/* pems-run parses one vector per process.  Here glibc's getopt would
 * keep a pointer into the previous input (some parsers set optind = 1,
 * which does not reinitialise it): optind = 0 and one empty scan do. */
static void reset_getopt(void)
{
	char *none[] = { (char *)"x", NULL };

	optind = 0;
	getopt(1, none, "");
	optind = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[FUZZ_MAX_ARGS], *storage;
	unsigned which;
	int argc, i;

	if (size < 1)
		return 0;
	which = data[0] % NPARSERS;
	argc = fuzz_argv(data + 1, size - 1, names[which], argv, &storage);
	for (i = 1; i < argc; i++) {
		uint64_t u;
		size_t sz;
		enum pems_format fmt;
		enum pems_gen_skew skew;

		cli_parse_u64(argv[i], true, &u);
		cli_parse_u64(argv[i], false, &u);
		pems_parse_size(argv[i], &sz);
		pems_format_parse(argv[i], &fmt);
		pems_gen_skew_parse(argv[i], &skew);
	}
	reset_getopt();
	parsers[which](argc, argv);
	free(storage);
	return 0;
}
