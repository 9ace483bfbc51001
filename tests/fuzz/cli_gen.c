/* cli_gen.c - the option parser of cli/gen.c for fuzz_cli.c (its statics
 * are reached by including the file; it is not linked twice). */
#include "../../cli/gen.c"
#include "fuzz_cli.h"

int fuzz_cli_gen(int argc, char **argv)
{
	struct gen_args a = { .g = { .seed = 1, .skew = PEMS_GEN_UNIFORM } };

	return gen_parse(argc, argv, &a);
}
