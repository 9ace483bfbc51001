/* fuzz_cli.h - the subcommand option parsers reached by fuzz_cli.c
 * (cli_*.c).  Each returns what the static parser returns. */
#ifndef PEMS_FUZZ_CLI_H
#define PEMS_FUZZ_CLI_H

int fuzz_cli_sort(int argc, char **argv);
int fuzz_cli_aggregate(int argc, char **argv);
int fuzz_cli_sgd(int argc, char **argv);
int fuzz_cli_gen(int argc, char **argv);
int fuzz_cli_gen_kv(int argc, char **argv);
int fuzz_cli_gen_sgd(int argc, char **argv);
int fuzz_cli_verify(int argc, char **argv);

#endif
