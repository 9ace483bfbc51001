/* cli_gen.c - the option parsers of cli/gen.c (records, kv, dense/libsvm)
 * for fuzz_cli.c (its statics are reached by including the file; it is
 * not linked twice). */
#include "../../cli/gen.c"
#include "fuzz_cli.h"

static int fuzz_front(int argc, char **argv, const struct gen_front *f)
{
	struct gen_args a = gen_defaults;

	return gen_parse(argc, argv, f, &a);
}

int fuzz_cli_gen(int argc, char **argv)
{
	return fuzz_front(argc, argv, &fronts[0]);
}

int fuzz_cli_gen_kv(int argc, char **argv)
{
	return fuzz_front(argc, argv, &fronts[1]);
}

int fuzz_cli_gen_sgd(int argc, char **argv)
{
	return fuzz_front(argc, argv, &fronts[4]);
}
