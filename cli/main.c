/*
 * main.c - pems-run: command-line front of the bundled pems algorithms.
 * Dispatches to one subcommand; each parses its own options.
 */
#include <string.h>
#include "cli.h"

char **cli_argv;

struct command {
	const char *name;
	int (*main)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "gen", cli_gen_main, "write deterministic test records" },
	{ "sort", cli_sort_main, "sort a file of records in external memory" },
	{ "aggregate", cli_aggregate_main, "GROUP BY key: count, sum, min, max, avg" },
	{ "sgd", cli_sgd_main, "train linear/logistic regression by data-parallel SGD" },
	{ "verify", cli_verify_main, "check that a file is sorted (and matches its input)" },
	{ "model", cli_model_main, "BSP cost model: calibrate, predict, project" },
	{ "resume", cli_resume_main, "continue an interrupted run from its checkpoint" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	size_t i;

	fputs("Usage: pems-run COMMAND [options] [args]\n"
	      "       pems-run --help | --version\n"
	      "Bulk-synchronous external-memory computing: run the bundled BSP\n"
	      "algorithms on data larger than memory.\n"
	      "\n"
	      "Commands:\n", f);
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fputs("\n"
	      "'pems-run COMMAND --help' describes a command and its options.\n"
	      "Sizes take K/M/G suffixes (powers of 1024).\n"
	      "Exit status: 0 ok, 1 runtime failure, 2 usage error.\n", f);
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;
	size_t i;

	if (!cmd)
		return cli_usage("no command given; see 'pems-run --help'");
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		usage(stdout);
		return CLI_EXIT_OK;
	}
	if (!strcmp(cmd, "--version")) {
		printf("pems-run %s\n", PEMS_VERSION);
		return CLI_EXIT_OK;
	}
	cli_argv = argv;
	/* runs that may checkpoint start over with ASLR off (docs/checkpoint.md) */
	if ((!strcmp(cmd, "sort") || !strcmp(cmd, "aggregate") || !strcmp(cmd, "sgd")) &&
	    !cli_checkpoints_off(argc, argv))
		pems_checkpoint_exec(argv);
	for (i = 0; i < NCOMMANDS; i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].main(argc - 1, argv + 1);
	if (cmd[0] == '-')
		return cli_usage("unknown option '%s'; see 'pems-run --help'", cmd);
	return cli_usage("unknown command '%s'; see 'pems-run --help'", cmd);
}
