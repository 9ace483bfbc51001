/* cli_gen_sgd.c - the option parser of cli/gen_sgd.c for fuzz_cli.c (its statics
 * are reached by including the file; it is not linked twice). */
#include "../../cli/gen_sgd.c"
#include "fuzz_cli.h"

int fuzz_cli_gen_sgd(int argc, char **argv)
{
	struct gs a = { .g = { .seed = 1 } };

	return gs_parse(argc, argv, &a);
}
